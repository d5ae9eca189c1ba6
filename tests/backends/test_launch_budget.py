"""Kernel launches and host synchronisations per iteration, counted on the CUDA backend.

A GPU level on a road network costs little work and many round trips, so the
launches and device-to-host synchronisations each level makes decide its
speed there. The CUDA backend counts them (under the simulator too) and each
iteration's ``stats.per_iteration`` entry records ``launches``, ``syncs`` and
``uploads``. These tests pin today's counts so that a regression fails.

A push BFS level is one launch (the advance, which also sums the out-degrees
of what it emits, so the next level needs no degree scan) and one sync (the
output's size and degree sum, read together); a pull level is three launches
(zero the output bitmap, the pull kernel, OR it into the visited bitmap) and
one sync (its counters). Statistics cost none: cull's culled count and a
frontier's neighbor_reduce edges are counted by the kernels on a context tally
read once per run (a BC backward level is one launch and no sync). Uploads
(``write``, ``copy_in``, small ``asarray``) are queued asynchronously from a
pinned staging ring on the launch stream and count as ``uploads``; a copy that
blocks (a large array, or a wait for the ring) counts as a sync.
"""

import numpy as np
import pytest

import gunpy
from gunpy import operators as ops
from gunpy.testing import nasty_graphs
from _helpers import advance_keep_all

pytestmark = pytest.mark.sim

GRAPHS = nasty_graphs(small=True)
G = GRAPHS["preferential_hubs"]

# (launches, syncs) at most, for every iteration after the first two (the two
# ping-pong frontiers get their bitmaps on first use; after the first when there are two)
BUDGET = {
    "bfs push": (1, 1),
    "bfs pull": (3, 1),
    "bfs idempotent push": (8, 3),  # cull's culled count: on a tally, no fill, no read
    "sssp": (6, 6),
    "cc": (20, 4),
    "pagerank pull": (2, 1),  # one fused pass: gather, update, split and both sums
    "color": (2, 1),  # the ready vertices' first free colour, the advance releasing the next
    "mst": (24, 5),  # edge filters, hook computes, a filter a pointer-jumping step (a sync each)
    "kcore": (11, 3),  # a peeling level: filter, advance (atomic decrements), k's bump
    "hits": (4, 2),  # two neighbour reductions, two norms read together
    "geo": (7, 1),  # a round: two computes (centres, medians), the committing filter
    "louvain": (84, 2),  # a local-moving sweep: a neighbor_best and a move per bucket
    # scc: a step of trimming (an advance a stream), colour spreading or the backward
    # search; a round's end: the filters and two advances (or reductions) that restart
    # trimming; the pivot's round (a compute, a fill, its read) follows the trimming
    # streams, which run in turn (an iteration each here): the third iteration
    "scc": (8, 3),
}
#: iterations before the budget applies (2 unless named): set-up and first rounds
SETUP = {"scc": 3}

RUNS = {
    "bfs push": lambda: gunpy.bfs(G, 0, direction="push", backend="cuda"),
    "bfs pull": lambda: gunpy.bfs(G, 0, direction="pull", backend="cuda"),
    "bfs idempotent push": lambda: gunpy.bfs(G, 0, direction="push", idempotent=True,
                                             backend="cuda"),
    "sssp": lambda: _sssp(G, fuse=False),
    "cc": lambda: gunpy.cc(G, backend="cuda"),
    "pagerank pull": lambda: gunpy.pagerank(G, direction="pull", backend="cuda"),
    "color": lambda: gunpy.color(G, backend="cuda"),
    "mst": lambda: gunpy.mst(G, backend="cuda"),  # undirected
    "kcore": lambda: gunpy.kcore(G, backend="cuda"),
    "hits": lambda: gunpy.hits(G, backend="cuda"),
    "geo": lambda: gunpy.geo(GRAPHS["grid"], *_few_located(GRAPHS["grid"]), max_iter=20,
                             backend="cuda"),  # rounds spreading from a few located
    "louvain": lambda: gunpy.louvain(G, seed=1, backend="cuda"),
    "scc": lambda: gunpy.scc(GRAPHS["random_directed"], backend="cuda"),  # directed
}


def _few_located(H):
    from gunpy.primitives.geo import random_locations
    return random_locations(H, known=0.05, seed=3)


def _sssp(H, runs=1, **kw):
    """SSSP from 0 through its enactor (``fuse=`` is an enactor option), ``runs`` times."""
    from gunpy.primitives.sssp import SSSPEnactor, SSSPProblem, SSSPResult
    problem = SSSPProblem(H, backend="cuda")
    enactor = SSSPEnactor(problem, **kw)
    for _ in range(runs):
        problem.reset(0)
        stats = enactor.enact()
    return SSSPResult(H, stats, distance=problem.to_host(problem.distance),
                      parent=problem.to_host(problem.parent))


@pytest.fixture(autouse=True)
def fresh_ring():
    """Each test starts with an empty staging ring. Its rare wait (a sync, once per half a
    ring of uploads) falls wherever the uploads before left the shared backend's ring: in
    whichever level of whichever test crosses the half, which a budget would count as that
    level's own (the sssp test failed so after other tests' uploads in its worker)."""
    from gunpy.backends import get_backend
    backend = get_backend("cuda")
    backend.synchronize()  # the old ring's copies done before its memory goes
    backend.__dict__.pop("_ring", None)


@pytest.fixture
def unfused(monkeypatch):
    """Every level through the grid-wide operators (thin levels would run fused)."""
    from gunpy.backends.cuda import CudaBackend
    monkeypatch.setattr(CudaBackend, "fuse_below", 0)


@pytest.mark.parametrize("name", sorted(BUDGET))
def test_launches_and_syncs_per_iteration(name, unfused):
    its = RUNS[name]().stats.per_iteration
    assert len(its) >= 2
    launches, syncs = BUDGET[name]
    skip = SETUP.get(name, 2)
    for it in its[skip:] if len(its) > skip else its[1:]:
        assert it["launches"] <= launches, (name, it)
        assert it["syncs"] <= syncs, (name, it)
        assert it["launches"] >= 1 and it["syncs"] >= 1  # counted at all


@pytest.mark.parametrize("direction", ["push", "pull"])
def test_bfs_levels_on_a_grid_keep_the_budget(direction, unfused):
    """Many thin levels (a small grid: 11 from a corner), where the budget decides GPU speed."""
    its = gunpy.bfs(GRAPHS["grid"], 0, direction=direction, backend="cuda").stats.per_iteration
    assert len(its) > 8
    launches, syncs = BUDGET[f"bfs {direction}"]
    assert all(it["launches"] <= launches and it["syncs"] <= syncs for it in its[2:]), its


@pytest.mark.parametrize("load_balance", ["thread_mapped", "twc", "merge_path"])
def test_push_output_knows_its_degree_sum(load_balance):
    """The push kernels' fused degree count equals the degree sum of what they emitted."""
    H = GRAPHS["star_hub"]  # a hub longer than a CTA, and its leaves
    ctx = ops.Context(H, backend="cuda")
    deg = np.diff(H.row_offsets)
    for ids in ([0], [1, 2, 3], list(range(0, H.num_vertices, 7))):
        out, got = advance_keep_all(H, ctx, ids, load_balance)
        assert out.known_edges == int(deg[got].sum()), (load_balance, ids)


def test_the_cpu_backend_reports_no_launch_counts():
    r = gunpy.bfs(G, 0, backend="cpu")
    assert "launches" not in r.stats.per_iteration[0]
    assert gunpy.backends.get_backend("cpu").counts().launches is None
    assert "allocs" in r.stats.per_iteration[0]



@pytest.mark.parametrize("name", ["grid", "path_directed", "preferential_hubs"])
def test_fused_sssp_is_one_launch_and_one_sync(name):
    """Bucket fusion: thin near/far steps run in one thread block, one launch and one read
    for the whole band's work (unfused: a launch, a split and a read a step). The second
    run of an enactor: the first makes the queue's piles and stamps."""
    H = GRAPHS[name]
    fused, plain = _sssp(H, runs=2), _sssp(H, fuse=False)
    assert np.array_equal(fused.distance, plain.distance)
    assert fused.stats.iterations == 1 and plain.stats.iterations > 2
    it, = fused.stats.per_iteration
    assert it["launches"] == 1 and it["syncs"] == 1, (it, fused.stats.extra)
    assert fused.stats.extra["fused_steps"] >= H.num_vertices - 1


def test_fused_bfs_levels_are_one_launch_and_one_sync():
    """Thin push levels in one thread block: the grid's 11 levels cost the source's degree
    sum (a launch and a read) and the fused kernel (a launch and a read), not 11 of each."""
    from gunpy.primitives.bfs import BFSEnactor, BFSProblem
    H = GRAPHS["grid"]
    problem = BFSProblem(H, backend="cuda")
    enactor = BFSEnactor(problem, direction="push")
    for _ in range(2):  # the second run: the first makes the scratch arrays
        problem.reset(0)
        st = enactor.enact()
    its = st.per_iteration
    assert len(its) > 8 and {it["strategy"] for it in its} == {"fused"}
    assert sum(it["launches"] for it in its) <= 2 and sum(it["syncs"] for it in its) <= 2, its


def test_bc_backward_levels_cost_a_launch_and_no_sync(unfused):
    """A neighbor_reduce over a saved frontier (the dependencies reach the centralities in one
    pass at the end): the edges read are counted in the kernel (no degree scan and read), the
    view's length was copied at save time (no upload)."""
    from gunpy.primitives.bc import BCEnactor, BCProblem
    problem = BCProblem(G, backend="cuda")
    enactor = BCEnactor(problem)
    for _ in range(2):
        problem.reset(0)
        stats = enactor.enact()
    backward = [it for it in stats.per_iteration if it["strategy"] == "neighbor_reduce"]
    assert len(backward) >= 2
    assert all((it["launches"], it["syncs"], it["uploads"], it["allocs"]) == (1, 0, 0, 0)
               for it in backward), backward
    assert sum(it["edges"] for it in backward) > 0


def test_weighted_bc_after_sssp_costs_six_launches_and_two_syncs():
    """Weighted BC after SSSP: the tight in-edges counted (one launch), the tight DAG's
    thin levels fused (one launch, one read), grouped by depth (fill, count, read,
    scatter) and walked back (one launch, no sync), however many levels there are."""
    from gunpy.primitives.bc_weighted import WeightedBCEnactor, WeightedBCProblem
    rng = np.random.default_rng(2)
    src = np.repeat(np.arange(G.num_vertices), np.diff(G.row_offsets))
    H = gunpy.Graph.from_edges(src, G.column_indices, rng.uniform(0.5, 2.0, src.size),
                               num_vertices=G.num_vertices, directed=True)
    problem = WeightedBCProblem(H, backend="cuda")
    enactor = WeightedBCEnactor(problem)
    for _ in range(2):
        problem.reset(0)
        stats = enactor.enact()
    its = stats.per_iteration
    first = next(i for i, it in enumerate(its) if it["strategy"] == "neighbor_reduce")
    after = its[first:]
    assert {it["strategy"] for it in after} == {"neighbor_reduce", "fused", "group"}
    assert len([it for it in after if it["strategy"] == "fused"]) >= 4  # the DAG's levels
    (group,) = [it for it in after if it["strategy"] == "group"]
    assert (group["launches"], group["syncs"], group["allocs"]) == (3, 1, 0), group
    assert sum(it["launches"] for it in after) == 6, after
    assert sum(it["syncs"] for it in after) == 2, after
    assert sum(it["allocs"] for it in after) == 0, after


def test_cdlp_rounds_and_lcc_keep_their_budget():
    # CDLP: exactly max_iterations rounds, each neighbor_mode's launch and a filter keeping
    # the changed vertices (its count the one sync), or an advance to their neighbours once
    # few change; LCC, a second run: the intersections and the normalising reduction in 5
    # launches and 2 syncs, nothing uploaded or allocated (the first uploads the oriented
    # graph: a copy that waits for the staging ring counts as a sync)
    # (the first round that advances the changed vertices' neighbours holds two frontiers
    # and makes the enactor's third, once: its allocation's zero fill is one launch more)
    rounds = gunpy.cdlp(G, backend="cuda").stats.per_iteration
    assert len(rounds) == 10
    assert all(r["launches"] <= 6 + (r["allocs"] > 0) and r["syncs"] <= 1
               for r in rounds[1:]), rounds  # 0: +Start
    assert sum(r["allocs"] > 0 for r in rounds[1:]) <= 1, rounds
    assert rounds[-1]["launches"] == 0  # settled: nothing changed, nothing to count
    gunpy.lcc(G, backend="cuda")
    (whole,) = gunpy.lcc(G, backend="cuda").stats.per_iteration
    assert whole["launches"] <= 5 and whole["syncs"] <= 2, whole
    assert whole["uploads"] == 0 and whole["allocs"] == 0, whole
