"""Components and reachability on gunpy.cc and gunpy.bfs.

Counts and tests of connectivity read gunpy.cc's ``num_components``; one node's component,
its descendants and ancestors, and ``has_path`` read gunpy.bfs's depths (``ancestors``: a
BFS of the reversed graph). Errors are networkx's: ``NetworkXError`` for the missing
source of ``descendants`` / ``ancestors`` (raised by networkx's ``bfs_edges``),
``NodeNotFound`` for ``has_path``, ``NetworkXPointlessConcept`` for the null graph.
"""

import networkx as nx
import numpy as np

import gunpy

from ._graph import _bfs, _device, _reversed


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


def _count(G):
    return gunpy.cc(G.graph, backend=_device()).num_components


def number_connected_components(G):
    return int(_count(G))


number_weakly_connected_components = number_connected_components


def is_connected(G):
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return bool(_count(G) == 1)


is_weakly_connected = is_connected


def _reached(G, source):
    """The labels of the vertices a BFS from ``source`` reaches, ``source`` left out."""
    s, depth = _bfs(G, source)
    depth[s] = -1
    return {G.nodes[v] for v in np.flatnonzero(depth >= 0).tolist()}


def descendants(G, source):
    if source not in G:  # networkx's bfs_edges' error
        kind = "digraph" if G.is_directed() else "graph"
        raise nx.NetworkXError(f"The node {source} is not in the {kind}.")
    return _reached(G, source)


def ancestors(G, source):
    if source not in G:
        kind = "digraph" if G.is_directed() else "graph"
        raise nx.NetworkXError(f"The node {source} is not in the {kind}.")
    return _reached(_reversed(G) if G.is_directed() else G, source)


def node_connected_component(G, n):
    if n not in G:
        raise KeyError(n)  # networkx's, from its adjacency
    return _reached(G, n) | {n}


def has_path(G, source, target):
    for kind, node in (("Source", source), ("Target", target)):
        if node not in G:
            raise nx.NodeNotFound(f"{kind} {node} is not in G")
    return bool(_bfs(G, source)[1][G.node_index(target)] >= 0)
