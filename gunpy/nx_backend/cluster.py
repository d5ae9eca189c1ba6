"""Triangles, transitivity and clustering on gunpy's intersect operator and gunpy.lcc."""

import networkx as nx
import numpy as np

import gunpy

from ._graph import _device, _edge_rows

def triangles(G, nodes=None):
    if G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")
    if nodes is not None and G.is_multigraph():  # networkx's per-node path refuses them
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")
    counts = gunpy.triangles(G.graph, backend=_device()).triangles.tolist()
    if nodes is None:
        return dict(zip(G.nodes, counts))
    if nodes in G:  # a single node
        return counts[G.node_index(nodes)]
    # networkx's nbunch rules: nodes not in G are skipped, a non-iterable raises
    return {v: counts[G.node_index(v)] for v in G.nxg.nbunch_iter(nodes)}


def transitivity(G):
    # networkx: 3 * triangles / triads = sum_v t_v / sum_v d_v (d_v - 1), where d_v counts
    # v's distinct neighbours (successors when directed) other than v and t_v the ordered
    # pairs (w, u) of them with u a neighbour of w: all Python ints, so the float is the same
    if G.is_multigraph():
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")
    if len(G) == 0:
        return 0
    g = G.graph
    src = np.repeat(np.arange(g.num_vertices), g.out_degrees())
    loops = np.bincount(src[src == g.column_indices], minlength=g.num_vertices)
    d = (g.out_degrees() - loops).astype(np.int64)
    contri = int((d * (d - 1)).sum())
    if G.is_directed():
        # t_v summed: for every edge v -> w, the successors v and w share (loops removed)
        from gunpy import operators as ops
        simple = gunpy.Graph.from_edges(src, g.column_indices, num_vertices=g.num_vertices,
                                        directed=True)
        total = ops.intersect(simple, gunpy.Functor, context=ops.Context(simple, _device()))
    else:
        total = 6 * gunpy.triangle_count(g, backend=_device())
    return 0 if total == 0 else total / contri


def clustering(G, nodes=None, weight=None):
    # undirected and unweighted only (can_run): LDBC's LCC is networkx's clustering there,
    # self-loops ignored; networkx's zero is the int 0
    values = [0 if x == 0 else x for x in gunpy.lcc(G.graph, backend=_device()).lcc.tolist()]
    if nodes is None:
        return dict(zip(G.nodes, values))
    if nodes in G:  # a single node
        return values[G.node_index(nodes)]
    return {v: values[G.node_index(v)] for v in G.nxg.nbunch_iter(nodes)}


def average_clustering(G, nodes=None, weight=None, count_zeros=True):
    # networkx's own sum, in its order, so that the float is the same
    c = clustering(G, nodes, weight).values()
    if not count_zeros:
        c = [v for v in c if abs(v) > 0]
    return sum(c) / len(c)


#: wedges (paths v - u - x) expanded at once by square_clustering
_WEDGES = 1 << 22


def square_clustering(G, nodes=None):
    """networkx's square clustering, from the counts ``p2(v, x) = |N(v) & N(x)|`` (self-loops
    dropped) of the wedges ``v - u - x`` (NumPy, a block of rows at a time): squares
    ``sum over x != v of p2 (p2 - 1) / 2``, triangles the sum over neighbours ``x``, and
    networkx's potential from the degrees; every count an integer, as networkx's. can_run:
    undirected graphs."""
    g = G.graph
    n = len(G)
    ro = np.asarray(g.row_offsets, dtype=np.int64)
    ci = np.asarray(g.column_indices, dtype=np.int64)
    src = _edge_rows(ro)
    keep = src != ci
    src, ci = src[keep], ci[keep]
    deg = np.bincount(src, minlength=n)
    ro = np.concatenate([[0], np.cumsum(deg)])
    edge_keys = src * n + ci  # sorted: the CSR's rows are
    squares = np.zeros(n, np.int64)
    triangles = np.zeros(n, np.int64)
    wedges = np.cumsum(deg[ci])  # after each edge (v, u): the wedges through u so far
    a = 0
    while a < n:
        e0 = ro[a]
        start = wedges[e0 - 1] if e0 else 0
        e = int(np.searchsorted(wedges, start + _WEDGES, side="right"))  # the first edge over
        b = max(a + 1, int(src[e]) if e < src.size else n)
        e1 = ro[b]
        u = ci[e0:e1]
        count = deg[u]
        v = np.repeat(src[e0:e1], count)
        shift = np.repeat(ro[u] - np.concatenate([[0], np.cumsum(count)[:-1]]), count)
        x = ci[np.arange(int(count.sum())) + shift]
        other = x != v
        pairs, p2 = np.unique(v[other] * n + x[other], return_counts=True)
        owner = pairs // n
        np.add.at(squares, owner, p2 * (p2 - 1))
        adjacent = np.isin(pairs, edge_keys[e0:e1])
        np.add.at(triangles, owner[adjacent], p2[adjacent])
        a = b
    squares //= 2
    uw = (deg - 1) * np.bincount(src, weights=deg[ci], minlength=n).astype(np.int64)
    potential = uw - deg * (deg - 1) - triangles - squares
    values = [s / p if d > 1 and p > 0 else 0 for s, p, d in
              zip(squares.tolist(), potential.tolist(), deg.tolist())]
    if nodes is None:
        return dict(zip(G.nodes, values))
    result = {v: values[G.node_index(v)] for v in G.nxg.nbunch_iter(nodes)}
    if nodes in G.nxg:
        return result[nodes]
    return result
