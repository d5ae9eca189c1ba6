"""Converted graphs and the helpers every family shares (node ids, networkx's BFS order).

A networkx graph is converted once (:func:`convert_from_nx`): one pass over its
adjacency dicts gives the CSR in networkx's own neighbour order (kept, for the BFS
and Dijkstra orders), one NumPy sort the gunpy :class:`~gunpy.Graph`; edge weights
are read only when the call names a weight. Where networkx caches conversions
(``nx.config.cache_converted_graphs``, on by default) the converted graphs are kept
in the graph's ``__networkx_cache__`` under gunpy's own keys, which networkx clears
when the graph changes through its methods; see :func:`convert_from_nx` and
``docs/networkx.md`` for why networkx's own slot for gunpy is kept empty.
"""

import itertools
import math
import operator
import os

import networkx as nx
import numpy as np

import gunpy
from gunpy._csr import build_csr
from gunpy.graph import _index_dtype


def _device():
    return os.environ.get("GUNPY_NX_BACKEND", "auto")


class GunpyGraph:
    """A networkx graph converted for gunpy: the CSR graph plus the original graph.

    Everything derived from it (networkx's adjacency order, the reverse graph,
    the gunpy graph's CSC, degrees and device copies) is kept on it, so a cached
    conversion is reused whole.
    """

    __networkx_backend__ = "gunpy"

    def __init__(self, nxg, graph, weight_attr, *, nodes=None):
        self.nxg = nxg
        self.graph = graph
        self.weight_attr = weight_attr
        self.nodes = list(nxg.nodes) if nodes is None else nodes
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


#: how many graphs :func:`convert_from_nx` has built (not counting cache hits); tests read it
conversions = 0


def convert_from_nx(graph, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                    preserve_node_attrs=False, preserve_graph_attrs=False, name=None,
                    graph_name=None):
    """networkx graph -> :class:`GunpyGraph` (self-loops kept; a weight attribute if asked).

    ``edge_attrs`` (networkx passes ``{weight: default}`` for a call with a weight)
    says which attribute becomes the weights; without one no edge data is read.
    While networkx caches conversions, the result is kept in
    ``graph.__networkx_cache__`` under ``("gunpy", "graph", weight, default)`` and
    the CSR shared by every weight under ``("gunpy", "csr")``; networkx's own entry
    for gunpy (``__networkx_cache__["backends"]["gunpy"]``) is emptied, so a later
    call asks gunpy again (a dictionary look-up) and networkx has no cached graph to
    print its cache warning about.
    """
    global conversions
    if isinstance(graph, GunpyGraph):
        return graph
    weight, default = None, 1.0
    if edge_attrs:
        weight, default = next(iter(edge_attrs.items()))
        default = 1.0 if default is None else default
    cache = _cache_of(graph)
    key = ("gunpy", "graph", weight, default)
    # networkx makes its slot for gunpy just before a conversion it will cache: none, and
    # networkx caches nothing (its backend-testing mode, a graph view), nor does gunpy
    caching = cache is not None and cache.get("backends", {}).pop("gunpy", None) is not None
    if caching and key in cache:
        return cache[key]
    csr = _adjacency(graph) if caching else _AdjacencyCSR(graph)
    values = None if weight is None else csr.weights(weight, default).array()
    converted = GunpyGraph(graph, csr.graph(values), weight, nodes=csr.nodes)
    converted.index, converted._csr = csr.index, csr
    converted._nx_csr = (csr.nx_offsets, csr.nx_indices)
    if values is not None and default == 1:
        converted._nx_w = values  # paths' Dijkstra order reads the same weights
    conversions += 1
    if caching:
        cache[key] = converted
    return converted


def _cache_of(graph):
    """networkx's cache of ``graph``, None where networkx would not cache a conversion."""
    if not nx.config.cache_converted_graphs:
        return None
    return getattr(graph, "__networkx_cache__", None)


def _adjacency(graph):
    """``graph``'s :class:`_AdjacencyCSR`, kept in networkx's cache of it where there is one."""
    cache = _cache_of(graph)
    csr = cache.get(("gunpy", "csr")) if cache is not None else None
    if csr is None:
        csr = _AdjacencyCSR(graph)
        if cache is not None:
            cache[("gunpy", "csr")] = csr
    return csr


class _AdjacencyCSR:
    """A networkx graph's adjacency as CSR arrays, built in one pass over its dicts.

    ``nx_offsets`` / ``nx_indices``: each node's neighbours in networkx's order
    (``G._adj``, ``G._succ`` when directed), int64; :meth:`graph` sorts them once
    into a gunpy :class:`~gunpy.Graph` (self-loops kept, a multigraph's parallel edges
    one edge), :meth:`weights` reads an attribute in the same order, once.
    """

    def __init__(self, g):
        adj = g._succ if g.is_directed() else g._adj
        nodes = list(g)
        self.nodes, self.directed = nodes, g.is_directed()
        self.multigraph = g.is_multigraph()
        self.plain_dicts = g.edge_attr_dict_factory is dict
        self.rows = adj.values() if list(adj) == nodes else [adj[v] for v in nodes]
        n = len(nodes)
        # a multigraph view's inner dicts count edge keys in len(), not the neighbours they
        # yield (networkx's FilterMultiInner): count those by iterating
        size = (lambda row: sum(1 for _ in row)) if self.multigraph else len
        degrees = np.fromiter(map(size, self.rows), dtype=np.int64, count=n)
        self.nx_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(degrees, out=self.nx_offsets[1:])
        m = int(self.nx_offsets[-1])
        neighbours = itertools.chain.from_iterable(self.rows)
        self.labels = None if nodes == list(range(n)) else nodes
        self.index = None  # node -> id, where ids are not the nodes themselves
        if self.labels is not None:
            self.index = {v: i for i, v in enumerate(nodes)}
            neighbours = map(self.index.__getitem__, neighbours)
        self.nx_indices = np.fromiter(neighbours, dtype=np.int64, count=m)
        self.sources = np.repeat(np.arange(n, dtype=np.int64), degrees)
        self._unweighted = None
        self._weights = {}

    def weights(self, weight, default):
        """The :class:`_Weights` of attribute ``weight`` (``default`` where missing)."""
        key = (weight, default)
        if key not in self._weights:
            data = itertools.chain.from_iterable(map(operator.methodcaller("values"),
                                                     self.rows))
            if self.multigraph:  # every parallel edge's value; the array takes the least
                per_pair = [[d.get(weight, default) for d in keys.values()] for keys in data]
                values = list(itertools.chain.from_iterable(per_pair))
            elif self.plain_dicts:
                per_pair = values = list(map(dict.get, data, itertools.repeat(weight),
                                             itertools.repeat(default)))
            else:
                per_pair = values = [d.get(weight, default) for d in data]
            self._weights[key] = _Weights(per_pair, values, self.multigraph)
        return self._weights[key]

    def graph(self, values=None):
        """The gunpy graph: unweighted (built once), or with ``values`` (networkx order)."""
        if values is None and self._unweighted is not None:
            return self._unweighted
        n = len(self.nodes)
        ro, ci, vals = build_csr(self.sources, self.nx_indices, values, n,
                                 remove_self_loops=False, remove_duplicates=False,
                                 index_dtype=_index_dtype(n))
        G = gunpy.Graph(ro, ci, vals, directed=self.directed, node_labels=self.labels,
                        _trusted=True)
        if values is None:
            self._unweighted = G
        return G


class _Weights:
    """One attribute's values, read once: the facts can_run checks and the float array.

    ``distinct``: the set of values (every parallel edge's), ``types`` their types,
    ``count`` how many there are;
    :meth:`array` the float64 weights in networkx's adjacency order (a multigraph's
    least parallel value), built on first use (it raises for non-numeric values).
    """

    def __init__(self, per_pair, values, multigraph):
        self._per_pair, self._multigraph = per_pair, multigraph
        self.types = set(map(type, values))
        # unhashable values (lists, dicts) are no numbers: the checks decline by their types
        self.distinct = set(filter(_hashable, values)) if \
            any(t.__hash__ is None for t in self.types) else set(values)
        self.count = len(values)
        self._array = None

    def array(self):
        if self._array is None:
            values = map(min, self._per_pair) if self._multigraph else self._per_pair
            self._array = np.fromiter(values, dtype=np.float64, count=len(self._per_pair))
        return self._array

    def all_int(self):
        """Every value an integer (not a bool): networkx's sums stay ints."""
        return all(issubclass(t, int | np.integer) and t is not bool for t in self.types)


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
    limit = None
    if depth_limit is not None and depth_limit != math.inf:
        # networkx expands level after level while ``limit > level``: the levels up to
        # ceil(limit), the source's always (NaN: only it); the BFS stops there
        limit = max(math.ceil(depth_limit), 0) if depth_limit == depth_limit else 0
    r = gunpy.bfs(G.graph, s, backend=_device(), max_depth=limit)
    return s, r.depth.astype(np.int64)


def _edge_rows(row_offsets):
    """Each stored edge's row (its source vertex), int64, for CSR ``row_offsets``."""
    ro = np.asarray(row_offsets, dtype=np.int64)
    return np.repeat(np.arange(ro.size - 1, dtype=np.int64), np.diff(ro))


def _int_weights(G):
    """networkx keeps integer sums for integer weights; match the type it would return."""
    cached = getattr(G, "_int_w", None)
    if cached is None:
        w = G.weight_attr
        csr = getattr(G, "_csr", None) or _adjacency(G.nxg)
        cached = G._int_w = w is None or csr.weights(w, 1).all_int()
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
