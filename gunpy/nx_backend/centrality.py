"""Centrality and link analysis: betweenness (gunpy.bc), PageRank, HITS; closeness,
harmonic centrality and eccentricity (a BFS or SSSP a node).

The last three run networkx's own loop over the path-length dicts gunpy's BFS and SSSP
give (networkx's keys in networkx's order), so every sum is taken in networkx's order
and the floats are networkx's to the bit.
"""

import math
import sys

import networkx as nx
import numpy as np

import gunpy

from ._graph import _device, _edge_rows, _nx_order_csr, _reversed, convert_from_nx
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
        sigma, delta = problem.to_host(problem.sigma), problem.to_host(problem.dependency)
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


# ----------------------------------------------------------------------------- spectral
def _transpose(G):
    """``A^T`` as a gunpy graph (row v: v's in-edges, with their weights), so that
    ``gunpy.spmv(_transpose(G), x)[v]`` is networkx's ``sum of x[u] * w(u, v)`` over u -> v;
    an undirected graph is its own."""
    g = G.graph
    if not g.directed:
        return g
    cached = getattr(G, "_transposed", None)
    if cached is None:
        c = g.csc()
        values = None if g.values is None else np.asarray(g.values)[c.in_edge_ids]
        cached = G._transposed = gunpy.Graph(c.in_offsets, c.in_indices, values,
                                             directed=True, _trusted=True)
    return cached


def _start(G, nstart):
    """The start vector in node order, and the order of the answer's keys (nstart's)."""
    if nstart is None:
        return None, G.nodes
    x = np.array([nstart[v] for v in G.nodes], dtype=np.float64)
    return x, list(nstart)


def eigenvector_centrality(G, max_iter=100, tol=1.0e-6, nstart=None, weight=None):
    """networkx's power iteration ``x <- (x + A^T x) / |x + A^T x|`` (gunpy.spmv over the
    transpose), its start ``nstart / sum(nstart)`` (ones) and its test: the change's
    1-norm under ``n * tol``. can_run: nstart, if given, has a number for every node and
    no other key; real finite Python weights."""
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("cannot compute centrality for the null graph")
    x, keys = _start(G, nstart)
    if x is None:
        x = np.ones(len(G))
    if not x.any():
        raise nx.NetworkXError("initial vector cannot have all zero values")
    total = sum(nstart.values()) if nstart is not None else len(G)
    if not total:
        raise ZeroDivisionError("division by zero")  # networkx's, for a start summing to 0
    x = x / total
    at = None if keys is G.nodes else np.array([G.node_index(v) for v in keys])
    AT = _transpose(G)
    n = len(G)
    for _ in range(max_iter):
        last = x
        x = last + gunpy.spmv(AT, last, backend=_device()).y
        x = x / (math.hypot(*x.tolist()) or 1)
        if np.abs(x - last).sum() < n * tol:
            break
    else:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return dict(zip(keys, (x if at is None else x[at]).tolist()))


def katz_centrality(G, alpha=0.1, beta=1.0, max_iter=1000, tol=1.0e-6, nstart=None,
                    normalized=True, weight=None):
    """networkx's iteration ``x <- alpha A^T x + beta`` from ``nstart`` (zeros), gunpy.spmv
    over the transpose, its test (the change's 1-norm under ``n * tol``) and its scaling
    (by ``1 / |x|``). can_run: beta a number or a dict of one for every node, nstart as
    for eigenvector_centrality, real finite Python weights."""
    if len(G) == 0:
        return {}
    n = len(G)
    try:
        b = float(beta)
    except (TypeError, ValueError, AttributeError) as err:
        if set(beta) != set(G.nxg):
            raise nx.NetworkXError("beta dictionary must have a value for every node") \
                from err
        b = np.array([beta[v] for v in G.nodes], dtype=np.float64)
    x, keys = _start(G, nstart)
    if x is None:
        x = np.zeros(n)
    at = None if keys is G.nodes else np.array([G.node_index(v) for v in keys])
    AT = _transpose(G)
    for _ in range(max_iter):
        last = x
        x = alpha * gunpy.spmv(AT, last, backend=_device()).y + b
        if np.abs(x - last).sum() < n * tol:
            break
    else:
        raise nx.PowerIterationFailedConvergence(max_iter)
    if normalized:
        norm = math.hypot(*x.tolist())
        x = x * (1.0 / norm if norm else 1.0)
    return dict(zip(keys, (x if at is None else x[at]).tolist()))


def _spectral(p):
    """Why eigenvector / katz centrality is left to networkx (None: gunpy runs it)."""
    from .dispatch import _facts
    g, w = p["nxg"], p["weight"]
    if p["nstart"] is not None and not isinstance(p["nstart"], dict):
        return "nstart not a dict is left to networkx"
    for key in ("nstart", "beta"):
        values = p.get(key)
        if not isinstance(values, dict):
            continue
        if g is not None and (len(values) != len(g) or not all(v in g for v in values)):
            if key == "beta":  # networkx raises NetworkXError, as gunpy does
                continue
            return f"{key} without a value for every node (or with others) is left to networkx"
        if not all(type(v) in (int, float) and math.isfinite(v) for v in values.values()):
            return f"{key} with non-finite or non-Python numbers is left to networkx"
    if type(p.get("alpha", 0.1)) not in (int, float) or (
            isinstance(p.get("beta"), dict) and type(p["alpha"]) is int):
        return ("alpha not a Python float (an int with a beta dict: the answer's types) is "
                "left to networkx")
    if p.get("beta") is not None and not isinstance(p["beta"], dict) and (
            type(p["beta"]) not in (int, float) or not math.isfinite(p["beta"])):
        return "beta not a finite Python number is left to networkx"
    if w is not None and g is not None:
        f = _facts(g, w)
        if not (f.numeric and f.python) or f.nan or \
                f.most > sys.float_info.max / max(len(g), 1):
            return "NaN, infinite, NumPy or non-numeric weights are left to networkx"


# ----------------------------------------------------------------------------- voterank
def _voters(G):
    """Each node's voters (whose ability its vote adds), in the order networkx's
    ``G.edges()`` loop adds them, with the row each lands in: directed, its successors in
    adjacency order; undirected, first the neighbours before it in node order (their edges
    come first), then its own adjacency's later ones (a self-loop twice). Returned as
    ``[(rows, voters)]`` by position in the row, so that a round sums each row left to
    right, as networkx's floats do."""
    ro, ci = _nx_order_csr(G)
    n = len(G)
    src = _edge_rows(ro)
    pos = np.arange(ci.size) - ro[src]
    if G.is_directed():
        rows, voters, key = src, ci, pos
    else:
        early = ci < src
        loop = ci == src
        rows = np.concatenate([src, src[loop]])
        voters = np.concatenate([ci, ci[loop]])
        # before: the neighbour's node order; own: after every earlier one, by position
        key = np.concatenate([np.where(early, ci, n + 2 * pos), n + 2 * pos[loop] + 1])
    k = np.lexsort((key, rows))
    rows, voters = rows[k], voters[k]
    starts = np.searchsorted(rows, np.arange(n))
    place = np.arange(rows.size) - starts[rows]
    by = np.argsort(place, kind="stable")
    cuts = np.searchsorted(place[by], np.arange(place.max(initial=-1) + 2))
    return [(rows[by[a:b]], voters[by[a:b]]) for a, b in zip(cuts, cuts[1:])]


def voterank(G, number_of_nodes=None):
    """networkx's VoteRank: each round every node's vote is the sum of its voters'
    abilities (:func:`_voters`' order, so the floats and their ties are networkx's), the
    elected (the first largest in node order) loses its ability and its (out-)neighbours
    1 / average degree of theirs."""
    elected = []
    if len(G) == 0:
        return elected
    if number_of_nodes is None or number_of_nodes > len(G):
        number_of_nodes = len(G)
    ro, ci = _nx_order_csr(G)
    degree = np.diff(ro) + (0 if G.is_directed() else _self_loops(G))  # networkx's degrees
    average = int(degree.sum()) / len(G)
    voters = _voters(G)
    ability = np.ones(len(G))
    for _ in range(number_of_nodes):
        vote = np.zeros(len(G))
        for rows, who in voters:
            vote[rows] += ability[who]
        vote[elected] = 0
        n = int(np.argmax(vote))
        if vote[n] == 0:
            return [G.nodes[v] for v in elected]
        elected.append(n)
        ability[n] = 0
        nbrs = ci[ro[n]:ro[n + 1]]
        ability[nbrs] = np.maximum(ability[nbrs] - 1 / average, 0)
    return [G.nodes[v] for v in elected]
