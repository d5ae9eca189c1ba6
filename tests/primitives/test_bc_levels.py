"""BC's levels: grouped by depth and walked deepest first, many to a call
(gunpy.operators.reverse_levels); its forward phase run as fused levels."""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import Functor, operators as ops
from gunpy.frontier import FrontierStore
from gunpy.operators import reverse_levels as rl
from gunpy.primitives.bc import BCEnactor, BCProblem
from gunpy.testing import nasty_graphs, to_nx

GRAPHS = nasty_graphs(hub=40, random_n=40)


def _depths(G, source):
    d = nx.single_source_shortest_path_length(to_nx(G), source)
    return np.array([d.get(v, -1) for v in range(G.num_vertices)], dtype=np.int32)


def _store(G, depth, backend):
    ctx = ops.Context(G, backend)
    store = FrontierStore(ctx.backend, G.num_vertices)
    levels = ctx.backend.asarray(depth)
    rl.group(G, levels, int(depth.max()) + 1, store, context=ctx)
    return ctx, store


@pytest.mark.parametrize("name", ["grid", "disconnected", "random_directed", "star_hub"])
def test_group_makes_one_frontier_per_depth(name, backend):
    G = GRAPHS[name]
    depth = _depths(G, 0)
    ctx, store = _store(G, depth, backend)
    assert len(store) == depth.max() + 1
    for lv in range(len(store)):
        want = np.flatnonzero(depth == lv)
        f = store.get(lv)
        assert f.size == store.sizes[lv] == want.size
        assert sorted(f.to_numpy().tolist()) == want.tolist()  # the unreachable left out
        assert ctx.backend.read(f.length, 0) == want.size  # the device length too


def test_group_keeps_only_levels_below_the_count():
    G = GRAPHS["path_undirected"]
    depth = _depths(G, 0)
    ctx = ops.Context(G, "cpu")
    store = FrontierStore(ctx.backend, G.num_vertices)
    rl.group(G, depth, 3, store, context=ctx)
    assert [store.get(i).to_numpy().tolist() for i in range(3)] == [[0], [1], [2]]
    rl.group(G, depth, 2, store, context=ctx)  # a second fill replaces the first
    assert len(store) == 2 and store.get(1).to_numpy().tolist() == [1]


class Height(Functor):
    """out[v] = sum over v's successors w one level down of (1 + out[w]): each vertex's
    number of shortest paths to deeper vertices, weighted by their count (a BC-shaped
    gather whose values depend on the level below being final)."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        if data.depth[dst] == data.depth[src] + 1:
            return 1.0 + data.out[dst]
        return 0.0


def _height_reference(G, depth):
    out = np.zeros(G.num_vertices)
    for lv in range(depth.max() - 1, -1, -1):
        for v in np.flatnonzero(depth == lv):
            nbrs = G.column_indices[G.row_offsets[v]:G.row_offsets[v + 1]]
            out[v] = sum(1.0 + out[w] for w in nbrs if depth[w] == lv + 1)
    return out


def _walk(G, depth, backend, stop=0):
    from collections import namedtuple
    ctx, store = _store(G, depth, backend)
    Data = namedtuple("Data", "depth out")
    data = Data(ctx.backend.asarray(depth), ctx.backend.zeros(G.num_vertices, np.float64))
    level, calls, records = int(depth.max()) - 1, 0, []
    while level >= stop:
        ctx.record = {"edges": 0}
        ran = rl.reverse_levels(G, store, Height, data, data.out, start=level, stop=stop,
                                context=ctx)
        assert 1 <= ran <= level - stop + 1
        records.append((ctx.record["edges"], ctx.record.get("then")))
        level -= ran
        calls += 1
    return ctx.backend.to_host(data.out), calls, records


@pytest.mark.parametrize("name", ["grid", "random_directed", "random_undirected", "star_hub",
                                  "preferential_hubs", "self_loops_duplicates"])
def test_reverse_levels_reads_each_level_after_the_one_below(name, backend):
    G = GRAPHS[name]
    depth = _depths(G, 0)
    got, calls, _ = _walk(G, depth, backend)
    want = _height_reference(G, depth)
    assert want.max() > 0
    np.testing.assert_array_equal(got, want)


def test_cpu_runs_the_thin_levels_in_one_call_with_each_level_logged():
    G = gunpy.Graph.from_edges(np.arange(29), np.arange(1, 30), directed=False)  # a path
    depth = _depths(G, 0)
    got, calls, records = _walk(G, depth, "cpu")
    assert calls == 1
    first, then = records[0]
    # levels 28 down to 0: level 28's vertex reads 2 edges, ..., level 0's (the end) 1
    assert first == 2 and then[:, 0].tolist() == [1] * 28
    assert then[:, 1].tolist() == [2] * 27 + [1]
    np.testing.assert_array_equal(got, _height_reference(G, depth))


def test_cpu_one_level_a_call_without_fusion(monkeypatch):
    from gunpy.backends.cpu import CpuBackend
    monkeypatch.setattr(CpuBackend, "fuse_below", 0)
    G = GRAPHS["grid"]
    depth = _depths(G, 0)
    got, calls, records = _walk(G, depth, "cpu", stop=1)
    assert calls == depth.max() - 1  # levels max-1 .. 1, one a call
    assert all(then is None for _, then in records)
    want = _height_reference(G, depth)
    np.testing.assert_array_equal(got[depth >= 1], want[depth >= 1])
    assert got[0] == 0.0  # level 0 is below stop: not written


def test_cpu_a_level_past_serial_below_runs_the_parallel_kernel(monkeypatch):
    from gunpy.backends.cpu import CpuBackend
    monkeypatch.setattr(CpuBackend, "serial_below", 3)  # levels of 3+ vertices: parallel
    monkeypatch.setattr(CpuBackend, "force_min_chunk", 1)
    G = GRAPHS["grid"]
    depth = _depths(G, 0)
    got, calls, records = _walk(G, depth, "cpu")
    fat = [lv for lv in range(depth.max()) if (depth == lv).sum() >= 3]
    assert fat and calls >= len(fat) + 1
    np.testing.assert_array_equal(got, _height_reference(G, depth))


def test_reverse_levels_over_saved_frontiers(backend):
    # a store filled frontier by frontier (Enactor.save_frontier's way) serves too
    G = GRAPHS["grid"]
    depth = _depths(G, 0)
    ctx = ops.Context(G, backend)
    store = FrontierStore(ctx.backend, G.num_vertices)
    for lv in range(depth.max() + 1):
        store.save(ctx.frontier(np.flatnonzero(depth == lv).tolist()), ctx.scratch)
    from collections import namedtuple
    data = namedtuple("Data", "depth out")(ctx.backend.asarray(depth),
                                           ctx.backend.zeros(G.num_vertices, np.float64))
    level = int(depth.max()) - 1
    while level >= 0:
        level -= rl.reverse_levels(G, store, Height, data, data.out, start=level, context=ctx)
    np.testing.assert_array_equal(ctx.backend.to_host(data.out), _height_reference(G, depth))


def test_reverse_levels_rejects_bad_arguments():
    G = GRAPHS["grid"]
    depth = _depths(G, 0)
    ctx, store = _store(G, depth, "cpu")
    out = np.zeros(G.num_vertices)
    with pytest.raises(IndexError):
        rl.reverse_levels(G, store, Height, (), out, start=len(store), context=ctx)
    with pytest.raises(ValueError, match="edges"):
        rl.reverse_levels(G, store, Height, (), out, start=1, edges="both", context=ctx)
    with pytest.raises(ValueError, match="op"):
        rl.reverse_levels(G, store, Height, (), out, start=1, op="mean", context=ctx)


class Paths(Functor):
    """out[v] = sum over v's in-neighbours u one level up of out[u]: the number of
    shortest paths from the source (out[source] = 1), which needs every level above
    final first: an ascending walk over in-edges."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        if data.depth[src] + 1 == data.depth[dst]:
            return data.out[src]
        return 0.0


def _paths_reference(G, source):
    H = to_nx(G)
    d = nx.single_source_shortest_path_length(H, source)
    out = np.zeros(G.num_vertices)
    for v in sorted(d, key=d.get):
        out[v] = 1.0 if v == source else sum(out[u] for u in H.predecessors(v)
                                            if d.get(u, -2) + 1 == d[v]) \
            if H.is_directed() else sum(out[u] for u in H[v] if d.get(u, -2) + 1 == d[v])
    return out


def _walk_up(G, depth, backend, source=0):
    from collections import namedtuple
    ctx, store = _store(G, depth, backend)
    out = np.zeros(G.num_vertices)
    out[source] = 1.0
    data = namedtuple("Data", "depth out")(ctx.backend.asarray(depth), ctx.backend.asarray(out))
    level, calls, records = 1, 0, []
    while level < len(store):
        ctx.record = {"edges": 0}
        ran = rl.reverse_levels(G, store, Paths, data, data.out, start=level, edges="in",
                                ascending=True, context=ctx)
        assert 1 <= ran <= len(store) - level
        records.append((ctx.record["edges"], ctx.record.get("then")))
        level += ran
        calls += 1
    return ctx.backend.to_host(data.out), calls, records


@pytest.mark.parametrize("name", ["grid", "random_directed", "disconnected", "star_hub"])
def test_ascending_walk_reads_each_level_after_the_one_above(name, backend):
    G = GRAPHS[name]
    depth = _depths(G, 0)
    got, calls, _ = _walk_up(G, depth, backend)
    want = _paths_reference(G, 0)
    assert want.max() > 1 or name in ("star_hub", "disconnected")  # grid: many paths
    np.testing.assert_array_equal(got, want)


def test_cpu_ascending_thin_levels_in_one_call_each_logged(monkeypatch):
    G = GRAPHS["grid"]
    depth = _depths(G, 0)
    got, calls, records = _walk_up(G, depth, "cpu")
    assert calls == 1
    first, then = records[0]
    sizes = [int((depth == lv).sum()) for lv in range(1, depth.max() + 1)]
    indeg = np.bincount(G.column_indices, minlength=G.num_vertices)
    reads = [int(indeg[depth == lv].sum()) for lv in range(1, depth.max() + 1)]
    assert [first, *then[:, 1].tolist()] == reads and then[:, 0].tolist() == sizes[1:]
    from gunpy.backends.cpu import CpuBackend
    monkeypatch.setattr(CpuBackend, "fuse_below", 0)
    got2, calls2, records2 = _walk_up(G, depth, "cpu")
    assert calls2 == depth.max() and all(then is None for _, then in records2)
    np.testing.assert_array_equal(got, got2)


def test_ascending_walk_stops_at_stop_and_checks_it():
    G = GRAPHS["grid"]
    depth = _depths(G, 0)
    ctx, store = _store(G, depth, "cpu")
    from collections import namedtuple
    out = np.zeros(G.num_vertices)
    out[0] = 1.0
    data = namedtuple("Data", "depth out")(depth, out)
    assert rl.reverse_levels(G, store, Paths, data, out, start=1, stop=2, edges="in",
                             ascending=True, context=ctx) == 2
    want = _paths_reference(G, 0)
    np.testing.assert_array_equal(out[depth <= 2], want[depth <= 2])
    assert not out[depth > 2].any()
    with pytest.raises(IndexError):
        rl.reverse_levels(G, store, Paths, data, out, start=1, stop=len(store), ascending=True,
                          context=ctx)


# ----------------------------------------------------------------------------- BC itself
def _bc_once(G, source, backend, **kw):
    problem = BCProblem(G, backend=backend)
    enactor = BCEnactor(problem, **kw)
    problem.reset(source)
    stats = enactor.enact()
    return problem.extract(), stats


def test_bc_forward_levels_run_fused_on_the_cpu():
    G = gunpy.Graph.from_edges(np.arange(49), np.arange(1, 50), directed=False)
    raw, stats = _bc_once(G, 10, "cpu")
    strategies = [it["strategy"] for it in stats.per_iteration]
    assert strategies[:40].count("fused") == 40  # depths 0..39: the forward levels
    assert "group" in strategies
    ref = nx.betweenness_centrality_subset(to_nx(G), [10], list(range(50)), normalized=False)
    np.testing.assert_allclose(raw / 2, [ref[v] for v in range(50)], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["preferential_hubs", "random_undirected", "grid"])
def test_bc_pull_levels_gather_every_parent(name, backend):
    # pull without early exit: a vertex adds the path counts of all its parents
    G = GRAPHS[name]
    raw, stats = _bc_once(G, 0, backend, direction="pull")
    assert any(str(it["direction"]) == "pull" and it["strategy"] != "neighbor_reduce"
               for it in stats.per_iteration)
    ref = nx.betweenness_centrality_subset(to_nx(G), [0], list(to_nx(G)), normalized=False)
    scale = 1.0 if G.directed else 2.0
    np.testing.assert_allclose(raw / scale, [ref[v] for v in range(G.num_vertices)],
                               rtol=1e-10, atol=1e-12)


def test_bc_repeated_runs_allocate_nothing(backend):
    G = GRAPHS["grid"]
    problem = BCProblem(G, backend=backend)
    enactor = BCEnactor(problem)
    problem.reset(0)
    enactor.enact()
    before = problem.backend.counts().allocs
    problem.reset(5)
    stats = enactor.enact()
    assert problem.backend.counts().allocs == before
    assert stats.edges_visited > 0


# ----------------------------------------------------------------------------- CUDA launches
def _launches(ctx):
    c = ctx.backend.counts()
    return c.launches, c.syncs


@pytest.mark.sim
def test_cuda_thin_levels_are_one_launch_and_no_sync(backend):
    G = GRAPHS["grid"]
    depth = _depths(G, 0)
    ctx, store = _store(G, depth, backend)
    rows = store.level_rows
    assert rows[:, 0].tolist() == [int((depth == lv).sum()) for lv in range(len(store))]
    deg = np.diff(G.row_offsets)
    assert rows[:, 1].tolist() == [int(deg[depth == lv].sum()) for lv in range(len(store))]
    assert rows[:, 2].tolist() == [int(deg[depth == lv].max()) for lv in range(len(store))]
    from collections import namedtuple
    data = namedtuple("Data", "depth out")(ctx.backend.asarray(depth),
                                           ctx.backend.zeros(G.num_vertices, np.float64))
    ctx.record = {"edges": 0}
    before = _launches(ctx)
    ran = rl.reverse_levels(G, store, Height, data, data.out, start=len(store) - 2, context=ctx)
    launches, syncs = (a - b for a, b in zip(_launches(ctx), before))
    assert ran == len(store) - 1 and (launches, syncs) == (1, 0)
    then = ctx.record["then"]
    levels = range(len(store) - 2, -1, -1)
    assert [ctx.record["edges"], *then[:, 1].tolist()] == [int(deg[depth == lv].sum())
                                                           for lv in levels]
    np.testing.assert_array_equal(ctx.backend.to_host(data.out), _height_reference(G, depth))


@pytest.mark.sim
def test_cuda_ascending_thin_levels_are_one_launch(backend):
    G = GRAPHS["grid"]
    depth = _depths(G, 0)
    ctx, store = _store(G, depth, backend)
    out = np.zeros(G.num_vertices)
    out[0] = 1.0
    from collections import namedtuple
    data = namedtuple("Data", "depth out")(ctx.backend.asarray(depth), ctx.backend.asarray(out))
    ctx.record = {"edges": 0}
    before = _launches(ctx)
    ran = rl.reverse_levels(G, store, Paths, data, data.out, start=1, edges="in",
                            ascending=True, context=ctx)
    launches, syncs = (a - b for a, b in zip(_launches(ctx), before))
    # over in-edges the levels' reads come back in one copy: the one sync
    assert ran == len(store) - 1 and (launches, syncs) == (1, 1)
    indeg = np.bincount(G.column_indices, minlength=G.num_vertices)
    assert [ctx.record["edges"], *ctx.record["then"][:, 1].tolist()] == [
        int(indeg[depth == lv].sum()) for lv in range(1, len(store))]
    np.testing.assert_array_equal(ctx.backend.to_host(data.out), _paths_reference(G, 0))


@pytest.mark.sim
def test_cuda_a_hub_level_runs_grid_wide(backend):
    G = GRAPHS["star_hub"]  # the hub (level 0) has 40 leaves, over CUDA_HUB when lowered
    depth = _depths(G, 0)
    import gunpy.operators.reverse_levels as mod
    old = mod.CUDA_HUB
    mod.CUDA_HUB = 8
    try:
        got, calls, records = _walk(G, depth, backend)
    finally:
        mod.CUDA_HUB = old
    assert calls == 1 and records[0] == (40, None)  # level 0 alone, by neighbor_reduce
    np.testing.assert_array_equal(got, _height_reference(G, depth))


@pytest.mark.ptx
def test_reverse_levels_compile_to_ptx(ptx_backend):
    G = GRAPHS["grid"]
    ctx = ops.Context(G, ptx_backend)
    store = FrontierStore(ptx_backend, G.num_vertices)
    levels = ptx_backend.asarray(_depths(G, 0))
    rl.group(G, levels, 11, store, context=ctx)
    from collections import namedtuple
    data = namedtuple("Data", "depth out")(levels, ptx_backend.zeros(G.num_vertices, np.float64))
    store.set_offsets(np.arange(12), rows=np.ones((11, 4), dtype=np.int64))  # as if counted
    rl.reverse_levels(G, store, Height, data, data.out, start=9, context=ctx)
    names = " ".join(ptx_backend.kernel_names())
    assert "_cuda_count" in names and "_cuda_scatter" in names and "walk" in names


def test_a_save_after_a_fill_starts_from_clean_length_rows(backend):
    G = GRAPHS["grid"]
    depth = _depths(G, 0)
    ctx, store = _store(G, depth, backend)
    assert store.level_rows is not None and store.level_rows[:, 1].max() > 0
    store.clear()
    f = ctx.frontier([3, 4, 5])
    assert store.save(f, ctx.scratch) == 0
    assert store.level_rows is None
    view = store.get(0)
    assert view.to_numpy().tolist() == [3, 4, 5]
    assert ctx.backend.to_host(view.length).tolist() == [3, 0, 0, 0]


@pytest.mark.sim
def test_bc_launches_do_not_grow_with_depth(backend):
    # forward levels fused, one group, backward levels fused: a path twice as deep costs the
    # same launches and syncs per run (it was two launches a level and more)
    def counts(n):
        G = gunpy.Graph.from_edges(np.arange(n - 1), np.arange(1, n), directed=False)
        problem = BCProblem(G, backend=backend)
        enactor = BCEnactor(problem)
        for _ in range(2):
            problem.reset(0)
            before = problem.backend.counts()
            enactor.enact()
            after = problem.backend.counts()
        return after.launches - before.launches, after.syncs - before.syncs, \
            problem.extract()
    l30, s30, raw30 = counts(30)
    l60, s60, raw60 = counts(60)
    assert (l30, s30) == (l60, s60) and l30 <= 8 and s30 <= 4, (l30, s30)
    # two runs from 0 added up, unscaled: each v lies on the paths to the 59 - v beyond it
    assert raw60[1:59].tolist() == [float(2 * (59 - v)) for v in range(1, 59)]


class HeightTotal(Height):
    """Height, and each vertex's value added to ``total`` once final (the apply step)."""

    @staticmethod
    def apply_vertex(v, data):
        data.total[v] += 2.0 * data.out[v]


def test_reverse_levels_applies_each_vertex_once_its_value_is_final(backend, cpu_split):
    from collections import namedtuple
    G = GRAPHS["random_undirected"]
    depth = _depths(G, 0)
    ctx, store = _store(G, depth, backend)
    b = ctx.backend
    data = namedtuple("Data", "depth out total")(b.asarray(depth), b.zeros(G.num_vertices,
                                                                           np.float64),
                                                 b.full(G.num_vertices, 1.0, np.float64))
    level = int(depth.max()) - 1
    while level >= 1:
        level -= rl.reverse_levels(G, store, HeightTotal, data, data.out, start=level, stop=1,
                                   apply=True, context=ctx)
    want = _height_reference(G, depth)
    walked = (depth >= 1) & (depth < depth.max())
    total = b.to_host(data.total)
    np.testing.assert_array_equal(total[walked], 1.0 + 2.0 * want[walked])
    assert (total[~walked] == 1.0).all() and walked.sum() > 5


def test_bc_pulls_later_than_bfs():
    # no early exit: BC's pull reads every in-edge of every unvisited vertex, so its rule
    # asks for a frontier with a larger share of those edges than BFS's
    from gunpy.direction import DirectionPolicy
    from gunpy.primitives.bc import PULL_ALPHA
    problem = BCProblem(GRAPHS["grid"], backend="cpu")
    assert BCEnactor(problem).policy.alpha == PULL_ALPHA < DirectionPolicy().alpha
    mine = DirectionPolicy(alpha=30.0, pull_mapping="thread")
    assert BCEnactor(problem, direction_policy=mine).policy is mine
