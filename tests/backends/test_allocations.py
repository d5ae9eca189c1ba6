"""No allocation per level in steady state: a repeated run allocates nothing in any iteration.

Each backend counts the arrays it allocates (``Backend.counts().allocs``, the
CPU's NumPy arrays included) and every ``stats.per_iteration`` record holds its
share (``"allocs"``). A primitive's first call on a graph makes its frontiers
and work arrays; they go back with the graph's device cache when the call's
context goes (``Context.kept`` / ``Context.scratch``), so the second call, and
every later one, allocates none in any iteration (the result arrays returned to
the caller are made per call, outside the iterations). The memory goes when the
graph releases its device copy or the backend its workspaces.

Statistics cost no launch and no sync per level: cull's culled count and the edges
a frontier's ``neighbor_reduce`` reads are counted by the kernels on a context
tally and read once per run.

Every test runs on the CPU and, with ``--cuda-mode=sim``, on the CUDA backend
under the simulator; results are compared with networkx.
"""

import gc
import weakref

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import operators as ops
from gunpy.testing import nasty_graphs

GRAPHS = nasty_graphs(small=True)
G = GRAPHS["preferential_hubs"]
NXG = G.to_networkx()


def _depths(H, source):
    want = np.full(H.num_vertices, -1)
    for v, d in nx.single_source_shortest_path_length(H.to_networkx(), source).items():
        want[v] = d
    return want


def _twice(call):
    """The second of two calls (the first makes what a run keeps) and its allocs a level;
    the collector is kept out of the second, as in :func:`_allocs_of_a_repeated_call` (it
    would free lent arrays whenever the process's history makes it run)."""
    call()
    gc.collect()
    gc.disable()
    try:
        r = call()
    finally:
        gc.enable()
    return r, [it["allocs"] for it in r.stats.per_iteration]


@pytest.mark.parametrize("direction,idempotent", [("push", False), ("pull", False),
                                                  ("auto", False), ("push", True)])
def test_bfs_allocates_nothing_per_level(backend, direction, idempotent):
    for name in ("preferential_hubs", "grid"):
        H = GRAPHS[name]
        r, allocs = _twice(lambda: gunpy.bfs(H, 0, direction=direction, idempotent=idempotent,
                                             backend=backend))
        assert np.array_equal(r.depth, _depths(H, 0))
        assert len(allocs) >= 1 and allocs == [0] * len(allocs), (name, allocs)


@pytest.mark.parametrize("fuse", [True, False])
def test_sssp_allocates_nothing_per_level(backend, fuse):
    from gunpy.primitives.sssp import SSSPEnactor, SSSPProblem
    H = GRAPHS["preferential_hubs"]
    want = nx.single_source_dijkstra_path_length(H.to_networkx(), 0, weight="weight")

    def run():  # a fresh problem and enactor each call, as gunpy.sssp makes them
        problem = SSSPProblem(H, backend=backend)
        problem.reset(0)
        stats = SSSPEnactor(problem, fuse=fuse).enact()
        return problem.to_host(problem.distance), stats

    run()
    dist, stats = run()
    allocs = [it["allocs"] for it in stats.per_iteration]
    assert allocs == [0] * len(allocs) and len(allocs) >= 1, allocs
    assert {v: dist[v] for v in want} == pytest.approx(want)
    r, allocs = _twice(lambda: gunpy.sssp(H, 0, backend=backend))
    assert allocs == [0] * len(allocs)
    assert np.isinf(r.distance).sum() == H.num_vertices - len(want)


def test_cc_and_pagerank_allocate_nothing_per_level(backend):
    r, allocs = _twice(lambda: gunpy.cc(G, backend=backend))
    assert allocs == [0] * len(allocs) and len(allocs) >= 1, allocs
    for comp in nx.weakly_connected_components(NXG) if G.directed else \
            nx.connected_components(NXG):
        assert set(r.labels[list(comp)].tolist()) == {min(comp)}
    r, allocs = _twice(lambda: gunpy.pagerank(G, backend=backend))
    assert allocs == [0] * len(allocs) and len(allocs) > 2, allocs
    want = nx.pagerank(NXG, alpha=0.85, tol=1e-6)
    assert r.rank == pytest.approx([want[v] for v in range(G.num_vertices)], abs=1e-4)


def test_scc_allocates_nothing_per_level(backend):
    # trimming, the forward-backward round, the trimming it restarts
    H = GRAPHS["random_directed"]
    r, allocs = _twice(lambda: gunpy.scc(H, backend=backend))
    assert allocs == [0] * len(allocs) and len(allocs) > 5, allocs
    for comp in nx.strongly_connected_components(H.to_networkx()):
        assert set(r.labels[list(comp)].tolist()) == {min(comp)}


def _bc_run(H, source, backend):
    """One BC source through a fresh problem and enactor (gunpy.bc keeps no per-level records)."""
    from gunpy.primitives.bc import BCEnactor, BCProblem
    problem = BCProblem(H, backend=backend)
    problem.reset(source)
    stats = BCEnactor(problem).enact()
    return problem.to_host(problem.centrality), stats


def test_bc_allocates_nothing_per_level(backend):
    _bc_run(G, 0, backend)
    got, stats = _bc_run(G, 0, backend)
    allocs = [it["allocs"] for it in stats.per_iteration]
    assert allocs == [0] * len(allocs) and len(allocs) > 2, allocs
    want = nx.betweenness_centrality_subset(NXG, [0], list(NXG), normalized=False)
    scale = 1.0 if G.directed else 2.0  # gunpy.bc's rescaling, not applied by the enactor
    assert got / scale == pytest.approx([want[v] for v in range(G.num_vertices)])


def test_weighted_bc_allocates_nothing_per_level(backend):
    # SSSP's steps, the grouping by distance rank and the two walks over the groups
    from gunpy.primitives.bc_weighted import WeightedBCEnactor, WeightedBCProblem
    rng = np.random.default_rng(4)
    g = NXG.copy()
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.integers(1, 4))
    H = gunpy.Graph.from_networkx(g)
    problem = WeightedBCProblem(H, backend=backend)
    enactor = WeightedBCEnactor(problem)
    for _ in range(2):
        problem.reset(0)
        stats = enactor.enact()
    allocs = [it["allocs"] for it in stats.per_iteration]
    assert allocs == [0] * len(allocs) and len(allocs) > 4, allocs
    want = nx.betweenness_centrality_subset(g, [0], list(g), normalized=False, weight="weight")
    got = problem.to_host(problem.centrality) / 2.0  # 2 runs of source 0
    scale = 1.0 if H.directed else 2.0
    assert got / scale == pytest.approx([want[v] for v in range(H.num_vertices)])


def test_triangles_allocate_nothing_per_level(backend):
    H = GRAPHS["preferential_hubs"]
    r, allocs = _twice(lambda: gunpy.triangles(H, backend=backend))
    assert allocs == [0] * len(allocs), allocs
    want = nx.triangles(H.to_networkx().to_undirected())
    assert r.triangles.tolist() == [want[v] for v in range(H.num_vertices)]


def test_color_allocates_nothing_per_round(backend):
    r, allocs = _twice(lambda: gunpy.color(G, backend=backend))
    assert allocs == [0] * len(allocs) and len(allocs) > 2, allocs
    for u, v in NXG.edges:
        assert u == v or r.colors[u] != r.colors[v]


def test_mst_allocates_nothing_per_round(backend):
    assert not G.directed
    r, allocs = _twice(lambda: gunpy.mst(G, backend=backend))
    assert allocs == [0] * len(allocs) and len(allocs) >= 2, allocs
    assert r.num_edges == G.num_vertices - nx.number_connected_components(NXG)
    assert r.total == r.num_edges  # unweighted: every edge weighs 1


def test_geo_allocates_nothing_per_round(backend):
    from gunpy.primitives.geo import random_locations
    H = GRAPHS["grid"]
    lat, lon = random_locations(H, known=0.05, seed=3)
    r, allocs = _twice(lambda: gunpy.geo(H, lat, lon, max_iter=20, backend=backend))
    assert allocs == [0] * len(allocs) and len(allocs) > 2, allocs
    assert not np.isnan(r.latitude).any()  # connected: every vertex located in the end


def test_bc_backward_levels_cost_no_sync_for_their_edges(backend):
    """A backward level runs neighbor_reduce over a saved frontier: the edges it reads are
    counted in its kernel (no degree scan, no read); the run's total is exact."""
    got, stats = _bc_run(G, 0, backend)
    its = stats.per_iteration
    forward = [it for it in its if it["direction"] != "pull" or it["strategy"] != "neighbor_reduce"]
    backward = [it for it in its if it["strategy"] == "neighbor_reduce"]
    assert backward and forward
    if "launches" in its[0]:
        assert all(it["launches"] <= 2 and it["syncs"] == 0 for it in backward), backward
    depth = _depths(G, 0)
    deg = np.diff(G.row_offsets)
    # the backward levels read the out-edges of every level but the deepest and the source's
    levels = range(1, depth.max())
    assert sum(it["edges"] for it in backward) == sum(int(deg[depth == d].sum()) for d in levels)
    assert stats.edges_visited == sum(it["edges"] for it in its)


def test_culled_counts_reach_the_records(backend):
    """Idempotent BFS: the culled count of each level is in its record after the run, with
    no sync of its own (the CUDA kernel counts it on a tally read once per run)."""
    H = GRAPHS["star_hub"]
    r = gunpy.bfs(H, 1, direction="push", idempotent=True, backend=backend)
    assert np.array_equal(r.depth, _depths(H, 1))
    assert all(it.get("culled", 0) >= 0 for it in r.stats.per_iteration)
    ctx = ops.Context(H, backend=backend)
    ids = np.array([3, 3, 4, 5, 5, 5, 7], dtype=np.int32)
    out = ops.filter(H, ctx.frontier(ids), gunpy.Functor, (), mode="unique", context=ctx)
    assert sorted(out.to_numpy().tolist()) == [3, 4, 5, 7]
    assert ctx.record["culled"] == 3  # a standalone call reads its tally before returning


def test_scratch_is_reused_by_the_next_context_only_when_the_last_one_went(backend):
    H = GRAPHS["grid"]
    # earlier tests' contexts on this shared graph that only the collector frees go back
    # now, not during the collection below (the next context would take theirs)
    gc.collect()
    a = ops.Context(H, backend=backend)
    x = a.scratch("test.x", 10, np.int64)
    b = ops.Context(H, backend=backend)  # a is alive: b gets its own arrays
    assert b.scratch("test.x", 10, np.int64) is not x
    del a, b
    gc.collect()
    c = ops.Context(H, backend=backend)
    be = c.backend
    before = be.allocs
    assert c.scratch("test.x", 5, np.int64).shape[0] >= 5
    assert be.allocs == before  # one of the two went back and came again: no allocation


def test_memory_goes_with_the_graph_and_the_backend(backend):
    H = gunpy.generators.grid_2d(6, 6)
    gunpy.bfs(H, 0, direction="push", backend=backend)
    gc.collect()
    free, = [H._device.array(b, "context.scratch", list) for b, name in H._device.arrays()
             if name == "context.scratch"]
    kept = [arr for scratch in free for arr in scratch.values() if hasattr(arr, "shape")]
    assert kept
    refs = [weakref.ref(arr) for arr in kept]
    del free, kept
    H.release_device()
    gc.collect()
    assert all(ref() is None for ref in refs)
    be = gunpy.backends.get_backend(backend)
    w = weakref.ref(be.workspace("test.allocations", 4, np.int64))
    be.release()
    gc.collect()
    assert w() is None


def _allocs_of_a_repeated_call(backend, call, repeats=5):
    """The fewest allocations of ``repeats`` repeated calls (after a first). Lent arrays
    come back when what holds them goes: a call's pools reach their steady size over
    the first few calls (9, 5, then 4 allocations a call for blas SSSP on a path), and
    the collector, which would free held arrays whenever the process's history makes it
    run, is kept out of the measured calls. An allocation per level shows in every call."""
    be = gunpy.backends.get_backend(backend)
    call()
    least = None
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            before = be.allocs
            result = call()
            n = be.allocs - before
        finally:
            gc.enable()
        least = n if least is None else min(least, n)
    return least, result


@pytest.mark.parametrize("algorithm", ["bfs", "sssp"])
def test_blas_algorithms_allocate_nothing_per_level(backend, algorithm, small):
    """gunpy.blas BFS / SSSP: a level's vectors, masks and output frontiers are lent by the
    space's context (Context.frontier, Context.recycled), so a repeated call allocates the
    same on a path twice as deep: only its results, nothing per level."""
    from gunpy.blas import algorithms
    counts = {}
    # the simulator takes ~0.6 s a level of blas SSSP: shorter paths, two repeats there
    for n in (4, 8) if small else (6, 12):
        H = gunpy.generators.path(n)
        counts[n], r = _allocs_of_a_repeated_call(
            backend, lambda: getattr(algorithms, algorithm)(H, 0, backend=backend),
            repeats=2 if small else 5)
        main = r.depth if algorithm == "bfs" else r.distance
        assert main.tolist() == list(range(n))
        assert r.stats.iterations >= n - 1
    assert len(set(counts.values())) == 1, counts


@pytest.mark.parametrize("algorithm", ["bfs", "sssp"])
def test_dist_levels_allocate_nothing(algorithm):
    """gunpy.dist BFS / SSSP on one rank (no mpiexec needed): a level's frontiers and the
    uploads of what the exchange received are lent by the context."""
    pytest.importorskip("mpi4py")
    from gunpy import dist as gd
    counts = {}
    for n in (12, 24):
        DG = gd.DistGraph.from_graph(gunpy.generators.path(n))
        counts[n], r = _allocs_of_a_repeated_call(
            "cpu", lambda: getattr(gd, algorithm)(DG, 0))
        full = r.gather(root=0)  # the native result, in the graph's own ids
        main = full.depth if algorithm == "bfs" else full.distance
        assert main.tolist() == list(range(n))
    assert counts[12] == counts[24], counts
