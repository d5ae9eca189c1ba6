"""Push advance under every load-balancing strategy: each frontier edge is visited exactly once.

The graphs mix neighbour lists longer than a CTA, between a warp and a CTA, and
shorter than a warp, so TWC's three phases and merge-path's multi-chunk split
all run (in the simulator too: hubs are larger than its 32-64 thread blocks).
"""

from collections import namedtuple

import numpy as np
import pytest

import gunpy
from gunpy import Enactor, Functor, Problem, atomics
from gunpy.operators.advance import STRATEGIES
from gunpy.testing import (ON_CUDASIM, check_bfs_tree, graph_from_edges, graph_names, nasty_graphs,
                           reference_depths, reference_edges)

LBS = sorted(STRATEGIES) + ["auto"]
GRAPHS = nasty_graphs()


def mixed_graph(big=None):
    """Vertex 0 holds > a CTA of edges, vertex 1 between a warp and a CTA, 2-3 a few."""
    big = big or (80 if ON_CUDASIM else 700)
    mid = 40 if ON_CUDASIM else 100
    src = [0] * big + [1] * mid + [2] * 5 + [3] * 3 + [0, 0, 0]
    dst = (list(range(10, 10 + big)) + list(range(10 + big, 10 + big + mid)) +
           list(range(10 + big + mid, 15 + big + mid)) +
           list(range(15 + big + mid, 18 + big + mid)) + [1, 2, 3])
    return graph_from_edges(src, dst, directed=True)


GRAPHS["mixed_lists"] = mixed_graph()


def raw_out_edges(G, starts):
    """``(u, v)`` for every edge out of ``starts``, from G's raw edge list (not its CSR)."""
    starts = set(int(v) for v in starts)
    return sorted((u, v) for u, v, _ in reference_edges(G) if u in starts)


def visited_edges(G, count):
    """``(u, v)`` of the CSR edges the functor saw; each must have been seen at most once."""
    assert set(np.unique(count).tolist()) <= {0, 1}, "an edge was visited twice"
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    seen = np.flatnonzero(count)
    return sorted(zip(src[seen].tolist(), G.column_indices[seen].tolist()))

VisitData = namedtuple("VisitData", "count seen_weight")


class CountEdges(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        atomics.add(data.count, edge, 1)
        data.seen_weight[edge] = weight
        return True


class VisitProblem(Problem):
    Data = VisitData

    def init(self):
        self.count = self.edge_array(np.int64, fill=0)
        self.seen_weight = self.edge_array(np.float64, fill=-1.0)


class OneStep(Enactor):
    def prepare_frontier(self, frontier):
        frontier.push(self.start)

    def loop(self, frontier):
        self.result = self.advance(frontier, CountEdges, output=self.output)
        return self.result

    def is_converged(self, frontier):
        return self.iteration >= 1


def run_one_step(G, start, lb, output, backend):
    p = VisitProblem(G, backend=backend)
    e = OneStep(p, load_balance=lb)
    e.start = np.asarray(start)
    e.output = output
    e.enact()
    return p, e


@pytest.mark.parametrize("output", ["vertex", "edge", "none"])
@pytest.mark.parametrize("lb", LBS)
def test_every_frontier_edge_once(lb, output, backend, cpu_split):
    G = GRAPHS["mixed_lists"]
    start = [0, 1, 2, 3, 10]
    p, e = run_one_step(G, start, lb, output, backend)
    count = p.to_host(p.count)
    want = raw_out_edges(G, start)
    assert visited_edges(G, count) == want
    out = np.sort(e.result.to_numpy()) if output != "none" else None
    edges = np.flatnonzero(count)
    if output == "vertex":
        assert out.tolist() == sorted(v for _, v in want)
    elif output == "edge":
        assert np.array_equal(out, edges)
    else:
        assert e.result.size == 0
    assert e.stats.edges_visited == edges.size


@pytest.mark.parametrize("lb", LBS)
def test_weights_reach_the_functor(lb, backend, cpu_split):
    edges = reference_edges(GRAPHS["preferential_hubs"])  # both ways: a directed graph now
    w = np.arange(1, len(edges) + 1, dtype=float)
    G = graph_from_edges([u for u, _, _ in edges], [v for _, v, _ in edges], w,
                         num_vertices=GRAPHS["preferential_hubs"].num_vertices)
    p, _ = run_one_step(G, np.arange(G.num_vertices), lb, "none", backend)
    seen = p.to_host(p.seen_weight)
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    # each edge's functor call saw the weight its input edge was given
    got = sorted(zip(src.tolist(), G.column_indices.tolist(), seen.tolist()))
    assert got == sorted((u, v, x) for (u, v, _), x in zip(edges, w.tolist()))


@pytest.mark.parametrize("lb", LBS)
@pytest.mark.parametrize("name", graph_names(GRAPHS))
def test_bfs_every_strategy(name, lb, backend, cpu_split):
    G = GRAPHS[name]
    for s in sorted({0, G.num_vertices - 1})[: 1 if ON_CUDASIM else 2]:
        r = gunpy.bfs(G, s, load_balance=lb, direction="push", backend=backend)
        check_bfs_tree(G, s, r.depth, r.parent, reference=reference_depths(G, s))


@pytest.mark.parametrize("lb", sorted(STRATEGIES))
def test_idempotent_bfs_every_strategy(lb, backend, cpu_split):
    # the simulator leaves out the grid's ten thin levels (test_fuzz's paths run idempotent
    # with every strategy there): the hubs are what the strategies split differently
    for name in ("mixed_lists", "preferential_hubs") + (() if ON_CUDASIM else ("grid",)):
        G = GRAPHS[name]
        r = gunpy.bfs(G, 0, load_balance=lb, direction="push", idempotent=True, backend=backend)
        check_bfs_tree(G, 0, r.depth, r.parent, reference=reference_depths(G, 0))


def test_auto_picks_merge_path_for_big_uneven_frontiers(monkeypatch):
    from gunpy.backends.cpu import CpuBackend
    # the grid-wide strategies, not one core's fused levels (which take up to serial_below)
    monkeypatch.setattr(CpuBackend, "serial_below", 0)
    G = gunpy.generators.star(5000)
    r = gunpy.bfs(G, 0, direction="push", backend="cpu")
    assert r.stats.per_iteration[0]["strategy"] == "merge_path"  # one hub of 5000 edges
    # 5000 leaves x 1 edge each: even already, no scan needed
    assert r.stats.per_iteration[1]["strategy"] == "thread_mapped"
    # thin levels run fused (gunpy.operators.levels) unless a strategy is asked for
    small = gunpy.bfs(GRAPHS["path_directed"], 0, direction="push", backend="cpu")
    assert {it["strategy"] for it in small.stats.per_iteration} == {"fused"}
    small = gunpy.bfs(GRAPHS["path_directed"], 0, direction="push", backend="cpu",
                      load_balance="thread_mapped")
    assert {it["strategy"] for it in small.stats.per_iteration} == {"thread_mapped"}


def test_choose_uses_edges_and_frontier_size():
    from gunpy.operators.advance import choose
    assert choose("auto", 4000, 10) == "thread_mapped"     # few edges
    assert choose("auto", 5000, 10) == "merge_path"        # many, on few vertices
    assert choose("auto", 5000, 2500) == "thread_mapped"   # two per vertex: even
    assert choose("auto", 5001, 2500) == "merge_path"
    assert choose("auto", 100, 10, threshold=50) == "merge_path"
    assert choose("twc", 10**6, 1) == "twc"


@pytest.mark.large
@pytest.mark.parametrize("lb", sorted(STRATEGIES))
def test_cpu_heavy_hub_split_across_threads(lb):
    G = gunpy.generators.star(20000)
    p, e = run_one_step(G, [0], lb, "vertex", "cpu")
    count = p.to_host(p.count)
    assert (count[:20000] == 1).all() and (count[20000:] == 0).all()  # only the hub's edges
    assert np.array_equal(np.sort(e.result.to_numpy()), np.arange(1, 20001))


class AllocatingReach(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        scratch = np.zeros(2, dtype=np.int64)  # needs numba's runtime inside the kernel
        scratch[0] = data.count[edge] + 1
        atomics.add(data.count, edge, scratch[0] - data.count[edge])
        return True


def test_a_functor_that_allocates_still_runs_on_the_serial_path(backend, cpu_split):
    G = GRAPHS["mixed_lists"]
    p = VisitProblem(G, backend=backend)
    e = OneStep(p, load_balance="auto")
    e.start = np.asarray([0, 1])
    e.output = "vertex"
    e.loop = lambda frontier: e.advance(frontier, AllocatingReach)
    if backend == "cuda" and not ON_CUDASIM:
        # a device kernel cannot allocate: numba-cuda refuses it as the kernel compiles
        from numba.core.errors import TypingError
        with pytest.raises(TypingError, match="zeros"):
            e.enact()
        return
    e.enact()
    count = p.to_host(p.count)
    assert visited_edges(G, count) == raw_out_edges(G, [0, 1])


def _thin_builds(e):
    return [it.get("build") for it in e.stats.per_iteration]


def test_thin_work_runs_the_reference_count_free_build():
    """A fixed rule, recorded per iteration: same build every run (no timing)."""
    G = GRAPHS["mixed_lists"]
    builds = []
    for _ in range(2):
        p, e = run_one_step(G, [0, 1], "auto", "vertex", "cpu")
        builds.append(_thin_builds(e))
    assert builds == [["nrt_free"], ["nrt_free"]]


def test_a_hook_that_allocates_falls_back_to_the_serial_build():
    G = GRAPHS["mixed_lists"]
    p = VisitProblem(G, backend="cpu")
    e = OneStep(p, load_balance="auto")
    e.start = np.asarray([0, 1])
    e.output = "vertex"
    e.loop = lambda frontier: e.advance(frontier, AllocatingReach)
    e.enact()
    assert _thin_builds(e) == ["serial"]
    count = p.to_host(p.count)
    # applied once: the failed build ran nothing
    assert visited_edges(G, count) == raw_out_edges(G, [0, 1])


@pytest.mark.parametrize("build", ["serial", "parallel", "nrt_free"])
def test_thin_build_override(build, monkeypatch):
    from gunpy.backends import get_backend
    be = get_backend("cpu")
    monkeypatch.setattr(be, "thin_build", build)
    G = GRAPHS["mixed_lists"]
    p, e = run_one_step(G, [0, 1, 2, 3, 10], "auto", "vertex", "cpu")
    assert _thin_builds(e) == [build]
    count = p.to_host(p.count)
    assert visited_edges(G, count) == raw_out_edges(G, [0, 1, 2, 3, 10])


def test_thin_build_from_the_environment(monkeypatch):
    from gunpy.backends.cpu import CpuBackend
    monkeypatch.setenv("GUNPY_CPU_THIN_BUILD", "parallel")
    assert CpuBackend().thin_build == "parallel"
    monkeypatch.setenv("GUNPY_CPU_THIN_BUILD", "fastest")
    with pytest.raises(ValueError, match="nrt_free"):
        CpuBackend()


@pytest.mark.parametrize("load_balance", ["thread_mapped", "twc", "merge_path"])
def test_an_unfused_level_checks_and_looks_up_nothing(backend, load_balance, monkeypatch):
    # an Enactor binds its push advance once (gunpy.operators.advance.Push): the
    # backend's implementations are looked up, and the options checked, on the first
    # level only, so a run of 16 levels does what a run of 8 does
    from gunpy.backends.base import Backend
    from gunpy.operators import advance as advance_op
    lookups, binds = [], []
    operator, init = Backend.operator, advance_op.Push.__init__

    def counted_operator(self, name, default=None):
        lookups.append(name)
        return operator(self, name, default)

    def counted_init(self, *args, **kwargs):
        binds.append(1)
        return init(self, *args, **kwargs)
    monkeypatch.setattr(Backend, "operator", counted_operator)
    monkeypatch.setattr(advance_op.Push, "__init__", counted_init)
    seen = []
    for n in (8, 16):
        lookups.clear(), binds.clear()
        r = gunpy.bfs(gunpy.generators.path(n), 0, direction="push", load_balance=load_balance,
                      backend=backend)
        assert r.stats.iterations == n and r.depth[-1] == n - 1
        seen.append((sorted(lookups), len(binds)))
    assert seen[0] == seen[1], "a level looked up an implementation or bound its advance again"
    assert seen[0][1] == 1


# --------------------------------------------------------------- the CPU pull kernel, bitmaps
@pytest.mark.parametrize("split", ["serial", "chunked"])
@pytest.mark.parametrize("directed", [False, True])
def test_cpu_pull_prefetch_changes_nothing(directed, split, monkeypatch):
    """The CPU pull kernel asks for the next vertices' in-lists ahead of its search
    (``pull.PREFETCH``): with none, one, a few or many ahead, across task boundaries
    (``chunked``: a task per bitmap word), the same depths, the same edges examined."""
    from gunpy.backends.cpu import CpuBackend
    from gunpy.operators.advance import pull
    if split == "chunked":
        monkeypatch.setattr(CpuBackend, "serial_below", 0)
        monkeypatch.setattr(CpuBackend, "force_min_chunk", 1)
    # isolated vertices (masked by no_in_edges, never prefetched) and a partial last word
    G = gunpy.generators.rmat(10, 4, seed=3, directed=directed)
    src = int(np.argmax(G.out_degrees()))
    ref = reference_depths(G, src)
    seen = []
    for depth in (0, 1, 3, 32):
        monkeypatch.setattr(pull, "PREFETCH", depth)
        r = gunpy.bfs(G, src, direction="pull", backend="cpu")
        check_bfs_tree(G, src, r.depth, r.parent, reference=ref)
        seen.append([rec["edges"] for rec in r.stats.per_iteration])
    assert all(s == seen[0] for s in seen), seen


@pytest.mark.parametrize("serial_below", [0, 1 << 19])
@pytest.mark.parametrize("density", [0.0, 0.03, 0.5, 1.0])
def test_cpu_bitmap_queue_conversions(density, serial_below, monkeypatch):
    """bitmap_to_queue (a step per set bit: bit 31 and full words included) and or_into,
    on one core (a small bitmap) and in chunks, agree with NumPy."""
    from gunpy.backends.cpu import CpuBackend
    from gunpy.operators import Context, bitmap
    monkeypatch.setattr(CpuBackend, "serial_below", serial_below)
    n = 32 * 300 + 7  # a partial last word
    G = gunpy.generators.path(n)
    ctx = Context(G, backend="cpu")
    rng = np.random.default_rng(int(density * 100))
    ids = np.flatnonzero(rng.random(n) < density)
    if 0 < density < 1:
        ids = np.union1d(ids, np.arange(64, 96))  # a full word
    words = ctx.new_bitmap()
    f = ctx.frontier(ids)
    bitmap.queue_to_bitmap(ctx.backend, f.queue, f.length, len(ids), words)
    out = ctx.frontier(capacity=n)
    total = bitmap.bitmap_to_queue(ctx.backend, words, out.queue, out.length, ctx.scratch)
    out.assume_size(total)
    assert total == len(ids) and out.to_numpy().tolist() == ids.tolist()
    other = rng.integers(0, 1 << 32, size=words.shape[0], dtype=np.uint64).astype(np.uint32)
    expect = words | other
    bitmap.or_into(ctx.backend, words, other)
    assert np.array_equal(words, expect)
