"""gunpy.blas.algorithms against networkx and the native primitives, graph by graph.

networkx is the oracle everywhere (its twins are built from the graphs' raw edge
lists, :func:`gunpy.testing.to_nx`); agreeing with the native primitive as well is
checked on top, never instead.
"""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.blas import algorithms as al
from gunpy.testing import (ON_CUDASIM, check_bfs_tree, check_sssp_tree, graph_names, nasty_graphs,
                           reference_depths, reference_distances, to_nx, weighted_copy)

GRAPHS = nasty_graphs()

#: under the simulator (every kernel launch is Python threads) a few graphs per algorithm
SIM_FEW = ("self_loops_duplicates", "disconnected", "star_hub")


def _names(few=SIM_FEW):
    names = graph_names(GRAPHS)
    return [n for n in names if n in few] if ON_CUDASIM else names


def _weighted(G, seed=3):
    """Weights 1..8, one per input edge (duplicates keep the smaller; both ways alike)."""
    return weighted_copy(G, seed=seed)


def _nx_bc(g, sources=None, normalized=False):
    """networkx betweenness (``endpoints=False``) as an array, with gunpy's scaling:
    halved on undirected graphs, or divided by ``(n-1)(n-2)`` when ``normalized``."""
    n = g.number_of_nodes()
    if sources is None:
        ref = nx.betweenness_centrality(g, normalized=normalized, endpoints=False)
        return np.array([ref[v] for v in range(n)])
    # the subset version halves undirected values and does not normalise the way bc does
    ref = nx.betweenness_centrality_subset(g, sources, list(g), normalized=False)
    out = np.array([ref[v] for v in range(n)])
    if normalized and n > 2:
        out = out * (1 if g.is_directed() else 2) / ((n - 1) * (n - 2))
    return out


def _sources(G):
    n = G.num_vertices
    picks = sorted({0, n // 2, int(np.argmax(G.out_degrees())) if n else 0})
    return picks[:2] if ON_CUDASIM else picks


@pytest.mark.parametrize("direction", ["auto", "push", "pull"])
@pytest.mark.parametrize("name", _names(SIM_FEW + ("random_directed",)))
def test_bfs(name, direction, backend, cpu_split):
    G = GRAPHS[name]
    for s in _sources(G):
        r = al.bfs(G, s, direction=direction, backend=backend)
        check_bfs_tree(G, s, r.depth, r.parent, reference=reference_depths(G, s))
        assert r.depth.dtype == np.int32 and r.parent.dtype == np.int32
        assert np.array_equal(r.depth, gunpy.bfs(G, s, backend=backend).depth)


@pytest.mark.parametrize("name", _names())
def test_bfs_sigma_counts_shortest_paths(name, backend):
    G = GRAPHS[name]
    g = to_nx(G)
    for s in _sources(G):
        r = al.bfs_sigma(G, s, backend=backend)
        assert np.array_equal(r.depth, reference_depths(G, s))
        # sigma: shortest paths from s, counted level by level over networkx's distances
        dist = nx.single_source_shortest_path_length(g, s)
        expect = np.zeros(G.num_vertices)
        expect[s] = 1
        for v in sorted(dist, key=dist.get):
            for w in g.successors(v) if g.is_directed() else g.neighbors(v):
                if dist.get(w) == dist[v] + 1:
                    expect[w] += expect[v]
        assert np.array_equal(r.sigma, expect)


@pytest.mark.parametrize("name", _names(("self_loops_duplicates",)))
def test_bc(name, backend):
    G = GRAPHS[name]
    if ON_CUDASIM and G.num_vertices > 20:
        pytest.skip("all-sources BC: too slow under the simulator")
    r = al.bc(G, backend=backend)
    np.testing.assert_allclose(r.centrality, _nx_bc(to_nx(G)), atol=1e-9)
    assert np.allclose(r.centrality, gunpy.bc(G, backend=backend).centrality)


@pytest.mark.large
def test_bc_sources_and_normalized(backend):
    G = GRAPHS["random_directed"]
    r = al.bc(G, [0, 3], backend=backend)
    np.testing.assert_allclose(r.centrality, _nx_bc(to_nx(G), [0, 3]), atol=1e-9)
    for name in ("grid", "random_directed"):
        G = GRAPHS[name]
        r = al.bc(G, [0, 5], normalized=True, backend=backend)
        expect = _nx_bc(to_nx(G), [0, 5], normalized=True)
        assert expect.max() > 0   # the test means something
        np.testing.assert_allclose(r.centrality, expect, rtol=1e-10, atol=1e-12)
        assert np.allclose(r.centrality,
                           gunpy.bc(G, [0, 5], normalized=True, backend=backend).centrality)


@pytest.mark.parametrize("name", _names(("self_loops_duplicates", "random_directed")))
def test_sssp(name, backend):
    G = _weighted(GRAPHS[name])
    for s in _sources(G):
        r = al.sssp(G, s, backend=backend)
        check_sssp_tree(G, s, r.distance, r.parent, reference=reference_distances(G, s))
        assert np.allclose(r.distance, gunpy.sssp(G, s, backend=backend).distance)


def test_sssp_unweighted_is_hops_and_bad_weights_raise(backend):
    G = GRAPHS["grid"]
    r = al.sssp(G, 0, backend=backend)
    d = reference_depths(G, 0).astype(float)
    d[d < 0] = np.inf
    assert np.array_equal(r.distance, d)
    bad = gunpy.Graph.from_edges([0, 1], [1, 2], [1.0, -2.0])
    with pytest.raises(ValueError, match="non-negative"):
        al.sssp(bad, 0, backend=backend)
    with pytest.raises(IndexError):
        al.sssp(G, G.num_vertices, backend=backend)
    with pytest.raises(IndexError):
        al.bfs(G, -1, backend=backend)


@pytest.mark.parametrize("name", _names(("self_loops_duplicates",)))
def test_pagerank(name, backend):
    G = GRAPHS[name]
    if G.num_vertices == 0:
        return
    g = to_nx(G)
    tol = 1e-4 if ON_CUDASIM else 1e-6  # the simulator: ~half the iterations (22 -> 13)
    r = al.pagerank(G, tol=tol, backend=backend)
    ref = nx.pagerank(g, alpha=0.85, tol=tol)
    np.testing.assert_allclose(r.rank, [ref[v] for v in range(G.num_vertices)], atol=1e-9)
    native = gunpy.pagerank(G, tol=tol, backend=backend)
    assert r.iterations == native.iterations
    np.testing.assert_allclose(r.rank, native.rank, atol=1e-12)


@pytest.mark.large
def test_pagerank_weighted_and_fixed_iterations(backend):
    G = _weighted(GRAPHS["random_directed"])
    g = to_nx(G)
    r = al.pagerank(G, backend=backend)
    ref = nx.pagerank(g, alpha=0.85, tol=1e-6, weight="weight")
    np.testing.assert_allclose(r.rank, [ref[v] for v in range(G.num_vertices)], atol=1e-6)
    r = al.pagerank(G, tol=0, max_iter=7, backend=backend)
    assert r.iterations == 7 and not r.converged


@pytest.mark.parametrize("name", _names())
def test_triangle_count(name, backend):
    G = GRAPHS[name]
    g = to_nx(G).to_undirected()
    g.remove_edges_from(nx.selfloop_edges(g))
    expect = sum(nx.triangles(g).values()) // 3
    assert al.triangle_count(G, backend=backend) == expect
    assert gunpy.triangle_count(G, backend=backend) == expect


@pytest.mark.parametrize("name", _names())
def test_lcc_equals_the_native_one_and_networkx(name, backend):
    G = GRAPHS[name]
    r = al.lcc(G, backend=backend)
    native = gunpy.lcc(G, backend=backend)
    np.testing.assert_allclose(r.lcc, native.lcc, rtol=1e-12, atol=0)
    assert r.lcc.dtype == np.float64 and r.stats.extra["formulation"] == "graphblas"
    g = to_nx(G)
    if not g.is_directed():
        c = nx.clustering(g)
        np.testing.assert_allclose(r.lcc, [c[v] for v in range(G.num_vertices)], rtol=1e-12)
    if G.num_vertices:
        assert r.average == pytest.approx(native.average, rel=1e-12, abs=1e-15)


@pytest.mark.large
@pytest.mark.parametrize("dataset", ["karate", "dolphins", "netscience"])
def test_bundled_datasets(dataset):
    if dataset not in gunpy.datasets.available():
        pytest.skip(f"{dataset} is not bundled")
    G = gunpy.datasets.load(dataset)
    g = to_nx(G)   # a dataset has no raw edge list: its CSR (the algorithms are still checked)
    r = al.bfs(G, 0, backend="cpu")
    assert np.array_equal(r.depth, reference_depths(G, 0))
    assert al.triangle_count(G, backend="cpu") == sum(nx.triangles(g.to_undirected()).values()) // 3
    sources = [0, G.num_vertices // 2, G.num_vertices - 1]
    np.testing.assert_allclose(al.bc(G, sources, backend="cpu").centrality, _nx_bc(g, sources),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(al.bc(G, sources, backend="cpu").centrality,
                               gunpy.bc(G, sources, backend="cpu").centrality, atol=1e-9)


@pytest.mark.large
def test_rmat_against_networkx_and_native():
    G = gunpy.generators.rmat(12, seed=5)
    Gw = gunpy.generators.rmat(11, seed=6, weighted=True)
    g, gw = to_nx(G), to_nx(Gw)   # generated graphs: twins of their CSR
    for s in (0, 17, 123):
        depth = al.bfs(G, s, backend="cpu").depth
        assert np.array_equal(depth, reference_depths(G, s, g))
        assert np.array_equal(depth, gunpy.bfs(G, s, backend="cpu").depth)
        dist = al.sssp(Gw, s, backend="cpu").distance
        np.testing.assert_allclose(dist, reference_distances(Gw, s, gw), rtol=1e-12)
        assert np.allclose(dist, gunpy.sssp(Gw, s, backend="cpu").distance)
    und = g.to_undirected()
    und.remove_edges_from(nx.selfloop_edges(und))
    triangles = al.triangle_count(G, backend="cpu")
    assert triangles == sum(nx.triangles(und).values()) // 3 > 0
    assert triangles == gunpy.triangle_count(G, backend="cpu")
    rank = al.pagerank(Gw, backend="cpu").rank
    ref = nx.pagerank(gw, alpha=0.85, tol=1e-6, weight="weight")
    np.testing.assert_allclose(rank, [ref[v] for v in range(Gw.num_vertices)], atol=1e-6)
    np.testing.assert_allclose(rank, gunpy.pagerank(Gw, backend="cpu").rank, atol=1e-12)


def test_a_matrix_is_accepted(backend):
    from gunpy import blas
    G = GRAPHS["grid"]
    A = blas.Matrix.from_graph(G, backend=backend)
    assert np.array_equal(al.bfs(A, 0).depth, reference_depths(G, 0))
    with pytest.raises(TypeError):
        al.bfs("not a graph", 0)
