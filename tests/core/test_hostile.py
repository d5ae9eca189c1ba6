"""Hostile input: every bad call gets the documented exception with a clear message."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gunpy
from gunpy import Graph
from _helpers import TESTS

EMPTY = Graph.from_edges([], [], num_vertices=0)
ONE = Graph.from_edges([], [], num_vertices=1)
PATH = Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 2.0, 3.0], directed=True)


@pytest.mark.parametrize("call", [
    lambda G, s, b: gunpy.bfs(G, s, backend=b),
    lambda G, s, b: gunpy.sssp(G, s, backend=b),
    lambda G, s, b: gunpy.bc(G, [s], backend=b),
])
@pytest.mark.parametrize("source", [-1, 4, 2**40, np.int64(99)])
def test_source_out_of_range(call, source, backend):
    with pytest.raises(IndexError, match="out of range"):
        call(PATH, source, backend)


@pytest.mark.parametrize("source", [1.0, "0", None, True, [0]])
def test_source_of_the_wrong_type(source):
    with pytest.raises(TypeError, match="source"):
        gunpy.bfs(PATH, source, backend="cpu")


def test_empty_graph_everywhere(backend):
    with pytest.raises(IndexError):
        gunpy.bfs(EMPTY, 0, backend=backend)
    with pytest.raises(IndexError):
        gunpy.sssp(EMPTY, 0, backend=backend)
    assert gunpy.cc(EMPTY, backend=backend).num_components == 0
    assert gunpy.pagerank(EMPTY, backend=backend).rank.shape == (0,)
    assert gunpy.bc(EMPTY, backend=backend).centrality.shape == (0,)


def test_single_vertex_everywhere(backend):
    assert gunpy.bfs(ONE, 0, backend=backend).parent.tolist() == [0]
    assert gunpy.sssp(ONE, 0, backend=backend).distance.tolist() == [0.0]
    assert gunpy.cc(ONE, backend=backend).labels.tolist() == [0]
    assert gunpy.pagerank(ONE, backend=backend).rank.tolist() == [1.0]
    assert gunpy.bc(ONE, backend=backend).centrality.tolist() == [0.0]


@pytest.mark.parametrize("w", [-0.5, np.nan, np.inf, -np.inf])
def test_bad_sssp_weights_name_the_edge(w):
    G = Graph.from_edges([0, 1], [1, 2], [1.0, w], directed=True)
    with pytest.raises(ValueError, match=r"edge 1->2"):
        gunpy.sssp(G, 0, backend="cpu")


def test_not_a_graph():
    import scipy.sparse as sp
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.bfs(sp.eye(3).tocsr(), 0, backend="cpu")
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.cc([[0, 1]], backend="cpu")


@pytest.mark.parametrize("kw,match", [
    ({"backend": "gpu"}, "backend"),
    ({"load_balance": "lb"}, "load_balance"),
    ({"direction": "both"}, "direction"),
])
def test_unknown_options_list_the_valid_ones(kw, match):
    with pytest.raises(ValueError, match=match) as err:
        gunpy.bfs(PATH, 0, **kw)
    assert "valid" in str(err.value)


def test_primitives_never_touch_the_graph_arrays(backend, small):
    G = gunpy.generators.rmat(4 if small else 8, seed=3, weight_range=(1, 9))
    before = [a.copy() for a in (G.row_offsets, G.column_indices, G.values)]
    gunpy.bfs(G, 0, direction="auto", backend=backend)
    gunpy.sssp(G, 0, backend=backend)
    gunpy.cc(G, backend=backend)
    gunpy.pagerank(G, backend=backend)
    gunpy.bc(G, [0, 1], backend=backend)
    for a, b in zip((G.row_offsets, G.column_indices, G.values), before):
        assert np.array_equal(a, b)


def test_offsets_are_int64_so_edge_counts_can_pass_int32():
    G = gunpy.generators.path(5)
    assert G.row_offsets.dtype == np.int64
    # Graph() accepts int32 offsets from a user but stores int64 (a copy)
    ro = np.array([0, 1, 2], dtype=np.int32)
    H = Graph(ro, np.array([1, 0]))
    assert H.row_offsets.dtype == np.int64 and not np.shares_memory(H.row_offsets, ro)


def test_cli_reports_one_line_errors(tmp_path, capsys):
    from gunpy.cli import main
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n")
    assert main(["run", "bfs", "--graph", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gunpy: error:") and "line" in err[0]
    assert main(["run", "bfs", "--dataset", "karate", "--source", "1000"]) == 2
    assert "out of range" in capsys.readouterr().err
    assert main(["run", "bfs", "--graph", str(tmp_path / "missing.mtx")]) == 2
    assert main(["run", "bfs"]) == 2  # no graph given


@pytest.mark.sim
def test_gpu_out_of_memory_says_how_much(monkeypatch):
    from numba import cuda

    from gunpy.backends import get_backend
    be = get_backend("cuda")

    def refuse(n, dtype=None, **kw):
        raise RuntimeError("cudaErrorMemoryAllocation")

    monkeypatch.setattr(cuda, "device_array", refuse)
    with pytest.raises(MemoryError, match=r"MiB on the GPU"):
        be.empty(10**9, np.float64)
    # a graph upload (the big allocation of a run) says what the whole graph needs
    G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], [1.0, 2.0, 3.0], directed=True)
    with pytest.raises(MemoryError, match=r"the graph \(3 vertices, 3 edges\) needs about "
                                          r"[0-9.]+ MiB on the cuda device \(CSR.*reverse"):
        be.graph(G, csc=True)


# ----------------------------------------------------------------------------- hostile files
CORPUS = str(TESTS / "data" / "hostile")
RING = {(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)}      # the symmetric Matrix Market files
CHAIN = {(0, 1), (1, 2), (2, 3)}

#: legal files: (vertices, directed, edges as {(u, v)} or {(u, v): weight}), written out
#: by hand from the file's text (undirected edges once, u < v)
LEGAL = {
    "banner_after_blank_lines.mtx": (5, False, RING),
    "banner_leading_spaces.mtx": (5, False, RING),
    "banner_after_comment.txt": (5, False, RING),
    "banner_tab_in_txt.txt": (5, False, {(0, 1): 0.5, (1, 2): 1.5, (2, 3): 2.0, (3, 4): 1.0,
                                         (0, 4): 3.0}),
    "metis_square.txt": (4, False, {(0, 1), (1, 2), (2, 3), (0, 3)}),
    "metis_isolated.graph": (4, False, {(0, 1), (0, 3), (1, 3)}),
    "metis_weighted.graph": (3, False, {(0, 1): 7.0, (1, 2): 5.0}),
    "metis_vertex_weights.graph": (3, False, {(0, 1), (1, 2)}),
    "utf8_comment.mtx": (3, True, {(0, 1), (1, 2)}),
    "bom.txt": (3, True, {(0, 1), (1, 2)}),
    "crlf.txt": (3, True, {(0, 1), (1, 2), (2, 0)}),
    "no_final_newline.txt": (3, True, {(0, 1), (1, 2)}),
    "gzip_named_txt.txt": (4, True, CHAIN),
    "edges.txt.bz2": (4, True, CHAIN),
    "edges.txt.xz": (4, True, CHAIN),
    "empty.txt": (0, True, set()),
    "only_comments.txt": (0, True, set()),
}

#: refused files: what the one-line message says
REFUSED = {
    "metis_asymmetric.graph": r"lists disagree: vertex 3 lists 1, but vertex 1 does not list 3",
    "metis_truncated.graph": r"line 5: truncated file: the header declares 5 vertices, found 4",
    "metis_bad_header.graph": r"line 1: bad METIS header '4 four'",
    "metis_out_of_range.graph": r"line 4, column 3: neighbour '7' is out of range 1..3",
    "wrapped_id.txt": r"line 2: the largest id, 4294967298, .*max_vertices=4294967299",
    "wrapped_id.mtx": r"line 4, column 3: vertex id 4294967298 is out of range for a 3 x 3",
    "id_2_53.txt": r"line 2: the largest id, 9007199254740993, would make",
    "id_past_int64.txt": r"line 2, column 3: vertex id '99999999999999999999' is out of range",
    "float_ids.txt": r"line 2, column 1: '1.0' is not an integer vertex id",
    "exponent_id.mtx": r"line 3, column 1: '1e0' is not an integer index",
    "hex_id.txt": r"line 2, column 1: not a number: '0x10'",
    "negative_id.txt": r"line 2, column 1: negative vertex id -4",
    "nan_weight.txt": r"line 2, column 5: weight 'nan' is not finite",
    "inf_weight.mtx": r"line 4, column 5: weight '-inf' is not finite",
    "integer_weight_past_2_53.mtx": r"line 3, column 5: integer value '9007199254740993' is too "
                                    r"large",
    "huge_declared_vertices.mtx": r"line 2: the size line would make 200,000,000 vertices for "
                                  r"1 edge .*max_vertices=200000000",
    "huge_declared_entries.mtx": r"line 2: the size line declares 1,000,000,000 entries, more "
                                 r"than a file of",
    "huge_implied_vertices.txt": r"line 2: the largest id, 123456789012,",
    "binary_junk.bin": r"line 1, column \d+: byte 0x[0-9a-f]{2} is not (text|ASCII)",
    "nul_in_line.txt": r"line 2, column 2: byte 0x00 is not text",
    "vertical_tab.txt": r"line 2, column 2: byte 0x0b is not text",
    "non_ascii_digit.txt": r"line 2, column 3: byte 0xef is not ASCII",
    "truncated.txt.gz": r"truncated or corrupt gzip data",
    "corrupt.txt.bz2": r"truncated or corrupt bzip2 data",
    "archive.zip": r"a zip file, not a text graph file",
    "numpy_file.npy": r"a NumPy file, not a text graph file",
    "ragged.txt": r"line 2: expected 2 columns like the first edge \(line 1\), got 3",
    "too_many_columns.txt": r"line 1: expected 'src dst' or 'src dst weight', got 4 columns",
    "long_token.txt": r"line 2, column 3: not a number: '7777.*\.\.\. \(1,501 characters\)",
    "mtx_array.mtx": r"line 1: only coordinate",
    "mtx_skew.mtx": r"line 1: unsupported symmetry 'skew-symmetric'",
    "mtx_bad_banner.mtx": r"line 1: bad banner",
    "mtx_more_entries.mtx": r"line 4: more entries than declared",
    "mtx_truncated.mtx": r"line 4: truncated file: the size line declares 3 entries, found 2",
    "mtx_zero_index.mtx": r"line 3, column 1: 0 is not a valid 1-based id",
    "mtx_not_square.mtx": r"line 2: adjacency matrix must be square, got 3 x 4",
    "mtx_empty.mtx": r"empty Matrix Market file",
}


def _read(path):
    """The reader the command line uses: Matrix Market by name, everything else by content."""
    if path.endswith(".mtx"):
        return gunpy.read_mtx(path)
    return gunpy.read_edgelist(path)


def _edges(G):
    A = G.to_scipy().tocoo()
    pairs = zip(A.row.tolist(), A.col.tolist(), A.data.tolist())
    if G.directed:
        return {(u, v): w for u, v, w in pairs}
    return {(min(u, v), max(u, v)): w for u, v, w in pairs}


def test_the_corpus_is_small_and_every_file_has_a_verdict():
    names = set(os.listdir(CORPUS)) - {"README.md"}
    assert names == set(LEGAL) | set(REFUSED)
    assert not set(LEGAL) & set(REFUSED)
    for name in names:
        assert os.path.getsize(os.path.join(CORPUS, name)) < 2048, name


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_legal_hostile_file_reads_right(name):
    n, directed, expect = LEGAL[name]
    G = _read(os.path.join(CORPUS, name))
    assert G.num_vertices == n and G.directed == directed
    got = _edges(G)
    if isinstance(expect, dict):
        assert got == expect
    else:
        assert set(got) == expect and not G.weighted
    if not directed:            # both directions stored
        assert G.num_edges == 2 * len(expect)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_hostile_file_gets_one_short_exact_line(name):
    path = os.path.join(CORPUS, name)
    with pytest.raises(gunpy.GraphFormatError) as err:
        _read(path)
    msg = str(err.value)
    assert re.search(REFUSED[name], msg), msg
    assert msg.startswith(path) and "\n" not in msg and len(msg) < len(path) + 300, msg


@pytest.mark.parametrize("name", sorted(REFUSED) + ["metis_square.txt", "empty.txt"])
def test_cli_on_hostile_files_one_line_exit_2(name, capsys):
    from gunpy.cli import main
    rc = main(["run", "bfs", "--graph", os.path.join(CORPUS, name), "--backend", "cpu"])
    out, err = capsys.readouterr()
    if name == "metis_square.txt":
        assert rc == 0 and "reached 4 of 4 vertices" in out
        return
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("gunpy: error: ")
    assert "Traceback" not in err and len(lines[0]) < 420


def test_dev_zero_and_long_lines_end_in_a_clear_error(tmp_path):
    if os.path.exists("/dev/zero"):
        with pytest.raises(gunpy.GraphFormatError, match="line 1, column 1: byte 0x00 is not"):
            gunpy.read_edgelist("/dev/zero")
    one_line = tmp_path / "line.txt"
    one_line.write_bytes(b"1" * (1 << 20) + b"\n")          # a 1 MiB line
    with pytest.raises(gunpy.GraphFormatError, match="line 1: line longer than 65,536"):
        gunpy.read_edgelist(str(one_line))
    spaced = tmp_path / "spaces.txt"
    spaced.write_bytes(b"0 1\n" + b" " * (1 << 20))        # no newline, all blanks
    with pytest.raises(gunpy.GraphFormatError, match="line 2: line longer"):
        gunpy.read_edgelist(str(spaced))


def test_cli_subprocess_one_line_no_traceback():
    """The command line in a fresh process (the corpus runs in this one): `--graph /dev/zero`."""
    target = "/dev/zero" if os.path.exists("/dev/zero") else os.path.join(CORPUS,
                                                                         "binary_junk.bin")
    code = "import sys; from gunpy.cli import main; sys.exit(main())"
    out = subprocess.run([sys.executable, "-c", code, "run", "bfs", "--graph", target,
                          "--backend", "cpu"], capture_output=True, text=True, timeout=300)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert lines[0].startswith("gunpy: error: ") and "Traceback" not in out.stderr


def test_a_gzip_bomb_is_read_in_bounded_memory(tmp_path):
    """A 240 KB gzip of 32 MB of text (500,000 edges padded with blanks): memory follows
    the edges kept (8 bytes each, two int32 arrays, grown by half at a time) plus a fixed
    block buffer, not the text: ~16 MB (the reader this one replaced: 135 MB)."""
    import gzip
    import time
    import tracemalloc
    p = tmp_path / "bomb.txt.gz"
    line = b"1 2" + b" " * 60 + b"\n"
    with gzip.open(p, "wb", compresslevel=1) as f:
        for _ in range(5):
            f.write(line * 100_000)
    text = 5 * 100_000 * len(line)
    assert os.path.getsize(p) < text // 100
    warm = tmp_path / "warm.txt"          # the CSR kernels loaded outside the trace
    warm.write_bytes(b"1 2\n2 3\n" * 150_000)
    gunpy.read_edgelist(str(warm))
    tracemalloc.start()
    t0 = time.perf_counter()
    G = gunpy.read_edgelist(str(p))
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert G.num_edges == 1 and G.num_vertices == 3
    bound = 1.5 * 8 * 500_000 + 12 * 2**20          # the edges' room + one block and the CSR
    assert bound < text / 1.5 and peak < bound, (peak / 2**20, seconds)
