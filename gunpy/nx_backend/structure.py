"""Isolates, self-loops, negative weights, reciprocity and forests, read off the converted
graph.

Degrees are ``gunpy.spmv`` of ones (the centrality family's helpers); a node is isolated
when it has no out-edge and no in-edge (a self-loop is an edge). Reciprocity marks each
edge ``u -> v`` whose reverse ``v -> u`` is stored, by one sorted search of the edge keys
``u * n + v``. A graph is a forest when its ``m`` edges number ``n - c`` (``c``: gunpy.cc's
count of its (weakly) connected components; a component of ``k`` nodes has at least
``k - 1`` edges, a self-loop or an edge back one more), a tree when ``c`` is 1 too, and a
branching or an arborescence when no in-degree passes 1 either. Multigraphs are left to
networkx where it counts parallel edges.
"""

import networkx as nx
import numpy as np

import gunpy

from ._graph import _device, _edge_rows
from .centrality import _in_degrees, _out_degrees


def _isolated(G):
    g = G.graph
    lonely = _out_degrees(g) == 0
    if g.directed:
        lonely &= _in_degrees(G) == 0
    return np.flatnonzero(lonely)


def isolates(G):
    names = G.nodes
    return (names[v] for v in _isolated(G).tolist())


def number_of_isolates(G):
    return int(_isolated(G).size)


def is_isolate(G, n):
    # can_run: n is a node (networkx's own errors otherwise). O(1) a call once the
    # reverse graph is built (kept per graph): a loop over the nodes stays linear
    from gunpy.primitives.scc import reverse_graph
    g, v = G.graph, G.node_index(n)
    if g.row_offsets[v + 1] > g.row_offsets[v]:
        return False
    if not g.directed:
        return True
    r = reverse_graph(g).row_offsets
    return bool(r[v + 1] == r[v])


def number_of_selfloops(G):
    # can_run: no multigraphs (networkx counts each parallel self-loop)
    g = G.graph
    return int(np.count_nonzero(_edge_rows(g.row_offsets) == g.column_indices))


def is_negatively_weighted(G, edge=None, weight="weight"):
    # can_run: edge=None, no multigraphs; edges without the attribute read as 1 (not < 0)
    values = G.graph.values
    return bool(values is not None and np.any(values < 0))


def _reciprocated(g):
    """``(src, reciprocated)``: each edge's source, and whether its reverse is stored."""
    n = np.int64(g.num_vertices)
    src, dst = _edge_rows(g.row_offsets), g.column_indices.astype(np.int64)
    if src.size == 0:
        return src, np.zeros(0, dtype=np.bool_)
    keys = src * n + dst
    order = None if np.all(keys[1:] >= keys[:-1]) else np.argsort(keys, kind="stable")
    sorted_keys = keys if order is None else keys[order]
    back = dst * n + src
    at = np.minimum(np.searchsorted(sorted_keys, back), keys.size - 1)
    return src, sorted_keys[at] == back


def overall_reciprocity(G):
    g = G.graph
    if g.num_edges == 0:
        raise nx.NetworkXError("Not defined for empty graphs")
    src, both = _reciprocated(g)
    return int(np.count_nonzero(both & (src != g.column_indices))) / g.num_edges


def reciprocity(G, nodes=None):
    if nodes is None:
        return overall_reciprocity(G)
    g = G.graph
    src, both = _reciprocated(g)
    mutual = np.bincount(src[both], minlength=g.num_vertices)
    total = _out_degrees(g) + _in_degrees(G)
    if nodes in G:  # a single node
        v = G.node_index(nodes)
        if total[v] == 0:
            raise nx.NetworkXError("Not defined for isolated nodes.")
        return 2 * int(mutual[v]) / int(total[v])
    out = {}
    for node in G.nxg.nbunch_iter(nodes):  # networkx's nbunch rules and errors
        v = G.node_index(node)
        out[node] = None if total[v] == 0 else 2 * int(mutual[v]) / int(total[v])
    return out


def _edge_count(g):
    """networkx's ``number_of_edges()``: an undirected edge is stored twice, a self-loop once."""
    if g.directed:
        return g.num_edges
    return (g.num_edges + int(np.count_nonzero(_edge_rows(g.row_offsets) == g.column_indices))) // 2


def _null(G):
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("G has no nodes.")


def is_forest(G):
    # can_run: no multigraphs (a parallel edge is a cycle gunpy's graph holds once)
    _null(G)
    g = G.graph
    return _edge_count(g) == len(G) - int(gunpy.cc(g, backend=_device()).num_components)


def is_tree(G):
    _null(G)
    g = G.graph
    return _edge_count(g) == len(G) - 1 and \
        int(gunpy.cc(g, backend=_device()).num_components) == 1


def _in_degrees_at_most_one(G):
    return bool(np.all(_in_degrees(G) <= 1))


def is_branching(G):
    # networkx raises NetworkXNotImplemented for undirected graphs before dispatching
    return is_forest(G) and _in_degrees_at_most_one(G)


def is_arborescence(G):
    return is_tree(G) and _in_degrees_at_most_one(G)


def is_empty(G):
    return G.graph.num_edges == 0
