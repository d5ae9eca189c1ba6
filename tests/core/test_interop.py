"""Graphs from arrays in GPU memory, and results left there (CuPy, PyTorch, JAX, numba).

Oracles come from the raw edge lists (networkx, scipy); the device arrays are numba
device arrays (simulated ones in sim mode) or an object that only speaks
``__cuda_array_interface__``, as CuPy and PyTorch arrays do.
"""

import pickle
import sys
import types

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import gunpy
from _helpers import ROOT


def _csr(edges, n, directed=True):
    """Host CSR arrays (int64, int64) straight from an edge list (scipy, no gunpy)."""
    src, dst = np.array(edges, dtype=np.int64).T if edges else (np.zeros(0, int),) * 2
    A = sp.csr_array((np.ones(len(src)), (src, dst)), shape=(n, n))
    if not directed:
        A = A + A.T
    A.sum_duplicates()
    A.sort_indices()
    return A.indptr.astype(np.int64), A.indices.astype(np.int64)


def _nx_depths(edges, n, source, directed=True):
    g = (nx.DiGraph if directed else nx.Graph)()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    got = nx.single_source_shortest_path_length(g, source)
    return [got.get(v, -1) for v in range(n)]


# a hub past a 32-thread block, a long path, an isolated vertex, a second component
N = 90
EDGES = ([(0, v) for v in range(1, 41)] + [(v, v + 1) for v in range(40, 80)]
         + [(82, 83), (83, 84)])


class Foreign:
    """An array that only speaks ``__cuda_array_interface__`` (as CuPy and PyTorch do),
    over a buffer the test owns (the simulator's device memory is host memory)."""

    def __init__(self, host):
        self.host = host
        self.__cuda_array_interface__ = {
            "shape": host.shape, "typestr": host.dtype.str, "strides": None,
            "data": (host.ctypes.data, False), "version": 3}


@pytest.fixture
def cuda():
    from numba import cuda
    return cuda


def _pointer(device_array):
    return device_array.__cuda_array_interface__["data"][0] \
        if hasattr(device_array, "__cuda_array_interface__") \
        else device_array._ary.__array_interface__["data"][0]


def _count_copies_down(monkeypatch, G):
    """The bytes of every copy_to_host of a device array (G's type) from now on."""
    device_type = type(G._on_device.row_offsets)
    copies = []
    real = device_type.copy_to_host

    def counted(self, *args, **kw):
        out = real(self, *args, **kw)
        copies.append(out.nbytes)
        return out

    monkeypatch.setattr(device_type, "copy_to_host", counted)
    return copies


@pytest.mark.sim
@pytest.mark.parametrize("directed", [True, False])
def test_a_device_csr_runs_bfs_with_no_host_copy_of_the_graph(cuda, directed, monkeypatch):
    n = 3000  # isolated vertices past EDGES: graph-sized arrays outgrow any counter read
    ro, ci = _csr(EDGES, n, directed)
    G = gunpy.Graph(cuda.to_device(ro), cuda.to_device(ci), directed=directed)
    assert G.on_device and "CUDA device" in G.on_device and "CUDA device>" in repr(G)
    assert (G.num_vertices, G.num_edges) == (n, ci.shape[0])
    assert G.nbytes() == ro.nbytes + ci.shape[0] * 4  # int32 indices: counted, not read
    copies = _count_copies_down(monkeypatch, G)
    r = gunpy.bfs(G, 0, direction="push", backend="cuda")
    edges = r.stats.graph500_edges  # the reached component's edges: counted on the device
    # counters and frontier sizes (the fused levels' table: 8 KiB), never a vertex array
    assert copies and max(copies) < 4 * n, copies
    assert G._row_offsets is None  # no host view of the graph was made
    dev = r.device_array("depth")
    assert dev is r.device_array("depth")  # the run's own array: no copy
    monkeypatch.undo()
    want = _nx_depths(EDGES, n, 0, directed)
    assert r.depth.tolist() == want
    degrees = np.diff(ro)[np.array(want) >= 0].sum()
    assert edges == (degrees if directed else degrees // 2)
    assert r.parent[0] == 0 and all(r.depth[r.parent[v]] == d - 1
                                    for v, d in enumerate(want) if d > 0)


@pytest.mark.sim
def test_a_foreign_array_is_read_in_place_with_copy_false(cuda):
    ro, ci = _csr(EDGES, N)
    ci32 = ci.astype(np.int32)
    G = gunpy.Graph(Foreign(ro), Foreign(ci32), copy=False)
    # the graph's arrays are the caller's memory: no device copy, no host copy
    assert _pointer(G._on_device.row_offsets) == ro.ctypes.data
    assert _pointer(G._on_device.column_indices) == ci32.ctypes.data
    assert gunpy.bfs(G, 0, direction="push").depth.tolist() == _nx_depths(EDGES, N, 0)
    # the default copies (on the device), so the caller's later writes do not reach it
    H = gunpy.Graph(Foreign(ro), Foreign(ci32))
    assert _pointer(H._on_device.row_offsets) != ro.ctypes.data


@pytest.mark.sim
def test_device_arrays_of_other_types_are_converted_on_the_device(cuda):
    ro, ci = _csr(EDGES, N, directed=False)
    w = (np.arange(ci.shape[0]) % 7 + 1).astype(np.float32)
    G = gunpy.Graph(cuda.to_device(ro.astype(np.int32)), cuda.to_device(ci),
                    cuda.to_device(w), directed=False)
    dev = G._on_device
    assert (dev.row_offsets.dtype, dev.column_indices.dtype, dev.values.dtype) == \
        (np.int64, np.int32, np.float64)
    H = gunpy.Graph(ro, ci, w.astype(np.float64), directed=False)  # the host twin
    got = gunpy.sssp(G, 0, backend="cuda").distance
    want = sp.csgraph.dijkstra(sp.csr_array((w.astype(np.float64), ci, ro), shape=(N, N)),
                               indices=0)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(gunpy.sssp(H, 0, backend="cuda").distance, want)
    # pull reads the reverse view, built on the device too
    assert gunpy.bfs(G, 5, direction="pull").depth.tolist() == \
        _nx_depths(EDGES, N, 5, directed=False)
    assert G._row_offsets is None


@pytest.mark.sim
def test_bad_device_arrays_are_refused_naming_the_array_and_index(cuda):
    dev = cuda.to_device
    cases = [
        ((np.array([1, 2, 3]), np.array([0, 1, 2])), r"row_offsets\[0\] = 1; it must be 0"),
        ((np.array([0, 2, 1, 3]), np.array([0, 1, 2])), r"row_offsets decrease at 2"),
        ((np.array([0, 1, 2]), np.array([0, 1, 0])), r"row_offsets\[-1\] = 2 but there are 3"),
        ((np.array([0, 1, 2]), np.array([1, 2])), r"column_indices\[1\] = 2 is out of range"),
        ((np.array([0, 1, 2]), np.array([1, -1])), r"column_indices\[1\] = -1 is out of range"),
        ((np.array([0, 1, 2]), np.array([1.0, 0.0])), r"column_indices must hold integer"),
        ((np.array([0, 1, 2], np.uint64), np.array([1, 0])), r"row_offsets must hold integer"),
        ((np.zeros((2, 2), np.int64), np.array([1, 0])), r"row_offsets must be one-dim"),
    ]
    for (ro, ci), message in cases:
        with pytest.raises(ValueError, match=message):
            gunpy.Graph(dev(ro), dev(ci))
    ro, ci = dev(np.array([0, 1, 2])), dev(np.array([1, 0]))
    with pytest.raises(ValueError, match=r"values must be a 1-D array of length 2"):
        gunpy.Graph(ro, ci, dev(np.ones(3)))
    with pytest.raises(ValueError, match=r"values are int64 in GPU memory"):
        gunpy.Graph(ro, ci, dev(np.ones(2, np.int64)))
    with pytest.raises(ValueError, match=r"node_labels has 3 entries for 2 vertices"):
        gunpy.Graph(ro, ci, node_labels=["a", "b", "c"])


@pytest.mark.sim
def test_a_host_backend_refuses_a_device_graph_and_to_host_gives_one(cuda):
    ro, ci = _csr(EDGES, N)
    G = gunpy.Graph(cuda.to_device(ro), cuda.to_device(ci))
    with pytest.raises(ValueError, match=r"arrays are on the .*CUDA device; the cpu backend "
                                         r"reads host memory.*G\.to_host\(\)"):
        gunpy.bfs(G, 0, backend="cpu")
    H = G.to_host()
    assert H.on_device is None and H is not G
    assert gunpy.bfs(H, 0, backend="cpu").depth.tolist() == _nx_depths(EDGES, N, 0)
    assert np.array_equal(G.row_offsets, ro) and np.array_equal(G.column_indices, ci)
    # rebinding an array moves the graph to the host, validated as ever
    G.values = np.ones(G.num_edges)
    assert G.on_device is None and G.weighted
    assert gunpy.bfs(G, 0, backend="cpu").depth.tolist() == _nx_depths(EDGES, N, 0)
    # a pickled device graph is a host graph
    assert pickle.loads(pickle.dumps(gunpy.Graph(cuda.to_device(ro), cuda.to_device(ci)))
                        ).on_device is None


@pytest.mark.sim
def test_a_cuda_result_stays_on_the_device_until_read(cuda, monkeypatch):
    G = gunpy.Graph.from_edges([e[0] for e in EDGES], [e[1] for e in EDGES], num_vertices=N)
    r = gunpy.bfs(G, 0, direction="push", backend="cuda")
    assert "depth" not in vars(r) and "on device" in repr(r)
    dev = r.device_array()  # the main field
    seen = {}
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(
        asarray=lambda a: seen.setdefault("cupy", a)))
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(
        as_tensor=lambda a, device: seen.setdefault("torch", (a, device))))
    r.to_cupy()
    r.to_torch("parent")
    assert seen["cupy"] is dev and seen["torch"] == (r.device_array("parent"), "cuda")
    assert r.depth.tolist() == _nx_depths(EDGES, N, 0)  # the NumPy copy, made once
    assert r.depth is r.depth and isinstance(r.depth, np.ndarray)
    s = pickle.loads(pickle.dumps(gunpy.bfs(G, 3, direction="push", backend="cuda")))
    assert isinstance(s.parent, np.ndarray) and s.depth[3] == 0
    assert s.stats.graph500_edges == 0  # counted before pickling: vertex 3 has no out-edges


@pytest.mark.sim
def test_a_device_graphs_components_stay_on_the_device(cuda, monkeypatch):
    """CC on a device CSR: the labels stay in GPU memory and the components are counted
    there (no vertex-sized copy down); reading ``labels`` copies them once."""
    n = 3000
    ro, ci = _csr(EDGES, n, directed=False)
    G = gunpy.Graph(cuda.to_device(ro), cuda.to_device(ci), directed=False)
    copies = _count_copies_down(monkeypatch, G)
    r = gunpy.cc(G, backend="cuda")
    assert copies and max(copies) < 4 * n, copies
    assert "labels" not in vars(r)
    dev = r.device_array()
    monkeypatch.undo()
    comps = list(nx.connected_components(_nx_graph(EDGES, n)))
    want = np.empty(n, dtype=np.int64)
    for c in comps:
        want[list(c)] = min(c)
    assert r.num_components == len(comps)
    assert np.array_equal(r.labels, want) and np.array_equal(dev.copy_to_host(), want)


@pytest.mark.sim
def test_what_cc_and_bc_pay_on_the_device_to_keep_their_results_there():
    """Pinned per warm call: CC's root count (a fill, a compute, one read), its Afforest
    sample's roots (a compute, one read of 1,024 ids at most), BC's scaling (a compute):
    no upload and no allocation."""
    from gunpy.backends import get_backend
    from gunpy.operators import Context
    from gunpy.primitives.bc import Scale, ScaleData
    from gunpy.primitives.cc import CCEnactor, CCProblem, count_roots
    be = get_backend("cuda")
    G = gunpy.Graph.from_edges([e[0] for e in EDGES], [e[1] for e in EDGES], num_vertices=N,
                               directed=False)
    problem = CCProblem(G, backend=be)
    enactor = CCEnactor(problem)

    def costs(call):
        before = be.counts()
        out = call()
        return [b - a for a, b in zip(before, be.counts())], out

    for _ in range(2):  # the second call: warm (scratch, kept arrays, kernels)
        problem.reset()
        enactor.enact()
        sample, root = costs(enactor.largest_component)
        count, num = costs(lambda: count_roots(enactor.context, problem.labels))
    assert sample == [1, 1, 0, 0] and count == [2, 1, 0, 0], (sample, count)
    assert num == nx.number_connected_components(_nx_graph(EDGES, N))
    ctx = Context(G, backend=be)
    centrality = be.zeros(N, np.float64)
    for _ in range(2):
        scale, _ = costs(lambda: gunpy.operators.compute(G, None, Scale,
                                                         ScaleData(centrality, 0.5), context=ctx))
    assert scale == [1, 0, 0, 0], scale


def _nx_graph(edges, n):
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return g


def _costs(backend, call):
    """``call()``'s (launches, syncs, uploads, allocations) on ``backend``, and its value."""
    before = backend.counts()
    out = call()
    return [b - a for a, b in zip(before, backend.counts())], out


@pytest.mark.sim
def test_what_hits_ppr_and_color_pay_on_the_device_to_keep_their_results_there(cuda,
                                                                                monkeypatch):
    """Pinned per warm call: HITS's normalisation (one compute), a PPR source's row of the
    result (a copy on the device: no launch, sync, upload or allocation counted), the
    colour count (a reduction: a fill, a launch, one read); and on a device CSR neither
    HITS nor PPR copies a vertex-sized array down."""
    from gunpy.backends import get_backend
    from gunpy.primitives.hits import HITSEnactor, HITSProblem
    be = get_backend("cuda")
    G = gunpy.Graph.from_edges([e[0] for e in EDGES], [e[1] for e in EDGES], num_vertices=N,
                               directed=False)
    problem = HITSProblem(G, backend=be)
    enactor = HITSEnactor(problem, max_iter=3)
    rank, rows = be.zeros(N, np.float64), be.empty(2 * N, np.float64)
    colors = be.asarray(np.arange(N, dtype=np.int32) % 5)
    for _ in range(2):  # the second call: warm
        enactor.enact()
        normalize, _ = _costs(be, lambda: problem.normalize(enactor.context))
        row, _ = _costs(be, lambda: be.copy(rank, rows[N:], N))
        top, got = _costs(be, lambda: gunpy.operators.reduce(colors, "max", N,
                                                             context=enactor.context))
    assert normalize == [1, 0, 0, 0] and row == [0, 0, 0, 0], (normalize, row)
    assert top == [2, 1, 0, 0] and got == 4, top
    n = 600  # isolated vertices past EDGES: a vertex-sized array outgrows any counter read
    ro, ci = _csr(EDGES, n, directed=False)
    D = gunpy.Graph(cuda.to_device(ro), cuda.to_device(ci), directed=False)
    copies = _count_copies_down(monkeypatch, D)
    h = gunpy.hits(D, max_iter=3, backend="cuda")
    p = gunpy.ppr(D, [0, 41], max_iter=3, backend="cuda")
    assert copies and max(copies) < 4 * n, copies
    assert not {"hubs", "authorities"} & set(vars(h)) and "rank" not in vars(p)
    monkeypatch.undo()
    H = gunpy.Graph(ro, ci, directed=False)
    np.testing.assert_allclose(h.hubs, gunpy.hits(H, max_iter=3, backend="cpu").hubs,
                               rtol=1e-12)
    np.testing.assert_allclose(p.rank, gunpy.ppr(H, [0, 41], max_iter=3, backend="cpu").rank,
                               rtol=1e-12)


@pytest.mark.sim
@pytest.mark.parametrize("weighted", [False, True])
def test_a_device_graphs_betweenness_stays_on_the_device(cuda, weighted, monkeypatch):
    """BC on a device CSR: the centrality is scaled where it is (networkx's factor) and
    stays in GPU memory; no vertex-sized copy down."""
    n = 3000
    ro, ci = _csr(EDGES, n, directed=False)
    G = gunpy.Graph(cuda.to_device(ro), cuda.to_device(ci), directed=False)
    copies = _count_copies_down(monkeypatch, G)
    r = gunpy.bc(G, sources=[0, 1, 5], weighted=weighted, backend="cuda")
    assert copies and max(copies) < 4 * n, copies
    assert "centrality" not in vars(r)
    monkeypatch.undo()
    g = _nx_graph(EDGES, n)
    # undirected: networkx halves the sums (gunpy's Scale by 0.5, on the device)
    want = nx.betweenness_centrality_subset(g, [0, 1, 5], list(g), normalized=False)
    np.testing.assert_allclose(r.centrality, [want[v] for v in range(n)], rtol=1e-12, atol=0)
    assert r.centrality.max() > 0


#: each primitive's options in the test below (the simulator is slow: few sources and
#: iterations)
_KW = {"bc": {"sources": [0, 5, 41]}, "ppr": {"sources": [0, 41], "max_iter": 10},
       "hits": {"max_iter": 10}, "geo": {"spatial_iter": 20}}
#: where the device's arithmetic may differ from the host's (geo: libm's sines in 2 ulp)
_RTOL = {"geo": 1e-9}
#: the counts a primitive makes of its result on the device
_COUNTS = {"cc": "num_components", "scc": "num_components", "color": "num_colors"}


@pytest.mark.sim
@pytest.mark.parametrize("name,fields", [("kcore", "core"), ("lcc", "lcc"), ("cdlp", "labels"),
                                         ("triangles", "triangles"), ("spmv", "y"),
                                         ("cc", "labels"), ("bc", "centrality"),
                                         ("ppr", "rank"), ("hits", "hubs authorities"),
                                         ("scc", "labels"), ("color", "colors"),
                                         ("geo", "latitude longitude")])
def test_cuda_results_stay_on_the_device_and_equal_the_cpus(name, fields):
    G = gunpy.Graph.from_edges([e[0] for e in EDGES], [e[1] for e in EDGES], num_vertices=N,
                               directed=False)
    kw = _KW.get(name, {})
    r = getattr(gunpy, name)(G, backend="cuda", **kw)
    assert "on device" in repr(r)
    cpu = getattr(gunpy, name)(G, backend="cpu", **kw)
    rtol = _RTOL.get(name, 1e-12)
    for field in fields.split():
        assert field not in vars(r)  # not copied down yet
        dev = r.device_array(field)
        want = getattr(cpu, field)
        np.testing.assert_allclose(dev.copy_to_host(), want, rtol=rtol)
        np.testing.assert_allclose(getattr(r, field), want, rtol=rtol)
    count = _COUNTS.get(name)  # counted where the result is
    assert count is None or getattr(r, count) == getattr(cpu, count)


@pytest.mark.sim
def test_a_directed_graphs_strong_components_stay_on_the_device():
    """SCC's own path (the undirected graph above is CC's): the labels stay on the device
    and the components are counted there. The oracle is scipy's (test_scc.py holds the CPU
    run to it): compiling SCC's CPU kernels would cost the simulator run ~10 s more."""
    from scipy.sparse.csgraph import connected_components
    edges = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3), (4, 5), (6, 7), (7, 8), (8, 6),
             (9, 6), (10, 10)]  # cycles of three and two, a self-loop, vertex 11 alone
    src, dst = np.array(edges).T
    G = gunpy.Graph.from_edges(src, dst, num_vertices=12)
    r = gunpy.scc(G, backend="cuda")
    assert "on device" in repr(r) and "labels" not in vars(r)
    num, comp = connected_components(sp.csr_array((np.ones(len(src)), (src, dst)),
                                                  shape=(12, 12)), connection="strong")
    smallest = {c: v for v, c in reversed(list(enumerate(comp.tolist())))}
    want = [smallest[c] for c in comp.tolist()]
    assert r.num_components == num == 7
    assert r.device_array().copy_to_host().tolist() == want == r.labels.tolist()
    # what the count pays a warm call: a fill, a compute, one read (CC's count_roots)
    from gunpy.primitives.cc import count_roots
    from gunpy.primitives.scc import SCCEnactor, SCCProblem
    problem = SCCProblem(G, backend="cuda")
    enactor = SCCEnactor(problem)
    enactor.enact()
    for _ in range(2):
        count, got = _costs(problem.backend, lambda: count_roots(enactor.context, problem.color))
    assert count == [2, 1, 0, 0] and got == 7, count


def test_results_pickle_and_go_to_torch_from_the_host(monkeypatch):
    G = gunpy.Graph.from_edges([0, 1], [1, 2], num_vertices=4)
    r = gunpy.bfs(G, 0, backend="cpu")
    s = pickle.loads(pickle.dumps(r))
    assert s.depth.tolist() == [0, 1, 2, -1] and s.stats.graph500_edges == 2
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(from_numpy=lambda a: a))
    assert r.to_torch() is r.depth  # a host result's tensor shares its memory
    with pytest.raises(ValueError, match=r"'rank' is not one of the fields"):
        r.to_torch("rank")
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(ImportError, match=r"to_cupy\(\) needs CuPy"):
        r.to_cupy()


def test_arrays_split_between_host_and_device_are_refused():
    class OnTheGPU:
        __cuda_array_interface__ = {"shape": (2,), "typestr": "<i8", "data": (0, False),
                                    "version": 3}

    with pytest.raises(ValueError, match=r"weights is in GPU memory .* but src is in host"):
        gunpy.Graph.from_edges([0, 1], [1, 0], OnTheGPU())
    with pytest.raises(ValueError, match=r"row_offsets is in GPU memory .* but column_indices "
                                         r"is in host memory"):
        gunpy.Graph(OnTheGPU(), [1, 0])


@pytest.mark.sim
def test_the_gpu_days_zero_copy_script_runs(capsys):
    """bench/gpu_zerocopy.py (the GPU day's zero-copy phase) on the simulator's numba arrays."""
    import importlib.util
    import os
    path = str(ROOT / "bench" / "gpu_zerocopy.py")
    spec = importlib.util.spec_from_file_location("gpu_zerocopy", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main([]) == 0
    out = capsys.readouterr().out.splitlines()
    for library in ("numba", "dlpack"):  # numba arrays, and the same behind DLPack only
        rows = [ln for ln in out if ln.startswith(f"| {library} ")]
        assert [r.split(" | ")[1:3] for r in rows] == [["bfs push", "ok"], ["bfs auto", "ok"],
                                                        ["pagerank", "ok"]][:len(rows)]
        assert len(rows) == (3 if library == "numba" else 2)
        # BFS: no graph-sized copy down and no host view of the graph
        assert all(r.split(" | ")[6:8] == ["0", "no"] for r in rows[:2]), rows
    # a DLPack consumer reads the result's own memory
    assert [r.split(" | ")[8] for r in out if r.startswith("| dlpack | bfs")] == \
        ["yes |", "yes |"]


def _random_edges(seed, n=30, m=80):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    src[:3], dst[:3] = [4, 4, 9], [4, 7, 7]  # a self-loop, and a duplicate pair below
    src[3], dst[3] = 4, 7
    return src, dst, rng.integers(1, 9, m).astype(np.float64)


@pytest.mark.sim
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("loops,duplicates", [(True, True), (False, False), (True, False)])
def test_edges_in_gpu_memory_are_built_into_a_csr_there(cuda, directed, loops, duplicates):
    for seed in range(2):
        src, dst, w = _random_edges(seed)
        options = dict(directed=directed, remove_self_loops=loops, remove_duplicates=duplicates)
        want = gunpy.Graph.from_edges(src, dst, w, num_vertices=32, **options)
        G = gunpy.Graph.from_edges(cuda.to_device(src.astype(np.int32)), cuda.to_device(dst),
                                   cuda.to_device(w.astype(np.float32)), num_vertices=32,
                                   **options)
        assert G.on_device and G.directed == directed
        assert np.array_equal(G.row_offsets, want.row_offsets)
        assert np.array_equal(G.column_indices, want.column_indices)
        if duplicates:  # the smallest weight of each duplicate
            assert np.array_equal(G.values, want.values)
        else:  # duplicates kept: the same weights in each row, in some order
            rows = np.repeat(np.arange(32), np.diff(want.row_offsets))
            assert sorted(zip(rows, G.column_indices, G.values)) == \
                sorted(zip(rows, want.column_indices, want.values))


@pytest.mark.sim
def test_a_pyg_edge_index_on_the_gpu_stays_there_through_pull_pagerank_and_sssp(cuda):
    src, dst, w = _random_edges(5)
    H = gunpy.Graph.from_edges(src, dst, w, directed=False)  # the host twin (same rules)
    G = gunpy.Graph.from_edge_index(cuda.to_device(np.stack([src, dst])), cuda.to_device(w),
                                    directed=False)
    g = nx.Graph()
    g.add_nodes_from(range(H.num_vertices))
    g.add_edges_from(zip(src.tolist(), dst.tolist()))
    g.remove_edges_from(nx.selfloop_edges(g))
    got = gunpy.bfs(G, 0, direction="pull")
    want = nx.single_source_shortest_path_length(g, 0)
    assert got.depth.tolist() == [want.get(v, -1) for v in range(H.num_vertices)]
    r = gunpy.pagerank(G, backend="cuda")
    assert "on device" in repr(r)
    np.testing.assert_allclose(r.rank, gunpy.pagerank(H, backend="cpu").rank, atol=1e-9)
    d = gunpy.sssp(G, 0, backend="cuda")
    np.testing.assert_allclose(d.distance, gunpy.sssp(H, 0, backend="cpu").distance)
    assert G._row_offsets is None  # none of it made a host view of the graph


@pytest.mark.sim
def test_device_edges_are_checked_as_on_the_host(cuda):
    dev = cuda.to_device
    with pytest.raises(ValueError, match=r"dst\[1\] = -2 is negative"):
        gunpy.Graph.from_edges(dev(np.array([0, 1])), dev(np.array([1, -2])))
    with pytest.raises(ValueError, match=r"src\[2\] = 5 is out of range for num_vertices = 4"):
        gunpy.Graph.from_edges(dev(np.array([0, 1, 5])), dev(np.array([1, 2, 0])),
                               num_vertices=4)
    with pytest.raises(ValueError, match=r"src and dst differ in length \(2 vs 3\)"):
        gunpy.Graph.from_edges(dev(np.array([0, 1])), dev(np.array([1, 2, 0])))
    with pytest.raises(ValueError, match=r"src must hold integer vertex ids"):
        gunpy.Graph.from_edges(dev(np.array([0.0, 1.0])), dev(np.array([1, 0])))
    with pytest.raises(ValueError, match=r"weights must be a 1-D array of length 2"):
        gunpy.Graph.from_edges(dev(np.array([0, 1])), dev(np.array([1, 0])), dev(np.ones(3)))
    with pytest.raises(ValueError, match=r"edge_index must have shape \(2, E\)"):
        gunpy.Graph.from_edge_index(dev(np.zeros((3, 2), dtype=np.int64)))
    empty = gunpy.Graph.from_edges(dev(np.zeros(0, np.int64)), dev(np.zeros(0, np.int64)))
    assert (empty.num_vertices, empty.num_edges) == (0, 0)


@pytest.mark.sim
def test_an_undirected_device_csr_out_of_order_or_asymmetric_pulls_via_the_host(cuda):
    ro, ci = np.array([0, 2, 3, 4]), np.array([2, 1, 0, 0])  # row 0 out of order
    G = gunpy.Graph(cuda.to_device(ro), cuda.to_device(ci), directed=False)
    assert gunpy.bfs(G, 1, direction="pull").depth.tolist() == [1, 0, 2]
    # weighted pull reads the twins map: an asymmetric "undirected" graph is refused there,
    # as on the host, with the vertex named
    bad = gunpy.Graph(cuda.to_device(np.array([0, 1, 1])), cuda.to_device(np.array([1])),
                      cuda.to_device(np.array([2.0])), directed=False)
    with pytest.raises(ValueError, match=r"adjacency must be symmetric: vertex 0 has 1"):
        gunpy.pagerank(bad)


@pytest.mark.sim
@pytest.mark.parametrize("renumber", [True, False])
def test_a_table_in_gpu_memory_is_renumbered_and_built_there(cuda, renumber):
    """A cuDF frame's stand-in: a dict of device columns (``df[column]`` is all
    from_pandas reads). Integer labels, negative ones too, renumbered on the device in
    sorted order, as the host renumbers a pandas frame."""
    import pandas as pd
    src, dst = np.array([10, 20, 20, -5, 30, 30]), np.array([20, 10, 30, 10, 30, 40])
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    if not renumber:
        src, dst = src % 7 + 5, dst % 7  # ids 0..n-1
    host = gunpy.Graph.from_pandas(pd.DataFrame({"s": src, "t": dst, "w": w}), "s", "t",
                                   "w", directed=False, renumber=renumber)
    G = gunpy.Graph.from_pandas({"s": cuda.to_device(src), "t": cuda.to_device(dst),
                                 "w": cuda.to_device(w)}, "s", "t", "w", directed=False,
                                renumber=renumber)
    assert G.on_device and G.node_labels == host.node_labels
    if renumber:
        assert G.node_labels == [-5, 10, 20, 30, 40]
    for name in ("row_offsets", "column_indices", "values"):
        assert np.array_equal(getattr(G, name), getattr(host, name)), name
    with pytest.raises(ValueError, match=r"column 's' is in GPU memory .* but column 't' is "
                                         r"in host memory"):
        gunpy.Graph.from_pandas({"s": cuda.to_device(src), "t": dst}, "s", "t")


class DLPackOnly:
    """A producer that speaks DLPack only (no ``__cuda_array_interface__``), as JAX
    arrays and array API libraries may: NumPy's own capsule, relabelled as CUDA memory
    (the simulator's device memory is host memory), unversioned or 1.x."""

    def __init__(self, host, versioned=False, device_type=2, lanes=1):
        self.host, self.versioned, self.device_type = host, versioned, device_type
        self.lanes = lanes
        self.streams = []

    def __dlpack_device__(self):
        return self.device_type, 0

    def __dlpack__(self, *, stream=None):
        from gunpy.backends import dlpack
        self.streams.append(stream)
        capsule = self.host.__dlpack__(max_version=(1, 0) if self.versioned else None)
        name = b"dltensor_versioned" if self.versioned else b"dltensor"
        address = dlpack._get_pointer(capsule, name)
        managed = (dlpack._Versioned if self.versioned else dlpack._Managed
                   ).from_address(address)
        managed.dl_tensor.device.device_type = self.device_type
        managed.dl_tensor.dtype.lanes = self.lanes
        return capsule


@pytest.mark.sim
@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_producers_are_read_in_place_and_freed_with_the_graph(cuda, versioned):
    import gc
    import weakref
    ro, ci = _csr(EDGES, N)
    ci32 = ci.astype(np.int32)
    freed = weakref.finalize(ci32, lambda: None)  # NumPy's deleter drops its reference
    ro_in, ci_in = DLPackOnly(ro, versioned), DLPackOnly(ci32, versioned)
    G = gunpy.Graph(ro_in, ci_in, copy=False)
    assert G.on_device and ci_in.streams == [1]  # the legacy default stream, gunpy's
    assert _pointer(G._on_device.column_indices) == ci32.ctypes.data  # no copy
    assert gunpy.bfs(G, 0, direction="push").depth.tolist() == _nx_depths(EDGES, N, 0)
    src, dst = np.array(EDGES).T
    H = gunpy.Graph.from_edges(DLPackOnly(src), DLPackOnly(dst), num_vertices=N,
                               directed=False)
    assert H.on_device and gunpy.bfs(H, 81).depth.tolist() == \
        _nx_depths(EDGES, N, 81, directed=False)
    del G, ci32, ci_in
    gc.collect()
    assert not freed.alive  # the capsule's deleter ran when the graph went


@pytest.mark.sim
def test_dlpack_in_other_memory_or_types_is_refused_with_what_it_was(cuda):
    ro, ci = _csr(EDGES, N)
    with pytest.raises(ValueError, match=r"row_offsets is in ROCm memory \(device 0\); "
                                         r"gunpy reads device arrays from CUDA memory"):
        gunpy.Graph(DLPackOnly(ro, device_type=10), DLPackOnly(ci, device_type=10))
    with pytest.raises(ValueError, match=r"column_indices must hold integer vertex ids, "
                                         r"got dtype bool"):
        gunpy.Graph(DLPackOnly(ro), DLPackOnly(np.ones(ci.shape[0], bool)))
    with pytest.raises(ValueError, match=r"column_indices has a DLPack type gunpy cannot "
                                         r"read \(code 0, 64 bits, 4 lanes\)"):
        gunpy.Graph(DLPackOnly(ro), DLPackOnly(ci, lanes=4))


@pytest.mark.sim
def test_a_cuda_result_is_handed_out_through_dlpack_without_a_copy(cuda):
    import gc
    from gunpy.backends import dlpack
    G = gunpy.Graph.from_edges([e[0] for e in EDGES], [e[1] for e in EDGES], num_vertices=N)
    r = gunpy.bfs(G, 0, direction="push", backend="cuda")
    out = r.to_dlpack()
    assert out.__dlpack_device__() == (2, 0) and out.shape == (N,)
    before = len(dlpack._LIVE)
    # read back by gunpy's own consumer, as torch.from_dlpack would read it
    view = dlpack.from_dlpack("depth", out)
    assert view.__cuda_array_interface__["data"][0] == _pointer(r.device_array("depth"))
    assert view.__cuda_array_interface__["typestr"] == np.dtype(r.device_array().dtype).str
    assert len(dlpack._LIVE) == before + 1  # the tensor lives while the consumer holds it
    del view
    gc.collect()
    assert len(dlpack._LIVE) == before  # the consumer's deleter released it
    capsule = out.__dlpack__(stream=None)  # never consumed: freed with the capsule
    assert len(dlpack._LIVE) == before + 1
    del capsule
    gc.collect()
    assert len(dlpack._LIVE) == before
    copy = dlpack.from_dlpack("depth", types.SimpleNamespace(
        __dlpack__=lambda stream=None: out.__dlpack__(stream=stream, copy=True)))
    assert copy.__cuda_array_interface__["data"][0] != _pointer(r.device_array("depth"))
    with pytest.raises(BufferError, match=r"not CPU memory"):
        out.__dlpack__(dl_device=(1, 0))
    # a host run's field is its NumPy array, which speaks DLPack from host memory
    h = gunpy.bfs(G.to_host(), 0, backend="cpu")
    assert h.to_dlpack() is h.depth
    assert np.from_dlpack(h.to_dlpack()).tolist() == r.depth.tolist()


@pytest.mark.sim
def test_personalisation_vectors_in_gpu_memory_are_checked_and_scaled_there(cuda,
                                                                            monkeypatch):
    n = 400  # a float64 vertex array (3,200 bytes) outgrows every counter read
    src, dst = np.ascontiguousarray(np.array(EDGES).T)
    G = gunpy.Graph.from_edges(cuda.to_device(src), cuda.to_device(dst), num_vertices=n)
    p = np.zeros(n)
    p[[3, 41, 82]] = [2.0, 1.0, 1.0]
    d = np.ones(n)
    p_dev, d_dev = cuda.to_device(p), Foreign(d)
    copies = _count_copies_down(monkeypatch, G)
    r = gunpy.pagerank(G, personalization=p_dev, dangling=d_dev, nstart=DLPackOnly(d),
                       tol=1e-12, backend="cuda")
    assert copies and max(copies) < 4 * n, copies  # no vertex-sized array came down
    monkeypatch.undo()
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(EDGES)
    want = nx.pagerank(g, personalization=dict(enumerate(p)), dangling=dict(enumerate(d)),
                       tol=1e-12)
    assert r.converged
    np.testing.assert_allclose(r.rank, [want[v] for v in range(n)], rtol=1e-6, atol=1e-12)
    assert p_dev.copy_to_host().tolist() == p.tolist() and d.tolist() == [1.0] * n
    for bad, message in [(-1.0, r"personalization must be finite and non-negative; "
                                r"personalization\[7\] = -1\.0"),
                         (np.nan, r"personalization\[7\] = nan")]:
        q = p.copy()
        q[7] = bad
        with pytest.raises(ValueError, match=message):
            gunpy.pagerank(G, personalization=cuda.to_device(q), backend="cuda")
    with pytest.raises(ValueError, match=r"personalization sums to 0"):
        gunpy.pagerank(G, personalization=cuda.to_device(np.zeros(n)), backend="cuda")
    with pytest.raises(ValueError, match=r"one value per vertex \(400\), got shape \(5,\)"):
        gunpy.pagerank(G, personalization=cuda.to_device(np.ones(5)), backend="cuda")
    with pytest.raises(ValueError, match=r"personalization is in GPU memory; the cpu "
                                         r"backend reads host memory"):
        gunpy.pagerank(G.to_host(), personalization=p_dev, backend="cpu")


@pytest.mark.sim
def test_source_lists_in_gpu_memory_are_read_once(cuda):
    src, dst = np.ascontiguousarray(np.array(EDGES).T)
    G = gunpy.Graph.from_edges(cuda.to_device(src), cuda.to_device(dst), num_vertices=N,
                               directed=False)
    g = nx.Graph(EDGES)
    g.add_nodes_from(range(N))
    sources = np.array([0, 41, 82])
    want = nx.betweenness_centrality_subset(g, sources.tolist(), list(g), normalized=False)
    got = gunpy.bc(G, sources=Foreign(sources), backend="cuda").centrality
    np.testing.assert_allclose(got, [want[v] for v in range(N)])
    r = gunpy.ppr(G, sources=DLPackOnly(sources[:2]), max_iter=2, backend="cuda")
    assert r.sources.tolist() == [0, 41]
    with pytest.raises(IndexError, match=r"source 90 is out of range"):
        gunpy.bc(G, sources=cuda.to_device(np.array([90])), backend="cuda")


@pytest.mark.sim
def test_what_a_device_vector_and_a_device_edge_count_cost(cuda):
    # pinned per call: a personalisation vector is converted, checked, summed and scaled
    # on the device (two numbers read back); an edge count is one launch and one read
    from gunpy.backends import get_backend
    from gunpy.backends.interop import adopt_vertex_weights, reached_edges
    be = get_backend("cuda")
    p = cuda.to_device(np.arange(1.0, 51.0))
    adopt_vertex_weights(be, p, 50, "p")  # the reduction's workspace, once
    before = be.counts()
    x = adopt_vertex_weights(be, p, 50, "p")
    spent = [b - a for a, b in zip(before, be.counts())]
    assert spent == [5, 2, 1, 2]  # launches, syncs, uploads, allocations (x and a flag)
    np.testing.assert_allclose(x.copy_to_host(), np.arange(1.0, 51.0) / 1275.0)
    ro = cuda.to_device(np.arange(51, dtype=np.int64))  # every vertex of degree 1
    ids = cuda.to_device(np.where(np.arange(50) % 2 == 0, 0, -1).astype(np.int32))
    before = be.counts()
    assert reached_edges(be, ro, ids) == 25
    assert [b - a for a, b in zip(before, be.counts())] == [1, 1, 1, 1]
