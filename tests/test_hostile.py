"""Hostile input: every bad call gets the documented exception with a clear message."""

import numpy as np
import pytest

import gunpy
from gunpy import Graph

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
