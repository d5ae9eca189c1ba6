"""Which calls gunpy declines (``can_run``), and which it should run (``should_run``).

A call's arguments are bound to the networkx function's own signature (defaults filled
in), then each check of the function's entry in ``_CHECKS`` may name a reason to leave
the call to networkx; a reason is returned as a string (networkx shows it), ``True``
when there is none.
"""

import functools
import inspect
import math
import sys
from typing import NamedTuple

import networkx as nx
import numpy as np

from ._functions import _FUNCTIONS
from ._graph import GunpyGraph, _adjacency, _cache_of, _hashable
from .assortativity import _checks as _assortativity
from .centrality import _spectral
from .subgraphs import _checks as _subgraph
from .tree import _check as _spanning_forest


@functools.cache
def _signature(name):
    from networkx.utils.backends import _registered_algorithms
    return inspect.signature(_registered_algorithms[name].orig_func)


def can_run(name, args, kwargs):
    """False (or a reason) for calls whose options gunpy does not implement."""
    if name not in _FUNCTIONS:
        return False
    try:
        bound = _signature(name).bind(*args, **kwargs)
    except TypeError:
        return "arguments networkx does not take (networkx raises its error)"
    bound.apply_defaults()
    p = dict(bound.arguments)
    g = p.get("G")
    p["nxg"] = g.nxg if isinstance(g, GunpyGraph) else g
    for check in _CHECKS.get(name, ()):
        reason = check(p)
        if reason:
            return reason
    return True


def should_run(name, args, kwargs):
    """:func:`can_run`'s answer, or a reason where the graph is so small that networkx is
    faster (thresholds by function family, :data:`MIN_EDGES`).

    networkx asks only when it chooses a backend itself (``nx.config.backend_priority``);
    a call that says ``backend="gunpy"`` runs on gunpy whatever the size.
    """
    g = args[0] if args else kwargs.get("G")
    if isinstance(g, nx.Graph):
        edges, converted = _size(g)
        cold, warm = MIN_EDGES[_FAMILY.get(name, "other")]
        least = warm if converted else cold
        if edges < least:
            if least == math.inf:
                return f"networkx is faster at every size measured for {name}"
            state = "converted" if converted else "not yet converted"
            return (f"{edges} edges ({state}): networkx is faster below {least} for "
                    f"{name}")
    return can_run(name, args, kwargs)


#: ``{family: (edges, edges once converted)}``: the least ``G.number_of_edges()`` at which
#: gunpy beats networkx, converting the graph on the call, and with the conversion
#: cached; measured on ``nx.gnm_random_graph(n, 4 n)`` (``bench/nx_script.py --crossover``,
#: docs/networkx.md)
MIN_EDGES = {
    "traversal": (131_072, 16_384),
    "shortest paths": (32_768, 2_048),
    "components": (65_536, 4_096),
    "betweenness": (4_096, 4_096),
    "closeness": (2_048, 2_048),
    "pagerank": (0, 0),
    "clustering": (512, 128),
    "louvain": (2_048, 2_048),
    "cores": (4_096, 2_048),
    "truss": (256, 256),
    "lca": (65_536, 4_096),
    "edge components": (512, 512),
    "eigenvector": (512, 256),
    "katz": (128, 128),
    "link prediction": (1_024, 256),
    "voterank": (128, 128),
    "neighbour degree": (2_048, 1_024),
    # networkx's ego_graph walks only the ball around the node: faster at every size
    # measured (radius 2, up to a million edges), so gunpy runs it only when asked by name
    "ego graph": (math.inf, math.inf),
    "other": (131_072, 16_384),  # functions not measured (hits, ...): as traversal
}
_FAMILY = {
    **dict.fromkeys(("bfs_edges", "generic_bfs_edges", "bfs_tree", "bfs_predecessors",
                     "bfs_successors", "bfs_layers", "descendants_at_distance", "has_path",
                     "descendants", "ancestors", "node_connected_component",
                     "single_source_shortest_path", "single_source_shortest_path_length"),
                    "traversal"),
    **dict.fromkeys(("shortest_path", "shortest_path_length", "single_source_dijkstra",
                     "single_source_dijkstra_path", "single_source_dijkstra_path_length",
                     "dijkstra_path", "dijkstra_path_length", "multi_source_dijkstra",
                     "multi_source_dijkstra_path", "multi_source_dijkstra_path_length",
                     "bellman_ford_path_length", "single_source_bellman_ford_path_length",
                     "single_source_bellman_ford", "single_source_bellman_ford_path",
                     "bellman_ford_path", "bellman_ford_predecessor_and_distance",
                     "all_pairs_dijkstra_path_length", "all_pairs_dijkstra",
                     "all_pairs_dijkstra_path", "all_pairs_bellman_ford_path_length",
                     "all_pairs_bellman_ford_path"),
                    "shortest paths"),
    **dict.fromkeys(("connected_components", "weakly_connected_components", "is_connected",
                     "is_weakly_connected", "number_connected_components",
                     "number_weakly_connected_components", "is_forest", "is_tree",
                     "is_branching", "is_arborescence"), "components"),
    "k_edge_components": "edge components",
    **dict.fromkeys(("betweenness_centrality", "edge_betweenness_centrality"), "betweenness"),
    **dict.fromkeys(("closeness_centrality", "harmonic_centrality", "eccentricity"),
                    "closeness"),
    "pagerank": "pagerank",
    **dict.fromkeys(("triangles", "transitivity", "clustering", "average_clustering"),
                    "clustering"),
    "louvain_communities": "louvain",
    **dict.fromkeys(("core_number", "k_core", "k_shell", "k_crust", "k_corona"), "cores"),
    "k_truss": "truss",
    "lowest_common_ancestor": "lca",
    "eigenvector_centrality": "eigenvector",
    "katz_centrality": "katz",
    **dict.fromkeys(("jaccard_coefficient", "adamic_adar_index", "resource_allocation_index"),
                    "link prediction"),
    "voterank": "voterank",
    "average_neighbor_degree": "neighbour degree",
    "ego_graph": "ego graph",
}


def _size(g):
    """``(edges, converted)``: ``g``'s edge count (an undirected edge once) and whether
    its conversion is in networkx's cache; O(nodes), without reading edge data."""
    cache = _cache_of(g)
    csr = cache.get(("gunpy", "csr")) if cache is not None else None
    if csr is not None:
        stored = int(csr.nx_offsets[-1])
    else:
        stored = sum(map(len, (g._succ if g.is_directed() else g._adj).values()))
    return (stored if g.is_directed() else (stored + 1) // 2), csr is not None


# ----------------------------------------------------------------------------- checks
def _no_sort_neighbors(p):
    if p.get("sort_neighbors") is not None:
        return "sort_neighbors is not supported"


def _own_neighbors(p):
    """generic_bfs_edges runs networkx's BFS only with the graph's own neighbour method."""
    f, g = p["neighbors"], p["nxg"]
    if f is None:
        return None
    own = (g.neighbors, g.successors, g.predecessors) if g is not None and g.is_directed() \
        else ((g.neighbors,) if g is not None else ())
    if not any(f == m for m in own):
        return ("a neighbors function other than the graph's own neighbors / successors / "
                "predecessors")


def _one_source(p, empty_too=False):
    srcs, g = p["sources"], p["nxg"]
    if g is not None and _hashable(srcs) and srcs in g:
        return None
    if not isinstance(srcs, list | tuple | set | frozenset | dict):
        return "sources given as an iterator (consumed once) are left to networkx"
    if len(set(srcs)) > 1 or not (srcs or empty_too):
        return "several sources are not supported (gunpy.sssp and gunpy.bfs take one)"


def _one_source_or_none(p):  # networkx's ValueError for no source at all
    return _one_source(p, empty_too=True)


def _positive_weights(p):
    """Dijkstra's order is rebuilt for positive weights whose sums gunpy's float64 has
    exactly as networkx has them (:func:`_path_sums`); the others are left to networkx
    (Bellman-Ford's weights are :func:`_fifo_order`'s)."""
    w, g = p.get("weight"), p["nxg"]
    if callable(w):
        return "weight functions are not supported"
    if p.get("method") == "bellman-ford":
        return None
    if w is not None and g is not None:
        return _path_sums(g, w)


class _Facts(NamedTuple):
    """What the checks ask of one weight attribute's values (every parallel edge's, 1
    where it is missing), from :func:`_facts`."""

    count: int      #: how many values (edges; a multigraph's parallel edges each)
    numeric: bool   #: every value a real number: Python's int / float / bool or NumPy's
    python: bool    #: every value a Python int, float or bool (not NumPy's, not a subclass)
    nan: bool       #: some value NaN
    least: object   #: the least value, NaN aside (None where there is none)
    most: object    #: the largest magnitude, NaN aside (0 where there is none)
    int_most: int   #: the largest magnitude of an integer value, exactly (0 if none)


def _facts(g, w):
    """:class:`_Facts` of attribute ``w`` of ``g``, from the one read of the attribute that
    the conversion uses too, kept in networkx's cache of the graph (cleared when the
    graph changes), so a call scans the edges once. Types come from every value (a set
    of values keeps one of ``1``, ``1.0``, ``True`` and ``np.float32(1)``)."""
    cache = _cache_of(g)
    key = ("gunpy", "weight facts", w)
    if cache is not None and key in cache:
        return cache[key]
    weights = _adjacency(g).weights(w, 1)
    types, values = weights.types, weights.distinct
    numeric = all(issubclass(t, int | float | np.integer | np.floating) for t in types)
    if not numeric:
        facts = _Facts(weights.count, False, False, False, None, 0, 0)
    else:
        real = [x for x in values if x == x]
        facts = _Facts(weights.count, True, types <= {int, float, bool}, len(real) < len(values),
                       min(real, default=None), max(map(abs, real), default=0),
                       max((abs(int(x)) for x in real if isinstance(x, int | np.integer)),
                           default=0))
    if cache is not None:
        cache[key] = facts
    return facts


def _path_sums(g, w):
    """Why networkx's Dijkstra sums of ``w`` might not be gunpy's (None: they are the same).

    gunpy.sssp sums float64s along the same paths in the same order, so the sums agree
    where every weight is a positive finite Python int or float, the ints' sums exact in
    float64 (``n`` times the largest at most 2**53: no simple path's partial sum, or one
    edge more, rounds) and no sum overflows. networkx sums NumPy's scalars in their own
    type and width (float32 rounds otherwise, int32 wraps), keeps edges of infinite weight
    (their heads at distance inf), and sums strings, Decimals and Fractions as they are."""
    f = _facts(g, w)
    n = max(len(g), 1)
    if not f.numeric:
        return "non-numeric weights (strings, Decimal, Fraction, complex) are left to networkx"
    if not f.python:
        return ("NumPy scalar weights are left to networkx (it sums them in their own type "
                "and width)")
    if f.nan:
        return "NaN weights are left to networkx"
    if f.least is not None and f.least <= 0:
        return "zero or negative weights are left to networkx"
    if f.most > sys.float_info.max / n:
        return ("infinite weights, or weights whose path sums may overflow float64, are left "
                "to networkx (it keeps edges of infinite weight)")
    if f.int_most * n > 2 ** 53:
        return "integer weights whose path sums may pass 2**53 (float64 would round them)"


def _fifo_order(p):
    """Bellman-Ford (networkx's FIFO queue, SPFA) on non-negative weights whose sums are
    exact: networkx then ends at gunpy.sssp's fixpoint (where paths are asked, equal ones
    raise NotImplementedError, paths.py). Every weight the same positive number: BFS's
    queue, exact whatever the float."""
    w, g, name = p.get("weight"), p["nxg"], p["_name"]
    if name in ("shortest_path", "shortest_path_length") and p["method"] != "bellman-ford":
        return None
    if callable(w):
        return "weight functions are not supported"
    if w is not None and g is not None:
        return _exact_sums(g, w)


def _exact_sums(g, w):
    """Why networkx's Bellman-Ford might not reach the float64 fixpoint on ``g``'s weights
    (None: it does), cached like :func:`_facts`.

    networkx's queue skips a vertex whose predecessor waits in it, and counts on the
    predecessor's next, smaller distance to requeue it: a rounded sum can come out equal
    instead, leaving the vertex's neighbours unreached. Sums are exact where every weight
    is a multiple of one power of two and ``n * max weight`` (any simple path's bound, one
    edge more for the tight-edge tests) is at most 2**53 of them: integers, halves, ...
    (0.1 is not: left to networkx)."""
    cache = _cache_of(g)
    key = ("gunpy", "bellman-ford weights", w)
    if cache is not None and key in cache:
        return cache[key]
    weights = _adjacency(g).weights(w, 1)
    values, f = weights.distinct, _facts(g, w)
    # float64 sums, as gunpy's (networkx sums NumPy's scalars in their own type, bools as ints)
    if not (f.numeric and weights.types <= {int, float}) or f.nan or \
            (f.least is not None and f.least < 0) or f.most > sys.float_info.max:
        reason = ("negative, NaN, infinite or non-numeric weights (or NumPy's scalars, or "
                  "bools) are left to networkx")
    elif f.most > sys.float_info.max / max(len(g), 1):
        reason = "weights whose path sums may overflow float64 are left to networkx"
    elif len(values) <= 1 and all(isinstance(x, float) and x > 0 for x in values):
        reason = None  # BFS's queue: each distance one float64 sum, whatever the float
    else:
        ratios = [x.as_integer_ratio() if isinstance(x, float) else (int(x), 1)
                  for x in values]
        scale = max(d for _, d in ratios)
        most = max(k * (scale // d) for k, d in ratios)
        reason = None if most * max(len(g), 1) <= 2 ** 53 else (
            "weights whose path sums may round (not all multiples of one power of two, or "
            "too large): networkx's Bellman-Ford may stop short of the shortest distances")
    if cache is not None:
        cache[key] = reason
    return reason


def _source_and_no_target(p):
    if p["source"] is None:
        return "all pairs or paths to a target from every node are left to networkx"
    if p["target"] is not None and "length" not in p["_name"] and p["weight"] is not None \
            and p["method"] != "bellman-ford":
        return ("a source, a target and a weight: networkx's bidirectional Dijkstra picks "
                "among equal paths by its own order")


def _named(name, check):
    def named(p):
        return check({**p, "_name": name})
    return named


def _distance_weights(p):  # closeness and harmonic centrality name their weight distance=
    return _positive_weights({**p, "weight": p["distance"]})


def _no_sp(p):
    if p["sp"] is not None:
        return "sp= given: networkx only reads it"


def _betweenness(p):
    """Weighted (``k`` sampled or not) on positive finite weights: networkx's Dijkstra
    sees the same tight edges as gunpy.sssp's distances (bc_weighted)."""
    if p.get("endpoints"):
        return "endpoints=True is not supported"
    if _multi(p):
        return "parallel edges count as separate paths: not supported"
    w, g = p["weight"], p["nxg"]
    if callable(w):
        return "weight functions are not supported"
    if w is not None and g is not None:
        return _bc_weights(g, w)


def _bc_weights(g, w):
    """Why networkx's Dijkstra might see other tight edges than gunpy's float64 distances
    (None: it sees the same): networkx sums Python ints exactly, floats as float64 (as gunpy
    does) and NumPy's narrower types in their own width."""
    f = _facts(g, w)
    types = _adjacency(g).weights(w, 1).types
    if not (f.numeric and types <= {int, float, np.int64, np.float64}) or f.nan or \
            (f.least is not None and f.least <= 0) or \
            f.most > sys.float_info.max / max(len(g), 1):
        return ("zero, negative, NaN, infinite or non-numeric weights (or NumPy's other than "
                "int64 / float64, or bools) are left to networkx")
    if f.int_most * max(len(g), 1) > 2 ** 53:
        return "integer weights whose path sums may pass 2**53 (float64 would round them)"


def _real_weights(g, w, bound=sys.float_info.max):
    """Why gunpy's float64 copy of ``w`` is not what networkx computes with (None: it is):
    PageRank, HITS and Louvain take each weight as a non-negative finite float, and sum
    them (``bound``: the most the sum of every weight may be)."""
    f = _facts(g, w)
    if not f.numeric:
        return "non-numeric weights (strings, Decimal, Fraction, complex) are left to networkx"
    if f.nan or (f.least is not None and f.least < 0) or f.most > sys.float_info.max:
        return "negative, NaN or infinite weights are left to networkx"
    if f.most > bound / max(f.count, 1):
        return "weights whose sums may overflow float64 are left to networkx"


def _multi(p):
    return p["nxg"] is not None and p["nxg"].is_multigraph()


def _a_node(name):
    def check(p):
        try:
            if p["nxg"] is not None and p[name] in p["nxg"]:
                return None
        except TypeError:
            pass
        return f"{name} is not a node of the graph (networkx raises its error)"
    return check


def _whole_graph_weights(p):
    if p["edge"] is not None:
        return "edge= (one edge's weight) is left to networkx"
    if p["weight"] is not None and p["nxg"] is not None:
        f = _facts(p["nxg"], p["weight"])
        if not f.numeric:
            return "non-numeric weights (strings, Decimal, Fraction, complex) are left to networkx"
        if f.most > sys.float_info.max:
            return "integer weights beyond float64's range are left to networkx"


def _directed_simple(p):
    g = p["nxg"]
    if g is not None and (not g.is_directed() or g.is_multigraph()):
        return "undirected graphs and multigraphs are left to networkx"


def _undirected(p):
    if p["nxg"] is not None and p["nxg"].is_directed():
        return "directed graphs (networkx's successor sets) are left to networkx"


def _clustering(p):
    if p["nxg"] is not None and p["nxg"].is_directed():
        return "directed clustering (networkx's directed triangles) is not supported"
    if p["weight"] is not None:
        return "weighted clustering is not supported"
    if _multi(p):
        return "multigraphs are not supported"


def _louvain(p):
    """Why gunpy leaves a louvain_communities call to networkx (None: it runs it)."""
    g, w = p["nxg"], p["weight"]
    if g is not None and g.is_directed():
        return "directed modularity is not implemented"
    if w is None:
        return ("weight=None is left to networkx: its tests pin the partition of unweighted "
                "calls, which gunpy's bucketed moves reach by another path")
    if p["max_level"] is not None:
        return ("max_level is left to networkx: its tests compare each level with its own "
                "louvain_partitions")
    if g is not None:
        return _real_weights(g, w)


def _cores(p):
    if p.get("core_number") is not None:
        return "core_number= given: networkx only filters the nodes"
    if p["nxg"] is not None and nx.number_of_selfloops(p["nxg"]):
        return "self-loops: networkx raises NetworkXNotImplemented"


def _directed_only(p):
    g = p["nxg"]
    if g is not None and not g.is_directed():
        return "undirected graphs: networkx raises NetworkXNotImplemented"
    if g is not None and g.is_multigraph():
        return "multigraphs: left to networkx"


def _edge_components(p):
    g = p["nxg"]
    if g is not None and g.is_multigraph():
        return "multigraphs: networkx raises NetworkXNotImplemented"
    if g is not None and p["k"] >= (2 if g.is_directed() else 3):
        return ("k >= 3, or k >= 2 on a directed graph: networkx's auxiliary graph, not a "
                "traversal")


def _truss(p):
    g = p["nxg"]
    if g is not None and (g.is_directed() or g.is_multigraph()):
        return "directed graphs and multigraphs: networkx raises NetworkXNotImplemented"


def _hits(p):
    g = p["nxg"]
    if p["nstart"] is not None:
        return "nstart is not supported"
    if not p["normalized"]:
        return "normalized=False (ARPACK's unit vector, of either sign) is not supported"
    if _multi(p):
        return "multigraphs are not supported"
    if g is not None and len(g) and (len(g) < 2 or not g.number_of_edges()):
        return "graphs without edges or of one node: networkx's ARPACK call raises"
    if g is not None:  # networkx's hits reads the "weight" attribute, unasked; an iteration
        return _real_weights(g, "weight", math.sqrt(sys.float_info.max))  # multiplies two


def _pagerank(p):
    for key in ("personalization", "dangling", "nstart"):
        values = p[key]
        if values is not None and not all(
                isinstance(x, int | float | np.integer | np.floating) and
                0 <= x <= sys.float_info.max for x in values.values()):
            return f"{key} with negative, NaN, infinite or non-numeric values is not supported"
        if key != "personalization" and values is not None and not sum(values.values()):
            return f"a {key} vector summing to 0 (networkx divides by it)"
    if _multi(p):
        return "parallel edges sum their weights: not supported"
    if p["weight"] is not None and p["nxg"] is not None:
        return _real_weights(p["nxg"], p["weight"])


def _simple(p):
    if _multi(p):
        return "multigraphs: networkx counts parallel edges, gunpy's graph holds each once"


def _average_path(p):
    w, method = p["weight"], p["method"]
    method = method or ("unweighted" if w is None else "dijkstra")
    if method == "unweighted":
        return None
    if method not in ("dijkstra", "bellman-ford") or w is None:
        return f"method={method!r} (with weight={w!r}) is left to networkx"
    if method == "dijkstra":
        return _positive_weights(p)
    return _fifo_order({**p, "_name": "average_shortest_path_length"})


_DIJKSTRA = ("single_source_dijkstra_path_length", "single_source_dijkstra",
             "single_source_dijkstra_path", "dijkstra_path", "dijkstra_path_length")
_BELLMAN_FORD = ("single_source_bellman_ford_path_length", "single_source_bellman_ford",
                 "single_source_bellman_ford_path", "bellman_ford_path",
                 "bellman_ford_predecessor_and_distance", "bellman_ford_path_length",
                 "all_pairs_bellman_ford_path_length", "all_pairs_bellman_ford_path")
_MULTI = ("multi_source_dijkstra", "multi_source_dijkstra_path",
          "multi_source_dijkstra_path_length")
_CHECKS = {
    **{name: (_no_sort_neighbors,) for name in ("bfs_edges", "bfs_tree", "bfs_predecessors",
                                                 "bfs_successors")},
    "bfs_layers": (_one_source,),
    "generic_bfs_edges": (_own_neighbors,),
    **{name: (_positive_weights,) for name in (*_DIJKSTRA, "all_pairs_dijkstra_path_length",
                                               "all_pairs_dijkstra",
                                               "all_pairs_dijkstra_path")},
    **{name: (_one_source_or_none, _positive_weights) for name in _MULTI},
    "shortest_path": (_named("shortest_path", _source_and_no_target), _positive_weights,
                      _named("shortest_path", _fifo_order)),
    "shortest_path_length": (_named("shortest_path_length", _source_and_no_target),
                             _positive_weights, _named("shortest_path_length", _fifo_order)),
    **{name: (_named(name, _fifo_order),) for name in _BELLMAN_FORD},
    "betweenness_centrality": (_betweenness,),
    "edge_betweenness_centrality": (_betweenness,),
    "closeness_centrality": (_distance_weights,),
    "harmonic_centrality": (_distance_weights,),
    "eccentricity": (_no_sp, _positive_weights),
    "clustering": (_clustering,),
    "average_clustering": (_clustering,),
    "louvain_communities": (_louvain,),
    **{name: (_cores,) for name in ("core_number", "k_core", "k_shell", "k_crust",
                                    "k_corona")},
    "k_truss": (_truss, _cores),
    "lowest_common_ancestor": (_directed_only,),
    "k_edge_components": (_edge_components,),
    "hits": (_hits,),
    **{name: (_subgraph,) for name in ("ego_graph", "complement", "reverse")},
    **{name: (_named(name, _assortativity),) for name in ("average_neighbor_degree",
                                                          "average_degree_connectivity")},
    "voterank": (_simple,),
    "square_clustering": (_undirected,),
    "eigenvector_centrality": (_spectral,),
    "katz_centrality": (_spectral,),
    "minimum_spanning_edges": (_spanning_forest,),
    "minimum_spanning_tree": (_spanning_forest,),
    "pagerank": (_pagerank,),
    **{name: (_simple,) for name in ("degree_centrality", "in_degree_centrality",
                                     "out_degree_centrality")},
    "average_shortest_path_length": (_average_path,),
    "is_isolate": (_a_node("n"),),
    "number_of_selfloops": (_simple,),
    **{name: (_simple,) for name in ("is_forest", "is_tree", "is_branching",
                                     "is_arborescence")},
    "is_negatively_weighted": (_simple, _whole_graph_weights),
    "reciprocity": (_directed_simple,),
    "overall_reciprocity": (_directed_simple,),
}
