"""All-pairs shortest paths and efficiency: one gunpy.bfs or gunpy.sssp a node.

networkx's all-pairs functions are generators over ``G``'s nodes, each item one
single-source answer; these are the same generators over ``paths``' single-source
functions (networkx's orders and types). Bellman-Ford's paths where the weights differ
depend on networkx's queue wherever a vertex has two tight in-edges (``paths._TIES``):
every source is then answered before the first item is yielded, so that such a graph
raises NotImplementedError at the call (networkx runs it itself) and never half-way
through the iteration.
"""

import networkx as nx

from ._graph import _int_weights
from .paths import (_any_int_weight, _same_weight, single_source_bellman_ford_path,
                    single_source_bellman_ford_path_length, single_source_dijkstra,
                    single_source_dijkstra_path, single_source_dijkstra_path_length,
                    single_source_shortest_path, single_source_shortest_path_length)


def all_pairs_shortest_path_length(G, cutoff=None):
    for n in G.nodes:
        yield (n, single_source_shortest_path_length(G, n, cutoff=cutoff))


def all_pairs_shortest_path(G, cutoff=None):
    for n in G.nodes:
        yield (n, single_source_shortest_path(G, n, cutoff=cutoff))


def all_pairs_dijkstra_path_length(G, cutoff=None, weight="weight"):
    for n in G.nodes:
        yield (n, single_source_dijkstra_path_length(G, n, cutoff=cutoff, weight=weight))


def all_pairs_dijkstra(G, cutoff=None, weight="weight"):
    for n in G.nodes:
        yield (n, single_source_dijkstra(G, n, cutoff=cutoff, weight=weight))


def all_pairs_dijkstra_path(G, cutoff=None, weight="weight"):
    for n in G.nodes:
        yield (n, single_source_dijkstra_path(G, n, cutoff=cutoff, weight=weight))


def _each_source(G, answer, lazy):
    """``(node, answer(node))`` for every node: a generator where ``lazy`` (no source can
    raise NotImplementedError), else every answer computed first (see the module)."""
    items = ((n, answer(n)) for n in G.nodes)
    return items if lazy else (item for item in list(items))


def all_pairs_bellman_ford_path_length(G, weight="weight"):
    # the lengths alone need no parents unless int and float weights mix (their types)
    lazy = _same_weight(G) or _int_weights(G) or not _any_int_weight(G)
    return _each_source(G, lambda n: dict(single_source_bellman_ford_path_length(
        G, n, weight=weight)), lazy)


def all_pairs_bellman_ford_path(G, weight="weight"):
    return _each_source(G, lambda n: single_source_bellman_ford_path(G, n, weight=weight),
                        _same_weight(G))


def global_efficiency(G):
    if G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")
    n = len(G)
    denom = n * (n - 1)
    if denom == 0:
        return 0
    g_eff = 0
    for _, targets in all_pairs_shortest_path_length(G):
        for distance in targets.values():
            if distance > 0:
                g_eff += 1 / distance
    return g_eff / denom
