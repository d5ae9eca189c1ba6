"""gunpy as a NetworkX backend: ``nx.bfs_edges(G, 0, backend="gunpy")`` and friends.

Registered through the ``networkx.backends`` entry point (like nx-cugraph and
graphblas-algorithms), so networkx dispatches these functions to gunpy when a
call says ``backend="gunpy"`` (or ``nx.config.backend_priority`` lists it):

``bfs_edges``, ``bfs_layers``, ``single_source_shortest_path_length``,
``single_source_dijkstra_path_length``, ``betweenness_centrality``,
``connected_components``, ``weakly_connected_components``, ``pagerank``,
``triangles``, ``transitivity``, ``clustering``, ``average_clustering``,
``louvain_communities``, ``core_number``, ``k_core``, ``k_shell``, ``k_crust``, ``k_corona``,
``hits``.

Results are exactly networkx's (``louvain_communities`` excepted: another partition of
about the same modularity, see its entry below): the same dict / generator / list shapes, the
original node labels, unreachable nodes left out, and the same iteration order
where networkx defines one (BFS edges and layers follow networkx's queue order,
which is rebuilt from gunpy's depths level by level in NumPy). Calls that use
an option gunpy does not implement (``sort_neighbors``, a weight function,
``k`` sampling, a PageRank start vector, multigraphs where parallel edges change the
answer) are declined by :func:`can_run`, and networkx runs them itself when
fallback is enabled.

The gunpy backend used is ``$GUNPY_NX_BACKEND`` (``auto``, ``cpu`` or ``cuda``;
default ``auto``).
"""

import os

import networkx as nx
import numpy as np

import gunpy

__all__ = ["BackendInterface", "GunpyGraph", "get_info"]

_FUNCTIONS = {
    "bfs_edges": "BFS tree edges in networkx's order (reverse=, depth_limit= supported)",
    "bfs_layers": "BFS layers in networkx's order",
    "single_source_shortest_path_length": "BFS depths (cutoff= supported)",
    "single_source_dijkstra_path_length": "SSSP distances with near/far delta-stepping",
    "betweenness_centrality": "Brandes BC over all sources (k=None, weight=None)",
    "connected_components": "ECL-CC union-find hooking with Afforest sampling",
    "weakly_connected_components": "the same on directed graphs",
    "pagerank": "power iteration, push or pull; personalization= and dangling= supported "
                "(nstart= left to networkx)",
    "triangles": "degree-ordered orientation + segmented intersection (nodes= supported)",
    "transitivity": "triangles over triads; directed graphs: networkx's successor-set count",
    "clustering": "gunpy.lcc (intersections + a normalising neighbour reduction); undirected, "
                  "unweighted",
    "average_clustering": "the mean of clustering's values (count_zeros= supported); "
                          "undirected, unweighted",
    "louvain_communities": "gunpy.louvain (vertices move in seeded buckets, not one at a time): "
                           "the partition can differ from networkx's, its modularity is about "
                           "the same (networkx's modularity of it is what gunpy reports); "
                           "seeded by the call's seed; undirected graphs, multigraphs' parallel "
                           "edges summed; weight=None and max_level= are left to networkx "
                           "(its tests pin their exact partitions)",
    "core_number": "gunpy.kcore (peeling: a filter a level, atomic degree decrements in an "
                   "advance a round); graphs with self-loops left to networkx (it raises)",
    "k_core": "networkx's subgraph of gunpy.kcore's core numbers (core_number= left to networkx)",
    "k_shell": "the same",
    "k_crust": "the same",
    "k_corona": "the same",
    "hits": "gunpy.hits (the power iteration, two neighbour reductions an iteration): networkx's "
            "values where the largest singular value is simple (ARPACK's vector is arbitrary "
            "where it is repeated); nstart=, normalized=False, multigraphs and graphs without "
            "edges are left to networkx",
}


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


# ----------------------------------------------------------------------------- helpers
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


# ----------------------------------------------------------------------------- algorithms
def bfs_edges(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    if reverse and G.is_directed():
        G = convert_from_nx(G.nxg.reverse(copy=False))
    s, depth = _bfs(G, source, depth_limit)
    order, parent = _queue_order(G, s, depth)
    labels = G.nodes

    def edges():
        for level in order[1:]:
            for v in level.tolist():
                yield labels[parent[v]], labels[v]
    return edges()


def bfs_layers(G, sources):
    if sources in G:
        sources = [sources]
    srcs = list(sources)
    for s in srcs:
        if s not in G:
            raise nx.NetworkXError(f"The node {s} is not in the graph.")
    if len(set(srcs)) != 1:
        raise NotImplementedError("gunpy backend: bfs_layers from several sources")
    s, depth = _bfs(G, srcs[0])
    order, _ = _queue_order(G, s, depth)
    labels = G.nodes

    def layers():
        for level in order:
            yield [labels[v] for v in level.tolist()]
    return layers()


def single_source_shortest_path_length(G, source, cutoff=None):
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    s, depth = _bfs(G, source, cutoff)
    order, _ = _queue_order(G, s, depth)
    labels = G.nodes
    return {labels[v]: int(depth[v]) for level in order for v in level.tolist()}


def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight"):
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    s = G.node_index(source)
    r = gunpy.sssp(G.graph, s, backend=_device())
    dist = r.distance
    reached = np.flatnonzero(np.isfinite(dist) & ((dist <= cutoff) if cutoff is not None
                                                   else True))
    reached = reached[np.argsort(dist[reached], kind="stable")]
    labels = G.nodes
    out = {}
    for v in reached.tolist():
        d = dist[v]
        out[labels[v]] = int(d) if v == s else (int(d) if _int_weights(G) else float(d))
    return out


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


def betweenness_centrality(G, k=None, normalized=True, weight=None, endpoints=False,
                           seed=None):
    r = gunpy.bc(G.graph, normalized=normalized, backend=_device())
    values = r.centrality.tolist()
    return {v: float(x) for v, x in zip(G.nodes, values)}


def _components(G):
    r = gunpy.cc(G.graph, backend=_device())
    labels = r.labels
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    names = G.nodes
    for group in np.split(order, cuts) if order.size else []:
        yield {names[v] for v in group.tolist()}


def connected_components(G):
    if G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")
    return _components(G)


def weakly_connected_components(G):
    if not G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for undirected type")
    return _components(G)


def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-6, nstart=None,
             weight="weight", dangling=None):
    if len(G) == 0:
        return {}
    if personalization is not None and not sum(personalization.get(v, 0) for v in G.nodes):
        raise ZeroDivisionError  # networkx's, for a restart vector summing to 0
    r = gunpy.pagerank(G.graph, alpha=alpha, personalization=personalization, tol=tol,
                       max_iter=max_iter, dangling=dangling, backend=_device())
    if not r.converged:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return {v: float(x) for v, x in zip(G.nodes, r.rank.tolist())}


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


def louvain_communities(G, weight="weight", resolution=1, threshold=0.0000001, max_level=None,
                        seed=None):
    # networkx's py_random_state has made `seed` a random.Random: one draw seeds gunpy
    graph = G.graph
    if G.is_multigraph():  # parallel edges' weights summed, as networkx does
        A = nx.to_scipy_sparse_array(G.nxg, weight=G.weight_attr, dtype=np.float64)
        graph = gunpy.Graph.from_scipy(A, directed=False, remove_self_loops=False)
    draw = seed.randrange(2**31) if hasattr(seed, "randrange") else seed
    r = gunpy.louvain(graph, resolution=resolution, threshold=threshold, max_level=max_level,
                      seed=draw, backend=_device())
    return [{G.nodes[v] for v in members} for members in _members(r.labels)]


def _members(labels):
    order = np.argsort(labels, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(labels[order])) + 1) if labels.size else []


def _cores(G):
    core = gunpy.kcore(G.graph, backend=_device()).core.tolist()
    return dict(zip(G.nodes, core))


def core_number(G):
    return _cores(G)


def _core_subgraph(name):
    # networkx's own function (undispatched) on the original graph, given gunpy's numbers:
    # its k defaults, filters, node order and copied attributes (core_number= is declined)
    def subgraph(G, k=None, core_number=None):
        return getattr(nx, name).orig_func(G.nxg, k, _cores(G))
    subgraph.__name__ = name
    return subgraph


k_core, k_shell, k_crust, k_corona = (_core_subgraph(name) for name in
                                      ("k_core", "k_shell", "k_crust", "k_corona"))


def hits(G, max_iter=100, tol=1.0e-8, nstart=None, normalized=True):
    if len(G) == 0:
        return {}, {}
    if max_iter <= 0:  # networkx's own test, before any iteration
        raise nx.PowerIterationFailedConvergence(max_iter)
    weighted = getattr(G, "_weighted", None)  # the "weight" attribute (1 where missing)
    if weighted is None:
        weighted = G._weighted = gunpy.Graph.from_networkx(G.nxg, weight="weight",
                                                           remove_self_loops=False)
    r = gunpy.hits(weighted, max_iter=max_iter, tol=tol, backend=_device())
    if not r.converged:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return (dict(zip(G.nodes, r.hubs.tolist())), dict(zip(G.nodes, r.authorities.tolist())))


# ----------------------------------------------------------------------------- dispatch
def can_run(name, args, kwargs):
    """False (or a reason) for calls whose options gunpy does not implement."""
    if name not in _FUNCTIONS:
        return False
    params = dict(kwargs)
    graph = args[0] if args else params.get("G")
    multigraph = graph is not None and graph.is_multigraph()
    if name == "bfs_edges":
        if params.get("sort_neighbors") is not None or (len(args) > 4 and args[4] is not None):
            return "sort_neighbors is not supported"
    if name == "bfs_layers":
        srcs = params.get("sources", args[1] if len(args) > 1 else None)
        single = graph is not None and _hashable(srcs) and srcs in graph
        if srcs is not None and not single:
            if not isinstance(srcs, list | tuple | set | frozenset):
                return "sources given as an iterator (consumed once) are left to networkx"
            if len(set(srcs)) != 1:
                return "several sources are not supported"
    if name == "single_source_dijkstra_path_length":
        w = params.get("weight", args[3] if len(args) > 3 else "weight")
        if callable(w):
            return "weight functions are not supported"
        if graph is not None and w is not None and any(
                d.get(w, 1) < 0 or d.get(w, 1) != d.get(w, 1)
                for _, _, d in (graph.nxg if isinstance(graph, GunpyGraph) else graph)
                .edges(data=True)):
            return "negative or NaN weights (networkx's error messages apply)"
    if name == "betweenness_centrality":
        if params.get("k") is not None or (len(args) > 1 and args[1] is not None):
            return "k (sampling) is not supported"
        if params.get("weight") is not None or (len(args) > 3 and args[3] is not None):
            return "weighted BC is not supported"
        if params.get("endpoints") or (len(args) > 4 and args[4]):
            return "endpoints=True is not supported"
        if multigraph:
            return "parallel edges count as separate paths: not supported"
    if name in ("clustering", "average_clustering"):
        if graph is not None and graph.is_directed():
            return "directed clustering (networkx's directed triangles) is not supported"
        if params.get("weight") is not None or (len(args) > 2 and args[2] is not None):
            return "weighted clustering is not supported"
        if multigraph:
            return "multigraphs are not supported"
    if name == "louvain_communities":
        reason = _louvain_declines(graph, params, args)
        if reason:
            return reason
    if name in ("core_number", "k_core", "k_shell", "k_crust", "k_corona"):
        if params.get("core_number") is not None or len(args) > 2 and args[2] is not None:
            return "core_number= given: networkx only filters the nodes"
        nxg = graph.nxg if isinstance(graph, GunpyGraph) else graph
        if nxg is not None and nx.number_of_selfloops(nxg):
            return "self-loops: networkx raises NetworkXNotImplemented"
    if name == "hits":
        if params.get("nstart") is not None or len(args) > 3 and args[3] is not None:
            return "nstart is not supported"
        if not params.get("normalized", args[4] if len(args) > 4 else True):
            return "normalized=False (ARPACK's unit vector, of either sign) is not supported"
        if multigraph:
            return "multigraphs are not supported"
        if graph is not None and len(graph) and (len(graph) < 2 or not (
                graph.nxg if isinstance(graph, GunpyGraph) else graph).number_of_edges()):
            return "graphs without edges or of one node: networkx's ARPACK call raises"
    if name == "pagerank":
        if params.get("nstart") is not None or (len(args) > 5 and args[5] is not None):
            return "nstart is not supported"
        for p, pos in (("personalization", 2), ("dangling", 7)):
            values = params.get(p, args[pos] if len(args) > pos else None)
            if values is not None and not all(
                    isinstance(x, int | float | np.integer | np.floating) and x >= 0
                    for x in values.values()):
                return f"{p} with negative or non-numeric values is not supported"
            if p == "dangling" and values is not None and not sum(values.values()):
                return "a dangling vector summing to 0 (networkx divides by it)"
        if multigraph:
            return "parallel edges sum their weights: not supported"
    return True


def _louvain_declines(graph, params, args):
    """Why gunpy leaves a louvain_communities call to networkx (None: it runs it)."""
    if graph is not None and graph.is_directed():
        return "directed modularity is not implemented"
    if "weight" in params and params["weight"] is None or len(args) > 1 and args[1] is None:
        return ("weight=None is left to networkx: its tests pin the partition of unweighted "
                "calls, which gunpy's bucketed moves reach by another path")
    if params.get("max_level") is not None or len(args) > 4 and args[4] is not None:
        return ("max_level is left to networkx: its tests compare each level with its own "
                "louvain_partitions")
    w = params.get("weight", args[1] if len(args) > 1 else "weight")
    nxg = graph.nxg if isinstance(graph, GunpyGraph) else graph
    if nxg is not None and any(not d.get(w, 1) >= 0 for *_, d in nxg.edges(data=True)):
        return "negative or NaN weights are not supported"
    return None


def _hashable(x):
    try:
        hash(x)
        return True
    except TypeError:
        return False


def should_run(name, args, kwargs):
    return can_run(name, args, kwargs) is True


class BackendInterface:
    """What networkx loads from the ``networkx.backends`` entry point."""

    convert_from_nx = staticmethod(convert_from_nx)
    convert_to_nx = staticmethod(convert_to_nx)
    can_run = staticmethod(can_run)
    should_run = staticmethod(should_run)
    bfs_edges = staticmethod(bfs_edges)
    bfs_layers = staticmethod(bfs_layers)
    single_source_shortest_path_length = staticmethod(single_source_shortest_path_length)
    single_source_dijkstra_path_length = staticmethod(single_source_dijkstra_path_length)
    betweenness_centrality = staticmethod(betweenness_centrality)
    connected_components = staticmethod(connected_components)
    weakly_connected_components = staticmethod(weakly_connected_components)
    pagerank = staticmethod(pagerank)
    triangles = staticmethod(triangles)
    transitivity = staticmethod(transitivity)
    clustering = staticmethod(clustering)
    average_clustering = staticmethod(average_clustering)
    louvain_communities = staticmethod(louvain_communities)
    core_number = staticmethod(core_number)
    k_core = staticmethod(k_core)
    k_shell = staticmethod(k_shell)
    k_crust = staticmethod(k_crust)
    k_corona = staticmethod(k_corona)
    hits = staticmethod(hits)

    @staticmethod
    def on_start_tests(items):
        """networkx's test-suite hook: nothing to mark; unsupported calls are declined."""


def get_info():
    """networkx's ``networkx.backend_info`` entry point."""
    return {
        "backend_name": "gunpy",
        "project": "gunpy",
        "package": "gunpy",
        "url": "https://github.com/gunpy/gunpy",
        "short_summary": "GPU (numba.cuda) and parallel CPU graph traversal, Gunrock-style",
        "functions": {name: {"additional_docs": doc} for name, doc in _FUNCTIONS.items()},
    }
