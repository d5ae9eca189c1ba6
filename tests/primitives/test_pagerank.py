"""PageRank against networkx: values, iteration counts, tol=0, non-convergence."""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.testing import ON_CUDASIM, nasty_graphs, to_nx, graph_names
from _helpers import enact_own_loop, row_stochastic

GRAPHS = nasty_graphs()
SIM_TOL = 1e-4  # the simulator's tolerance where a test runs to convergence


def nx_reference(G, **kw):
    g = to_nx(G)
    return np.array([nx.pagerank(g, **kw)[v] for v in range(G.num_vertices)])


def scipy_iterations(G, alpha=0.85, tol=1e-6, max_iter=100):
    """networkx's _pagerank_scipy loop, counting iterations."""
    A, S = row_stochastic(G)
    n = G.num_vertices
    x = np.full(n, 1.0 / n)
    dangling = S == 0
    for it in range(1, max_iter + 1):
        last = x
        x = alpha * (x @ A) + (alpha * x[dangling].sum() + 1 - alpha) / n
        if np.abs(x - last).sum() < n * tol:
            return it, x
    return max_iter, x


def weighted_copy(G, seed=0):
    w = np.random.default_rng(seed).random(G.num_edges) + 0.1
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    return gunpy.Graph.from_edges(src, G.column_indices, w, num_vertices=G.num_vertices,
                                  directed=True)


@pytest.mark.parametrize("direction", ["pull", "push"])
@pytest.mark.parametrize("weights", [True] if ON_CUDASIM else [False, True])
@pytest.mark.parametrize("name", graph_names(GRAPHS))
def test_pagerank_matches_networkx(name, weights, direction, backend, cpu_split):
    # the simulator stops at tol=1e-4: half the iterations (~67 -> ~38 on the star), the
    # same kernels, the same exact match with networkx and scipy's count at that tol
    G = weighted_copy(GRAPHS[name]) if weights else GRAPHS[name]
    tol = SIM_TOL if ON_CUDASIM else 1e-6
    r = gunpy.pagerank(G, direction=direction, tol=tol, backend=backend)
    np.testing.assert_allclose(r.rank, nx_reference(G, tol=tol), rtol=1e-9, atol=1e-12)
    iters, _ = scipy_iterations(G, tol=tol)
    assert r.iterations == iters and r.converged
    assert abs(r.rank.sum() - 1.0) < 1e-9



@pytest.mark.parametrize("load_balance", ["auto", "thread_mapped", "twc", "merge_path"])
def test_pagerank_push_every_load_balance(load_balance, backend):
    # a hub wider than a warp (twc's warp phase in the simulator) in a directed graph with
    # random edges among its leaves (a plain star alternates for ~40 iterations)
    rng = np.random.default_rng(3)
    src = np.concatenate([np.zeros(40, np.int64), np.arange(1, 41), rng.integers(1, 45, 60)])
    dst = np.concatenate([np.arange(1, 41), np.zeros(40, np.int64), rng.integers(1, 45, 60)])
    G = gunpy.Graph.from_edges(src, dst, rng.random(140) + 0.1, num_vertices=45, directed=True)
    r = gunpy.pagerank(G, direction="push", load_balance=load_balance, tol=1e-4,
                       backend=backend)
    np.testing.assert_allclose(r.rank, nx_reference(G, tol=1e-4), rtol=1e-9, atol=1e-12)
    assert r.iterations > 2 and r.converged
    pushed = {it["strategy"] for it in r.stats.per_iteration}
    if load_balance != "auto":
        assert pushed == {load_balance}

def test_pagerank_tol_zero_runs_max_iter(backend):
    G = GRAPHS["random_directed"]
    r = gunpy.pagerank(G, tol=0.0, max_iter=7, backend=backend)
    assert r.iterations == 7 and not r.converged
    _, x = scipy_iterations(G, tol=0.0, max_iter=7)
    np.testing.assert_allclose(r.rank, x, rtol=1e-10)


def test_pagerank_non_convergence_does_not_raise(backend):
    G = GRAPHS["preferential_hubs"]
    r = gunpy.pagerank(G, tol=1e-15, max_iter=3, backend=backend)
    assert r.iterations == 3 and not r.converged
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(to_nx(G), tol=1e-15, max_iter=3)


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_pagerank_alpha_extremes(alpha, backend):
    G = GRAPHS["random_directed"]
    r = gunpy.pagerank(G, alpha=alpha, backend=backend)
    np.testing.assert_allclose(r.rank, nx_reference(G, alpha=alpha), rtol=1e-9, atol=1e-12)


def test_pagerank_self_loops_kept_match_networkx():
    g = nx.DiGraph([(0, 0), (0, 1), (1, 2), (2, 0), (2, 2), (3, 1)])
    G = gunpy.Graph.from_networkx(g, remove_self_loops=False)
    r = gunpy.pagerank(G, backend="cpu")
    assert r.to_dict() == pytest.approx(nx.pagerank(g), rel=1e-9)


@pytest.mark.parametrize("weights", [True] if ON_CUDASIM else [False, True])
@pytest.mark.parametrize("name", ["random_directed", "star_directed_in", "single_vertex"]
                         if ON_CUDASIM else  # the simulator: the same kernels, fewer graphs
                         ["random_directed", "preferential_hubs", "star_directed_in",
                          "disconnected", "self_loops_duplicates", "single_vertex"])
def test_pagerank_float32_is_networkxs_to_single_precision(name, weights, backend):
    """dtype="float32" keeps ranks and contributions in single precision (sums in double):
    networkx's ranks to ~1e-6 relative, as many iterations where tol is loose."""
    G = weighted_copy(GRAPHS[name]) if weights else GRAPHS[name]
    want = nx_reference(G, tol=1e-4)
    r = gunpy.pagerank(G, tol=1e-4, dtype="float32", backend=backend)
    assert r.rank.dtype == np.float32 and r.converged
    np.testing.assert_allclose(r.rank, want, rtol=1e-5, atol=1e-7)
    assert r.iterations == scipy_iterations(G, tol=1e-4)[0]
    # from a start vector and with a personalisation (their float64 vectors read as is)
    x = np.arange(G.num_vertices, dtype=np.float64) + 1.0
    g = to_nx(G)
    for kw, nx_kw in (({"nstart": x}, {"nstart": dict(enumerate(x))}),
                      ({"personalization": x}, {"personalization": dict(enumerate(x))})):
        r = gunpy.pagerank(G, tol=1e-4, dtype="float32", backend=backend, **kw)
        ref = nx.pagerank(g, tol=1e-4, **nx_kw)
        np.testing.assert_allclose(r.rank, [ref[v] for v in range(G.num_vertices)],
                                   rtol=1e-5, atol=1e-7)


def test_pagerank_float32_halves_what_an_iteration_keeps():
    G = GRAPHS["random_directed"]
    p64 = PageRankProblem(G, backend="cpu")
    p32 = PageRankProblem(G, backend="cpu", dtype=np.float32)
    assert p64.dtype == np.float64 and p32.dtype == np.float32
    e = PageRankEnactor(p32)
    p32.reset(0.85)
    e.enact()
    assert p32.rank.dtype == p32.contrib.dtype == e.split.inv_weight.dtype == np.float32


def test_pagerank_bad_options():
    G = GRAPHS["path_directed"]
    with pytest.raises(ValueError, match="alpha"):
        gunpy.pagerank(G, alpha=1.5, backend="cpu")
    with pytest.raises(ValueError, match="tol"):
        gunpy.pagerank(G, tol=-1, backend="cpu")
    with pytest.raises(ValueError, match="direction"):
        gunpy.pagerank(G, direction="sideways", backend="cpu")
    with pytest.raises(ValueError, match="unknown PageRank dtype 'float16'"):
        gunpy.pagerank(G, dtype="float16", backend="cpu")
    with pytest.raises(ValueError, match="unknown PageRank dtype"):
        gunpy.pagerank(G, dtype="nope", backend="cpu")
    with pytest.raises(ValueError, match="pull iteration"):
        gunpy.pagerank(G, dtype="float32", direction="push", backend="cpu")


def test_pagerank_empty_graph():
    G = gunpy.Graph.from_edges([], [], num_vertices=0)
    r = gunpy.pagerank(G, backend="cpu")
    assert r.rank.shape == (0,) and r.converged


@pytest.mark.ptx
@pytest.mark.parametrize("direction,dtype", [("pull", "float64"), ("push", "float64"),
                                             ("pull", "float32")])
def test_pagerank_compiles_to_ptx(direction, dtype, ptx_backend):
    from gunpy.testing import PtxBackend
    be = PtxBackend(cc=(9, 0))  # its own: the names are this call's alone
    gunpy.pagerank(weighted_copy(GRAPHS["random_directed"]), direction=direction, max_iter=2,
                   dtype=dtype, backend=be)
    names = " ".join(be.kernel_names())
    if direction == "pull":  # one fused neighbor-reduce a pass (the graph's split, each iteration)
        assert "by_" in names and "red" not in names and "compute" not in names
    else:
        assert "red" in names and "compute" in names and "advance" in names


# --------------------------------------------------------------------- the enactor built directly
from gunpy.primitives.pagerank import PageRankEnactor, PageRankProblem  # noqa: E402

TINY = nasty_graphs(small=True)  # at most 41 vertices


@pytest.mark.parametrize("name", ["random_directed", "preferential_hubs", "star_directed_in",
                                  "disconnected", "single_vertex"])
def test_pagerank_enactor_with_its_defaults(name, backend):
    # a user's own loop: Problem + Enactor(problem), with no attribute set afterwards
    G = TINY[name]
    enactor = enact_own_loop(PageRankProblem, PageRankEnactor, G, backend, reset=(0.85,),
                             pagerank_direction="pull", tol=1e-6, max_iter=100)
    np.testing.assert_allclose(enactor.problem.extract(), nx_reference(G), rtol=1e-9,
                               atol=1e-12)
    assert enactor.stats.iterations == scipy_iterations(G)[0] and enactor.converged
    assert enactor.stats.direction == "pull"


@pytest.mark.parametrize("option", [{"direction": "sideways"}, {"tol": -1.0},
                                    {"max_iter": -1}, {"max_iter": 2.5},
                                    {"load_balance": "nope"}])
def test_pagerank_enactor_rejects_bad_options(option):
    problem = PageRankProblem(TINY["path_directed"], backend="cpu")
    with pytest.raises(ValueError, match=next(iter(option))):
        PageRankEnactor(problem, **option)
    with pytest.raises(ValueError, match="alpha"):
        problem.reset(1.5)
