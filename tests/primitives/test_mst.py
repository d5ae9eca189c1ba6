"""Minimum spanning forests (gunpy.mst) against networkx and a Kruskal written here.

Borůvka's rounds pick edges by ``(weight, smaller end, larger end)``, a strict order,
so the forest is the one Kruskal's algorithm finds scanning the edges in that order
(the reference below): the edge sets must be equal, not only the totals. The totals
are also checked against networkx's ``minimum_spanning_tree`` (exactly for integer
weights), and the forest has one tree per connected component. No allocation per
round, and the launches a round: tests/backends/test_allocations.py, tests/backends/test_launch_budget.py.
"""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import operators as ops
from gunpy.testing import graph_names, nasty_graphs
from doc_examples import check_docstring_examples, run_user_guide_section

UNDIRECTED = {name: G for name, G in nasty_graphs(small=True).items() if not G.directed}


def reweighted(G, weights):
    """``G``'s undirected edges (once each, ``u < v``) with ``weights(k)`` as weights."""
    A = G.to_scipy().tocoo()
    once = A.row < A.col
    u, v = A.row[once], A.col[once]
    return gunpy.Graph.from_edges(u, v, weights(u.size), num_vertices=G.num_vertices,
                                  directed=False)


def kruskal(G, ties=None):
    """The forest Kruskal's algorithm finds in ``(weight, u, v)`` order (``(weight, ties)``
    with ``ties`` in CSR order), as triples in that order."""
    A = G.to_scipy().tocoo()  # CSR order: row by row, columns sorted
    once = A.row < A.col
    u, v, w = A.row[once], A.col[once], A.data[once] if G.weighted else np.ones(once.sum())
    second = A.col[once] if ties is None else ties[once]
    first = A.row[once] if ties is None else np.zeros_like(second)
    parent = list(range(G.num_vertices))

    def root(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    forest = []
    for i in np.lexsort((second, first, w)):
        a, b = root(int(u[i])), root(int(v[i]))
        if a != b:
            parent[max(a, b)] = min(a, b)
            forest.append((int(u[i]), int(v[i]), float(w[i])))
    return forest


def check(G, r):
    """The forest is Kruskal's, spans every component once and weighs networkx's total."""
    got = list(zip(r.src.tolist(), r.dst.tolist(), r.weight.tolist()))
    assert got == kruskal(G)
    g = nx.Graph(G.to_networkx())
    assert r.num_edges == G.num_vertices - nx.number_connected_components(g)
    want = nx.minimum_spanning_tree(g).size(weight="weight")
    assert r.total == pytest.approx(want, rel=1e-9, abs=0)
    assert r.weight.dtype == np.float64 and bool(np.all(r.src < r.dst))


@pytest.mark.parametrize("name", graph_names(UNDIRECTED))
def test_nasty_graphs_with_tied_integer_weights(backend, cpu_split, name):
    G = UNDIRECTED[name]
    rng = np.random.default_rng(len(name))
    H = reweighted(G, lambda k: rng.integers(1, 4, k).astype(float))  # many ties
    r = gunpy.mst(H, backend=backend)
    check(H, r)
    g = nx.Graph(H.to_networkx())
    assert r.total == nx.minimum_spanning_tree(g).size(weight="weight")  # exactly
    check(G, gunpy.mst(G, backend=backend))  # unweighted: every edge weighs 1


def test_ties_order_equal_weights(backend):
    # a 4x4 grid, every edge of weight 1 or 2: the tie order decides the forest
    G = gunpy.generators.grid_2d(4, 4)
    H = reweighted(G, lambda k: 1.0 + np.arange(k) % 2)
    ties = np.arange(H.num_edges)[::-1].copy()
    r = gunpy.mst(H, ties=ties, backend=backend)
    got = list(zip(r.src.tolist(), r.dst.tolist(), r.weight.tolist()))
    assert got == kruskal(H, ties) != kruskal(H)
    assert r.total == gunpy.mst(H, backend=backend).total
    with pytest.raises(ValueError, match="ties"):
        gunpy.mst(H, ties=np.zeros(H.num_edges, dtype=np.int64), backend=backend)
    with pytest.raises(ValueError, match="ties"):
        gunpy.mst(H, ties=np.arange(3), backend=backend)


def test_float_negative_and_infinite_weights(backend, small):
    G = gunpy.generators.grid_2d(4, 3) if small else gunpy.generators.grid_2d(6, 5)
    rng = np.random.default_rng(1)
    H = reweighted(G, lambda k: rng.normal(size=k))
    check(H, gunpy.mst(H, backend=backend))
    H = reweighted(G, lambda k: np.where(np.arange(k) % 5 == 0, np.inf, rng.random(k)))
    r = gunpy.mst(H, backend=backend)
    check(H, r)
    assert r.num_edges == G.num_vertices - 1 and np.isinf(r.total) == bool(
        np.isinf(r.weight).any())


def test_repeated_edges_and_self_loops(backend):
    # 0 - 1 twice (weights 5 and 2), a loop of weight -9 on 1, 1 - 2 weight 3
    G = gunpy.Graph.from_edges([0, 0, 1, 1], [1, 1, 1, 2], [5.0, 2.0, -9.0, 3.0],
                               directed=False, remove_self_loops=False,
                               remove_duplicates=False)
    r = gunpy.mst(G, backend=backend)
    assert r.to_dict() == {(0, 1): 2.0, (1, 2): 3.0} and r.total == 5.0


def test_rounds_and_results(backend):
    G = gunpy.generators.path(9)
    r = gunpy.mst(G, backend=backend)
    assert r.num_edges == 8 and r.total == 8.0 and 1 <= r.stats.iterations <= 4
    assert r.stats.extra["rounds"] == r.stats.iterations
    assert nx.utils.edges_equal(r.to_networkx().edges, nx.path_graph(9).edges)
    empty = gunpy.mst(gunpy.Graph.from_edges([], [], num_vertices=3, directed=False),
                      backend=backend)
    assert empty.num_edges == 0 and empty.total == 0.0 and empty.src.size == 0


def check_by_scipy(G, r):
    """For graphs too large for the Python Kruskal: scipy's total, a spanning forest."""
    import scipy.sparse as sp
    import scipy.sparse.csgraph as csgraph
    A = G.to_scipy()
    assert r.total == pytest.approx(csgraph.minimum_spanning_tree(A).sum(), rel=1e-12)
    parts = csgraph.connected_components(A, directed=False)[0]
    F = sp.coo_matrix((r.weight, (r.src, r.dst)), shape=A.shape)
    assert r.num_edges == G.num_vertices - parts  # n - c edges joining c parts: a forest
    assert csgraph.connected_components(F, directed=False)[0] == parts


@pytest.mark.large
@pytest.mark.parametrize("name", ["karate", "chesapeake", "netscience", "CA-GrQc",
                                  "luxembourg_osm", "delaunay_n16"])
def test_bundled_graphs(name):
    G = gunpy.datasets.load(name)
    rng = np.random.default_rng(2)
    H = reweighted(G, lambda k: rng.integers(1, 100, k).astype(float))
    r = gunpy.mst(H, backend="cpu")
    check(H, r) if G.num_vertices < 10000 else check_by_scipy(H, r)


@pytest.mark.large
def test_rmat(backend):
    G = gunpy.generators.rmat(12, 8, seed=3, directed=False, weighted=True)
    r = gunpy.mst(G, backend=backend)
    check(G, r)
    check_by_scipy(G, r)


def test_bad_input():
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.mst([[0, 1]])
    with pytest.raises(ValueError, match="undirected"):
        gunpy.mst(gunpy.Graph.from_edges([0, 1], [1, 2]))
    G = gunpy.Graph.from_edges([0, 1], [1, 2], [1.0, np.nan], directed=False)
    with pytest.raises(ValueError, match="NaN"):
        gunpy.mst(G)
    with pytest.raises(ValueError, match="backend"):
        gunpy.mst(gunpy.generators.path(3), backend="abacus")


@pytest.mark.ptx
def test_mst_compiles_to_ptx(ptx_backend):
    from gunpy.primitives import mst as m
    G = reweighted(nasty_graphs(small=True)["preferential_hubs"], lambda k: np.ones(k))
    p = m.MSTProblem(G, backend=ptx_backend)
    ctx = ops.Context(G, ptx_backend)
    vertices, edges = ctx.full_frontier(), ctx.full_frontier("edge")
    for functor in (m.Hook, m.Choose, m.Relabel):
        ops.compute(G, vertices, functor, p.data(), context=ctx)
    for functor in (m.Start, m.Jump, m.Growing):
        ops.filter(G, vertices, functor, p.data(), context=ctx)
    for functor in (m.Lightest, m.Tiebreak):
        ops.filter(G, edges, functor, p.data(), context=ctx)
    names = " ".join(ptx_backend.kernel_names())
    assert all(k in names for k in ("compute", "flag", "scatter")), names


def test_networkx_backend_is_networkx_kruskal_ties_included(monkeypatch):
    """Tied weights, labels out of order, adjacency out of sorted order: the edges, their
    orientation and their order are networkx's Kruskal's, and gunpy.mst really runs."""
    import gunpy.nx_backend as nb
    from gunpy.nx_backend import can_run
    calls = []
    real = nb.gunpy.mst
    monkeypatch.setattr(nb.gunpy, "mst", lambda *a, **k: calls.append(1) or real(*a, **k))
    rng = np.random.default_rng(4)
    g = nx.relabel_nodes(nx.gnm_random_graph(40, 120, seed=4), lambda v: f"n{(v * 7) % 40}")
    for u, v in g.edges:
        g[u][v]["w"] = int(rng.integers(1, 4))  # many ties
    g.add_edge("n3", "n3", w=0)  # a self-loop never joins two trees
    g.add_edge("lonely", "pair", w=2.5)
    for data in (True, False):
        got = list(nx.minimum_spanning_edges(g, weight="w", data=data, backend="gunpy"))
        assert got == list(nx.minimum_spanning_edges(g, weight="w", data=data))
    T, want = nx.minimum_spanning_tree(g, weight="w", backend="gunpy"), \
        nx.minimum_spanning_tree(g, weight="w")
    assert list(T.edges(data=True)) == list(want.edges(data=True)) and list(T) == list(want)
    unweighted = nx.cycle_graph(7)  # every weight 1 (the default)
    assert list(nx.minimum_spanning_edges(unweighted, backend="gunpy")) == \
        list(nx.minimum_spanning_edges(unweighted))
    assert len(calls) == 4
    # Borůvka where weights are distinct (the forest is unique); the rest left to networkx
    h = nx.Graph([(0, 1, {"weight": 3}), (1, 2, {"weight": 1}), (0, 2, {"weight": 2})])
    assert can_run("minimum_spanning_tree", (h,), {"algorithm": "boruvka"}) is True
    assert sorted(nx.minimum_spanning_tree(h, algorithm="boruvka", backend="gunpy").edges) \
        == [(0, 2), (1, 2)]
    assert "tied" in can_run("minimum_spanning_edges", (g,), {"algorithm": "boruvka",
                                                              "weight": "w"})
    assert "prim" in can_run("minimum_spanning_tree", (h,), {"algorithm": "prim"})
    h.add_edge(2, 3, weight=float("nan"))
    assert "NaN" in can_run("minimum_spanning_tree", (h,), {})
    assert "multigraph" in can_run("minimum_spanning_tree", (nx.MultiGraph(h),), {})


def test_docstring_examples():
    check_docstring_examples("gunpy.primitives.mst", 4)


def test_registered():
    from gunpy.registry import primitive
    spec = primitive("mst")
    assert spec.function is gunpy.mst and spec.weighted
    assert set(spec.networkx) == {"minimum_spanning_tree", "minimum_spanning_edges"}


def test_user_guide_mst_section_runs():
    run_user_guide_section("## Minimum spanning forest", 3)
