"""SSSP against networkx Dijkstra and Graph500's kernel-2 checks."""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.testing import ON_CUDASIM, check_sssp_tree, nasty_graphs, reference_distances, graph_names
from _helpers import enact_own_loop

GRAPHS = nasty_graphs()
RNG = np.random.default_rng(11)


def weighted(G, kind, seed=0):
    """A weighted copy of G (same structure): integer, real, with zeros, or unweighted."""
    if kind == "unweighted":
        return G
    rng = np.random.default_rng(seed)
    m = G.num_edges
    w = {"int": rng.integers(1, 64, m).astype(float),
         "real": rng.random(m) * 10 + 1e-3,
         "zeros": rng.integers(0, 3, m).astype(float)}[kind]
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    return gunpy.Graph.from_edges(src, G.column_indices, w, num_vertices=G.num_vertices,
                                  directed=True)


# the simulator covers integer weights with and without zeros; the CPU all four
KINDS = ["int", "zeros"] if ON_CUDASIM else ["unweighted", "int", "real", "zeros"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["near_far", "bellman_ford"])
@pytest.mark.parametrize("name", graph_names(GRAPHS))
def test_sssp_matches_networkx(name, method, kind, backend, cpu_split):
    G = weighted(GRAPHS[name], kind)
    for s in sorted({0, G.num_vertices - 1})[: 1 if ON_CUDASIM else 2]:
        r = gunpy.sssp(G, s, method=method, backend=backend)
        ref = reference_distances(G, s)
        check_sssp_tree(G, s, r.distance, r.parent, reference=ref, rtol=1e-12)
        if kind in ("unweighted", "int", "zeros"):
            assert np.array_equal(r.distance, ref)  # integer sums are exact
        assert r.distance.dtype == np.float64 and r.parent.dtype == np.int32


@pytest.mark.parametrize("delta", [0.5, 3.0, 1e9])
def test_sssp_delta_values_agree(delta, backend):
    G = weighted(GRAPHS["preferential_hubs"], "int", seed=4)
    ref = reference_distances(G, 0)
    r = gunpy.sssp(G, 0, delta=delta, backend=backend)
    assert np.array_equal(r.distance, ref)


def test_sssp_undirected_weighted_from_networkx(backend):
    g = nx.Graph()
    g.add_weighted_edges_from([("a", "b", 2.0), ("b", "c", 1.0), ("a", "c", 5.0), ("c", "d", 0.5),
                               ("x", "y", 1.0)])
    G = gunpy.Graph.from_networkx(g)
    r = gunpy.sssp(G, 0, backend=backend)
    assert r.to_dict() == nx.single_source_dijkstra_path_length(g, "a")


def test_sssp_near_far_refills_the_far_pile(backend, cpu_split):
    # a path with a heavy shortcut: most vertices start in the far pile
    G = weighted(GRAPHS["path_directed"], "int", seed=2)
    r = gunpy.sssp(G, 0, delta=1.0, backend=backend)
    assert np.array_equal(r.distance, reference_distances(G, 0))
    assert r.stats.extra["method"] == "near_far"



@pytest.mark.parametrize("kind", ["int", "real"])
@pytest.mark.parametrize("name", ["star_hub", "random_directed"])
def test_sssp_twc(name, kind, backend):
    # an explicit load balance runs the advance and the split, never the fused steps
    G = weighted(GRAPHS[name], kind, seed=6)
    ref = reference_distances(G, 1)
    r = gunpy.sssp(G, 1, load_balance="twc", backend=backend)
    check_sssp_tree(G, 1, r.distance, r.parent, reference=ref, rtol=1e-12)
    if kind == "int":
        assert np.array_equal(r.distance, ref)
    assert r.stats.extra["fused_steps"] == 0
    assert {it["strategy"] for it in r.stats.per_iteration} == {"twc"}

@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf])
def test_sssp_rejects_bad_weights(bad):
    G = gunpy.Graph.from_edges([0, 1], [1, 2], [1.0, bad], directed=True)
    with pytest.raises(ValueError, match="non-negative finite"):
        gunpy.sssp(G, 0, backend="cpu")


def test_sssp_bad_options():
    G = weighted(GRAPHS["path_directed"], "int")
    with pytest.raises(ValueError, match="delta"):
        gunpy.sssp(G, 0, delta=0, backend="cpu")
    with pytest.raises(ValueError, match="method"):
        gunpy.sssp(G, 0, method="dijkstra", backend="cpu")
    with pytest.raises(IndexError):
        gunpy.sssp(G, G.num_vertices, backend="cpu")


def test_sssp_user_weights_not_mutated():
    w = np.array([3.0, 1.0, 2.0])
    src, dst = np.array([0, 1, 0]), np.array([1, 2, 2])
    G = gunpy.Graph.from_edges(src, dst, w, directed=True)
    gunpy.sssp(G, 0, backend="cpu")
    assert w.tolist() == [3.0, 1.0, 2.0] and src.tolist() == [0, 1, 0]


@pytest.mark.ptx
@pytest.mark.parametrize("method,fuse", [("near_far", True), ("near_far", False),
                                         ("bellman_ford", False)])
def test_sssp_compiles_to_ptx(method, fuse, ptx_backend):
    G = weighted(GRAPHS["preferential_hubs"], "real")
    ptx_backend.compiled.clear()
    if fuse:
        gunpy.sssp(G, 0, method=method, backend=ptx_backend)  # fusing is the default
    else:
        problem = SSSPProblem(G, backend=ptx_backend)
        enactor = SSSPEnactor(problem, method=method, fuse=False)
        problem.reset(0)
        enactor.enact()
    names = " ".join(ptx_backend.kernel_names())
    if fuse:
        # one block runs the thin steps (the graph is thin throughout)
        assert "fused" in names and "advance" not in names
    elif method == "near_far":
        # the split drops repeats itself: no unique filter (the refill's min_priority
        # kernel: tests/backends/test_ptx.py drives the queue to it)
        assert "advance" in names and "split" in names and "cull" not in names
    else:
        assert "advance" in names and "cull" in names  # the unique filter


@pytest.mark.parametrize("fuse_below", [0, 8, 64, 1 << 30])
@pytest.mark.parametrize("far_limit", [2, 1 << 15])
def test_sssp_fused_steps_hand_over_to_the_operators(fuse_below, far_limit, backend, cpu_split,
                                                     monkeypatch):
    """Bucket fusion stops where the band's work reaches ``fuse_below`` edges (a hub alone
    reaches it: nothing is fused) or the far pile outgrows its limit (the refill runs
    grid-wide); the operators take over and fusing resumes when the work thins out."""
    from gunpy.backends import get_backend
    from gunpy.operators.near_far import fused as near_far_fused
    monkeypatch.setattr(type(get_backend(backend)), "fuse_below", fuse_below)
    monkeypatch.setattr(near_far_fused, "FAR_LIMIT", far_limit)
    monkeypatch.setattr(near_far_fused, "CUDA_FAR_LIMIT", far_limit)
    # the simulator: the hub against the tight far pile, the grid's long paths against the
    # roomy one (every pair on the CPU)
    sim_names = ["star_hub"] if far_limit == 2 else ["grid"]
    names = sim_names if ON_CUDASIM else ["star_hub", "grid", "preferential_hubs",
                                          "path_directed", "disconnected"]
    for name in names:
        G = weighted(GRAPHS[name], "int", seed=3)
        ref = reference_distances(G, 0)
        r = gunpy.sssp(G, 0, delta=2.0, backend=backend)
        assert np.array_equal(r.distance, ref), name
        check_sssp_tree(G, 0, r.distance, r.parent, reference=ref)
        fused = r.stats.extra["fused_steps"]
        if fuse_below == 0:
            assert fused == 0
        elif fuse_below == 1 << 30:
            assert fused >= np.isfinite(ref).sum() - 1  # every reached vertex, fused
            if far_limit > 2:
                assert r.stats.iterations == 1


# --------------------------------------------------------------------- the enactor built directly
from gunpy.primitives.sssp import SSSPEnactor, SSSPProblem  # noqa: E402

TINY = nasty_graphs(small=True)  # at most 41 vertices


@pytest.mark.parametrize("kind", ["int", "zeros"])
@pytest.mark.parametrize("name", ["random_directed", "preferential_hubs", "disconnected",
                                  "single_vertex"])
def test_sssp_enactor_with_its_defaults(name, kind, backend):
    # a user's own loop: Problem + Enactor(problem), with no attribute set afterwards
    G = weighted(TINY[name], kind, seed=3)
    # delta defaults to default_delta(G), as in sssp(); positive_weights is derived from the
    # graph: zero weights need the tight-edge BFS for parents
    enactor = enact_own_loop(SSSPProblem, SSSPEnactor, G, backend, reset=(0,),
                             method="near_far",
                             positive_weights=G.num_edges == 0 or bool(G.values.min() > 0))
    assert enactor.stats.extra["method"] == "near_far"
    distance, parent = enactor.problem.extract()
    ref = reference_distances(G, 0)
    assert np.array_equal(distance, ref)
    check_sssp_tree(G, 0, distance, parent, reference=ref)


class StaleParents(SSSPEnactor):
    """Before the parents are checked, spoil what the relaxations recorded (as racing
    writers can): every recorded edge id wrong, half the parents too."""

    def finalize(self):
        p, be = self.problem, self.problem.backend
        via = be.to_host(p.via)
        via[1:] = np.where(np.arange(1, via.shape[0]) % 2, -1, 10 ** 12)
        be.copy_in(p.via, 0, via)
        parent = be.to_host(p.parent)
        spoil = np.zeros(parent.shape[0], dtype=bool)
        spoil[2::2] = True  # reached vertices only, never the source (no relaxation writes it)
        parent[spoil & (parent >= 0)] = parent.shape[0] + 5
        be.copy_in(p.parent, 0, parent)
        super().finalize()


@pytest.mark.parametrize("name", ["random_directed", "preferential_hubs", "grid"])
def test_sssp_repairs_parents_the_relaxations_left_stale(name, backend):
    G = weighted(TINY[name], "int", seed=5)
    problem = SSSPProblem(G, backend=backend)
    problem.reset(0)
    stats = StaleParents(problem).enact()
    distance, parent = problem.extract()
    reached = np.isfinite(distance)
    assert stats.extra["parents_repaired"] == int(reached.sum()) - 1  # all but the source
    check_sssp_tree(G, 0, distance, parent, reference=reference_distances(G, 0))
    # a repaired parent is the smallest tight in-neighbour
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    tight = distance[src] + G.values == distance[G.column_indices]
    best = np.full(G.num_vertices, np.iinfo(np.int64).max)
    np.minimum.at(best, G.column_indices[tight], src[tight])
    expect = np.where(reached, best, -1)
    expect[0] = 0
    assert np.array_equal(parent, expect)


def test_sssp_enactor_rejects_bad_options():
    problem = SSSPProblem(weighted(TINY["path_directed"], "int"), backend="cpu")
    with pytest.raises(ValueError, match="method.*'near_far', 'bellman_ford'"):
        SSSPEnactor(problem, method="dijkstra")
    with pytest.raises(ValueError, match="load_balance"):
        SSSPEnactor(problem, load_balance="nope")
    with pytest.raises(ValueError, match="delta"):
        problem.reset(0, delta=-1.0)
    G = gunpy.Graph.from_edges([0, 1], [1, 2], [1.0, -2.0], directed=True)
    with pytest.raises(ValueError, match="non-negative finite"):
        SSSPEnactor(SSSPProblem(G, backend="cpu"))


# ------------------------------------------------ the CPU's far pile in buckets (near_far.bins)
def _far_then_near(n=48):
    """Every vertex first reached by a heavy edge from the source (far), then lowered into
    the near band by a chain of light ones; ties (two chains), a self-loop, a second
    component and a hub's fan-out of equal weights besides."""
    src = [0] * (n - 1) + list(range(1, n - 1)) + list(range(1, n - 1)) + [5, 7, n - 2]
    dst = list(range(1, n)) + list(range(2, n)) + list(range(2, n)) + [5, n - 1, n - 3]
    w = [100.0 + 10 * i for i in range(1, n)] + [1.0] * (n - 2) + [1.0] * (n - 2) \
        + [3.0, 2.0, 0.0]
    hub = n // 2
    src += [hub] * 10 + [n + 1, n + 2]
    dst += list(range(hub + 1, hub + 11)) + [n + 2, n + 3]  # n, n+1..n+3 unreachable
    w += [1.0] * 10 + [1.0, 1.0]
    return gunpy.Graph.from_edges(src, dst, w, num_vertices=n + 4, directed=True,
                                  remove_self_loops=False, remove_duplicates=False)


def _bins_graphs():
    graphs = {"far_then_near": _far_then_near()}
    if not ON_CUDASIM:
        graphs.update({
            "hubs": weighted(GRAPHS["preferential_hubs"], "int", seed=7),
            "zeros": weighted(GRAPHS["random_directed"], "zeros", seed=8),
            "disconnected": weighted(GRAPHS["disconnected"], "int", seed=9),
            "grid_ties": GRAPHS["grid"],
            "star": weighted(GRAPHS["star_hub"], "real", seed=10)})
    return graphs


BINS_GRAPHS = _bins_graphs()


@pytest.mark.parametrize("scale", [1.0, 1000.0, 1e17])
@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("keep", ["default", "one_run"])
@pytest.mark.parametrize("name", list(BINS_GRAPHS))
def test_sssp_far_bins_match_dijkstra(name, keep, fuse, scale, backend, monkeypatch):
    """The bucketed refill against networkx's Dijkstra: vertices that move from far to
    near, ties, zero weights, self-loops, hubs, unreachable vertices. ``scale``: weights
    within a run's buckets, beyond them (the overflow pile), beyond 2**50 (no buckets).
    ``one_run``: the runs spill to the overflow pile whenever a second one would be
    made, and nothing goes back to the far pile (the bins stay in use to the end)."""
    from gunpy.operators.near_far import bins
    if ON_CUDASIM:
        pytest.skip("the CUDA backend has no bins: its split refill runs in "
                    "test_the_cpu_refills_from_its_bins_and_cuda_splits_its_pile")
    if keep == "one_run":
        monkeypatch.setattr(bins, "MAX_RUNS", 1)
        monkeypatch.setattr(bins, "RETURN_BELOW", 0)
    G0 = BINS_GRAPHS[name]
    w = (G0.values if G0.weighted else np.ones(G0.num_edges)) * scale
    G = gunpy.Graph(G0.row_offsets, G0.column_indices, w, directed=True)
    problem = SSSPProblem(G, backend=backend)
    enactor = SSSPEnactor(problem, fuse=fuse)
    ref = reference_distances(G, 0)
    for delta in (1.0, 3.0 * scale):
        problem.reset(0, delta)
        enactor.enact()
        distance, parent = problem.extract()
        assert np.array_equal(distance, ref), (name, delta)
        check_sssp_tree(G, 0, distance, parent, reference=ref)
        assert enactor.near_far_queue.waiting() == 0  # nothing left behind


def test_the_cpu_refills_from_its_bins_and_cuda_splits_its_pile(backend, monkeypatch):
    """``near_far.refill``: the CPU's implementation files the far pile in buckets; the
    CUDA backend has none and runs the queue's own split refill."""
    from gunpy.backends import get_backend
    from gunpy.operators.near_far import bins
    from gunpy.operators.near_far import queue as near_far_queue
    impl = bins.REFILL.on(get_backend(backend), default=near_far_queue._split_refill)
    assert (impl is near_far_queue._split_refill) == (backend != "cpu")
    monkeypatch.setattr(bins, "RETURN_BELOW", 0)
    # (the simulator: a shorter chain, as its refills are the same)
    G = _far_then_near(20) if ON_CUDASIM else BINS_GRAPHS["far_then_near"]
    problem = SSSPProblem(G, backend=backend)
    enactor = SSSPEnactor(problem, fuse=False)
    problem.reset(0, 1.0)
    enactor.enact()
    assert np.array_equal(problem.extract()[0], reference_distances(G, 0))
    queue = enactor.near_far_queue
    assert (queue._bins is not None) == (backend == "cpu") and queue.refills > 0
    if backend == "cpu":
        assert queue._bins.ints[5] > 0  # epochs stamped: the bins refilled the band
