"""Centrality and link analysis: betweenness (gunpy.bc), PageRank, HITS; closeness,
harmonic centrality and eccentricity (a BFS or SSSP a node).

The last three run networkx's own loop over the path-length dicts gunpy's BFS and SSSP
give (networkx's keys in networkx's order), so every sum is taken in networkx's order
and the floats are networkx's to the bit.
"""

import math

import networkx as nx
import numpy as np

import gunpy

from ._graph import _device, _nx_order_csr, _reversed, convert_from_nx
from .paths import single_source_dijkstra_path_length, single_source_shortest_path_length

def betweenness_centrality(G, k=None, normalized=True, weight=None, endpoints=False,
                           seed=None):
    # weight: can_run let through positive finite weights only (networkx converted the
    # graph with them): weighted Brandes over the tight edges of gunpy.sssp's distances
    weighted = weight is not None
    if k is not None and k != len(G):
        return _sampled_betweenness(G, k, normalized, seed, weighted)
    r = gunpy.bc(G.graph, normalized=normalized, weighted=weighted, backend=_device())
    values = r.centrality.tolist()
    return {v: float(x) for v, x in zip(G.nodes, values)}


def _sampled_betweenness(G, k, normalized, seed, weighted=False):
    """``k`` sources drawn as networkx draws them (``seed``: the ``random.Random`` networkx's
    ``py_random_state`` made of the call's seed, weighted or not), gunpy.bc from them,
    networkx's rescaling of sampled values (sources and the other nodes scaled apart)."""
    nodes = seed.sample(list(G.nodes), k)
    n = len(G)
    r = gunpy.bc(G.graph, [G.node_index(v) for v in nodes], normalized=False,
                 weighted=weighted, backend=_device())
    raw = r.centrality * (2.0 if not G.is_directed() and n >= 3 else 1.0)  # bc's halving
    N = n - 1
    if N >= 2:
        correction = 1 if G.is_directed() else 2
        if normalized:
            source = 1 / ((k - 1) * (N - 1)) if k > 1 else math.nan
            other = 1 / (k * (N - 1))
        else:
            source = N / ((k - 1) * correction) if k > 1 else math.nan
            other = N / (k * correction)
        scale = np.full(n, other)
        scale[[G.node_index(v) for v in nodes]] = source
        raw = raw * scale
    return dict(zip(G.nodes, raw.tolist()))


def edge_betweenness_centrality(G, k=None, normalized=True, weight=None, seed=None):
    """networkx's edge betweenness: Brandes's forward phase and dependencies from
    gunpy.bc's problem (one source at a time: its ``depth``, ``sigma`` and ``delta``), each
    tight edge ``(v, w)`` (``w`` one level below ``v``) adding networkx's
    ``sigma[v] * ((1 + delta[w]) / sigma[w])``, sources in networkx's order (``k`` drawn
    as networkx draws them), then networkx's rescaling (``endpoints=True``). With a
    ``weight`` (positive and finite: can_run), weighted BC's problem: its ``distance``,
    ``sigma`` and ``dependency``, and an edge is tight when ``distance[v] + weight ==
    distance[w]``."""
    nodes = G.nodes if k is None else seed.sample(list(G.nodes), k)
    ro, ci = _nx_order_csr(G)  # networkx's adjacency: G.edges() is its rows, each edge once
    src = np.repeat(np.arange(len(G.nodes)), np.diff(ro))
    keep = slice(None) if G.is_directed() else ci >= src
    u, v = src[keep], ci[keep]
    score = np.zeros(u.size)
    pairs = ((u, v), (v, u)) if not G.is_directed() else ((u, v),)
    run = _weighted_brandes(G, pairs) if weight is not None else _brandes(G)
    for s in nodes:
        for (a, b), (tight, sigma, delta) in zip(pairs, run(G.node_index(s), pairs)):
            x, y = a[tight], b[tight]
            score[tight] += sigma[x] * ((1 + delta[y]) / sigma[y])
    n = len(G.nodes)
    if n >= 2:
        K = n if k is None else k
        score *= 1 / (K * (n - 1)) if normalized else n / (K * (1 if G.is_directed() else 2))
    labels = G.nodes
    return dict(zip(zip([labels[x] for x in u.tolist()], [labels[x] for x in v.tolist()]),
                    score.tolist()))


def _brandes(G):
    """``run(source, pairs)``: per ``(a, b)`` edge arrays, which edges are tight (``b``
    one level below ``a``), with the run's ``sigma`` and ``delta``."""
    from gunpy.primitives.bc import BCEnactor, BCProblem
    problem = BCProblem(G.graph, backend=_device())
    enactor = BCEnactor(problem)

    def run(source, pairs):
        problem.reset(source)
        enactor.enact()
        depth = problem.to_host(problem.depth).astype(np.int64)
        sigma, delta = problem.to_host(problem.sigma), problem.to_host(problem.delta)
        return [((depth[a] >= 0) & (depth[b] == depth[a] + 1), sigma, delta) for a, b in pairs]
    return run


def _weighted_brandes(G, pairs):
    """:func:`_brandes` by weight: ``a -> b`` tight when ``distance[a] + w == distance[b]``
    (the weights of the pairs' edges looked up once)."""
    from gunpy.primitives.bc_weighted import WeightedBCEnactor, WeightedBCProblem
    problem = WeightedBCProblem(G.graph, backend=_device())
    enactor = WeightedBCEnactor(problem)
    A = G.graph.to_scipy().tocsr()
    weights = [np.asarray(A[a, b]).ravel() for a, b in pairs]

    def run(source, pairs):
        problem.reset(source)
        enactor.enact()
        dist = problem.to_host(problem.distance)
        sigma, delta = problem.to_host(problem.sigma), problem.to_host(problem.dependency)
        return [(np.isfinite(dist[a]) & (dist[a] + w == dist[b]), sigma, delta)
                for (a, b), w in zip(pairs, weights)]
    return run


def _degree_centrality(G, degrees):
    if len(G) <= 1:
        return {n: 1 for n in G.nodes}
    s = 1.0 / (len(G) - 1.0)
    return dict(zip(G.nodes, (degrees * s).tolist()))  # int * float, as networkx's d * s


def _self_loops(G):
    g = G.graph
    src = np.repeat(np.arange(g.num_vertices), np.diff(g.row_offsets))
    return np.bincount(src[src == g.column_indices], minlength=g.num_vertices)


def _out_degrees(graph):
    """``A @ 1``: gunpy.spmv of ones over the graph's pattern (its row lengths)."""
    if graph.values is not None:  # a weighted conversion: the pattern's sums are the lengths
        return np.diff(graph.row_offsets)
    return gunpy.spmv(graph, backend=_device()).y.astype(np.int64)


def _in_degrees(G):
    from gunpy.primitives.scc import reverse_graph
    return _out_degrees(reverse_graph(G.graph))


def degree_centrality(G):
    # can_run: no multigraphs (gunpy's graph holds a parallel edge once); a self-loop is
    # stored once, and counts twice in networkx's undirected degree
    g = G.graph
    degrees = _out_degrees(g) + (_in_degrees(G) if g.directed else _self_loops(G))
    return _degree_centrality(G, degrees)


def in_degree_centrality(G):
    if not G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for undirected type")
    return _degree_centrality(G, _in_degrees(G))


def out_degree_centrality(G):
    if not G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for undirected type")
    return _degree_centrality(G, _out_degrees(G.graph))


def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-6, nstart=None,
             weight="weight", dangling=None):
    if len(G) == 0:
        return {}
    if personalization is not None and not sum(personalization.get(v, 0) for v in G.nodes):
        raise ZeroDivisionError  # networkx's, for a restart vector summing to 0
    r = gunpy.pagerank(G.graph, alpha=alpha, personalization=personalization, tol=tol,
                       max_iter=max_iter, dangling=dangling, nstart=nstart, backend=_device())
    if not r.converged:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return {v: float(x) for v, x in zip(G.nodes, r.rank.tolist())}


def hits(G, max_iter=100, tol=1.0e-8, nstart=None, normalized=True):
    if len(G) == 0:
        return {}, {}
    if max_iter <= 0:  # networkx's own test, before any iteration
        raise nx.PowerIterationFailedConvergence(max_iter)
    # the "weight" attribute (1 where missing) as networkx's float64 matrix has it (networkx
    # converts a call with it: preserve_edge_attrs)
    if G.weight_attr != "weight":
        G = convert_from_nx(G.nxg, edge_attrs={"weight": 1})
    r = gunpy.hits(G.graph, max_iter=max_iter, tol=tol, backend=_device())
    if not r.converged:  # networkx's ARPACK may converge where the power iteration does not
        raise NotImplementedError(f"gunpy's power iteration did not converge in {max_iter} "
                                  "iterations: left to networkx's ARPACK")
    return (dict(zip(G.nodes, r.hubs.tolist())), dict(zip(G.nodes, r.authorities.tolist())))


def _path_lengths(G, weight):
    if weight is None:
        return single_source_shortest_path_length
    return lambda G, n: single_source_dijkstra_path_length(G, n, weight=weight)


def closeness_centrality(G, u=None, distance=None, wf_improved=True):
    path_length = _path_lengths(G, distance)
    nodes = G.nodes if u is None else [u]
    H = _reversed(G) if G.is_directed() else G  # networkx: distances to each node
    closeness = {}
    for n in nodes:
        sp = path_length(H, n)
        totsp = sum(sp.values())
        len_G = len(G)
        value = 0.0
        if totsp > 0.0 and len_G > 1:
            value = (len(sp) - 1.0) / totsp
            if wf_improved:
                value *= (len(sp) - 1.0) / (len_G - 1)
        closeness[n] = value
    return closeness if u is None else closeness[u]


def harmonic_centrality(G, nbunch=None, distance=None, sources=None):
    g = G.nxg
    nbunch = set(g.nbunch_iter(nbunch) if nbunch is not None else g.nodes)
    sources = set(g.nbunch_iter(sources) if sources is not None else g.nodes)
    centrality = {u: 0 for u in nbunch}
    transposed = len(nbunch) < len(sources)
    if transposed:
        nbunch, sources = sources, nbunch
        G = _reversed(G) if G.is_directed() else G
    path_length = _path_lengths(G, distance)
    for v in sources:
        dist = path_length(G, v)
        for u, d_uv in dist.items():
            if d_uv != 0 and u in nbunch:  # self-loops and 0 weights left out, as networkx
                centrality[v if transposed else u] += 1 / d_uv
    return centrality


def eccentricity(G, v=None, sp=None, weight=None):
    path_length = _path_lengths(G, weight)
    order = len(G)
    e = {}
    for n in G.nxg.nbunch_iter(v):
        length = path_length(G, n)
        if len(length) != order:
            kind = "digraph is not strongly" if G.is_directed() else "graph is not"
            raise nx.NetworkXError(f"Found infinite path length because the {kind} connected")
        e[n] = max(length.values())
    return e[v] if v in G else e
