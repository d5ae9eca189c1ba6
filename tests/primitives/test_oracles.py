"""The oracles themselves: built from the raw edge list, they see a graph-building bug.

``gunpy.testing.to_nx`` and ``reference_edges`` read the edge list a test graph was
made from, never its CSR, so every graph's CSR is checked here against a plain-Python
reading of :meth:`gunpy.Graph.from_edges`' documented rules (self-loops dropped,
duplicates merged keeping the minimum weight, undirected edges stored both ways).
"""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.testing import (graph_from_edges, nasty_graphs, raw_edges, reference_depths,
                           reference_edges, to_nx, weighted_copy)

GRAPHS = nasty_graphs()
SMALL = nasty_graphs(small=True)


def csr_edges(G):
    """What gunpy stored, as reference_edges' sorted ``(u, v, weight)`` list."""
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees()).tolist()
    w = [None] * G.num_edges if G.values is None else G.values.tolist()
    return sorted(zip(src, G.column_indices.tolist(), w),
                  key=lambda e: (e[0], e[1], 0.0 if e[2] is None else e[2]))


def assert_built_as_documented(G):
    raw = raw_edges(G)
    assert raw is not None, "the test graph lost its raw edge list"
    g = to_nx(G)
    assert G.num_vertices == raw.num_vertices == g.number_of_nodes()
    assert G.directed == raw.directed == g.is_directed()
    assert csr_edges(G) == reference_edges(G)
    # the networkx twin holds the same edges (an undirected edge once, both ways in the CSR)
    want = {(u, v): w for u, v, w in reference_edges(G)}
    got = {}
    for u, v, w in g.edges(data="weight"):
        got[u, v] = w
        if not G.directed:
            got[v, u] = w
    assert got == want


@pytest.mark.parametrize("graphs", [GRAPHS, SMALL], ids=["full", "small"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_every_nasty_graph_is_built_as_its_edge_list_says(graphs, name):
    G = graphs[name]
    assert_built_as_documented(G)
    # weights drawn per input edge: duplicates with different weights keep the smaller
    assert_built_as_documented(weighted_copy(G, seed=5))
    # the CSR rows are sorted by column (operators such as intersect rely on it)
    for u in range(G.num_vertices):
        row = G.column_indices[G.row_offsets[u]:G.row_offsets[u + 1]]
        assert np.all(row[:-1] < row[1:])


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("flags", [(True, True), (False, True), (True, False), (False, False)])
def test_random_edge_lists_with_every_flag(directed, weighted, flags):
    rng = np.random.default_rng(3)
    loops, dups = flags
    for _ in range(25):
        n = int(rng.integers(1, 12))
        m = int(rng.integers(0, 40))
        src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
        w = rng.integers(0, 4, m).astype(float) if weighted else None  # many tied duplicates
        G = graph_from_edges(src, dst, w, num_vertices=n + 2, directed=directed,
                             remove_self_loops=loops, remove_duplicates=dups)
        assert G.num_vertices == n + 2
        assert csr_edges(G) == reference_edges(G)
        g = to_nx(G)
        assert g.number_of_nodes() == n + 2
        assert g.is_multigraph() == (not dups)


def test_the_reference_reads_the_documented_rules():
    # 0->1 three times (weights 5, 2, 2), a self-loop, 1->0 once, vertex 3 isolated
    G = graph_from_edges([0, 0, 2, 0, 1], [1, 1, 2, 1, 0], [5.0, 2.0, 9.0, 2.0, 7.0],
                         num_vertices=4)
    assert reference_edges(G) == [(0, 1, 2.0), (1, 0, 7.0)]
    U = graph_from_edges([0, 1, 2], [1, 0, 2], [5.0, 3.0, 1.0], directed=False)
    assert reference_edges(U) == [(0, 1, 3.0), (1, 0, 3.0)]
    g = to_nx(U)
    assert sorted(g.edges(data="weight")) == [(0, 1, 3.0)] and sorted(g) == [0, 1, 2]
    K = graph_from_edges([0, 0, 1], [1, 1, 1], [4.0, 3.0, 1.0], remove_duplicates=False,
                         remove_self_loops=False)
    assert reference_edges(K) == [(0, 1, 3.0), (0, 1, 4.0), (1, 1, 1.0)]
    assert to_nx(K).number_of_edges() == 3


def test_the_reference_never_reads_the_csr(monkeypatch):
    """A build that loses an edge disagrees with the oracles (it would not if they read the CSR)."""
    import gunpy.graph

    real = gunpy.graph.build_csr

    def lossy(*args, **kwargs):
        ro, ci, vals = real(*args, **kwargs)
        if ci.size:   # drop the last stored edge
            ro = np.minimum(ro, ci.size - 1)
            ci, vals = ci[:-1], None if vals is None else vals[:-1]
        return ro, ci, vals

    monkeypatch.setattr(gunpy.graph, "build_csr", lossy)
    G = graph_from_edges([0, 1, 2], [1, 2, 3])
    assert G.num_edges == 2
    assert csr_edges(G) != reference_edges(G)
    assert to_nx(G).number_of_edges() == 3
    assert reference_depths(G, 0).tolist() == [0, 1, 2, 3]
    assert gunpy.bfs(G, 0, backend="cpu").depth.tolist() == [0, 1, 2, -1]


def test_graphs_without_a_record_fall_back_to_their_csr():
    G = gunpy.Graph.from_edges([0, 1], [1, 2], [1.0, 2.0])
    assert raw_edges(G) is None
    assert reference_edges(G) == [(0, 1, 1.0), (1, 2, 2.0)]
    assert sorted(to_nx(G).edges(data="weight")) == [(0, 1, 1.0), (1, 2, 2.0)]
    # rebinding an array makes the record stale: dropped, the CSR is read
    H = graph_from_edges([0, 1], [1, 2], [1.0, 2.0])
    assert raw_edges(H) is not None
    H.values = [3.0, 4.0]
    assert raw_edges(H) is None
    assert reference_edges(H) == [(0, 1, 3.0), (1, 2, 4.0)]
    # the caller's arrays are copied into the record
    src = np.array([0, 1])
    W = graph_from_edges(src, [1, 2])
    src[0] = 2
    assert raw_edges(W).src == (0, 1)


def test_networkx_graphs_keep_their_own_edges():
    g = nx.relabel_nodes(nx.path_graph(4), {0: "a", 1: "b", 2: "c", 3: "d"})
    g.add_edge("a", "d", weight=0.5)
    from gunpy.testing import graph_from_networkx
    G = graph_from_networkx(g)
    assert raw_edges(G).num_vertices == 4
    assert csr_edges(G) == reference_edges(G)
    assert (0, 3, 0.5) in reference_edges(G) and (1, 2, 1.0) in reference_edges(G)
