"""The BFS family: networkx's traversal functions on gunpy.bfs.

Every result follows networkx's BFS queue (``_queue_order``: level by level, each vertex
reached from its first discoverer in queue order), so edges, layers, predecessors and
successors come in networkx's order; generators raise networkx's ``NetworkXError`` for a
missing source when first advanced, as networkx's do.
"""

import networkx as nx
import numpy as np

from ._graph import _bfs, _queue_order, _reversed


def bfs_edges(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    def edges(G=G):
        if source not in G:  # networkx's neighbors() / predecessors() error
            kind = "digraph" if G.is_directed() else "graph"
            raise nx.NetworkXError(f"The node {source} is not in the {kind}.")
        if reverse and G.is_directed():
            G = _reversed(G)
        s, depth = _bfs(G, source, depth_limit)
        order, parent = _queue_order(G, s, depth)
        labels = G.nodes
        for level in order[1:]:
            for v in level.tolist():
                yield labels[parent[v]], labels[v]
    return edges()


def generic_bfs_edges(G, source, neighbors=None, depth_limit=None):
    """networkx's BFS along the graph's own ``neighbors`` / ``successors`` (bfs_edges'
    edges) or ``predecessors`` (bfs_edges with ``reverse=True``, as networkx's bfs_edges
    calls it); ``can_run`` declines any other ``neighbors``. A negative depth limit yields
    no edge, as networkx's."""
    if depth_limit is not None and depth_limit < 0:
        depth_limit = 0
    reverse = neighbors is not None and G.is_directed() and neighbors == G.nxg.predecessors
    return bfs_edges(G, source, reverse=reverse, depth_limit=depth_limit)


def bfs_tree(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    T = nx.DiGraph()
    T.add_node(source)
    T.add_edges_from(bfs_edges(G, source, reverse=reverse, depth_limit=depth_limit))
    return T


def bfs_predecessors(G, source, depth_limit=None, sort_neighbors=None):
    return ((child, parent) for parent, child in bfs_edges(G, source, depth_limit=depth_limit))


def bfs_successors(G, source, depth_limit=None, sort_neighbors=None):
    def successors():  # networkx's grouping of bfs_edges by parent, (source, []) included
        parent, children = source, []
        for p, c in bfs_edges(G, source, depth_limit=depth_limit):
            if p == parent:
                children.append(c)
                continue
            yield (parent, children)
            children, parent = [c], p
        yield (parent, children)
    return successors()


def descendants_at_distance(G, source, distance):
    if source not in G:
        raise nx.NetworkXError(f"The node {source} is not in the graph.")
    if distance < 0:  # networkx's layers are numbered from 0
        return set()
    s, depth = _bfs(G, source, distance)  # the BFS stops at that level
    return {G.nodes[v] for v in np.flatnonzero(depth == distance).tolist()}


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


def bidirectional_shortest_path(G, source, target):
    """networkx's path: its search expands the smaller fringe, forward (the source's BFS
    levels, in queue order) or backward (the target's, over the predecessors), and stops at
    the first node the other side has seen. With the levels' sizes (a BFS each way) its
    ``d``-th expansion meets (``d``: the distance); the node met is the first of the level
    that expansion opens whose depth on the other side completes ``d``, and the path runs
    through it on both sides' queue parents."""
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    if target not in G:
        raise nx.NodeNotFound(f"Target {target} is not in G")
    if source == target:
        return [source]
    back = _reversed(G) if G.is_directed() else G
    s, forward = _bfs(G, source)
    t, backward = _bfs(back, target)
    d = int(forward[t])
    if d < 0:
        raise nx.NetworkXNoPath(f"No path between {source} and {target}.")
    sizes_f = np.bincount(forward[forward >= 0])
    sizes_b = np.bincount(backward[backward >= 0])
    i = j = 0  # the levels the fringes hold
    for _ in range(d):
        ahead = sizes_f[i] <= sizes_b[j]  # networkx expands the forward fringe on ties
        i, j = (i + 1, j) if ahead else (i, j + 1)
    order_f, parent_f = _queue_order(G, s, np.where(forward <= i, forward, -1))
    order_b, parent_b = _queue_order(back, t, np.where(backward <= j, backward, -1))
    # the level the last expansion opened, in its scan order: the first node of it that the
    # other side's fringe holds
    opened, depth, other = (order_f[i], backward, j) if ahead else (order_b[j], forward, i)
    w = int(opened[np.argmax(depth[opened] == other)])
    labels = G.nodes
    path = [w]
    while path[-1] != s:
        path.append(int(parent_f[path[-1]]))
    path.reverse()
    while path[-1] != t:
        path.append(int(parent_b[path[-1]]))
    return [labels[v] for v in path]
