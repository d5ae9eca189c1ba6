"""The copies backends keep of a graph: one per backend object, never stale (issue 8)."""


import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import gunpy
from gunpy import Graph
from gunpy.backends import get_backend


def _weighted():
    # 0 -> 1 -> 2 -> 3 and a shortcut 0 -> 3; the shortest route depends on the weights
    return Graph.from_edges([0, 1, 2, 0, 3], [1, 2, 3, 3, 4], [1.0, 1.0, 1.0, 10.0, 2.0])


def _reference(G, source=0):
    A = G.to_scipy() if G.weighted else (G.to_scipy() != 0).astype(float)
    return csgraph.dijkstra(A, directed=G.directed, indices=source)


def _impostor(name):
    """A backend object called ``name`` whose "device copy" is all zeros.

    Were copies keyed by name, the real backend of that name would be handed
    these zeros and find nothing reachable.
    """
    from gunpy.backends.cpu import CpuBackend

    def asarray(self, host):
        return np.zeros_like(np.asarray(host))
    return type("Impostor", (CpuBackend,), {"name": name, "asarray": asarray,
                                            "share": asarray})()


def _backend_keys(G):
    return G._device.backends()


# ------------------------------------------------------------------ one copy per backend object
def test_backends_with_one_name_get_separate_copies(backend):
    G = _weighted()
    fake = _impostor(backend)
    fake_copy = fake.graph(G)
    assert not fake_copy.row_offsets.any()
    r = gunpy.sssp(G, 0, backend=backend)
    assert np.allclose(r.distance, _reference(G))
    real = get_backend(backend)
    assert G._device.graph(real) is not fake_copy and G._device.graph(fake) is fake_copy
    assert fake.graph(G) is fake_copy and real.graph(G) is G._device.graph(real)  # both kept


def test_a_second_cpu_backend_instance_gets_its_own_copy():
    from gunpy.backends.cpu import CpuBackend
    G = _weighted()
    first, second = get_backend("cpu"), CpuBackend()
    a, b = first.graph(G), second.graph(G)
    assert a is not b
    # the CPU reads the graph's own arrays in place (writable aliases: no kernel writes them)
    assert np.shares_memory(a.column_indices, G.column_indices) and \
        np.shares_memory(b.column_indices, G.column_indices)
    assert not G.column_indices.flags.writeable
    assert G._device.graph(first) is a and G._device.graph(second) is b
    assert np.allclose(gunpy.sssp(G, 0, backend=second).distance, _reference(G))


def test_ptx_backend_copy_is_never_handed_to_the_real_backend(backend):
    from gunpy.testing import ON_CUDASIM
    if ON_CUDASIM:
        pytest.skip("PtxBackend needs numba's simulator off")
    pytest.importorskip("numba.cuda")
    from gunpy.testing import PtxBackend
    G = _weighted()
    ptx = PtxBackend()
    pcopy = ptx.graph(G, csc=True)
    assert isinstance(pcopy.row_offsets, np.ndarray)
    r = gunpy.sssp(G, 0, backend=backend)
    assert np.allclose(r.distance, _reference(G))
    real = get_backend(backend)
    assert G._device.graph(real) is not pcopy and G._device.graph(ptx) is pcopy
    other = PtxBackend()  # same class, same name: still its own copy
    assert other.graph(G) is not pcopy


@pytest.mark.ptx
def test_ptx_backend_keeps_its_own_copy(ptx_backend):
    from gunpy.testing import PtxBackend
    G = _weighted()
    gunpy.bfs(G, 0, backend=ptx_backend)
    pcopy = G._device.graph(ptx_backend)
    assert isinstance(pcopy.row_offsets, np.ndarray)
    assert PtxBackend().graph(G) is not pcopy
    G.values = np.ones(G.num_edges)
    assert ptx_backend not in G._device
    assert ptx_backend.graph(G).values.tolist() == [1.0] * G.num_edges


@pytest.mark.parametrize("name", ["values", "row_offsets", "column_indices"])
def test_in_place_edits_raise(name):
    G = _weighted()
    get_backend("cpu").graph(G)
    with pytest.raises(ValueError, match="read-only"):
        getattr(G, name)[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        getattr(G, name)[:] += 0
    for arr in (*G.csc(), G.out_degrees()):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 1


def test_rebinding_values_reaches_the_next_run(backend):
    G = _weighted()
    before = gunpy.sssp(G, 0, backend=backend).distance
    assert np.allclose(before, _reference(G)) and before[3] == 3.0
    new = np.array([5.0, 1.0, 5.0, 5.0, 2.0])  # CSR order: 0->1, 0->3, 1->2, 2->3, 3->4
    G.values = new
    assert not np.shares_memory(G.values, new) and new.flags.writeable  # copied, not frozen
    new[:] = 100.0  # the caller's array is the caller's
    after = gunpy.sssp(G, 0, backend=backend).distance
    assert np.allclose(after, _reference(G)) and after.tolist() == [0.0, 5.0, 10.0, 1.0, 3.0]
    G.values = None  # unweighted: hop counts
    assert not G.weighted
    assert gunpy.sssp(G, 0, backend=backend).distance.tolist() == [0.0, 1.0, 2.0, 1.0, 2.0]
    G.values = [1, 10, 1, 1, 2]
    assert np.allclose(gunpy.sssp(G, 0, backend=backend).distance, before)


def test_rebinding_structure_reaches_the_next_run(backend):
    G = _weighted()
    r = gunpy.bfs(G, 0, backend=backend, direction="pull")
    assert r.depth.tolist() == [0, 1, 2, 1, 2]
    assert G._csc is not None
    # the same rows, new targets: 0->{1, 3}, 1->2, 2->3, 3->4 become 0->{4, 2}, 1->3, 2->3, 3->1
    G.column_indices = [4, 2, 3, 3, 1]
    assert G._csc is None and len(G._device) == 0
    for direction in ("push", "pull"):
        r = gunpy.bfs(G, 0, backend=backend, direction=direction)
        assert r.depth.tolist() == [0, 3, 1, 2, 1], direction
    assert G.in_degrees().tolist() == [0, 1, 1, 2, 1]


def test_rebinding_validates_and_keeps_the_old_arrays_on_error():
    G = _weighted()
    ro, ci, w = G.row_offsets, G.column_indices, G.values
    with pytest.raises(ValueError, match="length 5"):
        G.values = [1.0, 2.0]
    with pytest.raises(ValueError, match="out of range"):
        G.column_indices = [0, 1, 2, 3, 9]
    with pytest.raises(ValueError, match="row_offsets"):
        G.row_offsets = [0, 2, 3, 4, 6, 5]
    with pytest.raises(ValueError, match="column indices"):
        G.row_offsets = [0, 2, 3, 4, 4, 4]
    assert G.row_offsets is ro and G.column_indices is ci and G.values is w
    G.row_offsets = [0, 2, 3, 4, 5, 5]  # the same edges, one more vertex
    assert G.num_vertices == 5 and G.out_degrees().tolist() == [2, 1, 1, 1, 0]
    G.row_offsets = [0, 2, 3, 4, 5, 5, 5]
    assert G.num_vertices == 6 and G.out_degrees().tolist() == [2, 1, 1, 1, 0, 0]


def test_construction_neither_aliases_nor_freezes_the_callers_arrays():
    ro, ci, w = np.array([0, 1, 2, 2]), np.array([1, 2], dtype=np.int32), np.array([1.0, 2.0])
    G = Graph(ro, ci, w)
    for mine, theirs in ((G.row_offsets, ro), (G.column_indices, ci), (G.values, w)):
        assert theirs.flags.writeable and not mine.flags.writeable
        assert not np.shares_memory(mine, theirs)
    H = Graph.from_edges(np.array([0, 1]), np.array([1, 2]), w)
    assert w.flags.writeable and not np.shares_memory(H.values, w)


def test_release_device_drops_everything(backend):
    from gunpy.backends.cpu import CpuBackend
    G = Graph.from_edges([0, 1, 2, 3], [1, 2, 0, 4], [1.0, 2.0, 3.0, 4.0], directed=False)
    labels = gunpy.cc(G, backend=backend).labels
    dist = gunpy.sssp(G, 0, backend=backend).distance
    gunpy.bfs(G, 0, backend=backend, direction="pull")
    extra = CpuBackend()
    extra.graph(G, csc=True, coo=True)
    assert len(_backend_keys(G)) == 2
    assert G._device.arrays()  # CC's all-edges ids
    G.release_device()
    assert len(G._device) == 0 and not G._device.arrays() and not _backend_keys(G)
    assert G._device.graph(get_backend(backend)) is None and G._device.graph(extra) is None
    assert np.array_equal(gunpy.cc(G, backend=backend).labels, labels)
    assert np.allclose(gunpy.sssp(G, 0, backend=backend).distance, dist)


def test_rebinding_drops_the_enactors_id_arrays_too(backend):
    G = Graph.from_edges([0, 1, 2], [1, 2, 0], directed=False)
    gunpy.cc(G, backend=backend)
    assert G._device.arrays()
    G.values = np.ones(G.num_edges)
    assert len(G._device) == 0
    assert gunpy.cc(G, backend=backend).num_components == 1


def test_pickle_and_deepcopy_keep_the_arrays_not_the_copies():
    import copy
    import pickle
    G = _weighted()
    get_backend("cpu").graph(G, csc=True)
    for H in (pickle.loads(pickle.dumps(G)), copy.deepcopy(G)):
        assert len(H._device) == 0 and len(G._device) == 1
        assert np.array_equal(H.values, G.values) and not np.shares_memory(H.values, G.values)
        with pytest.raises(ValueError, match="read-only"):
            H.values[0] = 3.0
        assert np.allclose(gunpy.sssp(H, 0, backend="cpu").distance, _reference(G))


def test_device_cache_keeps_graphs_arrays_and_facts_apart():
    """One typed cache: a backend's graph copy, its derived arrays (made once) and host facts."""
    from gunpy.graph import DeviceCache
    c = DeviceCache()
    a, b = object(), object()
    made = []
    assert c.graph(a) is None and a not in c and len(c) == 0
    assert c.keep_graph(a, "copy-a") == "copy-a" and c.graph(a) == "copy-a" and a in c
    assert c.array(a, "ids", lambda: made.append(1) or "ids-a") == "ids-a"
    assert c.array(a, "ids", lambda: made.append(1) or "other") == "ids-a" and made == [1]
    assert c.array(b, "ids", lambda: "ids-b") == "ids-b"        # per backend object
    assert b not in c and c.backends() == [a] and sorted(map(id, (k for k, _ in c.arrays()))) \
        == sorted([id(a), id(b)])
    c.learn("sorted")
    assert c.knows("sorted") and not c.knows("other") and len(c) == 4
    c.clear()
    assert len(c) == 0 and c.graph(a) is None and not c.knows("sorted")


# ------------------------------------------------------------------ graph arrays are read only
_EVERY_PRIMITIVE = {
    "bfs": lambda G: gunpy.bfs(G, 0, direction="auto"),
    "bfs_pull": lambda G: gunpy.bfs(G, 0, direction="pull"),
    "sssp": lambda G: gunpy.sssp(G, 0),
    "bc": lambda G: gunpy.bc(G),
    "cc": lambda G: gunpy.cc(G),
    "pagerank": lambda G: gunpy.pagerank(G),
    "ppr": lambda G: gunpy.ppr(G, 0),
    "hits": lambda G: gunpy.hits(G),
    "spmv": lambda G: gunpy.spmv(G, np.ones(G.num_vertices)),
    "triangles": lambda G: gunpy.triangles(G),
    "lcc": lambda G: gunpy.lcc(G),
    "cdlp": lambda G: gunpy.cdlp(G),
    "louvain": lambda G: gunpy.louvain(G),
    "kcore": lambda G: gunpy.kcore(G),
    "color": lambda G: gunpy.color(G),
    "scc": lambda G: gunpy.scc(G),
    "mst": lambda G: gunpy.mst(G),
}

_CHUNKED = ("bfs", "bfs_pull", "sssp", "bc", "cc", "pagerank")


@pytest.mark.parametrize("directed", [False, True])
def test_no_primitive_writes_the_graphs_arrays(backend, cpu_split, directed):
    # the CPU backend hands kernels the graph's own arrays (writable aliases of read-only
    # memory, no copy): a kernel that wrote one would corrupt the graph for every later call
    if backend != "cpu":
        pytest.skip("only the CPU backend hands kernels the graph's own arrays")
    if directed and cpu_split == "chunked":
        pytest.skip("the chunked kernels are checked on the undirected graph (CI time)")
    # chunked: the traversals' parallel kernels (every primitive's cost 170 s of CI, most
    # of it compiling parallel kernels no other test of this worker had compiled yet)
    names = _CHUNKED if cpu_split == "chunked" else _EVERY_PRIMITIVE
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 60, 400), rng.integers(0, 60, 400)
    G = Graph.from_edges(src, dst, rng.uniform(0.5, 2.0, 400), num_vertices=64,
                         directed=directed)
    G.csc()  # the reverse view too
    before = {k: np.array(v, copy=True) for k, v in _graph_arrays(G).items()}
    for name in names:
        if directed and name in ("louvain", "mst"):
            continue  # undirected graphs only (each raises ValueError on a directed one)
        _EVERY_PRIMITIVE[name](G)
        after = _graph_arrays(G)
        for key, arr in before.items():
            assert np.array_equal(after[key], arr), f"{name} wrote the graph's {key}"


def _graph_arrays(G):
    c = G.csc()
    return {"row_offsets": G.row_offsets, "column_indices": G.column_indices,
            "values": G.values, "in_offsets": c.in_offsets, "in_indices": c.in_indices,
            "in_edge_ids": c.in_edge_ids}
