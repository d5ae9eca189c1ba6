"""Components and reachability on gunpy.cc, gunpy.scc and gunpy.bfs.

Counts and tests of connectivity read gunpy.cc's (gunpy.scc's) ``num_components``; strongly
connected components come sinks of the condensation first, as networkx's Tarjan yields
them (a reverse topological order: ``_scc_order``), ties by smallest node index; one node's
component,
its descendants and ancestors, and ``has_path`` read gunpy.bfs's depths (``ancestors``: a
BFS of the reversed graph). Errors are networkx's: ``NetworkXError`` for the missing
source of ``descendants`` / ``ancestors`` (raised by networkx's ``bfs_edges``),
``NodeNotFound`` for ``has_path``, ``NetworkXPointlessConcept`` for the null graph.
"""

import networkx as nx
import numpy as np

import gunpy

from ._graph import _bfs, _device, _nx_order_csr, _queue_order, _reversed


def _components(G, graph=None):
    """networkx's (weakly) connected components of ``G`` (or of ``graph``, a gunpy.Graph
    on ``G``'s nodes): each a set, in the order of their first node in ``G``."""
    labels = gunpy.cc(G.graph if graph is None else graph, backend=_device()).labels
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


def _scc_order(G):
    """gunpy.scc's components as arrays of vertex ids, every component after those it has
    an edge to (peeled from the condensation's sinks a level at a time, each level's
    components by their smallest id, which gunpy.scc names them by)."""
    labels = gunpy.scc(G.graph, backend=_device()).labels.astype(np.int64)
    g = G.graph
    n = g.num_vertices
    src = np.repeat(np.arange(n), np.diff(g.row_offsets))
    cu, cv = labels[src], labels[g.column_indices]
    cross = cu != cv
    by_head = np.argsort(cv[cross], kind="stable")
    cu, cv = cu[cross][by_head], cv[cross][by_head]
    into = np.searchsorted(cv, np.arange(n + 1))     # the edges into each component
    left = np.bincount(cu, minlength=n)              # each one's edges out, to peel
    roots = np.flatnonzero(labels == np.arange(n))
    level, order = roots[left[roots] == 0], []
    while level.size:
        order.append(level)
        counts = into[level + 1] - into[level]
        at = np.repeat(into[level] - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        tails = cu[np.arange(counts.sum()) + at]
        np.subtract.at(left, tails, 1)
        tails = np.unique(tails)
        level = tails[left[tails] == 0]
    members = np.argsort(labels, kind="stable")
    cuts = np.searchsorted(labels[members], np.arange(n + 1))
    return [members[cuts[c]:cuts[c + 1]] for c in np.concatenate(order or [roots]).tolist()]


def _not_undirected(G):
    if not G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for undirected type")


def strongly_connected_components(G):
    _not_undirected(G)
    names = G.nodes
    return ({names[v] for v in group.tolist()} for group in _scc_order(G))


def number_strongly_connected_components(G):
    _not_undirected(G)
    return int(gunpy.scc(G.graph, backend=_device()).num_components)


def is_strongly_connected(G):
    _not_undirected(G)
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return number_strongly_connected_components(G) == 1


def condensation(G, scc=None):
    """networkx's condensation: components numbered in ``scc``'s order (gunpy's
    strongly_connected_components when None), the edges between them added in
    ``G.edges()`` order (NumPy over the graph in networkx's adjacency order)."""
    _not_undirected(G)
    if scc is None:
        scc = strongly_connected_components(G)
    mapping, members = {}, {}
    C = nx.DiGraph()
    C.graph["mapping"] = mapping
    if len(G) == 0:
        return C
    for i, component in enumerate(scc):
        members[i] = component
        mapping.update((n, i) for n in component)
    C.add_nodes_from(range(len(members)))
    ro, ci = _nx_order_csr(G)
    comp = np.fromiter((mapping[v] for v in G.nodes), dtype=np.int64, count=len(G))
    cu, cv = comp[np.repeat(np.arange(len(G)), np.diff(ro))], comp[ci]
    cross = np.flatnonzero(cu != cv)
    first = np.sort(np.unique(cu[cross] * len(members) + cv[cross], return_index=True)[1])
    C.add_edges_from(zip(cu[cross][first].tolist(), cv[cross][first].tolist()))
    nx.set_node_attributes(C, members, "members")
    return C


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


def lowest_common_ancestor(G, node1, node2, default=None):
    """networkx's steps with gunpy's traversals: the DAG check is gunpy.scc (every
    component one node, no self-loop), each node's ancestors a BFS of the reversed graph,
    put in a set in networkx's BFS order (so the set, and the common ancestor networkx
    starts its walk down from, are networkx's), then networkx's walk along successors
    that stay common. can_run declines undirected graphs (networkx raises)."""
    g = G.nxg
    if not _is_dag(G):
        raise nx.NetworkXError("LCA only defined on directed acyclic graphs.")
    if len(g) == 0:
        raise nx.NetworkXPointlessConcept("LCA meaningless on null graphs.")
    pair = (node1, node2)
    nodeset = set(g)
    if set(pair) - nodeset:
        raise nx.NodeNotFound(f"Node(s) {set(pair) - nodeset} from pair {pair} not in G.")
    reverse = _reversed(G)
    labels = G.nodes

    def ancestors_and_self(v):
        s, depth = _bfs(reverse, v)
        order = _queue_order(reverse, s, depth)[0]
        found = {labels[u] for level in order[1:] for u in level.tolist()}
        found.add(v)
        return found

    first = ancestors_and_self(node1)
    common = first & (first if node2 == node1 else ancestors_and_self(node2))
    if not common:
        return default
    lowest = next(iter(common))
    while True:
        below = next((u for u in g.successors(lowest) if u in common), None)
        if below is None:
            return lowest
        lowest = below


def _is_dag(G):
    g = G.graph
    if g.num_vertices == 0:
        return True
    src = np.repeat(np.arange(g.num_vertices), np.diff(g.row_offsets))
    if np.any(src == g.column_indices):
        return False
    return int(gunpy.scc(g, backend=_device()).num_components) == g.num_vertices


def k_edge_components(G, k):
    """``k = 1``: the connected components (strongly connected, directed), networkx's
    order; ``k = 2`` (undirected): the bridge components, the components of ``G`` less
    its bridges (:func:`_bridges`). can_run declines the rest (networkx's auxiliary
    graph is no traversal) and multigraphs."""
    if k < 1:
        raise ValueError("k cannot be less than 1")
    if G.is_directed():
        return strongly_connected_components(G)
    if k == 1:
        return _components(G)
    g = G.graph
    src = np.repeat(np.arange(g.num_vertices), np.diff(g.row_offsets))
    keep = ~_bridges(g, src)
    rows = np.concatenate(([0], np.cumsum(np.bincount(src[keep], minlength=g.num_vertices))))
    return _components(G, gunpy.Graph(rows, g.column_indices[keep], directed=False))


def _bridges(g, src):
    """Which stored edges of the undirected ``g`` are bridges (both directions marked):
    Tarjan and Vishkin's test on a BFS forest, a level at a time in NumPy. A super-root
    joined to each component's smallest vertex makes the forest one gunpy.bfs; a tree
    edge ``parent -> c`` is a bridge when no other edge leaves ``c``'s subtree, that is
    when the preorder numbers its subtree's vertices reach stay in its own interval."""
    n = g.num_vertices
    ci = g.column_indices.astype(np.int64)
    labels = gunpy.cc(g, backend=_device()).labels
    roots = np.flatnonzero(labels == np.arange(n))
    forest = gunpy.Graph.from_edges(np.concatenate([src, np.full(roots.size, n)]),
                                    np.concatenate([ci, roots]), num_vertices=n + 1)
    r = gunpy.bfs(forest, n, backend=_device())
    parent, depth = r.parent[:n].astype(np.int64), r.depth[:n]
    order = np.argsort(depth, kind="stable")
    levels = np.split(order, np.flatnonzero(np.diff(depth[order])) + 1) if n else []
    size = np.ones(n, dtype=np.int64)
    for level in levels[:0:-1]:  # deepest first; the roots' parent is the super-root
        np.add.at(size, parent[level], size[level])
    pre = np.zeros(n, dtype=np.int64)  # preorder: each subtree one interval
    if n:
        pre[levels[0]] = np.cumsum(size[levels[0]]) - size[levels[0]]
    for level in levels[1:]:
        kids = level[np.argsort(parent[level], kind="stable")]
        p, before = parent[kids], np.cumsum(size[kids]) - size[kids]
        start = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
        pre[kids] = pre[p] + 1 + before - np.repeat(before[start], np.diff(np.r_[start,
                                                                                 kids.size]))
    tree = (parent[ci] == src) | (parent[src] == ci)
    low, high = pre.copy(), pre.copy()
    np.minimum.at(low, src[~tree], pre[ci[~tree]])
    np.maximum.at(high, src[~tree], pre[ci[~tree]])
    for level in levels[:0:-1]:
        np.minimum.at(low, parent[level], low[level])
        np.maximum.at(high, parent[level], high[level])
    bridge = (low >= pre) & (high < pre + size) & (depth > 1)  # c's edge to its parent
    return (bridge[ci] & (parent[ci] == src)) | (bridge[src] & (parent[src] == ci))
