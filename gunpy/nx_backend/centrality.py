"""Centrality and link analysis: betweenness (gunpy.bc), PageRank, HITS."""

import networkx as nx

import gunpy

from ._graph import _device

def betweenness_centrality(G, k=None, normalized=True, weight=None, endpoints=False,
                           seed=None):
    r = gunpy.bc(G.graph, normalized=normalized, backend=_device())
    values = r.centrality.tolist()
    return {v: float(x) for v, x in zip(G.nodes, values)}


def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-6, nstart=None,
             weight="weight", dangling=None):
    if len(G) == 0:
        return {}
    if personalization is not None and not sum(personalization.get(v, 0) for v in G.nodes):
        raise ZeroDivisionError  # networkx's, for a restart vector summing to 0
    r = gunpy.pagerank(G.graph, alpha=alpha, personalization=personalization, tol=tol,
                       max_iter=max_iter, dangling=dangling, backend=_device())
    if not r.converged:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return {v: float(x) for v, x in zip(G.nodes, r.rank.tolist())}


def hits(G, max_iter=100, tol=1.0e-8, nstart=None, normalized=True):
    if len(G) == 0:
        return {}, {}
    if max_iter <= 0:  # networkx's own test, before any iteration
        raise nx.PowerIterationFailedConvergence(max_iter)
    weighted = getattr(G, "_weighted", None)  # the "weight" attribute (1 where missing)
    if weighted is None:
        weighted = G._weighted = gunpy.Graph.from_networkx(G.nxg, weight="weight",
                                                           remove_self_loops=False)
    r = gunpy.hits(weighted, max_iter=max_iter, tol=tol, backend=_device())
    if not r.converged:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return (dict(zip(G.nodes, r.hubs.tolist())), dict(zip(G.nodes, r.authorities.tolist())))
