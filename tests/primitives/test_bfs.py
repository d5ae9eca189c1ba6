"""BFS against networkx depths and Graph500's parent-tree checks."""

import numpy as np
import pytest

import gunpy
from gunpy.result import Stats
from gunpy.testing import ON_CUDASIM, check_bfs_tree, nasty_graphs, reference_depths, graph_names
from _helpers import enact_own_loop

GRAPHS = nasty_graphs()


def sources(G):
    n = G.num_vertices
    picks = {0, n // 2, n - 1}
    deg = G.out_degrees()
    if n:
        picks.add(int(np.argmax(deg)))  # the hub
    picks = sorted(picks)
    return picks[:2] if ON_CUDASIM else picks


@pytest.mark.parametrize("name", graph_names(GRAPHS))
def test_bfs_matches_networkx(name, backend, cpu_split):
    G = GRAPHS[name]
    for s in sources(G):
        r = gunpy.bfs(G, s, backend=backend)
        check_bfs_tree(G, s, r.depth, r.parent, reference=reference_depths(G, s))
        assert r.depth.dtype == np.int32 and r.parent.dtype == np.int32


def test_bfs_stats(backend):
    G = GRAPHS["path_undirected"]
    r = gunpy.bfs(G, 0, backend=backend, direction="push")
    st = r.stats
    assert st.iterations == G.num_vertices  # one level per vertex, then an empty frontier
    assert st.backend == backend
    # every vertex's out-edges are visited once: 2 per edge of an undirected path
    assert st.edges_visited == G.num_edges
    assert [it["frontier"] for it in st.per_iteration] == [1] * G.num_vertices
    assert r.to_dict() == {v: v for v in range(G.num_vertices)}


def test_fused_level_records_are_made_when_read(backend):
    # a long path's levels run fused: their records wait as one block until read, then
    # read as ordinary dicts, numbered on, with the fused call's counts in its first
    G = gunpy.Graph.from_edges(np.arange(99), np.arange(1, 100), directed=False)
    r = gunpy.bfs(G, 0, backend=backend, direction="push")
    st = r.stats
    assert st._blocks >= 1
    its = st.per_iteration
    assert st._blocks == 0 and st.per_iteration is its
    assert [it["iteration"] for it in its] == list(range(100)) == list(range(st.iterations))
    assert [it["frontier"] for it in its] == [1] * 100
    assert sum(it["edges"] for it in its) == st.edges_visited == G.num_edges
    assert {it["strategy"] for it in its[1:99]} == {"fused"}
    assert all(it["allocs"] == 0 for it in its[1:])
    counted = backend == "cuda"
    assert all(("launches" in it) == counted for it in its)
    st.per_iteration = its[:2]
    assert len(st.per_iteration) == 2 and Stats(per_iteration=its[:3]).per_iteration == its[:3]


def test_bfs_to_dict_leaves_out_unreachable(backend):
    G = GRAPHS["disconnected"]
    d = gunpy.bfs(G, 0, backend=backend).to_dict()
    assert d == {0: 0, 1: 1, 4: 1, 2: 2, 3: 2}


def test_bfs_node_labels_from_networkx(backend):
    import networkx as nx
    g = nx.Graph([("a", "b"), ("b", "c"), ("x", "y")])
    G = gunpy.Graph.from_networkx(g)
    r = gunpy.bfs(G, 0, backend=backend)
    assert r.to_dict() == nx.single_source_shortest_path_length(g, "a")


@pytest.mark.parametrize("bad", [-1, 60, 10**12])
def test_bfs_source_out_of_range(bad, backend):
    with pytest.raises(IndexError, match="out of range"):
        gunpy.bfs(GRAPHS["path_directed"], bad, backend=backend)


def test_bfs_bad_options():
    G = GRAPHS["path_directed"]
    with pytest.raises(ValueError, match="load_balance"):
        gunpy.bfs(G, 0, load_balance="nope", backend="cpu")
    with pytest.raises(ValueError, match="direction"):
        gunpy.bfs(G, 0, direction="sideways", backend="cpu")
    with pytest.raises(ValueError, match="backend"):
        gunpy.bfs(G, 0, backend="tpu")
    with pytest.raises(TypeError, match="source"):
        gunpy.bfs(G, 1.5, backend="cpu")


def test_bfs_repeatable_on_one_graph(backend):
    # device copies of the graph are cached; a second run must start clean
    G = GRAPHS["random_directed"]
    a = gunpy.bfs(G, 3, backend=backend)
    b = gunpy.bfs(G, 3, backend=backend)
    assert np.array_equal(a.depth, b.depth)
    assert G._device.graph(gunpy.backends.get_backend(backend)) is not None


@pytest.mark.ptx
def test_bfs_compiles_to_ptx(ptx_backend):
    G = GRAPHS["star_hub"]
    gunpy.bfs(G, 0, backend=ptx_backend)
    names = ptx_backend.kernel_names()
    # BFS's filter keeps everything (cond_vertex is the default): it is bypassed
    assert any(n.endswith("advance") for n in names), names
    # the thin first level runs fused (its kernel counts the source's edges: no scan)
    assert any(n.endswith("levels") for n in names), names
    for (func, types), ptx in ptx_backend.compiled.items():
        assert ".target sm_90" in ptx, func.__qualname__


# --------------------------------------------------------------------- direction, idempotence
from gunpy.enactor import DirectionPolicy  # noqa: E402

DIRECTION_CASES = [
    ("push", False), ("pull", False), ("auto", False),
    ("push", True), ("pull", True), ("auto", True),
]


@pytest.mark.parametrize("direction,idempotent", DIRECTION_CASES)
@pytest.mark.parametrize("name", graph_names(GRAPHS))
def test_bfs_directions_and_idempotence(name, direction, idempotent, backend, cpu_split):
    G = GRAPHS[name]
    for s in sources(G)[: 1 if ON_CUDASIM else 2]:
        r = gunpy.bfs(G, s, direction=direction, idempotent=idempotent, backend=backend)
        check_bfs_tree(G, s, r.depth, r.parent, reference=reference_depths(G, s))
        dirs = {it["direction"] for it in r.stats.per_iteration}
        if direction != "auto" and r.stats.per_iteration:
            assert dirs == {direction}


@pytest.mark.parametrize("policy", [
    DirectionPolicy(heuristic="ratio", ratio=0.05),
    DirectionPolicy(alpha=1.0, beta=2.0, pull_mapping="thread"),
    DirectionPolicy(alpha=1e6, min_pull=0, pull_mapping="warp"),   # switches to pull at once
])
def test_bfs_direction_policies(policy, backend, cpu_split):
    for name in ("preferential_hubs", "random_directed", "star_hub"):
        G = GRAPHS[name]
        r = gunpy.bfs(G, 0, direction="auto", direction_policy=policy, backend=backend)
        check_bfs_tree(G, 0, r.depth, r.parent, reference=reference_depths(G, 0))


def broom(handle, bristles):
    """A path of ``handle`` vertices from 0 whose last vertex is the centre of a small star."""
    src = list(range(handle - 1)) + [handle - 1] * bristles
    dst = list(range(1, handle)) + list(range(handle, handle + bristles))
    return gunpy.Graph.from_edges(src, dst, directed=False)


def test_min_pull_keeps_thin_frontiers_in_push(backend):
    # at the star's centre m_f jumps (growing) past m_u / alpha, as the unvisited edges
    # have dwindled to the bristles: Beamer's test alone pulls there, but a pull pass
    # walks a bitmap over every vertex for a frontier of one vertex
    if ON_CUDASIM:
        pytest.skip("the heuristic is host code, the same for every backend; 2000 simulated "
                    "levels would take minutes")
    G = broom(2000, 20)
    r = gunpy.bfs(G, 0, direction="auto", backend=backend)
    assert {it["direction"] for it in r.stats.per_iteration} == {"push"}
    eager = DirectionPolicy(min_pull=0)
    r = gunpy.bfs(G, 0, direction="auto", direction_policy=eager, backend=backend)
    assert [it["direction"] for it in r.stats.per_iteration][1999] == "pull"
    check_bfs_tree(G, 0, r.depth, r.parent, reference=reference_depths(G, 0))
    with pytest.raises(ValueError, match="min_pull"):
        DirectionPolicy(min_pull=-1)


def test_beamer_pulls_only_while_the_frontier_grows(backend):
    # a path never grows past two out-edges per level, so even with no min_pull and an
    # eager alpha (m_f > m_u / alpha almost at once) it stays in push
    n = 60 if ON_CUDASIM else 500
    G = gunpy.Graph.from_edges(np.arange(n - 1), np.arange(1, n), directed=False)
    eager = DirectionPolicy(alpha=1e6, min_pull=0)
    r = gunpy.bfs(G, 0, direction="auto", direction_policy=eager, backend=backend)
    dirs = [it["direction"] for it in r.stats.per_iteration]
    # the first level grows from nothing to 1 out-edge, and the second to 2
    assert set(dirs[2:]) == {"push"}, dirs
    check_bfs_tree(G, 0, r.depth, r.parent, reference=reference_depths(G, 0))


def test_a_pull_that_lost_to_push_sends_auto_back(backend):
    # 0 -> 1 -> ... -> L -> a 30-clique: an eager policy pulls at once, and that pull
    # scans the clique's in-lists for nothing (870 edges where push visits 1)
    L, k = (8, 12) if ON_CUDASIM else (40, 30)
    clique = np.arange(L + 1, L + 1 + k)
    cs, cd = np.meshgrid(clique, clique)
    keep = cs != cd
    src = np.concatenate([np.arange(L), np.full(k, L), cs[keep]])
    dst = np.concatenate([np.arange(1, L + 1), clique, cd[keep]])
    G = gunpy.Graph.from_edges(src, dst, directed=True)
    eager = DirectionPolicy(alpha=1e6, min_pull=0)
    r = gunpy.bfs(G, 0, direction="auto", direction_policy=eager, backend=backend)
    its = r.stats.per_iteration
    assert its[0]["direction"] == "pull" and its[0]["edges"] > 1
    # back to push, and no pull again on the path (frontiers no fatter than the loser) ...
    assert {it["direction"] for it in its[1:L]} == {"push"}
    # ... until the clique's entry, whose k out-edges beat it: pull wins there
    assert its[L]["direction"] == "pull" and its[L]["edges"] <= k
    check_bfs_tree(G, 0, r.depth, r.parent, reference=reference_depths(G, 0))


def test_each_lost_pull_doubles_how_fat_the_next_frontier_must_be():
    # a mesh's tail: pull examines far more than push would visit, and the frontier grows a
    # little a level; after the k-th loss, pulling again needs 2**k times the loser's edges
    from gunpy.direction import PushPull
    pp = PushPull(DirectionPolicy(alpha=1e6, min_pull=0), 1000, 10**6)
    assert pp.choose(10, 100) == "pull"
    pp.pulled(5000, 100)                   # lost: 5,000 examined where push visits 100
    assert pp.choose(12, 120) == "push"    # back to push at once
    assert pp.choose(15, 150) == "push"    # under 2 x 100
    assert pp.choose(25, 250) == "pull"    # over it: pull again ...
    pp.pulled(9000, 250)                   # ... and lose again
    assert pp.choose(30, 300) == "push"
    assert pp.choose(90, 900) == "push"    # under 4 x 250
    assert pp.choose(120, 1200) == "pull"
    pp.pulled(100, 1200)                   # a pull that won: it stays
    assert pp.choose(130, 1300) == "pull"


def test_bfs_auto_switches_on_a_hub_graph(backend):
    G = GRAPHS["star_hub"]
    r = gunpy.bfs(G, 1, direction="auto", backend=backend)  # from a leaf: leaf, hub, all leaves
    dirs = [it["direction"] for it in r.stats.per_iteration]
    assert dirs[0] == "push" and dirs[1] == "pull", dirs
    check_bfs_tree(G, 1, r.depth, r.parent, reference=reference_depths(G, 1))


def test_bad_direction_policy():
    with pytest.raises(ValueError, match="heuristic"):
        DirectionPolicy(heuristic="guess")
    with pytest.raises(ValueError, match="pull mapping"):
        DirectionPolicy(pull_mapping="block")
    with pytest.raises(ValueError, match="positive"):
        DirectionPolicy(alpha=0)


def test_idempotent_push_culls_duplicates(backend):
    # a complete bipartite layer: every vertex of layer 2 is discovered by all of layer 1
    k = 20
    src = [0] * k + [a for a in range(1, k + 1) for _ in range(k)]
    dst = list(range(1, k + 1)) + [b for _ in range(1, k + 1) for b in range(k + 1, 2 * k + 1)]
    G = gunpy.Graph.from_edges(src, dst, directed=True)
    r = gunpy.bfs(G, 0, direction="push", idempotent=True, backend=backend)
    check_bfs_tree(G, 0, r.depth, r.parent, reference=reference_depths(G, 0))
    sizes = [it["frontier"] for it in r.stats.per_iteration]
    assert sizes[:3] == [1, k, k]  # the k*k duplicate discoveries were culled to k


@pytest.mark.large
def test_auto_visits_a_fraction_of_push_edges_on_rmat():
    from gunpy import generators
    # (on about a third of RMAT-14 samples, seed 3 of this generator among them, a hub
    # source's level-1 pull loses and auto pushes on: the test is of the usual case)
    G = generators.rmat(14, 16, seed=5)
    deg = G.out_degrees()
    ratios = []
    for s in np.flatnonzero(deg > 0)[:6]:
        auto = gunpy.bfs(G, int(s), direction="auto", backend="cpu")
        push = gunpy.bfs(G, int(s), direction="push", backend="cpu")
        assert np.array_equal(auto.depth, push.depth)
        ratios.append(auto.stats.edges_visited / push.stats.edges_visited)
    # the bar: direction optimisation visits at most a quarter of push's edges
    assert max(ratios) <= 0.25, ratios


# --------------------------------------------------------------------- the enactor built directly
from gunpy.primitives.bfs import BFSEnactor, BFSProblem  # noqa: E402

TINY = nasty_graphs(small=True)  # at most 41 vertices


@pytest.mark.parametrize("name", ["random_directed", "random_undirected", "star_hub",
                                  "disconnected", "edgeless", "single_vertex"])
def test_bfs_enactor_with_its_defaults(name, backend):
    # a user's own loop: Problem + Enactor(problem), with no attribute set afterwards
    G = TINY[name]
    enactor = enact_own_loop(BFSProblem, BFSEnactor, G, backend, reset=(0,), direction="auto",
                             idempotent=False)
    depth, parent = enactor.problem.extract()
    check_bfs_tree(G, 0, depth, parent, reference=reference_depths(G, 0))


def test_bfs_enactor_rejects_bad_options():
    assert_enactor_rejects_bad_options(BFSProblem(TINY["path_directed"], backend="cpu"),
                                       BFSEnactor)


def assert_enactor_rejects_bad_options(problem, Enactor):
    """An unknown direction or load balance raises ValueError naming the option (test_bc too)."""
    with pytest.raises(ValueError, match="direction"):
        Enactor(problem, direction="sideways")
    with pytest.raises(ValueError, match="load_balance"):
        Enactor(problem, load_balance="nope")


@pytest.mark.parametrize("fuse_below", [0, 8, 64, 1 << 30])
@pytest.mark.parametrize("direction", ["push", "auto"])
def test_bfs_fused_levels_hand_over_to_the_operators(fuse_below, direction, backend, cpu_split,
                                                     monkeypatch):
    """Thin push levels run fused until one reaches ``fuse_below`` out-edges (a hub's alone
    does), then the operators take it and fusing resumes when the levels thin out; every
    level keeps its own stats record either way."""
    from gunpy.backends import get_backend
    monkeypatch.setattr(type(get_backend(backend)), "fuse_below", fuse_below)
    names = ["star_hub", "grid"] if ON_CUDASIM else ["star_hub", "grid", "preferential_hubs",
                                                       "path_directed", "disconnected",
                                                       "self_loops_duplicates"]
    for name in names:
        G = GRAPHS[name]
        ref = reference_depths(G, 0)
        r = gunpy.bfs(G, 0, direction=direction, backend=backend)
        check_bfs_tree(G, 0, r.depth, r.parent, reference=ref)
        its = r.stats.per_iteration
        strategies = {it["strategy"] for it in its}
        if direction == "push":
            assert [it["iteration"] for it in its] == list(range(ref.max() + 1)), name
            assert [it["frontier"] for it in its] == np.bincount(ref[ref >= 0]).tolist()
            assert r.stats.edges_visited == int(G.out_degrees()[ref >= 0].sum())
            assert {it["direction"] for it in its} == {"push"}
            if fuse_below == 1 << 30:
                assert strategies == {"fused"}, name
        if fuse_below == 0:
            assert "fused" not in strategies


def test_fused_levels_stop_at_max_iterations(backend):
    from gunpy.primitives.bfs import BFSEnactor, BFSProblem
    G = GRAPHS["path_undirected"]
    problem = BFSProblem(G, backend=backend)
    enactor = BFSEnactor(problem, direction="push", max_iterations=3)
    problem.reset(0)
    st = enactor.enact()
    depth, _ = problem.extract()
    assert st.iterations == 3 and len(st.per_iteration) == 3
    assert depth.tolist()[:4] == [0, 1, 2, 3] and (depth[4:] == -1).all()


def test_explicit_strategies_and_idempotence_are_not_fused(backend):
    G = GRAPHS["grid"]
    for kw in ({"load_balance": "thread_mapped"}, {"load_balance": "merge_path"},
               {"idempotent": True}, {"direction": "pull"}):
        r = gunpy.bfs(G, 0, backend=backend, **kw)
        assert "fused" not in {it["strategy"] for it in r.stats.per_iteration}, kw
        check_bfs_tree(G, 0, r.depth, r.parent, reference=reference_depths(G, 0))


@pytest.mark.ptx
def test_fused_levels_compile_to_ptx(ptx_backend):
    ptx_backend.compiled.clear()
    gunpy.bfs(GRAPHS["grid"], 0, direction="push", backend=ptx_backend)
    assert "levels" in " ".join(ptx_backend.kernel_names())


def test_results_own_their_arrays(backend):
    # bfs() hands its problem's arrays to the result (Problem.take: no copy on the CPU):
    # each call's result must still be its own
    G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 3], directed=False)
    a, b = gunpy.bfs(G, 0, backend=backend), gunpy.bfs(G, 3, backend=backend)
    assert not np.shares_memory(a.depth, b.depth) and not np.shares_memory(a.parent, b.parent)
    a.depth[:] = 7
    assert b.depth.tolist() == [3, 2, 1, 0] and gunpy.bfs(G, 0, backend=backend).depth[3] == 3
    problem = BFSProblem(G, backend=backend)
    taken = problem.take(problem.depth)
    assert isinstance(taken, np.ndarray)
    assert (taken is problem.depth) == isinstance(problem.depth, np.ndarray)


@pytest.mark.parametrize("direction", ["push", "pull", "auto"])
def test_max_depth_stops_the_search_at_that_level(backend, direction):
    import networkx as nx

    from gunpy.testing import to_nx
    for name in ("grid", "path_undirected", "star_hub", "disconnected", "random_directed"):
        G = GRAPHS[name]
        g = to_nx(G)
        full = gunpy.bfs(G, 0, backend=backend, direction=direction)
        for k in (0, 1, 2, 5):
            r = gunpy.bfs(G, 0, backend=backend, direction=direction, max_depth=k)
            want = nx.single_source_shortest_path_length(g, 0, cutoff=k)
            got = {v: d for v, d in enumerate(r.depth.tolist()) if d >= 0}
            assert got == want, (name, k)
            assert r.stats.iterations <= k and r.stats.edges_visited <= full.stats.edges_visited
            reached = r.depth >= 0
            assert (r.parent[reached] >= 0).all() and (r.parent[~reached] == -1).all()
            np.testing.assert_array_equal(r.depth[reached],
                                          r.depth[r.parent[reached]] + (np.arange(
                                              G.num_vertices)[reached] != 0))
    G = GRAPHS["path_undirected"]
    with pytest.raises(ValueError, match="at least 0"):
        gunpy.bfs(G, 0, backend=backend, max_depth=-1)
    with pytest.raises(TypeError, match="integer"):
        gunpy.bfs(G, 0, backend=backend, max_depth=1.5)
