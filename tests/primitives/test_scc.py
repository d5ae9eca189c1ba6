"""Strongly connected components (gunpy.scc) against networkx and scipy.

Labels are compared exactly: each vertex's component named by its smallest vertex id,
built from networkx's ``strongly_connected_components`` (``connected_components`` on
undirected graphs) or scipy's ``connected_components(connection="strong")``.
"""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import gunpy
from gunpy.testing import graph_names, nasty_graphs
from gunpy.testing.oracles import to_nx
from _helpers import assert_compiled, ptx_set_up
from doc_examples import check_docstring_examples, run_user_guide_section


def named_by_smallest(components, n):
    labels = np.full(n, -1, dtype=np.int64)
    for c in components:
        labels[list(c)] = min(c)
    return labels


def reference(G):
    g = to_nx(G)
    comps = nx.strongly_connected_components(g) if G.directed else nx.connected_components(g)
    return named_by_smallest(comps, G.num_vertices)


def scipy_reference(G):
    _, labels = csgraph.connected_components(G.to_scipy(), directed=True, connection="strong")
    smallest = np.full(labels.max(initial=-1) + 1, G.num_vertices)
    np.minimum.at(smallest, labels, np.arange(G.num_vertices))
    return smallest[labels]


def check(G, backend):
    r = gunpy.scc(G, backend=backend)
    want = reference(G)
    np.testing.assert_array_equal(r.labels, want)
    assert r.labels.dtype == G.column_indices.dtype
    assert r.num_components == np.unique(want).size
    return r


@pytest.mark.parametrize("name", graph_names(nasty_graphs(small=True)))
def test_nasty_graphs_equal_networkx(backend, cpu_split, small, name):
    G = nasty_graphs(small=small)[name]
    check(G, backend)
    if not G.directed:  # the same graph stored as a directed one: the same components,
        D = gunpy.Graph(G.row_offsets, G.column_indices, directed=True)
        check(D, backend)  # gunpy.cc's (symmetric) and the directed steps' too
        np.testing.assert_array_equal(enact(D, backend), reference(D))


def enact(G, backend):
    """The directed steps (trimming, forward-backward, colouring), even on a symmetric G."""
    from gunpy.primitives.scc import SCCEnactor, SCCProblem
    p = SCCProblem(G, backend=backend)
    SCCEnactor(p).enact()
    return p.extract()


def test_symmetric_directed_graph_runs_cc():
    """One edge one way only (5 -> 4): the directed steps; every edge both ways (a road
    network's storage): the connected components, by gunpy.cc."""
    src, dst = [0, 1, 1, 2, 3, 4, 5, 5], [1, 0, 2, 1, 4, 3, 5, 4]
    r = gunpy.scc(gunpy.Graph.from_edges(src, dst, num_vertices=7), backend="cpu")
    assert r.labels.tolist() == [0, 0, 0, 3, 3, 5, 6] and r.stats.extra["rounds"] >= 1
    sym = gunpy.Graph.from_edges(src[:7], dst[:7], num_vertices=7)  # no 5 -> 4: symmetric
    r = gunpy.scc(sym, backend="cpu")
    assert r.labels.tolist() == [0, 0, 0, 3, 3, 5, 6] and "rounds" not in r.stats.extra


def test_every_step_on_one_graph(backend):
    """Trimmed tails both ways, a giant cycle (forward-backward), and components the
    colouring rounds find: two 3-cycles joined one way, a self-loop, a pair."""
    g = nx.DiGraph()
    nx.add_cycle(g, range(10, 22))                  # the pivot's component
    g.add_edges_from([(0, 10), (1, 0), (21, 2), (2, 3)])  # tails: in-trim and out-trim
    nx.add_cycle(g, [4, 5, 6])
    nx.add_cycle(g, [7, 9, 8])
    g.add_edges_from([(6, 7), (22, 22), (22, 4), (23, 24), (24, 23), (9, 23)])
    g.add_edge(12, 4)                                # out of the giant one
    G = gunpy.Graph.from_edges(*np.array(g.edges).T, num_vertices=25)
    r = check(G, backend)
    assert r.num_components == 9 and r.labels[[7, 8, 9]].tolist() == [7, 7, 7]
    assert r.stats.extra["rounds"] >= 2  # forward-backward, then at least one colouring


def test_long_cycles_and_chains(backend, small):
    n = 9 if small else 400
    ring = np.arange(n)
    cycle = gunpy.Graph.from_edges(ring, (ring + 1) % n)
    r = gunpy.scc(cycle, backend=backend)
    assert r.num_components == 1 and not r.labels.any()
    # a chain of cycles linked in increasing and in decreasing id order
    for step in (1, -1):
        src, dst = [], []
        for c in range(0, n, 3):
            src += [c, c + 1, c + 2]
            dst += [c + 1, c + 2, c]
            if c + 3 < n:
                a, b = (c, c + 3) if step == 1 else (c + 3, c)
                src.append(a)
                dst.append(b)
        G = gunpy.Graph.from_edges(src, dst, num_vertices=max(src) + 1)
        check(G, backend)


def test_pairs_chained_in_id_order_take_few_rounds(backend, small):
    """Pairs (2i, 2i + 1) both ways, 2i + 1 -> 2i + 2: nothing to trim, and colours by
    id would find one pair a round (the smallest id reaches every vertex); by keys
    (scrambled ids) a round finds many."""
    n = 20 if small else 200
    i = np.arange(0, n, 2)
    src = np.concatenate([i, i + 1, i[1:] - 1])
    dst = np.concatenate([i + 1, i, i[1:]])
    r = check(gunpy.Graph.from_edges(src, dst, num_vertices=n), backend)
    assert r.num_components == n // 2 and r.stats.extra["rounds"] < n // 4


@pytest.mark.large
@pytest.mark.parametrize("name", ["email-Eu-core", "Wiki-Vote", "netscience"])
def test_bundled_datasets_directed_equal_scipy(backend, name):
    G = gunpy.datasets.load(name)
    if not G.directed:  # each edge one way (from the smaller id), a seventh both ways
        G = gunpy.Graph.from_edges(*_one_way(G), num_vertices=G.num_vertices)
    np.testing.assert_array_equal(gunpy.scc(G, backend=backend).labels, scipy_reference(G))


def _one_way(G):
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    keep = (src < G.column_indices) | ((src + G.column_indices) % 7 == 0)
    return src[keep], G.column_indices[keep]


@pytest.mark.large
def test_rmat_directed_equals_scipy(backend):
    G = gunpy.generators.rmat(12, 8, seed=5, directed=True)
    r = gunpy.scc(G, backend=backend)
    np.testing.assert_array_equal(r.labels, scipy_reference(G))
    assert np.bincount(r.labels).max() > G.num_vertices // 10  # a giant component


def test_bad_input():
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.scc([[0, 1]])
    with pytest.raises(ValueError, match="backend"):
        gunpy.scc(gunpy.generators.path(3), backend="abacus")
    with pytest.raises(ValueError, match="load_balance|strategy"):
        gunpy.scc(gunpy.Graph.from_edges([0], [1]), load_balance="sideways", backend="cpu")


@pytest.mark.ptx
def test_scc_compiles_to_ptx(ptx_backend):
    from gunpy import operators as ops
    from gunpy.primitives import scc as m
    G, p, ctx, everything = ptx_set_up(m.SCCProblem, ptx_backend, "random_directed")
    R = p.reverse
    rctx = ops.Context(R, ptx_backend)
    for functor in (m.Start, m.Pivot, m.Colour, m.Smallest, m.Relabel):
        ops.compute(G, None, functor, p.data(), context=ctx)
    for functor in (m.NoInEdges, m.NoOutEdges, m.Active, m.Assigned, m.Seed, m.Root):
        ops.filter(G, everything, functor, p.data(), context=ctx)
    ops.advance(G, everything, m.LoseInEdge, p.data(), context=ctx)
    ops.advance(G, everything, m.Spread, p.data(), context=ctx)
    ops.advance(R, everything, m.LoseOutEdge, p.data(), context=rctx)
    ops.advance(R, everything, m.Gather, p.data(), context=rctx)
    ops.neighbor_reduce(G, everything, m.CountOut, p.data(), p.count, edges="out", apply=True,
                        context=ctx)
    ops.neighbor_reduce(R, everything, m.CountIn, p.data(), p.count, edges="out", apply=True,
                        context=rctx)
    # the fused thin steps: over the graph (in-degree trimming, spreading) and its
    # reverse (out-degree trimming, the backward search)
    from gunpy.functor import compile_functor
    from gunpy.operators import levels
    for c, functor in ((ctx, m.LoseInEdge), (ctx, m.Spread), (rctx, m.LoseOutEdge),
                       (rctx, m.Gather)):
        out = gunpy.Frontier(ptx_backend, G.num_vertices, dtype=p.index_dtype,
                             num_vertices=G.num_vertices)
        levels.run(c, c.full_frontier(), out, compile_functor(functor, ptx_backend),
                   p.data(), limit=1 << 20, edges=1)
    assert_compiled(ptx_backend, "compute", "flag", "advance", "by_thread", "levels")


def test_docstring_examples():
    check_docstring_examples("gunpy.primitives.scc", 3)


def test_user_guide_scc_section_runs():
    run_user_guide_section("## Strongly connected components", 3)
