"""Components and reachability on gunpy.cc and gunpy.bfs."""

import networkx as nx
import numpy as np

import gunpy

from ._graph import _device

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
