"""Shortest paths: networkx's unweighted and weighted path functions on gunpy.bfs / gunpy.sssp.

gunpy computes the distances; the host rebuilds what networkx's own loop would have
produced from them. Unweighted paths follow networkx's BFS queue (``_queue_order``).
Weighted ones follow its Dijkstra: networkx pops vertices by (distance, push counter),
and a vertex's last push comes from its first-popped *tight* in-neighbour (one whose
distance plus the edge's weight is the vertex's distance) as that neighbour's ``pos``-th
neighbour, so vertices at one distance pop in the order of (that neighbour's rank, pos),
which :func:`_pop_order` settles distance by distance, and the same neighbour is the
vertex's path parent (networkx's ``pred[v][0]``). Weights must be positive (zero weights
let a tight neighbour pop after the vertex) and their sums gunpy's float64 sums (Python
ints and floats, the ints' path sums under 2**53, nothing infinite):
:func:`~gunpy.nx_backend.can_run` leaves the others, weight functions and several sources
to networkx (``dispatch._path_sums``).
Bellman-Ford (networkx's FIFO queue) is BFS's queue where every weight is the same, and
otherwise gunpy.sssp's fixpoint with its unique tight-edge tree (see the section below).
"""

import math

import networkx as nx
import numpy as np

import gunpy

from ._graph import (_adjacency, _bfs, _device, _int_weights, _nx_order_csr, _queue_order,
                     _reversed)
from .traversal import bidirectional_shortest_path


# ----------------------------------------------------------------------------- unweighted
def single_source_shortest_path_length(G, source, cutoff=None):
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    s, depth = _bfs(G, source, cutoff)
    order, _ = _queue_order(G, s, depth)
    labels = G.nodes
    return {labels[v]: int(depth[v]) for level in order for v in level.tolist()}


def single_source_shortest_path(G, source, cutoff=None):
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} not in G")
    s, depth = _bfs(G, source, cutoff)
    order, parent = _queue_order(G, s, depth)
    return _paths(G, np.concatenate(order), parent)


def _paths(G, order, parent):
    """``{node: path}`` in ``order`` (the first is the source), each its parent's path +
    itself; a parent may come after its child (zero weights: equal distances)."""
    labels = G.nodes
    order, parent = order.tolist(), parent.tolist()
    by_id = {order[0]: [labels[order[0]]]}
    for v in order[1:]:
        for x in _unbuilt(v, parent, by_id):
            by_id[x] = by_id[parent[x]] + [labels[x]]
    return {labels[v]: by_id[v] for v in order}


def _unbuilt(v, parent, done):
    """``v`` and its ancestors not yet in ``done``, the oldest first."""
    chain = []
    while v not in done:
        chain.append(v)
        v = parent[v]
    return reversed(chain)


def single_target_shortest_path_length(G, target, cutoff=None):
    # networkx's BFS over the predecessors: a BFS of the reversed graph
    if target not in G:
        raise nx.NodeNotFound(f"Target {target} is not in G")
    return single_source_shortest_path_length(_reversed(G) if G.is_directed() else G, target,
                                              cutoff)


def single_target_shortest_path(G, target, cutoff=None):
    if target not in G:
        raise nx.NodeNotFound(f"Target {target} not in G")
    paths = single_source_shortest_path(_reversed(G) if G.is_directed() else G, target, cutoff)
    return {v: path[::-1] for v, path in paths.items()}


def predecessor(G, source, target=None, cutoff=None, return_seen=None):
    """Every BFS predecessor of each node (those one level up), in networkx's queue order."""
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} not in G")
    # networkx stops after the level where ``cutoff <= level`` (a falsy cutoff: never)
    s, depth = _bfs(G, source, max(1, math.ceil(cutoff)) if cutoff else None)
    order, _ = _queue_order(G, s, depth)
    order = np.concatenate(order)
    rank = np.full(depth.size, -1, dtype=np.int64)
    rank[order] = np.arange(order.size)
    ro, ci = _nx_order_csr(G)
    src = np.repeat(np.arange(depth.size), np.diff(ro))
    up = (depth[src] >= 0) & (depth[ci] == depth[src] + 1)
    v, w = src[up], ci[up]
    k = np.lexsort((rank[v], rank[w]))  # by the node, then its predecessors' queue order
    cuts = np.searchsorted(rank[w[k]], np.arange(order.size + 1)).tolist()
    labels = G.nodes
    preds = [labels[x] for x in v[k].tolist()]
    nodes = [labels[x] for x in order.tolist()]
    pred = {x: preds[cuts[i]:cuts[i + 1]] for i, x in enumerate(nodes)}
    if target is not None:
        found = target in pred
        if return_seen:
            return (pred[target], int(depth[G.node_index(target)])) if found else ([], -1)
        return pred[target] if found else []
    if return_seen:
        return pred, dict(zip(nodes, depth[order].tolist()))
    return pred


def average_shortest_path_length(G, weight=None, method=None):
    # can_run: unweighted, or Dijkstra / Bellman-Ford on weights it runs (floyd-warshall
    # left to networkx); networkx's sum over the same dicts, in their order
    from .components import is_connected, is_strongly_connected
    method = method or ("unweighted" if weight is None else "dijkstra")
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("the null graph has no paths, thus there is no "
                                          "average shortest path length")
    if len(G) == 1:
        return 0
    if G.is_directed() and not is_strongly_connected(G):
        raise nx.NetworkXError("Graph is not strongly connected.")
    if not G.is_directed() and not is_connected(G):
        raise nx.NetworkXError("Graph is not connected.")
    if method == "unweighted":
        def path_length(v):
            return single_source_shortest_path_length(G, v)
    elif method == "dijkstra":
        def path_length(v):
            return single_source_dijkstra_path_length(G, v, weight=weight)
    elif _same_weight(G):  # networkx's queue order: its float sum in that order
        def path_length(v):
            return single_source_bellman_ford_path_length(G, v, weight=weight)
    else:
        return _exact_total(G) / (len(G) * (len(G) - 1))
    n = len(G)
    return sum(x for u in G.nodes for x in path_length(u).values()) / (n * (n - 1))


def _exact_total(G):
    """The sum of every Bellman-Ford length, as networkx's sum has it in any order: each
    length is a multiple of ``1 / scale`` (can_run: exact sums), so while the total is at
    most 2**53 of them no partial sum rounds (int weights: Python's ints never do)."""
    values = (getattr(G, "_csr", None) or _adjacency(G.nxg)).weights(G.weight_attr, 1).distinct
    scale = max(float(x).as_integer_ratio()[1] if isinstance(x, float | np.floating) else 1
                for x in values)
    total = 0
    for v in range(len(G)):
        k = (gunpy.sssp(G.graph, v, backend=_device()).distance * scale).astype(np.int64)
        total += (int((k >> 32).sum()) << 32) + int((k & 0xFFFFFFFF).sum())  # no overflow
    if _int_weights(G):
        return total
    if total > 2 ** 53:
        raise NotImplementedError("Bellman-Ford lengths whose float sum may round in "
                                  "networkx's order: left to networkx")
    return total / scale


# ----------------------------------------------------------------------------- Dijkstra
def _nx_order_weights(G):
    """Each edge's weight in networkx's adjacency order (a multigraph's least), cached."""
    cached = getattr(G, "_nx_w", None)
    if cached is None:
        g, attr = G.nxg, G.weight_attr
        adj = g._succ if g.is_directed() else g._adj
        if attr is None:
            cached = np.ones(_nx_order_csr(G)[1].size)
        elif g.is_multigraph():
            cached = np.array([min(d.get(attr, 1) for d in keys.values())
                               for v in G.nodes for keys in adj[v].values()], dtype=np.float64)
        else:
            cached = np.array([d.get(attr, 1) for v in G.nodes for d in adj[v].values()],
                              dtype=np.float64)
        G._nx_w = cached
    return cached


def _pop_order(G, s, dist):
    """networkx's Dijkstra pop order of the reached vertices and each one's path parent."""
    ro, ci = _nx_order_csr(G)
    w = _nx_order_weights(G)
    n = dist.size
    src = np.repeat(np.arange(n), np.diff(ro))
    tight = np.isfinite(dist[src]) & (dist[src] + w == dist[ci]) & (ci != s)
    tv, tu, tp = src[tight], ci[tight], (np.arange(ci.size) - ro[src])[tight]
    reached = np.flatnonzero(np.isfinite(dist))
    order = reached[np.argsort(dist[reached], kind="stable")]
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(order.size)
    by_target = np.argsort(rank[tu], kind="stable")
    tv, tu, tp = tv[by_target], tu[by_target], tp[by_target]
    bounds = np.concatenate([[0], np.flatnonzero(np.diff(dist[order])) + 1, [order.size]])
    edge_bounds = np.searchsorted(rank[tu], bounds)
    width = int(np.diff(ro).max(initial=0)) + 1
    for g in np.flatnonzero(np.diff(bounds) > 1):  # ties: by (parent's rank, pos)
        a, b = bounds[g], bounds[g + 1]
        ea, eb = edge_bounds[g], edge_bounds[g + 1]
        key, u = rank[tv[ea:eb]] * width + tp[ea:eb], rank[tu[ea:eb]]
        k = np.lexsort((key, u))
        best = key[k][np.unique(u[k], return_index=True)[1]]  # members in rank order
        members = order[a:b][np.argsort(best, kind="stable")]
        order[a:b] = members
        rank[members] = np.arange(a, b)
    k = np.lexsort((rank[tv], tu))
    first = np.unique(tu[k], return_index=True)[1]
    parent = np.full(n, -1, dtype=np.int64)
    parent[tu[k][first]] = tv[k][first]
    parent[s] = s
    return order, parent


def _dijkstra(G, source, cutoff=None):
    """``(source id, distances, pop order, parents)`` with networkx's cutoff applied."""
    s = G.node_index(source)
    dist = gunpy.sssp(G.graph, s, backend=_device()).distance
    if cutoff is not None:
        dist = np.where(dist <= cutoff, dist, np.inf)
    order, parent = _pop_order(G, s, dist)
    return s, dist, order, parent


def _lengths(G, s, dist, order, parent=None):
    """``{node: length}`` in pop order, of networkx's types (int sums of int weights)."""
    labels = G.nodes
    values = dist[order].tolist()
    if _int_weights(G):
        values = [int(d) for d in values]
    elif parent is not None and _any_int_weight(G):
        values = _typed(G, order, parent, values)
    values[0] = 0
    return dict(zip([labels[v] for v in order.tolist()], values))


def _any_int_weight(G):
    return any(isinstance(d.get(G.weight_attr, 1), int) for *_, d in G.nxg.edges(data=True))


def _typed(G, order, parent, values):
    """Int and float weights mixed: networkx's sum is an int where every weight on the path
    (its parent's path and the last edge) is one."""
    parent = parent.tolist()
    is_int = {int(order[0]): True}
    for v in order[1:].tolist():
        for x in _unbuilt(v, parent, is_int):
            w = _weight(G, parent[x], x)
            is_int[x] = is_int[parent[x]] and isinstance(w, int | np.integer)
    return [values[0]] + [int(d) if is_int[v] else float(d)
                          for v, d in zip(order[1:].tolist(), values[1:])]


def _weight(G, u, v):
    """networkx's weight of edge ``u -> v`` (ids): the attribute, a multigraph's least."""
    labels, attr = G.nodes, G.weight_attr
    e = G.nxg._adj[labels[u]][labels[v]]
    return min(x.get(attr, 1) for x in e.values()) if G.is_multigraph() else e.get(attr, 1)


def _one_source(sources):
    if not sources:
        raise ValueError("sources must not be empty")
    (source,) = set(sources)  # can_run declines several
    return source


def _check_sources(G, sources):
    for s in sources:
        if s not in G:
            raise nx.NodeNotFound(f"Node {s} not found in graph")
    return _one_source(sources)


def multi_source_dijkstra_path_length(G, sources, cutoff=None, weight="weight"):
    source = _check_sources(G, sources)
    s, dist, order, parent = _dijkstra(G, source, cutoff)
    return _lengths(G, s, dist, order, parent)


def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight"):
    return multi_source_dijkstra_path_length(G, {source}, cutoff, weight)


def multi_source_dijkstra(G, sources, target=None, cutoff=None, weight="weight"):
    source = _check_sources(G, sources)
    if target in sources:
        return (0, [target])
    s, dist, order, parent = _dijkstra(G, source, cutoff)
    if target is None:
        return (_lengths(G, s, dist, order, parent), _paths(G, order, parent))
    t = G.index_of(target)
    if t is None or not np.isfinite(dist[t]):
        raise nx.NetworkXNoPath(f"No path to {target}.")
    path = [t]
    while path[-1] != s:  # networkx's pred[v][0] walk, on the parents rebuilt above
        path.append(int(parent[path[-1]]))
    return (_length_to(G, dist, order, parent, t), [G.nodes[v] for v in reversed(path)])


def _length_to(G, dist, order, parent, t):
    """One node's length, of the type networkx's sum along its path has."""
    if _int_weights(G):
        return int(dist[t])
    if not _any_int_weight(G):
        return float(dist[t])
    return _lengths(G, None, dist, order, parent)[G.nodes[t]]


def single_source_dijkstra(G, source, target=None, cutoff=None, weight="weight"):
    return multi_source_dijkstra(G, {source}, target, cutoff, weight)


def multi_source_dijkstra_path(G, sources, cutoff=None, weight="weight"):
    return multi_source_dijkstra(G, sources, cutoff=cutoff, weight=weight)[1]


def single_source_dijkstra_path(G, source, cutoff=None, weight="weight"):
    return multi_source_dijkstra_path(G, {source}, cutoff, weight)


def dijkstra_path(G, source, target, weight="weight"):
    return single_source_dijkstra(G, source, target=target, weight=weight)[1]


def dijkstra_path_length(G, source, target, weight="weight"):
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    if source == target:
        return 0
    return _distance_to(G, source, target,
                        lambda: nx.NetworkXNoPath(f"Node {target} not reachable from {source}"))


def _distance_to(G, source, target, no_path):
    """The length to ``target`` alone (networkx's type); ``no_path()`` raised if unreached."""
    s, t = G.node_index(source), G.index_of(target)
    dist = gunpy.sssp(G.graph, s, backend=_device()).distance
    if t is None or not np.isfinite(dist[t]):
        raise no_path()
    if _int_weights(G) or not _any_int_weight(G):  # one type for every sum: no order needed
        return int(dist[t]) if _int_weights(G) else float(dist[t])
    return _length_to(G, dist, *_pop_order(G, s, dist), t)


# ----------------------------------------------------------------------------- Bellman-Ford
# networkx's Bellman-Ford is a FIFO queue (SPFA). Where every weight is the same positive
# number its queue is BFS's (``_fifo``). Otherwise can_run admits non-negative weights whose
# sums are exact (every simple path's sum a float64 without rounding: dispatch's
# ``_exact_sums``): networkx then ends at the fixpoint ``dist[v] = min dist[u] + w`` that
# gunpy.sssp computes, its ``pred[v]`` holds every tight in-neighbour of v (one whose
# distance plus the edge's weight is v's), and each length is the sum along the path
# through the first of them. Where no vertex has two tight in-edges (``_tight``), the paths
# are unique and gunpy's answer is networkx's; where some have, the paths (and, with int
# and float weights mixed, the lengths' types) depend on networkx's queue: NotImplementedError,
# and networkx runs the call itself. Keys come in distance order (networkx's own order is
# its queue's, which it does not document); dict equality ignores it.
_TIES = ("equal shortest paths (vertices with several tight in-edges): networkx's "
         "Bellman-Ford picks among them by its queue order; left to networkx")


def _same_weight(G):
    """Every weight the same positive number (or none): networkx's queue is BFS's."""
    if G.weight_attr is None:
        return True
    csr = getattr(G, "_csr", None) or _adjacency(G.nxg)
    values = csr.weights(G.weight_attr, 1).distinct
    return len(values) <= 1 and all(x > 0 for x in values)


def _fifo(G, source):
    """networkx's Bellman-Ford where every weight is the same positive number: its FIFO
    queue is then BFS's, each vertex set once, by its first discoverer in queue order;
    ``(source id, order, parent, {node: length})`` in that order, of networkx's types
    (each length its path's sum)."""
    s, depth = _bfs(G, source)
    levels, parent = _queue_order(G, s, depth)
    order = np.concatenate(levels)
    dist = gunpy.sssp(G.graph, s, backend=_device()).distance
    return s, order, parent, _lengths(G, s, dist, order, parent)


def _tight(G, s, dist):
    """``(parent, count)``: each reached vertex's tight in-edges counted (self-loops and the
    source's too) and, where there is one, the neighbour it comes from (-1: none)."""
    ro, ci = _nx_order_csr(G)
    w = _nx_order_weights(G)
    src = np.repeat(np.arange(dist.size), np.diff(ro))
    tight = np.isfinite(dist[src]) & (dist[src] + w == dist[ci])
    count = np.bincount(ci[tight], minlength=dist.size)
    parent = np.full(dist.size, -1, dtype=np.int64)
    parent[ci[tight]] = src[tight]
    parent[s] = s
    return parent, count


def _bellman_ford(G, source, target=None, *, tree=True, source_preds=False):
    """``(source id, distances, order, parent)``: the reached vertices in distance order
    (the source first, equal distances by node order), each one's path parent.

    ``tree``: the parents are used, so equal shortest paths raise NotImplementedError (on
    ``target``'s path only, where one is given); ``source_preds``: the source's tight
    in-edges count too (networkx lists them as its predecessors)."""
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} not in G")
    s = G.node_index(source)
    dist = gunpy.sssp(G.graph, s, backend=_device()).distance
    reached = np.flatnonzero(np.isfinite(dist))
    order = reached[np.lexsort((reached, reached != s, dist[reached]))]
    if not tree:
        return s, dist, order, None
    parent, count = _tight(G, s, dist)
    count[s] = count[s] + 1 if source_preds else 1
    asked = order if target is None else _path_to(G, dist, parent, count, target)
    if (count[asked] != 1).any():  # 0: not a fixpoint gunpy can vouch for
        raise NotImplementedError(_TIES)
    return s, dist, order, parent


def _path_to(G, dist, parent, count, target):
    """The ids from ``target`` up its parents while they are unique ([] if unreached)."""
    t = G.index_of(target)
    if t is None or not np.isfinite(dist[t]):
        return []
    path = [t]
    while parent[path[-1]] != path[-1] and count[path[-1]] == 1:
        path.append(int(parent[path[-1]]))
    return path


def _target(G, s, dist, parent, target, no_path):
    """``(length, path)`` to ``target`` along the parents, the length of networkx's type."""
    t = G.index_of(target)
    if t is None or not np.isfinite(dist[t]):
        raise no_path()
    path = [t]
    while path[-1] != s:
        path.append(int(parent[path[-1]]))
    path.reverse()
    if _int_weights(G):
        length = int(dist[t])
    elif all(isinstance(_weight(G, u, v), int | np.integer) for u, v in zip(path, path[1:])):
        length = int(dist[t])
    else:
        length = float(dist[t])
    return length, [G.nodes[v] for v in path]


def _bf_lengths(G, source):
    """``(source id, order, parent or None, {node: length})``; parents only where the
    lengths' types need them (int and float weights mixed)."""
    mixed = not _int_weights(G) and _any_int_weight(G)
    s, dist, order, parent = _bellman_ford(G, source, tree=mixed)
    return s, order, parent, _lengths(G, s, dist, order, parent)


def single_source_bellman_ford_path_length(G, source, weight="weight"):
    if _same_weight(G):
        if source not in G:
            raise nx.NodeNotFound(f"Source {source} not in G")
        return _fifo(G, source)[3]
    return _bf_lengths(G, source)[3]


def single_source_bellman_ford(G, source, target=None, weight="weight"):
    if source == target:
        if source not in G:
            raise nx.NodeNotFound(f"Node {source} is not found in the graph")
        return (0, [source])
    def no_path():  # networkx's _build_paths_from_predecessors
        return nx.NetworkXNoPath(f"Target {target} cannot be reached from given sources")
    if not _same_weight(G):
        s, dist, order, parent = _bellman_ford(G, source, target)
        if target is not None:
            return _target(G, s, dist, parent, target, no_path)
        return _lengths(G, s, dist, order, parent), _paths(G, order, parent)
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} not in G")
    s, order, parent, dist = _fifo(G, source)
    if target is None:
        return dist, _paths(G, order, parent)
    if target not in dist:
        raise no_path()
    path = [G.node_index(target)]
    while path[-1] != s:
        path.append(int(parent[path[-1]]))
    return dist[target], [G.nodes[v] for v in reversed(path)]


def single_source_bellman_ford_path(G, source, weight="weight"):
    return single_source_bellman_ford(G, source, weight=weight)[1]


def bellman_ford_path(G, source, target, weight="weight"):
    return single_source_bellman_ford(G, source, target, weight=weight)[1]


def bellman_ford_predecessor_and_distance(G, source, target=None, weight="weight",
                                          heuristic=False):
    """Every tight predecessor of each node: with every weight the same, networkx's
    ``predecessor`` lists (the BFS parents one level up) in its queue order; otherwise
    each node's one parent (equal paths: NotImplementedError), keys in distance order."""
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} is not found in the graph")
    if _same_weight(G):
        return predecessor(G, source), _fifo(G, source)[3]
    s, dist, order, parent = _bellman_ford(G, source, source_preds=True)
    labels = G.nodes
    pred = {labels[v]: [labels[p]] for v, p in zip(order.tolist(), parent[order].tolist())}
    pred[labels[s]] = []
    return pred, _lengths(G, s, dist, order, parent)


def bellman_ford_path_length(G, source, target, weight="weight"):
    if source == target:
        if source not in G:
            raise nx.NodeNotFound(f"Node {source} not found in graph")
        return 0
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} not in G")
    def no_path():
        return nx.NetworkXNoPath(f"node {target} not reachable from {source}")
    if _int_weights(G) or not _any_int_weight(G):  # one type for every sum: no paths needed
        return _distance_to(G, source, target, no_path)
    if _same_weight(G):
        dist = _fifo(G, source)[3]
        if target not in dist:
            raise no_path()
        return dist[target]
    s, dist, _, parent = _bellman_ford(G, source, target)
    return _target(G, s, dist, parent, target, no_path)[0]


# ----------------------------------------------------------------------------- generic
def shortest_path(G, source=None, target=None, weight=None, method="dijkstra"):
    # can_run: a source (a target too, but for weighted Dijkstra's bidirectional search)
    if method not in ("dijkstra", "bellman-ford"):
        raise ValueError(f"method not supported: {method}")
    if weight is None:
        if target is not None:  # networkx's bidirectional search's path
            return bidirectional_shortest_path(G, source, target)
        return single_source_shortest_path(G, source)
    if method == "bellman-ford":
        if target is not None:
            return bellman_ford_path(G, source, target, weight)
        return single_source_bellman_ford_path(G, source, weight=weight)
    return single_source_dijkstra_path(G, source, weight=weight)


def shortest_path_length(G, source=None, target=None, weight=None, method="dijkstra"):
    # can_run: a source (a target too where lengths are asked of one pair)
    if method not in ("dijkstra", "bellman-ford"):
        raise ValueError(f"method not supported: {method}")
    if target is None:
        if weight is None:
            return single_source_shortest_path_length(G, source)
        if method == "dijkstra":
            return single_source_dijkstra_path_length(G, source, weight=weight)
        return single_source_bellman_ford_path_length(G, source, weight=weight)
    if weight is None:
        for kind, node in (("Source", source), ("Target", target)):
            if node not in G:  # networkx's bidirectional_shortest_path's errors
                raise nx.NodeNotFound(f"{kind} {node} is not in G")
        depth = _bfs(G, source)[1][G.node_index(target)]
        if depth < 0:
            raise nx.NetworkXNoPath(f"No path between {source} and {target}.")
        return int(depth)
    if method == "dijkstra":
        return dijkstra_path_length(G, source, target, weight)
    return bellman_ford_path_length(G, source, target, weight)
