"""Graphs from gunpy's answers: ego graphs (gunpy.bfs / gunpy.sssp), complements and
reverses (the converted CSR's edges in networkx's order, NumPy).

Each returns networkx's graph, built the way networkx builds it (the same class, node,
edge and attribute order): ``ego_graph`` networkx's own ``G.subgraph(nodes).copy()`` of the
nodes gunpy reaches, ``complement`` and ``reverse`` the edges networkx's loops add, in
their order, found with NumPy.
"""

from copy import deepcopy

import networkx as nx
import numpy as np

import gunpy

from ._graph import GunpyGraph, _bfs, _nx_order_csr, _queue_order, convert_from_nx
from .paths import _dijkstra

#: rows of the dense complement mask built at once (``rows * n`` booleans at most ~16 MiB)
_BLOCK = 1 << 24


def ego_graph(G, n, radius=1, center=True, undirected=False, distance=None):
    """The nodes within ``radius`` of ``n``: a BFS (depth at most radius), or with
    ``distance=`` an SSSP (distance at most radius; can_run: weights as Dijkstra's, and
    not ``undirected=True``); ``undirected=True``: the BFS of networkx's ``G.to_undirected()``
    (:func:`_undirected`). The nodes go to ``G.subgraph`` in the order of networkx's dict
    of them (its BFS queue, its Dijkstra pops): the subgraph's node order is that of a set
    built from them. ``n`` is always in it, as in networkx."""
    g = G.nxg
    if distance is not None:
        W = convert_from_nx(g, edge_attrs={distance: 1})
        if n not in g:
            raise nx.NodeNotFound(f"Node {n} not found in graph")
        if radius is not None and radius < 0:
            order = [W.node_index(n)]
        else:
            order = _dijkstra(W, n, radius)[2].tolist()
    else:
        if undirected:
            G = _undirected(G)
        if n not in g:
            raise nx.NodeNotFound(f"Source {n} is not in G")
        s, depth = _bfs(G, n, radius)
        order = np.concatenate(_queue_order(G, s, depth)[0]).tolist()
    labels = G.nodes
    H = g.subgraph([labels[v] for v in order]).copy()
    if not center:
        H.remove_node(n)
    return H


def _undirected(G):
    """networkx's ``G.to_undirected()`` for BFS, cached: its edges are ``G``'s in adjacency
    order, each added to both ends' rows, so a row lists the edges at a node in that order,
    a neighbour where it first appears."""
    cached = getattr(G, "_undirected", None)
    if cached is None:
        ro, ci = _nx_order_csr(G)
        n = len(G)
        src = np.repeat(np.arange(n, dtype=np.int64), np.diff(ro))
        rows, nbrs = np.concatenate([src, ci]), np.concatenate([ci, src])
        when = np.concatenate([np.arange(ci.size)] * 2)
        k = np.lexsort((when, nbrs, rows))  # each (row, neighbour) first added first
        rows, nbrs, when = rows[k], nbrs[k], when[k]
        first = np.ones(rows.size, dtype=bool)
        first[1:] = (rows[1:] != rows[:-1]) | (nbrs[1:] != nbrs[:-1])
        rows, nbrs, when = rows[first], nbrs[first], when[first]
        k = np.lexsort((when, rows))
        offsets = np.searchsorted(rows[k], np.arange(n + 1))
        graph = gunpy.Graph.from_edges(rows, nbrs, num_vertices=n, directed=True,
                                       remove_self_loops=False)
        cached = G._undirected = GunpyGraph(G.nxg, graph, None, nodes=G.nodes)
        cached.index, cached._nx_csr = G.index, (offsets, nbrs[k])
    return cached


def complement(G):
    """networkx's complement: for each node ``u`` (node order) each node ``v`` (node
    order) not ``u`` and not a neighbour, the edge ``(u, v)``; undirected, only the pairs
    whose edge is new (``u`` before ``v``: networkx's later ``(v, u)`` changes nothing).
    can_run: no multigraphs."""
    g = G.nxg
    R = g.__class__()
    R.add_nodes_from(g)
    ro, ci = _nx_order_csr(G)
    n = len(G)
    labels = G.nodes
    rows = max(1, _BLOCK // max(n, 1))
    for a in range(0, n, rows):
        b = min(n, a + rows)
        seen = np.zeros((b - a, n), dtype=bool)
        src = np.repeat(np.arange(b - a), np.diff(ro[a:b + 1]))
        seen[src, ci[ro[a]:ro[b]]] = True
        seen[np.arange(b - a), np.arange(a, b)] = True  # no self-loops
        if not G.is_directed():
            seen |= np.arange(n) < np.arange(a, b)[:, None]
        u, v = np.nonzero(~seen)
        R.add_edges_from(zip([labels[x] for x in (u + a).tolist()],
                             [labels[x] for x in v.tolist()]))
    return R


def reverse(G, copy=True):
    """networkx's ``G.reverse(copy=True)``: a new graph of ``G``'s class, its graph and node
    attributes deep-copied, each edge ``(u, v)`` added as ``(v, u)`` in ``G``'s edge order
    (the converted CSR's, networkx's) with a deep copy of its data. can_run: copy=True, no
    multigraphs."""
    g = G.nxg
    if not g.is_directed():
        raise nx.NetworkXError("Cannot reverse an undirected graph.")
    H = g.__class__()
    H.graph.update(deepcopy(g.graph))
    H.add_nodes_from((v, deepcopy(d)) for v, d in g.nodes.items())
    ro, ci = _nx_order_csr(G)
    labels = G.nodes
    src = np.repeat(np.arange(len(G)), np.diff(ro))
    succ = g._succ
    H.add_edges_from((labels[v], labels[u], deepcopy(succ[labels[u]][labels[v]]))
                     for u, v in zip(src.tolist(), ci.tolist()))
    return H


def _checks(p):
    """Why gunpy leaves an ego_graph / complement / reverse call to networkx (None: it
    runs it)."""
    from .dispatch import _distance_weights
    g = p["nxg"]
    if "copy" in p and not p["copy"]:
        return "copy=False (networkx's view of the graph) is left to networkx"
    if "radius" not in p:
        if g is not None and g.is_multigraph():
            return "multigraphs are left to networkx"
        return None
    radius = p["radius"]
    if radius is not None and (type(radius) not in (int, float) or radius != radius):
        return "a radius not a Python int or float (or NaN) is left to networkx"
    if p["distance"] is not None:
        if p["undirected"]:
            return ("distance= with undirected=True (to_undirected's weights and "
                    "adjacency order) is left to networkx")
        return _distance_weights(p)
