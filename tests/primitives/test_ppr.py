"""Personalised PageRank: gunpy.pagerank(personalization=, dangling=) and gunpy.ppr.

networkx's pagerank (its _pagerank_scipy power iteration, from the same uniform
start, with the same stop test) is the oracle: the same iterates, so 1e-12 here
(1e-8 is the issue's bar).
"""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.testing import ON_CUDASIM, graph_names, nasty_graphs, to_nx
from _helpers import row_stochastic
from doc_examples import check_docstring_examples, run_user_guide_section

GRAPHS = nasty_graphs()
#: the simulator runs three graphs, three iterations a call (a simulated PageRank to
#: convergence costs seconds), against networkx's loop written in NumPy
SIM = ("star_hub", "random_directed", "edgeless")
NAMES = [name for name in graph_names(GRAPHS) if not ON_CUDASIM or name in SIM]
RUN = {"tol": 0.0, "max_iter": 3} if ON_CUDASIM else {}


def nx_rank(G, **kw):
    """networkx's pagerank; with ``tol=0`` its _pagerank_scipy loop, ``max_iter`` times, in
    NumPy (networkx raises there)."""
    if kw.get("tol", 1e-6) > 0:
        r = nx.pagerank(to_nx(G), **kw)
        return np.array([r[v] for v in range(G.num_vertices)])
    A, S = row_stochastic(G)
    n = G.num_vertices
    p = np.full(n, 1.0 / n)
    if kw.get("personalization") is not None:
        p = np.array([kw["personalization"].get(v, 0) for v in range(n)], dtype=float)
        p /= p.sum()
    d = p
    if kw.get("dangling") is not None:
        d = np.array([kw["dangling"].get(v, 0) for v in range(n)], dtype=float)
        d /= d.sum()
    x, alpha = np.full(n, 1.0 / n), kw.get("alpha", 0.85)
    if kw.get("nstart") is not None:
        x = np.array([kw["nstart"].get(v, 0) for v in range(n)], dtype=float)
        x /= x.sum()
    for _ in range(kw["max_iter"]):
        x = alpha * (x @ A + x[S == 0].sum() * d) + (1 - alpha) * p
    return x


def vectors(n, seed=0):
    """A restart dict on three vertices and a dangling dict on every other vertex."""
    rng = np.random.default_rng(seed)
    pick = rng.choice(n, min(3, n), replace=False)
    return ({int(v): float(rng.random()) + 0.1 for v in pick},
            {v: 1.0 + v % 3 for v in range(0, n, 2)})


@pytest.mark.parametrize("direction", ["pull"] if ON_CUDASIM else ["pull", "push"])
@pytest.mark.parametrize("name", NAMES)
def test_personalised_pagerank_equals_networkx(backend, cpu_split, name, direction):
    G = GRAPHS[name]
    pers, dang = vectors(G.num_vertices)
    r = gunpy.pagerank(G, personalization=pers, direction=direction, backend=backend, **RUN)
    np.testing.assert_allclose(r.rank, nx_rank(G, personalization=pers, **RUN), atol=1e-12)
    assert r.converged != ON_CUDASIM and abs(r.rank.sum() - 1) < 1e-9
    r = gunpy.pagerank(G, personalization=pers, dangling=dang, direction=direction,
                       backend=backend, **RUN)
    np.testing.assert_allclose(r.rank, nx_rank(G, personalization=pers, dangling=dang, **RUN),
                               atol=1e-12)
    if ON_CUDASIM:
        return
    # an array is a dict of every vertex; dangling alone restarts uniformly
    array = np.zeros(G.num_vertices)
    array[list(pers)] = list(pers.values())
    # (a chunked push adds with atomics in the threads' order: equal to the last bits)
    np.testing.assert_allclose(
        gunpy.pagerank(G, personalization=array, direction=direction, backend=backend).rank,
        gunpy.pagerank(G, personalization=pers, direction=direction, backend=backend).rank,
        rtol=1e-13, atol=0)
    np.testing.assert_allclose(
        gunpy.pagerank(G, dangling=dang, direction=direction, backend=backend).rank,
        nx_rank(G, dangling=dang), atol=1e-12)


@pytest.mark.parametrize("direction", ["pull"] if ON_CUDASIM else ["pull", "push"])
@pytest.mark.parametrize("name", NAMES)
def test_start_vector_equals_networkx(backend, name, direction):
    # nstart: the first split and dangling mass from it; a loose tol stops while the start
    # still shows (uniform differs by ~1e-2), personalised too
    G = GRAPHS[name]
    n = G.num_vertices
    start = {v: 1.0 + v % 5 for v in range(n)}
    run = RUN or {"tol": 1e-2}
    for pers in (None, vectors(n)[0]):
        r = gunpy.pagerank(G, nstart=start, personalization=pers, direction=direction,
                           backend=backend, **run)
        np.testing.assert_allclose(r.rank, nx_rank(G, nstart=start, personalization=pers,
                                                   **run), atol=1e-12)
    if n > 2 and G.num_edges:
        assert not np.allclose(r.rank, gunpy.pagerank(G, personalization=pers,
                                                      backend=backend, **run).rank, atol=1e-6)
    with pytest.raises(ValueError, match="nstart"):
        gunpy.pagerank(G, nstart=np.zeros(n), backend=backend)


@pytest.mark.parametrize("name", NAMES)
def test_ppr_rows_equal_networkx_single_source(backend, name):
    G = GRAPHS[name]
    sources = sorted({0, G.num_vertices // 2, G.num_vertices - 1})
    r = gunpy.ppr(G, sources, backend=backend, **RUN)
    assert r.rank.shape == (len(sources), G.num_vertices) and r.ranks is r.rank
    for i, s in enumerate(sources):
        np.testing.assert_allclose(r.rank[i], nx_rank(G, personalization={s: 1}, **RUN),
                                   atol=1e-12)
    # ppr's restart at one vertex (no restart vector read) is the restart vector's
    # arithmetic, term for term: pagerank(personalization=) gives the same bits (on a
    # device, sums by atomics add in any order: the same to the last few bits)
    s = sources[-1]
    same = gunpy.pagerank(G, personalization={s: 1}, backend=backend, **RUN).rank
    if backend == "cuda" and not ON_CUDASIM:
        np.testing.assert_allclose(r.rank[-1], same, rtol=1e-12, atol=0)
    else:
        assert np.array_equal(r.rank[-1], same)
    assert r.converged.all() != ON_CUDASIM and r.sources.tolist() == sources
    assert r.stats.iterations == r.iterations.sum() and r.stats.extra["sources"] == len(sources)


@pytest.mark.large
def test_ppr_every_source_labels_weights_and_push(backend):
    g = nx.les_miserables_graph()
    G = gunpy.Graph.from_networkx(g)  # weighted ("weight"), labelled by name
    r = gunpy.ppr(G, backend=backend)
    assert r.rank.shape == (len(g), len(g))
    got = r.to_dict()
    for s in list(g)[:5]:
        want = nx.pagerank(g, personalization={s: 1})
        assert max(abs(got[s][v] - want[v]) for v in g) < 1e-12
    push = gunpy.ppr(G, [2, 7], direction="push", backend=backend)
    np.testing.assert_allclose(push.rank, r.rank[[2, 7]], atol=1e-13)
    # alpha, tol and max_iter as pagerank's, per source
    few = gunpy.ppr(G, [1], alpha=0.5, tol=0, max_iter=4, backend=backend)
    assert few.iterations.tolist() == [4] and not few.converged[0]
    np.testing.assert_array_equal(
        few.rank[0], gunpy.pagerank(G, alpha=0.5, personalization={list(g)[1]: 1}, tol=0,
                                    max_iter=4, backend=backend).rank)


def test_ppr_allocates_nothing_per_source_and_pagerank_keeps_its_pass(backend):
    G = gunpy.generators.grid_2d(4, 4)
    gunpy.ppr(G, [0, 1], backend=backend, **RUN)
    problem_runs = []
    import gunpy.primitives.ppr as mod
    real = mod.PageRankEnactor.enact

    def spy(self):
        stats = real(self)
        problem_runs.append(stats)
        return stats
    mod.PageRankEnactor.enact = spy
    try:
        gunpy.ppr(G, [3, 5, 9], backend=backend, **RUN)
    finally:
        mod.PageRankEnactor.enact = real
    assert len(problem_runs) == 3
    for stats in problem_runs[1:]:
        assert all(it["allocs"] == 0 for it in stats.per_iteration)
    if backend == "cuda":  # one fused pass an iteration, as plain PageRank's
        counts = [[(it["launches"], it["syncs"]) for it in gunpy.pagerank(
            G, tol=0, max_iter=3, backend=backend, **kw).stats.per_iteration[1:]]
            for kw in ({}, {"personalization": {3: 1}})]
        assert counts[0] == counts[1] == [counts[0][0]] * 2, counts


def test_bad_input(backend):
    G = gunpy.generators.path(4)
    with pytest.raises(IndexError, match="source 4"):
        gunpy.ppr(G, [0, 4], backend=backend)
    with pytest.raises(TypeError, match="vertex ids"):
        gunpy.ppr(G, [0.5], backend=backend)
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.ppr([[0, 1]], [0])
    for bad in ({9: 1}, [0, 0, 0, 0], [1, -1, 0, 0], [1, 2], [np.nan, 1, 1, 1]):
        with pytest.raises(ValueError, match="personalization"):
            gunpy.pagerank(G, personalization=bad, backend=backend)
    with pytest.raises(ValueError, match="dangling"):
        gunpy.pagerank(G, dangling={}, backend=backend)
    assert gunpy.ppr(G, [], backend=backend).rank.shape == (0, 4)


@pytest.mark.large
@pytest.mark.parametrize("name", ["karate", "email-Eu-core", "Wiki-Vote"])
def test_bundled_datasets_equal_networkx(backend, name):
    G = gunpy.datasets.load(name)
    sources = [0, 7]
    r = gunpy.ppr(G, sources, backend=backend)
    for i, s in enumerate(sources):
        np.testing.assert_allclose(r.rank[i], nx_rank(G, personalization={s: 1}), atol=1e-12)


@pytest.mark.ptx
def test_personalised_pagerank_compiles_to_ptx(ptx_backend):
    G = nasty_graphs(small=True)["preferential_hubs"]
    gunpy.ppr(G, [0], max_iter=2, backend=ptx_backend)  # VertexUpdate
    gunpy.pagerank(G, personalization={1: 1}, max_iter=2, backend=ptx_backend)  # PersonalUpdate
    gunpy.pagerank(G, personalization={1: 1}, direction="push", max_iter=2, backend=ptx_backend)
    gunpy.pagerank(G, nstart={1: 1}, max_iter=2, backend=ptx_backend)  # StartSplit
    names = ptx_backend.kernel_names()
    assert "cuda_kernel.<locals>.by_thread" in names and "cuda_kernel.<locals>.advance" in names


@pytest.mark.parametrize("name", ["gunpy.primitives.ppr", "gunpy.primitives.pagerank"])
def test_docstring_examples(name):
    check_docstring_examples(name, 3)


def test_registered():
    from gunpy.registry import primitive
    spec = primitive("ppr")
    assert spec.function is gunpy.ppr and spec.source == "many"


def test_user_guide_ppr_section_runs():
    run_user_guide_section("## Personalised PageRank", 3)
