"""HITS (gunpy.hits) against networkx's hits and a NumPy power iteration.

networkx computes the principal singular vectors with ARPACK: a unique answer only where
the largest singular value of the adjacency matrix is simple. There gunpy must equal it
(1e-6); everywhere (a bipartite graph's repeated singular value included) it must equal
the power iteration from the uniform hubs, written here in NumPy.
"""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.testing import ON_CUDASIM, graph_names, nasty_graphs, to_nx
from doc_examples import check_docstring_examples, run_user_guide_section


def power_iteration(G, tol=1e-8, max_iter=100):
    """``(hubs, authorities, updates, converged)``: a = A^T h, h = A a, each over its sum."""
    A = G.to_scipy()
    n = G.num_vertices
    h = np.full(n, 1.0 / n)
    a = A.T @ h
    a /= a.sum()
    for it in range(1, max_iter + 1):
        last, h = h, A @ a
        h /= h.sum()
        a = A.T @ h
        a /= a.sum()
        if np.abs(h - last).sum() < tol:
            return h, a, it, True
    return h, a, max_iter, False


def simple_top(G):
    """Whether the largest singular value of G's adjacency matrix is simple."""
    s = np.linalg.svd(G.to_scipy().toarray(), compute_uv=False)
    return s.size > 1 and s[0] - s[1] > 1e-6 * s[0]


@pytest.mark.parametrize("name", graph_names(nasty_graphs(small=True)))
def test_nasty_graphs_equal_the_power_iteration_and_networkx(backend, cpu_split, small, name):
    G = nasty_graphs(small=small)[name]
    if G.num_edges == 0:
        r = gunpy.hits(G, backend=backend)
        assert not r.hubs.any() and not r.authorities.any() and r.converged
        return
    r = gunpy.hits(G, backend=backend)
    h, a, updates, converged = power_iteration(G)
    np.testing.assert_allclose(r.hubs, h, atol=1e-10)
    np.testing.assert_allclose(r.authorities, a, atol=1e-10)
    assert r.iterations == updates and r.converged == converged
    assert abs(r.hubs.sum() - 1) < 1e-9 and abs(r.authorities.sum() - 1) < 1e-9
    if simple_top(G):
        hubs, auths = nx.hits(to_nx(G))
        np.testing.assert_allclose(r.hubs, [hubs[v] for v in range(G.num_vertices)], atol=1e-6)
        np.testing.assert_allclose(r.authorities, [auths[v] for v in range(G.num_vertices)],
                                   atol=1e-6)


def test_networkx_example_weights_and_direction(backend):
    # Langville and Meyer's example, networkx's test values (1e-4 there, 1e-6 here)
    g = nx.DiGraph([(1, 3), (1, 5), (2, 1), (3, 5), (5, 4), (5, 3), (6, 5)])
    r = gunpy.hits(gunpy.Graph.from_networkx(g), backend=backend)
    hubs, auths = nx.hits(g)
    for v in g:
        assert r.to_dict()[v] == pytest.approx(hubs[v], abs=1e-6)
        assert r.to_dict("authorities")[v] == pytest.approx(auths[v], abs=1e-6)
    if ON_CUDASIM:  # the weighted case's 30 vertices cost the simulator seconds
        return
    # weights weight the adjacency matrix; reversing the edges swaps hubs and authorities
    w = nx.gnp_random_graph(30, 0.15, directed=True, seed=2)
    for i, (u, v) in enumerate(w.edges):
        w[u][v]["weight"] = 1 + i % 5
    G = gunpy.Graph.from_networkx(w)
    r = gunpy.hits(G, backend=backend)
    hubs, auths = nx.hits(w)
    np.testing.assert_allclose(r.hubs, [hubs[v] for v in w], atol=1e-6)
    np.testing.assert_allclose(r.authorities, [auths[v] for v in w], atol=1e-6)
    back = gunpy.hits(gunpy.Graph.from_networkx(w.reverse()), backend=backend)
    np.testing.assert_allclose(back.hubs, r.authorities, atol=1e-7)


@pytest.mark.large
@pytest.mark.parametrize("name", ["karate", "dolphins", "email-Eu-core", "Wiki-Vote"])
def test_bundled_datasets_equal_networkx(backend, name):
    G = gunpy.datasets.load(name)
    r = gunpy.hits(G, backend=backend)
    hubs, auths = nx.hits(to_nx(G))
    np.testing.assert_allclose(r.hubs, [hubs[v] for v in range(G.num_vertices)], atol=1e-6)
    np.testing.assert_allclose(r.authorities, [auths[v] for v in range(G.num_vertices)],
                               atol=1e-6)


@pytest.mark.large
@pytest.mark.parametrize("directed", [False, True])
def test_weighted_rmat_equals_networkx(backend, directed):
    G = gunpy.generators.rmat(11, 8, seed=5, directed=directed, weighted=True)
    r = gunpy.hits(G, backend=backend)
    hubs, auths = nx.hits(to_nx(G))
    np.testing.assert_allclose(r.hubs, [hubs[v] for v in range(G.num_vertices)], atol=1e-6)
    np.testing.assert_allclose(r.authorities, [auths[v] for v in range(G.num_vertices)],
                               atol=1e-6)


def test_max_iter_tol_and_bad_input(backend):
    G = gunpy.Graph.from_networkx(nx.path_graph(12))
    r = gunpy.hits(G, max_iter=3, backend=backend)
    assert r.iterations == 3 and not r.converged
    h, a, _, _ = power_iteration(G, max_iter=3)
    np.testing.assert_allclose(r.hubs, h, atol=1e-12)
    assert gunpy.hits(G, tol=0, max_iter=7, backend=backend).iterations == 7
    zero = gunpy.hits(G, max_iter=0, backend=backend)
    assert zero.iterations == 0 and not zero.converged
    np.testing.assert_allclose(zero.hubs, np.full(12, 1 / 12))
    assert gunpy.hits(gunpy.Graph.from_edges([], [], num_vertices=0),
                      backend=backend).hubs.size == 0
    for bad in ({"tol": -1.0}, {"max_iter": -1}, {"max_iter": 2.5}):
        with pytest.raises(ValueError):
            gunpy.hits(G, backend=backend, **bad)
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.hits([[0, 1]])


def test_iterations_allocate_nothing(backend):
    G = gunpy.generators.grid_2d(4, 5)
    gunpy.hits(G, max_iter=3, backend=backend)
    its = gunpy.hits(G, max_iter=4, backend=backend).stats.per_iteration
    assert len(its) == 4 and all(it["allocs"] == 0 for it in its)


@pytest.mark.ptx
def test_hits_compiles_to_ptx(ptx_backend):
    G = nasty_graphs(small=True)["preferential_hubs"]
    before = len(ptx_backend.compiled)  # the backend is the session's: other tests' kernels
    gunpy.hits(G, max_iter=2, backend=ptx_backend)
    names = ptx_backend.kernel_names()
    assert "cuda_kernel.<locals>.compute" in names, names
    # two reductions (hubs over out-edges, authorities over in-edges): two kernels
    mine = list(ptx_backend.compiled)[before:]  # in compile order
    assert sum("by_thread" in f.__qualname__ for f, _ in mine) == 2, names


@pytest.mark.ptx
def test_the_device_side_normalisation_compiles_to_ptx():
    """Normalize (the hubs and authorities scaled where they are, so a CUDA run's result
    stays on the device) compiles for the GPU: the primitive's PTX test never reaches it
    (nothing runs in a compile-only backend)."""
    from gunpy import operators as ops
    from gunpy.primitives.hits import HITSData, Normalize
    from gunpy.testing import PtxBackend
    be = PtxBackend(cc=(9, 0))
    G = nasty_graphs(small=True)["preferential_hubs"]
    n = G.num_vertices
    data = HITSData(np.ones(n), np.ones(n), np.ones(n), 0.5, 0.5, 0.25)
    ops.compute(G, None, Normalize, data, context=ops.Context(G, backend=be))
    computes = [key for key in be.compiled if key[0].__name__ == "compute"]
    assert len(computes) == 1, list(be.compiled)


def test_docstring_examples():
    check_docstring_examples("gunpy.primitives.hits", 4)


def test_registered():
    from gunpy.registry import primitive
    spec = primitive("hits")
    assert spec.function is gunpy.hits and spec.networkx == ("hits",)


def test_user_guide_hits_section_runs():
    run_user_guide_section("## Hubs and authorities (HITS)", 3)
