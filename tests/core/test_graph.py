"""Graph construction: CSR layout, validation, conversions, the reverse view."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import gunpy
from gunpy import Graph


def test_csr_layout_and_dtypes():
    G = Graph.from_edges([2, 0, 0, 1], [0, 2, 1, 2], [5.0, 1.0, 2.0, 3.0])
    assert G.row_offsets.dtype == np.int64 and G.column_indices.dtype == np.int32
    assert G.row_offsets.tolist() == [0, 2, 3, 4]
    assert G.column_indices.tolist() == [1, 2, 2, 0]  # rows sorted
    assert G.values.tolist() == [2.0, 1.0, 3.0, 5.0]


def test_undirected_stores_both_directions_and_dedupes_with_min_weight():
    G = Graph.from_edges([0, 1, 0, 1], [1, 0, 1, 1], [4.0, 2.0, 7.0, 1.0], directed=False)
    assert G.num_edges == 2  # 0-1 both ways; the self-loop 1-1 removed
    assert G.values.tolist() == [2.0, 2.0]
    keep = Graph.from_edges([0, 1], [1, 1], directed=False, remove_self_loops=False)
    assert keep.num_edges == 3


def test_keep_duplicates():
    G = Graph.from_edges([0, 0], [1, 1], remove_duplicates=False)
    assert G.num_edges == 2


@pytest.mark.parametrize("src,dst,kw,match", [
    ([0, 1], [1], {}, "differ in length"),
    ([0, -1], [1, 2], {}, r"src\[1\] = -1 is negative"),
    ([0, 1.5], [1, 2], {}, "integer vertex ids, got floats"),
    ([0, 1.0], [1, 2], {}, "got floats"),                   # whole floats too: no astype
    ([0, 1], [1, 5], {"num_vertices": 3}, r"dst\[1\] = 5 is out of range"),
    ([[0, 1]], [[1, 2]], {}, "one-dimensional"),
    (["a"], ["b"], {}, "integer vertex ids"),
    ([0, np.nan], [1, 2], {}, "got floats"),
    ([True, False], [1, 0], {}, "got booleans"),
    ([0, 1], [1, 2], {"num_vertices": -1}, ">= 0"),
    ([0, 1], [1, 2], {"num_vertices": 3.0}, "must be an integer"),
    ([0, 1], [1, 2], {"num_vertices": "3"}, "must be an integer"),
    ([0], [1], {"weights": [1.0, 2.0]}, "length 1"),
    ([0], [1], {"weights": ["1.5"]}, "real numbers"),
    ([0], [1], {"weights": [1 + 2j]}, "real numbers"),
    ([0], [1], {"weights": np.array([2**53 + 1])}, "exactly"),
])
def test_bad_edge_arrays(src, dst, kw, match):
    with pytest.raises(ValueError, match=match):
        Graph.from_edges(src, dst, **kw)


# Hostile id arrays, each refused before any conversion: "wrapped" (an int64 id that an
# int32 cast would bring into range), "truncated" (floats), "parsed" (strings), out of
# range, negative, past int64, Python objects, booleans.
HOSTILE_IDS = {
    "wrapped": (np.array([1, 2**32 + 2], dtype=np.int64), "out of range"),
    "wrapped_uint64": (np.array([1, 2**64 - 1], dtype=np.uint64), "out of range|overflows"),
    "truncated": (np.array([1.0, 2.7]), "got floats"),
    "parsed": (np.array(["1", "2"]), "got strings"),
    "out_of_range": (np.array([1, 3]), "out of range"),
    "negative": (np.array([1, -1]), "negative|out of range"),
    "past_int64": (np.array([1, 2**63 + 1], dtype=np.uint64), "overflows|out of range"),
    "objects": (np.array([1, 2**70], dtype=object), "Python objects"),
    "booleans": (np.array([True, False]), "got booleans"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_IDS))
def test_hostile_column_indices_refused_by_the_csr_constructor(case):
    ids, match = HOSTILE_IDS[case]
    before = ids.copy()
    with pytest.raises(ValueError, match=match):
        Graph(np.array([0, 1, 2, 2]), ids)                  # 3 vertices, 2 edges
    assert np.array_equal(ids, before)
    G = Graph(np.array([0, 1, 2, 2]), np.array([1, 2]))
    with pytest.raises(ValueError, match=match):
        G.column_indices = ids                              # the setter checks the same
    assert G.column_indices.tolist() == [1, 2]


@pytest.mark.parametrize("case", sorted(HOSTILE_IDS))
def test_hostile_edge_ids_refused_by_from_edges(case):
    ids, match = HOSTILE_IDS[case]
    with pytest.raises(ValueError, match=match):
        Graph.from_edges(np.array([0, 1]), ids, num_vertices=3)
    with pytest.raises(ValueError, match=match):
        Graph.from_edges(ids, np.array([0, 1]), num_vertices=3, directed=False)


@pytest.mark.parametrize("offsets,match", [
    (np.array([0.0, 1.0, 2.0]), "got floats"),
    (np.array(["0", "1", "2"]), "got strings"),
    (np.array([0, 2, 1, 2]), "decrease at 2"),
    (np.array([1, 1, 2]), r"row_offsets\[0\] = 1"),
    (np.array([0, 1, 3]), r"row_offsets\[-1\] = 3 but there are 2"),
    (np.array([0, 2**64 - 1, 2], dtype=np.uint64), "overflows int64"),
    (np.array([0, 2**32 + 1, 2], dtype=np.int64), "decrease"),
    (np.array([], dtype=np.int64), "num_vertices \\+ 1 entries"),
    (np.array([[0, 1, 2]]), "one-dimensional"),
])
def test_hostile_row_offsets(offsets, match):
    with pytest.raises(ValueError, match=match):
        Graph(offsets, np.array([1, 0]))
    G = Graph(np.array([0, 1, 2]), np.array([1, 0]))
    with pytest.raises(ValueError, match=match):
        G.row_offsets = offsets
    assert G.row_offsets.tolist() == [0, 1, 2]


def test_integer_kinds_of_any_width_are_read_exactly():
    for dt in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
               np.uint64):
        G = Graph(np.array([0, 1, 2, 3], dtype=dt), np.array([1, 2, 0], dtype=dt))
        assert G.column_indices.tolist() == [1, 2, 0] and G.row_offsets.dtype == np.int64
        H = Graph.from_edges(np.array([0, 1, 2], dtype=dt), np.array([1, 2, 0], dtype=dt))
        assert H.column_indices.tolist() == [1, 2, 0]


def test_weights_validated_in_every_constructor():
    ro, ci = np.array([0, 1, 2]), np.array([1, 0])
    for bad, match in ((["x", "y"], "real numbers"), ([1j, 2j], "real numbers"),
                       (np.array([1, 2**60]), "exactly")):
        with pytest.raises(ValueError, match=match):
            Graph(ro, ci, bad)
        with pytest.raises(ValueError, match=match):
            Graph(ro, ci).values = bad
    A = sp.csr_array(np.array([[0, 1j], [1j, 0]]))
    with pytest.raises(ValueError, match="real numbers"):
        Graph.from_scipy(A)                                  # not cut to its real part
    B = sp.csr_array(np.array([[0, 2**60], [3, 0]], dtype=np.int64))
    with pytest.raises(ValueError, match="exactly"):
        Graph.from_scipy(B)
    assert Graph.from_scipy(sp.csr_array(np.array([[0, 2**53], [3, 0]]))).values.tolist() == \
        [2.0**53, 3.0]


@pytest.mark.parametrize("w,match", [
    (None, "not an int or a float"), ("3", "not an int or a float"),
    (2**53 + 1, "exactly"), ([1], "not an int or a float"),
])
def test_networkx_weights_that_would_change_are_refused(w, match):
    g = nx.Graph()
    g.add_edge("a", "b", weight=1.5)
    g.add_edge("b", "c", weight=w)
    with pytest.raises(ValueError, match=rf"edge \('b', 'c'\).*{match}"):
        Graph.from_networkx(g)


def test_networkx_exact_weights_kept():
    g = nx.DiGraph()
    g.add_edge(0, 1, weight=2**53)
    g.add_edge(1, 2, weight=True)
    g.add_edge(2, 0, weight=np.float32(0.5))
    assert Graph.from_networkx(g).values.tolist() == [2.0**53, 1.0, 0.5]


def test_user_arrays_not_mutated_or_aliased():
    src = np.array([3, 0, 1], dtype=np.int32)
    dst = np.array([0, 1, 2], dtype=np.int64)
    w = np.array([1.0, 2.0, 3.0])
    copies = (src.copy(), dst.copy(), w.copy())
    G = Graph.from_edges(src, dst, w, directed=False)
    gunpy.bfs(G, 0, backend="cpu")
    for a, b in zip((src, dst, w), copies):
        assert np.array_equal(a, b) and a.flags.writeable  # the graph's own arrays are read-only
    assert not np.shares_memory(G.column_indices, dst)
    ro = np.array([0, 1, 2])
    H = Graph(ro, np.array([1, 0]))
    ro[0] = 99
    assert H.row_offsets[0] == 0


def test_from_scipy_symmetry_detection():
    A = sp.csr_array(np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]], dtype=float))
    assert not Graph.from_scipy(A).directed
    B = sp.csr_array(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=float))
    G = Graph.from_scipy(B)
    assert G.directed and G.num_edges == 2
    U = Graph.from_scipy(B, directed=False)
    assert U.num_edges == 4
    assert (Graph.from_scipy(A).to_scipy() != A).nnz == 0


def test_from_scipy_rejects_non_square():
    with pytest.raises(ValueError, match="square"):
        Graph.from_scipy(sp.csr_array(np.ones((2, 3))))


def test_from_networkx_labels_and_roundtrip():
    g = nx.DiGraph()
    g.add_weighted_edges_from([("x", "y", 2.0), ("y", "z", 3.0)])
    g.add_node("lonely")
    G = Graph.from_networkx(g)
    assert G.node_labels == ["x", "y", "z", "lonely"] and G.weighted
    h = G.to_networkx()
    assert set(h.edges(data="weight")) == set(g.edges(data="weight"))
    assert set(h.nodes) == set(g.nodes)


def test_csc_maps_edge_ids():
    G = Graph.from_edges([0, 0, 2, 1], [1, 2, 1, 0], [1.0, 2.0, 3.0, 4.0])
    c = G.csc()
    # in-edges of vertex 1: from 0 (edge 0->1) and 2 (edge 2->1)
    lo, hi = c.in_offsets[1], c.in_offsets[2]
    srcs = c.in_indices[lo:hi].tolist()
    assert sorted(srcs) == [0, 2]
    for p in range(lo, hi):
        e = c.in_edge_ids[p]
        assert G.column_indices[e] == 1
        u = np.searchsorted(G.row_offsets, e, side="right") - 1
        assert u == c.in_indices[p]
    assert np.array_equal(G.in_degrees(), [1, 2, 1])


def test_index_type_widens_past_int32():
    from gunpy.graph import _index_dtype
    assert _index_dtype(2**31 - 1) == np.int32
    assert _index_dtype(2**31) == np.int64  # ids that overflow int32


def test_ids_past_int64_rejected():
    with pytest.raises(ValueError, match="overflows int64"):
        Graph.from_edges(np.array([0], dtype=np.uint64), np.array([2**63 + 1], dtype=np.uint64))


def test_empty_and_single_vertex_graphs(backend):
    G = Graph.from_edges([], [])
    assert G.num_vertices == 0 and G.num_edges == 0
    assert gunpy.cc(G, backend=backend).num_components == 0
    S = Graph.from_edges([], [], num_vertices=1)
    assert gunpy.bfs(S, 0, backend=backend).depth.tolist() == [0]


def test_backend_copies_are_kept_then_released(backend):
    G = Graph.from_edges([0, 1, 2], [1, 2, 0], directed=False)
    first = gunpy.cc(G, backend=backend).labels
    assert first.tolist() == [0, 0, 0]
    assert len(G._device) >= 2  # the CSR copy and the all-edges ids CC starts from
    assert gunpy.backends.get_backend(backend) in G._device  # keyed by the backend object
    assert np.array_equal(gunpy.cc(G, backend=backend).labels, first)
    G.release_device()
    assert len(G._device) == 0 and G._device.backends() == []
    assert np.array_equal(gunpy.cc(G, backend=backend).labels, first)


def test_graph_arrays_are_read_only_and_rebinding_drops_copies(backend):
    G = Graph.from_edges([0, 1], [1, 2], [1.0, 2.0])
    assert gunpy.sssp(G, 0, backend=backend).distance.tolist() == [0.0, 1.0, 3.0]
    with pytest.raises(ValueError, match="read-only"):
        G.values[1] = 5.0
    G.values = [1.0, 5.0]
    assert len(G._device) == 0  # a stale device copy of the old weights would give 3.0
    assert gunpy.sssp(G, 0, backend=backend).distance.tolist() == [0.0, 1.0, 6.0]


# ----------------------------------------------------------------------------- tables, PyG, DLPack
def _edge_table(rng, labels, m):
    import pandas as pd
    pick = rng.integers(0, len(labels), size=(2, m))
    return pd.DataFrame({"a": [labels[i] for i in pick[0]], "b": [labels[i] for i in pick[1]],
                         "w": rng.integers(1, 9, size=m).astype(float)})


@pytest.mark.parametrize("labels", [["x", "y", "z", "hub", "q", "r"], [7, 3, 100, 42, 5],
                                    list(range(6)), [("t", 1), ("t", 2), ("u", 0)]],
                         ids=["strings", "sparse-ints", "dense-ints", "tuples"])
@pytest.mark.parametrize("directed", [True, False])
def test_from_pandas_equals_networkx_from_pandas_edgelist(labels, directed):
    rng = np.random.default_rng(len(labels) + directed)
    df = _edge_table(rng, labels, 30).drop_duplicates(["a", "b"])
    if not directed:  # one weight per unordered pair, as networkx keeps the last one
        key = df[["a", "b"]].apply(lambda r: frozenset((r.a, r.b)), axis=1)
        df = df[~key.duplicated()]
    H = nx.from_pandas_edgelist(df, "a", "b", edge_attr="w",
                                create_using=nx.DiGraph if directed else nx.Graph)
    G = gunpy.Graph.from_pandas(df, "a", "b", edge_attr="w", directed=directed,
                                remove_self_loops=False)
    mine = G.to_networkx()
    assert set(mine.nodes) == set(H.nodes) and G.num_vertices == H.number_of_nodes()
    pair = tuple if directed else frozenset
    assert {(pair((u, v)), d["weight"]) for u, v, d in mine.edges(data=True)} == \
        {(pair((u, v)), d["w"]) for u, v, d in H.edges(data=True)}
    assert mine.number_of_edges() == H.number_of_edges()


def test_from_pandas_without_renumbering_uses_the_ids():
    import pandas as pd
    df = pd.DataFrame({"source": [0, 4], "target": [4, 2]})
    G = gunpy.Graph.from_pandas(df, renumber=False)
    assert G.num_vertices == 5 and G.node_labels is None and not G.weighted
    assert gunpy.bfs(G, 0).depth.tolist() == [0, -1, 2, -1, 1]
    # a plain dict of columns is a table too
    assert gunpy.Graph.from_pandas({"s": np.array([1, 2]), "t": np.array([2, 1])}, "s", "t",
                                   renumber=False).num_edges == 2


def test_from_pandas_mistakes_are_clear():
    import pandas as pd
    df = pd.DataFrame({"source": ["a"], "target": ["b"], "w": [1.0]})
    with pytest.raises(ValueError, match=r"target='dst' is not a column .*'source', 'target', 'w'"):
        gunpy.Graph.from_pandas(df, target="dst")
    with pytest.raises(ValueError, match="edge_attr must name one column"):
        gunpy.Graph.from_pandas(df, edge_attr=["w"])
    with pytest.raises(ValueError, match="must hold integer vertex ids, got strings"):
        gunpy.Graph.from_pandas(df, renumber=False)
    bad = pd.DataFrame({"source": ["a"], "target": ["b"], "w": ["heavy"]})
    with pytest.raises(ValueError, match="weights must be real numbers"):
        gunpy.Graph.from_pandas(bad, edge_attr="w")


def test_from_edge_index_is_pyg_order():
    ei = np.array([[0, 0, 1, 3], [1, 2, 2, 1]])
    G = gunpy.Graph.from_edge_index(ei, np.array([1.0, 2.0, 3.0, 4.0]), num_nodes=5)
    assert G.num_vertices == 5
    assert sorted(zip(*G.to_scipy().nonzero())) == [(0, 1), (0, 2), (1, 2), (3, 1)]
    assert G.to_scipy()[3, 1] == 4.0
    for shape in [(4,), (3, 4), (4, 2)]:
        with pytest.raises(ValueError, match=r"edge_index must have shape \(2, E\)"):
            gunpy.Graph.from_edge_index(np.zeros(shape, dtype=np.int64))


class _DLPackOnly:
    """An array that speaks DLPack only (as a PyTorch or JAX array on the host does)."""

    def __init__(self, a, device=(1, 0)):
        self.a, self.device = a, device

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.device


def test_host_dlpack_arrays_are_read_and_device_arrays_refused_with_the_device_named():
    src, dst = np.array([0, 1, 2]), np.array([1, 2, 0])
    G = gunpy.Graph.from_edges(_DLPackOnly(src), _DLPackOnly(dst),
                               _DLPackOnly(np.array([1.0, 2.0, 3.0])))
    assert G.num_edges == 3 and G.values.tolist() == [1.0, 2.0, 3.0]
    ro, ci = G.row_offsets.copy(), G.column_indices.copy()
    assert gunpy.Graph(_DLPackOnly(ro), _DLPackOnly(ci)).num_edges == 3

    class OnTheGPU:
        __cuda_array_interface__ = {"shape": (3,), "typestr": "<i8", "data": (0, False),
                                    "version": 3}

    # device arrays build on the device (tests/core/test_interop.py); split ones are refused
    with pytest.raises(ValueError, match=r"src is in GPU memory .* but dst is in host memory"):
        gunpy.Graph.from_edges(OnTheGPU(), dst)
    with pytest.raises(ValueError, match=r"weights is in ROCm memory \(device 1\) but src is "
                                         r"in host memory"):
        gunpy.Graph.from_edges(src, dst, _DLPackOnly(np.ones(3), device=(10, 1)))
    with pytest.raises(ValueError, match=r"edge_index .*(CUDA backend cannot run here|"
                                         r"no __cuda_array_interface__)"):
        gunpy.Graph.from_edge_index(_DLPackOnly(np.zeros((2, 1), np.int64), device=(2, 0)))
    with pytest.raises(ValueError, match=r"column 'source' is in GPU memory .* but column "
                                         r"'target' is in host memory"):
        gunpy.Graph.from_pandas({"source": OnTheGPU(), "target": dst}, renumber=False)
    # new weights for a host graph are read on the host
    G = gunpy.Graph.from_edges(src, dst)
    with pytest.raises(ValueError, match=r"weights is a .*OnTheGPU in GPU memory .*"
                                         r"Graph\.from_edges"):
        G.values = OnTheGPU()


def test_in_degrees_of_an_undirected_graph_build_no_reverse_graph():
    g = nx.Graph([(0, 1), (1, 2), (2, 2), (3, 1)])
    g.add_node(4)
    G = Graph.from_networkx(g, remove_self_loops=False)
    got = G.in_degrees()
    assert G._csc is None  # no twin edge ids computed for a count the graph already has
    labels = list(G.node_labels) if G.node_labels is not None else list(range(5))
    # networkx counts a self-loop twice in a degree; the graph stores it once
    want = [g.degree(v) - (1 if g.has_edge(v, v) else 0) for v in labels]
    assert got.tolist() == want
    assert np.array_equal(got, np.diff(G.csc().in_offsets))
