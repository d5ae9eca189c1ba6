"""Converted graphs and the helpers every family shares (node ids, networkx's BFS order)."""

import os

import networkx as nx
import numpy as np

import gunpy


def _device():
    return os.environ.get("GUNPY_NX_BACKEND", "auto")


class GunpyGraph:
    """A networkx graph converted for gunpy: the CSR graph plus the original graph."""

    __networkx_backend__ = "gunpy"

    def __init__(self, nxg, graph, weight_attr):
        self.nxg = nxg
        self.graph = graph
        self.weight_attr = weight_attr
        self.nodes = list(nxg.nodes)
        self.index = None

    def is_directed(self):
        return self.nxg.is_directed()

    def is_multigraph(self):
        return self.nxg.is_multigraph()

    def node_index(self, node):
        if self.index is None:
            self.index = {v: i for i, v in enumerate(self.nodes)}
        try:
            return self.index[node]
        except (KeyError, TypeError):
            raise nx.NodeNotFound(f"Source {node} is not in G") from None

    def index_of(self, node):
        """The vertex id of ``node``, None where it is not in the graph."""
        try:
            return self.node_index(node)
        except nx.NodeNotFound:
            return None

    def __len__(self):
        return len(self.nodes)

    def __contains__(self, node):
        return node in self.nxg


def convert_from_nx(graph, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                    preserve_node_attrs=False, preserve_graph_attrs=False, name=None,
                    graph_name=None):
    """networkx graph -> :class:`GunpyGraph` (self-loops kept; a weight attribute if asked)."""
    if isinstance(graph, GunpyGraph):
        return graph
    weight, default = None, 1.0
    if edge_attrs:
        weight, default = next(iter(edge_attrs.items()))
        default = 1.0 if default is None else default
    nodes = list(graph.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    m = graph.number_of_edges()
    src = np.empty(m, dtype=np.int64)
    dst = np.empty(m, dtype=np.int64)
    w = np.empty(m, dtype=np.float64) if weight is not None else None
    edges = graph.edges(data=weight, default=default) if weight is not None else graph.edges()
    if weight is True or weight is False:  # attribute names edges(data=) reads as flags
        edges = ((u, v, d.get(weight, default)) for u, v, d in graph.edges(data=True))
    for k, e in enumerate(edges):
        src[k] = index[e[0]]
        dst[k] = index[e[1]]
        if w is not None:
            w[k] = e[-1]
    G = gunpy.Graph.from_edges(src, dst, w, num_vertices=n, directed=graph.is_directed(),
                               remove_self_loops=False,
                               node_labels=None if nodes == list(range(n)) else nodes)
    return GunpyGraph(graph, G, weight)


def convert_to_nx(obj, *, name=None):
    """Results are already networkx-shaped; a converted graph goes back to the original."""
    if isinstance(obj, GunpyGraph):
        return obj.nxg
    return obj


def _queue_order(G, source, depth):
    """networkx's BFS queue: level by level, each vertex's first discoverer in queue order.

    Returns ``(order, parent)``: vertex ids in the order networkx visits them and
    the parent networkx's BFS tree gives each (the source is its own parent).
    Built with NumPy per level from gunpy's depths; the adjacency order is the
    original networkx graph's (``G.nxg``), not the sorted CSR's.
    """
    ro, ci = _nx_order_csr(G)
    parent = np.full(G.graph.num_vertices, -1, dtype=np.int64)
    parent[source] = source
    level = np.array([source], dtype=np.int64)
    order = [level]
    d = 0
    while level.size:
        starts, ends = ro[level], ro[level + 1]
        counts = ends - starts
        if counts.sum() == 0:
            break
        owner = np.repeat(level, counts)                 # in queue order
        pos = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        nbr = ci[np.arange(counts.sum()) + pos]
        take = depth[nbr] == d + 1
        nbr, owner = nbr[take], owner[take]
        first = np.unique(nbr, return_index=True)[1]
        first.sort()
        level = nbr[first]
        parent[level] = owner[first]
        if level.size:
            order.append(level)
        d += 1
    return order, parent


def _nx_order_csr(G):
    """CSR of the networkx graph in its own adjacency order (cached on the graph)."""
    cached = getattr(G, "_nx_csr", None)
    if cached is not None:
        return cached
    g = G.nxg
    index = {v: i for i, v in enumerate(G.nodes)}
    adj = g._succ if g.is_directed() else g._adj
    degs = np.fromiter((len(adj[v]) for v in G.nodes), dtype=np.int64, count=len(G.nodes))
    ro = np.zeros(len(G.nodes) + 1, dtype=np.int64)
    np.cumsum(degs, out=ro[1:])
    ci = np.fromiter((index[u] for v in G.nodes for u in adj[v]), dtype=np.int64,
                     count=int(ro[-1]))
    G._nx_csr = (ro, ci)
    return G._nx_csr


def _bfs(G, source, depth_limit=None):
    s = G.node_index(source)
    r = gunpy.bfs(G.graph, s, backend=_device())
    depth = r.depth.astype(np.int64)
    if depth_limit is not None:
        depth[depth > depth_limit] = -1
    return s, depth


def _int_weights(G):
    """networkx keeps integer sums for integer weights; match the type it would return."""
    cached = getattr(G, "_int_w", None)
    if cached is None:
        w = G.weight_attr
        cached = True if w is None else all(
            isinstance(d.get(w, 1), int | np.integer) and not isinstance(d.get(w, 1), bool)
            for _, _, d in G.nxg.edges(data=True))
        G._int_w = cached
    return cached


def _reversed(G):
    """The converted reverse of a directed graph (the same weight attribute), cached."""
    reverse = getattr(G, "_reverse", None)
    if reverse is None:
        attrs = None if G.weight_attr is None else {G.weight_attr: 1}
        reverse = G._reverse = convert_from_nx(G.nxg.reverse(copy=False), edge_attrs=attrs)
    return reverse


def _hashable(x):
    try:
        hash(x)
        return True
    except TypeError:
        return False
