"""read_mtx and read_edgelist: every bundled format, and malformed files named by line."""

import gzip
import os

import networkx as nx
import numpy as np
import pytest
import scipy.io

import gunpy
from gunpy import GraphFormatError

DATA = gunpy.datasets.data_dir()


def write(tmp_path, name, text, *, gz=False):
    p = tmp_path / name
    if gz:
        with gzip.open(p, "wt") as f:
            f.write(text)
    else:
        p.write_text(text)
    return str(p)


# ----------------------------------------------------------------------------- real files
@pytest.mark.parametrize("name", ["chesapeake.mtx", "karate.mtx", "netscience.mtx",
                                  "bips98_606.mtx"])
def test_mtx_matches_scipy_mmread(name):
    path = os.path.join(DATA, name)
    G = gunpy.read_mtx(path)
    A = scipy.io.mmread(path).tocsr()
    B = A.copy()
    B.setdiag(0)
    B.eliminate_zeros()
    expect = (B != 0).astype(int)
    if not G.directed:
        expect = ((expect + expect.T) > 0).astype(int)
    got = (G.to_scipy() != 0).astype(int)
    assert (got != expect).nnz == 0
    assert G.directed == ("general" in open(path).readline())


def test_bannerless_cities_mtx():
    G = gunpy.read_mtx(os.path.join(DATA, "cities.mtx"))
    assert G.num_vertices == 1185 and G.directed and G.weighted
    raw = np.loadtxt(os.path.join(DATA, "cities.mtx"), skiprows=1)
    loops = raw[:, 0] == raw[:, 1]
    assert G.num_edges == int((~loops).sum())
    A = G.to_scipy()
    r = raw[~loops][17]
    assert A[int(r[0]) - 1, int(r[1]) - 1] == pytest.approx(r[2])


def test_snap_header_relabel_and_keep():
    path = os.path.join(DATA, "CA-GrQc.txt")
    relabelled = gunpy.read_edgelist(path, directed=False, relabel=True)
    kept = gunpy.read_edgelist(path, directed=False)
    ref = nx.read_edgelist(path, comments="#", nodetype=int)
    ref.remove_edges_from(nx.selfloop_edges(ref))
    assert relabelled.num_vertices == ref.number_of_nodes() == 5242
    assert relabelled.num_edges // 2 == ref.number_of_edges()
    assert kept.num_vertices == max(ref.nodes) + 1
    assert kept.num_edges == relabelled.num_edges
    assert list(relabelled.node_labels[:3]) == sorted(ref.nodes)[:3]


def test_gzip_and_zero_based_edges():
    G = gunpy.read_edgelist(os.path.join(DATA, "facebook_combined.txt.gz"), directed=False)
    assert G.num_vertices == 4039 and G.num_edges == 2 * 88234


def test_one_based_road_network():
    G = gunpy.read_edgelist(os.path.join(DATA, "luxembourg_osm.edges"), directed=False,
                            one_based=True)
    assert G.num_vertices == 114599 and G.num_edges == 2 * 119666
    assert G.out_degrees().max() <= 6


def test_weighted_third_column():
    G = gunpy.read_edgelist(os.path.join(DATA, "email-Eu-core.edges"))
    assert G.weighted and G.directed and G.num_vertices == 1005


def test_delimiter_and_comments(tmp_path):
    p = write(tmp_path, "g.csv", "% a comment\n0,1,2.5\n1,2,0.5\n\n# another\n2,0,1\n")
    G = gunpy.read_edgelist(p, delimiter=",")
    assert G.num_edges == 3 and G.values.tolist() == [2.5, 0.5, 1.0]


def test_empty_file_gives_empty_graph(tmp_path):
    G = gunpy.read_edgelist(write(tmp_path, "e.txt", ""))
    assert G.num_vertices == 0 and G.num_edges == 0
    G = gunpy.read_edgelist(write(tmp_path, "c.txt", "# only\n# comments\n"))
    assert G.num_vertices == 0


def test_user_file_not_needed_after_load(tmp_path):
    p = write(tmp_path, "g.txt", "0 1\n1 2\n")
    G = gunpy.read_edgelist(p)
    os.unlink(p)
    assert G.num_edges == 2


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        gunpy.read_mtx("/nonexistent/x.mtx")


# ----------------------------------------------------------------------------- malformed
MTX_HEAD = "%%MatrixMarket matrix coordinate pattern general\n"


@pytest.mark.parametrize("text,line,match", [
    ("%%MatrixMarket matrix array real general\n3 3\n", 1, "coordinate"),
    ("%%MatrixMarket tensor coordinate real general\n3 3 1\n1 1 1\n", 1, "banner"),
    ("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1 0\n", 1, "field"),
    ("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1\n", 1, "symmetry"),
    (MTX_HEAD + "3 3\n1 2\n", 2, "size line"),
    (MTX_HEAD + "3 4 1\n1 2\n", 2, "square"),
    (MTX_HEAD + "3 3 3\n1 2\n2 3\n", 4, "truncated"),
    (MTX_HEAD + "3 3 1\n1 2\n2 3\n", 4, "more entries"),
    (MTX_HEAD + "% c\n3 3 2\n1 2\n0 3\n", 5, "0 is not a valid"),
    (MTX_HEAD + "3 3 2\n1 2\n2 4\n", 4, "out of range"),
    (MTX_HEAD + "3 3 2\n1 x\n2 3\n", 3, "not a number"),
    (MTX_HEAD + "3 3 2\n1 2\n2 3 7\n", 4, "expected 2 numbers"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.5\n2 3\n", 4, "expected 3"),
    (MTX_HEAD + "3 3 1\n1.5 2\n", 3, "not an integer"),
])
def test_malformed_mtx_names_the_line(tmp_path, text, line, match):
    p = write(tmp_path, "bad.mtx", text)
    with pytest.raises(GraphFormatError, match=match) as err:
        gunpy.read_mtx(p)
    assert err.value.line == line, str(err.value)
    assert f"line {line}" in str(err.value)


def test_empty_mtx(tmp_path):
    with pytest.raises(GraphFormatError, match="empty"):
        gunpy.read_mtx(write(tmp_path, "e.mtx", ""))


@pytest.mark.parametrize("text,kw,line,match", [
    ("0 1\n1 two\n", {}, 2, "not a number"),
    ("0 1\n1 2 3.0\n", {}, 2, "expected 2 columns"),
    ("# h\n0 1 1\n1 2\n", {}, 3, "expected 3 columns"),
    ("0 1\n-3 2\n", {}, 2, "negative"),
    ("0 1\n1.5 2\n", {}, 2, "not an integer"),
    ("1 2\n0 1\n", {"one_based": True}, 2, "0 is not a valid"),
    ("0 1\n1 9\n", {"num_vertices": 5}, 2, "out of range"),
    ("0 1 2 3\n", {}, 1, "columns"),
    ("0 1\n1 nan\n", {}, 2, "not an integer"),
    ("0 1 1.5\n1 2 nan\n", {}, 2, "not finite"),
])
def test_malformed_edgelist_names_the_line(tmp_path, text, kw, line, match):
    p = write(tmp_path, "bad.txt", text)
    with pytest.raises(GraphFormatError, match=match) as err:
        gunpy.read_edgelist(p, **kw)
    assert err.value.line == line, str(err.value)


def test_truncated_gzip(tmp_path):
    p = write(tmp_path, "g.txt.gz", "0 1\n" * 5000, gz=True)
    data = open(p, "rb").read()
    with open(p, "wb") as f:
        f.write(data[: len(data) // 2])
    with pytest.raises(GraphFormatError, match="gzip"):
        gunpy.read_edgelist(p)


def test_errors_are_value_errors(tmp_path):
    p = write(tmp_path, "bad.txt", "a b\n")
    with pytest.raises(ValueError):
        gunpy.read_edgelist(p)


# ----------------------------------------------------------------------------- streaming
def _random_edge_text(rng, m, n, *, weighted, comments=True):
    """An edge list with comments, blank lines, CRLF and spaces; returns (text, edges)."""
    lines, edges = ["# header"], []
    for _ in range(m):
        u, v = int(rng.integers(0, n)), int(rng.integers(0, n))
        w = round(float(rng.uniform(0.5, 9)), 3)
        edges.append((u, v, w))
        sep = " " if rng.random() < 0.7 else "\t  "
        line = f"{u}{sep}{v}" + (f" {w}" if weighted else "")
        if rng.random() < 0.1:
            line = "  " + line + " \r"
        lines.append(line)
        if comments and rng.random() < 0.05:
            lines.append("% a comment" if rng.random() < 0.5 else "")
    return "\n".join(lines) + "\n", edges


def _expected(edges, n, directed, weighted):
    """The graph the edges make, from the raw list: self-loops dropped, duplicates at
    their minimum weight, undirected edges both ways."""
    best = {}
    for u, v, w in edges:
        if u == v:
            continue
        for a, b in ((u, v),) if directed else ((u, v), (v, u)):
            best[(a, b)] = min(best.get((a, b), np.inf), w)
    return {k: (w if weighted else 1.0) for k, w in best.items()}


def _as_dict(G):
    A = G.to_scipy().tocoo()
    return {(int(u), int(v)): float(w) for u, v, w in zip(A.row, A.col, A.data)}


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
@pytest.mark.parametrize("directed,weighted", [(True, False), (False, True)])
def test_blocks_split_anywhere_same_graph(tmp_path, monkeypatch, block, directed, weighted):
    rng = np.random.default_rng(block)
    text, edges = _random_edge_text(rng, 400, 60, weighted=weighted)
    p = write(tmp_path, "g.txt", text)
    monkeypatch.setattr(gunpy.io._text, "BLOCK", block)
    G = gunpy.read_edgelist(p, directed=directed)
    assert G.num_vertices == max(max(u, v) for u, v, _ in edges) + 1
    assert _as_dict(G) == _expected(edges, G.num_vertices, directed, weighted)
    # the same lines as Matrix Market (1-based), in blocks too
    body = "".join(f"{u + 1} {v + 1}" + (f" {w}\n" if weighted else "\n") for u, v, w in edges)
    field = "real" if weighted else "pattern"
    q = write(tmp_path, "g.mtx", f"%%MatrixMarket matrix coordinate {field} general\n% c\n"
                                 f"60 60 {len(edges)}\n{body}")
    H = gunpy.read_mtx(q, directed=directed)
    assert H.num_vertices == 60 and _as_dict(H) == _expected(edges, 60, directed, weighted)


@pytest.mark.parametrize("relabel", [False, True])
def test_directed_lists_are_built_in_their_own_buffer(tmp_path, monkeypatch, relabel):
    """Past IN_PLACE_MIN_EDGES an unweighted directed list becomes its CSR graph inside
    the buffer that holds it: the same graph as the edges say, as a edge list and as
    Matrix Market, with duplicates, self-loops, a hub and (relabelled) ids past 2**31."""
    from gunpy.io import _edges
    monkeypatch.setattr(_edges, "IN_PLACE_MIN_EDGES", 0)
    built = []
    real = gunpy._csr.build_csr_in_place
    monkeypatch.setattr(gunpy._csr, "build_csr_in_place",
                        lambda *a, **k: built.append(1) or real(*a, **k))
    rng = np.random.default_rng(5)
    text, edges = _random_edge_text(rng, 500, 80, weighted=False)
    text += "0 1\n" * 3 + "".join(f"7 {v}\n" for v in range(80))
    edges += [(0, 1, 1.0)] * 3 + [(7, v, 1.0) for v in range(80)]
    big = 3 << 31 if relabel else 0       # ids past int32: relabelled to 0..k-1
    if big:
        text = "".join(f"{u + big} {v + big}\n" for u, v, _ in edges)
    G = gunpy.read_edgelist(write(tmp_path, "g.txt", text), directed=True, relabel=relabel)
    if relabel:
        ids = sorted({u for u, _, _ in edges} | {v for _, v, _ in edges})
        pos = {x: i for i, x in enumerate(ids)}
        edges = [(pos[u], pos[v], w) for u, v, w in edges]
        assert G.node_labels.tolist() == [x + big for x in ids]
    assert _as_dict(G) == _expected(edges, G.num_vertices, True, False)
    body = "".join(f"{u + 1} {v + 1}\n" for u, v, _ in edges)
    n = max(max(u, v) for u, v, _ in edges) + 1
    H = gunpy.read_mtx(write(tmp_path, "g.mtx", "%%MatrixMarket matrix coordinate pattern "
                             f"general\n{n} {n} {len(edges)}\n{body}"), directed=True)
    assert _as_dict(H) == _expected(edges, n, True, False)
    assert len(built) == 2


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_kept_edges_split_into_sources_and_targets(dtype):
    """The general builds get two arrays from the one buffer (targets packed left in it)."""
    from gunpy.io._edges import _Edges
    rng = np.random.default_rng(2)
    ids = rng.integers(0, 1 << (40 if dtype == np.int64 else 30), (3_000_001, 2))
    ids[:700_000] %= 1000   # the first block's ids fit int32: the rows widen on the way
    e = _Edges(16)
    for i in range(0, ids.shape[0], 700_000):
        e.add(ids[i:i + 700_000], None)
    e._trim()
    assert e.pairs.dtype == dtype
    src, dst = e._columns()
    assert src.flags.c_contiguous and dst.flags.c_contiguous and e.pairs is None
    assert np.array_equal(src, ids[:, 0]) and np.array_equal(dst, ids[:, 1])


def test_a_line_split_by_a_block_is_numbered_right(tmp_path, monkeypatch):
    p = write(tmp_path, "g.txt", "0 1\n" * 50 + "1 2\n" * 50 + "2 x\n")
    monkeypatch.setattr(gunpy.io._text, "BLOCK", 10)
    with pytest.raises(GraphFormatError, match="line 101, column 3: not a number: 'x'"):
        gunpy.read_edgelist(p)


def test_compressed_by_content_whatever_the_name(tmp_path):
    import bz2
    import lzma
    raw = b"0 1\n1 2\n2 0\n"
    for name, data in (("a.txt", gzip.compress(raw)), ("b.gz", bz2.compress(raw)),
                       ("c.dat", lzma.compress(raw))):
        p = tmp_path / name
        p.write_bytes(data)
        G = gunpy.read_edgelist(str(p))
        assert _as_dict(G) == {(0, 1): 1.0, (1, 2): 1.0, (2, 0): 1.0}


def test_symmetric_mtx_keeps_both_directions_when_read_directed(tmp_path):
    p = write(tmp_path, "s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n"
                                 "2 1 4.5\n3 2 1\n")
    U = gunpy.read_mtx(p)
    D = gunpy.read_mtx(p, directed=True)
    A = scipy.io.mmread(p).tocsr()           # scipy expands the symmetric entries too
    for G in (U, D):
        assert _as_dict(G) == {(int(i), int(j)): float(A[i, j]) for i, j in zip(*A.nonzero())}
    assert not U.directed and D.directed


@pytest.mark.parametrize("head", ["\n\n", "   ", "% a note first\n", "\t"])
def test_banner_found_after_blanks_spaces_comments(tmp_path, head):
    text = head + "%%matrixmarket MATRIX coordinate pattern Symmetric\n3 3 2\n2 1\n3 2\n"
    for name in ("b.mtx", "b.txt"):
        p = write(tmp_path, name, text)
        G = gunpy.read_mtx(p) if name.endswith(".mtx") else gunpy.read_edgelist(p)
        assert not G.directed and G.num_edges == 4 and G.num_vertices == 3


def test_ids_are_exact_past_2_53(tmp_path):
    big = 2**53 + 1
    p = write(tmp_path, "g.txt", f"{big} {big - 1}\n{2**62} {big}\n")
    G = gunpy.read_edgelist(p, relabel=True)
    assert [int(x) for x in G.node_labels] == [big - 1, big, 2**62]
    assert _as_dict(G) == {(1, 0): 1.0, (2, 1): 1.0}
    with pytest.raises(GraphFormatError, match=f"line 2: the largest id, {2**62},"):
        gunpy.read_edgelist(p)


def test_max_vertices_allows_many_isolated_vertices(tmp_path, monkeypatch):
    monkeypatch.setattr(gunpy.io._text, "FREE_VERTICES", 1000)
    p = write(tmp_path, "h.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
                                 "5000 5000 1\n1 2\n")
    with pytest.raises(GraphFormatError, match="max_vertices=5000"):
        gunpy.read_mtx(p)
    assert gunpy.read_mtx(p, max_vertices=5000).num_vertices == 5000
    q = write(tmp_path, "h.txt", "0 1\n1 4999\n")
    with pytest.raises(GraphFormatError, match="max_vertices=5000"):
        gunpy.read_edgelist(q)
    assert gunpy.read_edgelist(q, max_vertices=5000).num_vertices == 5000
    assert gunpy.read_edgelist(q, num_vertices=6000).num_vertices == 6000   # asked for
    assert gunpy.read_edgelist(q, relabel=True).num_vertices == 3


def test_non_ascii_only_in_comments(tmp_path):
    ok = write(tmp_path, "ok.txt", "# Zoë's graph\n0 1\n")
    assert gunpy.read_edgelist(ok).num_edges == 1
    bad = write(tmp_path, "bad.txt", "0 1 # Zoë\n")
    with pytest.raises(GraphFormatError, match="line 1, column 9: byte 0xc3 is not ASCII"):
        gunpy.read_edgelist(bad)


@pytest.mark.parametrize("delimiter", ["ab", "1", "-", "é"])
def test_bad_delimiters(tmp_path, delimiter):
    with pytest.raises(ValueError, match="delimiter"):
        gunpy.read_edgelist(write(tmp_path, "g.txt", "0 1\n"), delimiter=delimiter)


# ----------------------------------------------------------------------------- METIS
def test_read_metis_formats(tmp_path):
    plain = write(tmp_path, "p.graph", "% comment\n4 3\n2 4\n1 4\n\n1 2\n")
    G = gunpy.io.read_metis(plain)
    assert not G.directed and _as_dict(G) == {(0, 1): 1.0, (1, 0): 1.0, (0, 3): 1.0,
                                              (3, 0): 1.0, (1, 3): 1.0, (3, 1): 1.0}
    weighted = write(tmp_path, "w.graph", "3 2 011 2\n5 5 2 7\n1 1 1 7 3 2\n4 4 2 2\n")
    H = gunpy.io.read_metis(weighted)
    assert _as_dict(H) == {(0, 1): 7.0, (1, 0): 7.0, (1, 2): 2.0, (2, 1): 2.0}
    D = gunpy.io.read_metis(plain, directed=True)
    assert D.directed and D.num_edges == 6


@pytest.mark.parametrize("text,match", [
    ("3 2\n2\n1 3\n2\n9\n", "line 5: more than the 3 vertex lines"),
    ("3 5\n2\n1 3\n2\n", "declares 5 edges"),
    ("3 2 1\n2\n1 1 3 1\n2 1\n", "vertex 1's line holds 1 numbers"),
    ("3 2\n2\n1 3\n2 x\n", "line 4, column 3: not a number: 'x'"),
    ("", "empty METIS file"),
    ("3 2 1\n2 1\n1 1 3 2\n2 1\n", "lists disagree: .*weight"),
])
def test_malformed_metis(tmp_path, text, match):
    with pytest.raises(GraphFormatError, match=match):
        gunpy.io.read_metis(write(tmp_path, "bad.graph", text))


def test_metis_content_recognised_or_refused(tmp_path, monkeypatch):
    square = "4 4\n2 4\n1 3\n2 4\n1 3\n"
    G = gunpy.read_edgelist(write(tmp_path, "sq.txt", square))
    assert not G.directed and G.num_edges == 8                  # read as METIS
    E = gunpy.read_edgelist(write(tmp_path, "sq2.txt", square), format="edgelist")
    assert E.directed and E.num_edges == 2                      # (4,4) dropped, 3 distinct
    # past the first block a METIS file with equal line lengths is refused, not misread
    monkeypatch.setattr(gunpy.io._text, "BLOCK", 8)
    with pytest.raises(GraphFormatError, match="reads as a METIS graph"):
        gunpy.read_edgelist(write(tmp_path, "sq3.txt", square))
    # an edge list whose first line merely looks like a header is an edge list
    assert gunpy.read_edgelist(write(tmp_path, "e.txt", "3 3\n0 1\n1 2\n")).num_edges == 2


def test_detect_format_by_content(tmp_path):
    cases = {"a.txt": ("  %%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n", "mtx"),
             "b.txt": ("4 4\n2 4\n1 3\n2 4\n1 3\n", "metis"),
             "c.graph": ("2 1\n2\n1\n", "metis"),
             "d.mtx": ("0 1\n1 2\n", "edgelist"),
             "e.txt": ("", "edgelist")}
    for name, (text, fmt) in cases.items():
        assert gunpy.io.detect_format(write(tmp_path, name, text)) == fmt, name


@pytest.mark.parametrize("module", ["gunpy.io", "gunpy.io.mtx", "gunpy.io.edgelist",
                                    "gunpy.io.metis"])
def test_reader_docstring_examples(module):
    """The readers' examples run (tests/tooling/test_docs.py collects gunpy.io's own)."""
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
