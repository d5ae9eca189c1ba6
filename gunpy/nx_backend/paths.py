"""Shortest paths: networkx's unweighted and weighted path functions on gunpy.bfs / gunpy.sssp."""

import networkx as nx
import numpy as np

import gunpy

from ._graph import _bfs, _device, _int_weights, _queue_order

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
