"""Triangles, transitivity and clustering on gunpy's intersect operator and gunpy.lcc."""

import networkx as nx
import numpy as np

import gunpy

from ._graph import _device

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
