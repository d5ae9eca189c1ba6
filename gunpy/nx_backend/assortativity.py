"""Degree assortativity by node: networkx's average neighbour degree and average degree
connectivity from gunpy.spmv products of the degree vectors.

Each node's sum of its neighbours' degrees (weighted: each times the edge's weight) is one
row of ``A @ t`` (successors) or ``A^T @ t`` (predecessors) for the target degrees ``t``;
the degrees are ``A @ 1`` and ``A^T @ 1`` (a self-loop twice where undirected, as networkx
counts it). Unweighted and integer-weighted sums are integers, so the answers are
networkx's to the bit; float weights' sums are taken in another order (an ulp or so).
"""

import networkx as nx
import numpy as np

import gunpy

from ._graph import _adjacency, _device, _edge_rows
from .centrality import _transpose


def _product(graph, x):
    return gunpy.spmv(graph, np.asarray(x, dtype=np.float64), backend=_device()).y


def _pattern(G, graph):
    """``graph``'s unweighted twin (the same arrays, no values)."""
    if graph.values is None:
        return graph
    return gunpy.Graph(graph.row_offsets, graph.column_indices, None,
                       directed=graph.directed, _trusted=True)


def _loops(G, weighted):
    """Each vertex's self-loop (its weight, or 1; 0 where none), for undirected degrees."""
    g = G.graph
    src = _edge_rows(g.row_offsets)
    at = np.flatnonzero(src == np.asarray(g.column_indices))
    loops = np.zeros(len(G))
    loops[src[at]] = np.asarray(g.values)[at] if weighted and g.values is not None else 1
    return loops


def _degrees(G, which, weighted):
    """networkx's ``in`` / ``out`` / ``in+out`` degrees (undirected: ``G.degree``)."""
    g = G.graph if weighted else _pattern(G, G.graph)
    ones = np.ones(len(G))
    if not G.is_directed():
        return _product(g, ones) + _loops(G, weighted)
    out = _product(g, ones) if "out" in which else 0
    into = _product(_transpose(G) if weighted else _pattern(G, _transpose(G)), ones) \
        if "in" in which else 0
    return out + into


def _check(G, source, target, allowed):
    if G.is_directed():
        for name, value in (("source", source), ("target", target)):
            if value not in ("in", "out", "in+out"):
                return name, value
    elif source != allowed or target != allowed:
        raise nx.NetworkXError("source and target arguments are only supported for directed "
                               "graphs")
    return None


def _neighbour_sums(G, direction, t, weighted):
    """Each node's sum of ``t`` over its successors (``out``) / predecessors (``in``),
    each term times the edge's weight where ``weighted``."""
    if not G.is_directed():
        direction = "out"
    g = G.graph if direction == "out" else _transpose(G)
    return _product(g if weighted else _pattern(G, g), t)


def average_neighbor_degree(G, source="out", target="out", nodes=None, weight=None):
    bad = _check(G, source, target, "out")
    if bad is not None:
        raise nx.NetworkXError(f"{bad[0]} argument {bad[1]} must be 'in', 'out' or 'in+out'")
    weighted = weight is not None
    t = _degrees(G, target, False)
    sums = 0
    for direction in ("out", "in"):
        if direction in source or not G.is_directed():
            sums = sums + _neighbour_sums(G, direction, t, weighted)
            if not G.is_directed():
                break
    deg = _degrees(G, source, weighted)
    with np.errstate(divide="ignore", invalid="ignore"):
        avg = np.where(deg == 0, 0.0, sums / np.where(deg == 0, 1, deg))
    if nodes is None:
        return dict(zip(G.nodes, avg.tolist()))
    ids = [G.node_index(v) for v in G.nxg.nbunch_iter(nodes)]
    return {G.nodes[i]: x for i, x in zip(ids, avg[ids].tolist())}


def average_degree_connectivity(G, source="in+out", target="in+out", nodes=None,
                                weight=None):
    """networkx's sums grouped by each source node's degree ``k``, in its node order:
    ``dsum[k]`` the nodes' neighbour-degree sums, ``dnorm[k]`` their (weighted) degrees
    (can_run: integer weights, so every sum is an exact integer)."""
    if G.is_directed():
        if source not in ("in", "out", "in+out"):
            raise nx.NetworkXError('source must be one of "in", "out", or "in+out"')
        if target not in ("in", "out", "in+out"):
            raise nx.NetworkXError('target must be one of "in", "out", or "in+out"')
    else:
        _check(G, source, target, "in+out")
    weighted = weight is not None
    t = _degrees(G, target, False)
    s = _neighbour_sums(G, "in" if source == "in" else "out", t, weighted)
    k = _degrees(G, source, False).astype(np.int64)
    norm = _degrees(G, source, weighted)
    if nodes is None:
        ids = np.arange(len(G))
    elif nodes in G.nxg:
        ids = np.array([G.node_index(nodes)])
    else:
        ids = np.array([G.node_index(v) for v in G.nxg.nbunch_iter(nodes)], dtype=np.int64)
    k, s, norm = k[ids], s[ids].astype(np.int64), norm[ids].astype(np.int64)
    keys, first, at = np.unique(k, return_index=True, return_inverse=True)
    dsum = np.zeros(keys.size, np.int64)
    dnorm = np.zeros(keys.size, np.int64)
    np.add.at(dsum, at, s)
    np.add.at(dnorm, at, norm)
    order = np.argsort(first, kind="stable")  # networkx's dict: degrees first seen first
    return {key: (a / b if b else a) for key, a, b in
            zip(keys[order].tolist(), dsum[order].tolist(), dnorm[order].tolist())}


def _checks(p):
    """Why gunpy leaves average_neighbor_degree / average_degree_connectivity to networkx."""
    from .dispatch import _facts
    g, w = p["nxg"], p["weight"]
    if g is not None and g.is_multigraph():
        return "multigraphs are left to networkx"
    connectivity = p["_name"] == "average_degree_connectivity"
    if not connectivity and g is not None and p["nodes"] is not None and p["nodes"] in g:
        return "nodes= a single node (networkx raises TypeError) is left to networkx"
    if w is not None and g is not None:
        f = _facts(g, w)
        if not (f.numeric and f.python) or f.nan or f.most * max(f.count, 1) > 2 ** 53:
            return "NaN, infinite, large, NumPy or non-numeric weights are left to networkx"
        ints = all(t is int for t in _adjacency(g).weights(w, 1).types)
        if connectivity and not ints:
            return ("average_degree_connectivity with non-integer weights (networkx's sums' "
                    "order and types) is left to networkx")
