"""Spanning trees: gunpy.mst (Borůvka's rounds) for networkx's minimum spanning forests.

networkx's Kruskal (its default ``algorithm``) scans the edges in increasing weight,
ties in ``G.edges()`` order, and yields each edge that joins two trees, as
``G.edges()`` orients it. gunpy.mst is given that edge order as its ``ties`` (each
undirected edge's position among ``G.edges()``: node by node in node order, each
node's neighbours in adjacency order, an edge at its end seen first), so its forest is
Kruskal's edge for edge, and yielded in Kruskal's order: by ``(weight, position)``.
``algorithm="boruvka"`` is answered where every weight differs (the forest is then
unique; networkx's Borůvka needs distinct weights too), in that same order.
"""

import networkx as nx
import numpy as np

import gunpy

from ._graph import GunpyGraph, _adjacency, _device, _nx_order_csr, convert_from_nx


def _positions(G):
    """Each stored edge's tie rank for gunpy.mst: the position of its undirected edge in
    ``G.nxg.edges()`` (computed from networkx's adjacency order, kept on ``G``)."""
    ties = getattr(G, "_mst_ties", None)
    if ties is not None:
        return ties
    graph, n = G.graph, len(G.nodes)
    ro, ci = _nx_order_csr(G)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(ro))
    # G.edges() yields (u, v) at u, the end whose row comes first (seen nodes are skipped)
    first = src <= ci
    position = np.flatnonzero(first)  # increasing: the iteration order
    pair = src[first] * n + ci[first]
    order = np.argsort(pair)
    gsrc = np.repeat(np.arange(n, dtype=np.int64), graph.out_degrees())
    gdst = graph.column_indices.astype(np.int64)
    key = np.minimum(gsrc, gdst) * n + np.maximum(gsrc, gdst)
    at = np.searchsorted(pair[order], key)
    G._mst_ties = ties = position[order][np.minimum(at, max(order.size - 1, 0))] \
        if order.size else np.zeros(graph.num_edges, dtype=np.int64)
    return ties


def _weighted(G, weight):
    """``G`` converted with ``weight`` as its weights (networkx converts a call that
    keeps every attribute, minimum_spanning_tree's, without weights)."""
    if isinstance(G, GunpyGraph) and G.weight_attr == weight:
        return G
    g = G.nxg if isinstance(G, GunpyGraph) else G
    return convert_from_nx(g, edge_attrs=None if weight is None else {weight: 1})


def _forest(G, weight):
    """gunpy.mst's forest in networkx's labels and orientation: ``(u, v, data dict)``."""
    G = _weighted(G, weight)
    r = gunpy.mst(G.graph, ties=_positions(G), backend=_device())
    nodes, adj = G.nodes, G.nxg._adj
    return [(nodes[u], nodes[v], adj[nodes[u]][nodes[v]])
            for u, v in zip(r.src.tolist(), r.dst.tolist())]


def minimum_spanning_edges(G, algorithm="kruskal", weight="weight", keys=True, data=True,
                           ignore_nan=False):
    forest = _forest(G, weight)  # before the generator: an error is raised by the call, not later
    return ((u, v, d) if data else (u, v) for u, v, d in forest)


def minimum_spanning_tree(G, weight="weight", algorithm="kruskal", ignore_nan=False):
    g = G.nxg
    T = g.__class__()  # networkx's construction, from Kruskal's edges in its order
    T.graph.update(g.graph)
    T.add_nodes_from(g.nodes.items())
    T.add_edges_from(_forest(G, weight))
    return T


def _check(p):
    """Why gunpy leaves a spanning-forest call to networkx (None: it runs it)."""
    g, w, algorithm = p["nxg"], p["weight"], p["algorithm"]
    if g is not None and g.is_directed():
        return "directed graphs: networkx raises NetworkXNotImplemented"
    if g is not None and g.is_multigraph():
        return "multigraphs (edge keys, parallel edges) are left to networkx"
    if algorithm not in ("kruskal", "boruvka", "borůvka"):
        return f"algorithm={algorithm!r} (another tree where weights tie) is left to networkx"
    if g is None:
        return None
    values = _adjacency(g).weights(w, 1)
    if not all(issubclass(t, int | float | np.integer | np.floating) for t in values.types) \
            or not all(x == x for x in values.distinct):
        return "NaN or non-numeric weights are left to networkx (it raises or skips them)"
    if any(abs(x) > 2 ** 53 for x in values.distinct if isinstance(x, int | np.integer)):
        return ("integer weights above 2**53 are left to networkx (float64 would tie weights "
                "that differ)")
    if algorithm != "kruskal" and len(values.distinct) < g.number_of_edges():
        return ("tied weights: networkx's Borůvka (it needs distinct weights) picks among "
                "equal forests by its own order")
