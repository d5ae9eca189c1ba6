"""The BFS family: networkx's traversal functions on gunpy.bfs."""

import networkx as nx

from ._graph import _bfs, _queue_order, convert_from_nx

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
