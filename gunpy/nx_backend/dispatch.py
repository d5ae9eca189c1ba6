"""Which calls gunpy declines (``can_run``), and which it should run (``should_run``)."""

import networkx as nx
import numpy as np

from ._functions import _FUNCTIONS
from ._graph import GunpyGraph, _hashable

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


def should_run(name, args, kwargs):
    return can_run(name, args, kwargs) is True
