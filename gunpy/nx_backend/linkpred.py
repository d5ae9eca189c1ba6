"""Link prediction: networkx's scores of node pairs from gunpy's intersect operator.

networkx's functions return a generator of ``(u, v, score)`` over ``ebunch`` (every non-edge,
in ``nx.non_edges``' order, where it is None); each score is a reduction over the common
neighbours ``N(u) & N(v) - {u, v}``. Here the pairs are taken in chunks of
:data:`CHUNK` (so the generator stays lazy, as networkx's, and memory bounded): each chunk
becomes a mask graph, one edge per distinct pair, and :func:`gunpy.operators.intersect`
merges the two sorted neighbour lists of each of its edges in the converted graph, the
functor counting each common neighbour (the ends excluded) and adding ``1 / degree`` and
``1 / log(degree)`` of it (networkx's degrees: a self-loop counts twice); the operator's
``counts`` gives the whole intersection, which Jaccard's union needs. Sums are taken in
the merge's order (increasing vertex id), networkx's in its set's order: the floats agree
to an ulp or two (networkx's tests compare them to 1e-7). Directed graphs and multigraphs
raise networkx's NetworkXNotImplemented before the call reaches gunpy.
"""

import itertools
import math
from collections import namedtuple

import networkx as nx
import numpy as np

import gunpy
from gunpy.graph import _index_dtype
from gunpy.operators import Context, intersect

from ._graph import _bfs, _device, _edge_rows

#: pairs scored per intersect call
CHUNK = 1 << 16

_Data = namedtuple("_Data", "degree inv_degree inv_log common ra aa one")


class _Scores(gunpy.Functor):
    """Per mask edge ``e = (u, v)``: the common neighbours other than ``u`` and ``v``, the
    sums of their ``1 / degree`` and ``1 / log(degree)``, and whether one has degree 1
    (networkx's ``1 / log(1)`` raises ZeroDivisionError)."""

    @staticmethod
    def apply_intersection(src, dst, edge, common, src_edge, dst_edge, data):
        if common != src and common != dst:
            data.common[edge] += 1
            data.ra[edge] += data.inv_degree[common]
            data.aa[edge] += data.inv_log[common]
            if data.degree[common] == 1:
                data.one[edge] = 1


def _degrees(G):
    """networkx's degrees (a self-loop counted twice), the distinct-neighbour counts and
    each vertex's ``1 / degree`` and ``1 / log(degree)``, kept on the converted graph."""
    cached = getattr(G, "_lp_degrees", None)
    if cached is None:
        g = G.graph
        ro = np.asarray(g.row_offsets, dtype=np.int64)
        ci = np.asarray(g.column_indices, dtype=np.int64)
        rows = np.diff(ro)
        src = _edge_rows(ro)
        degree = rows + np.bincount(src[ci == src], minlength=rows.size)
        # math.log, as networkx's (once a distinct degree): NumPy's log may round otherwise
        values, at = np.unique(degree, return_inverse=True)
        logs = np.array([math.log(d) if d > 0 else -math.inf for d in values.tolist()])
        with np.errstate(divide="ignore"):
            inv_log = (1 / logs)[at] if values.size else np.zeros(0)
            cached = G._lp_degrees = (degree, rows, 1 / degree.astype(np.float64), inv_log)
    return cached


def _score_chunk(G, u, v):
    """``(common, whole, ra, aa, one)`` for the id pairs ``u[i], v[i]``: the common
    neighbours less the ends, the whole intersection, the two sums and the degree-1 flag."""
    n = len(G)
    degree, _, inv_degree, inv_log = _degrees(G)
    keys = u * n + v
    uniq, back = np.unique(keys, return_inverse=True)
    ro = np.searchsorted(uniq // n, np.arange(n + 1)).astype(np.int64)
    dtype = _index_dtype(n)
    mask = gunpy.Graph(ro.astype(dtype), (uniq % n).astype(dtype), None, directed=True,
                       _trusted=True)
    m = uniq.size
    ctx = Context(mask, _device())
    put = ctx.backend.asarray  # the operator's arrays on its backend (host arrays on the CPU)
    data = _Data(put(degree), put(inv_degree), put(inv_log), put(np.zeros(m, np.int64)),
                 put(np.zeros(m)), put(np.zeros(m)), put(np.zeros(m, np.int64)))
    whole = put(np.zeros(m, np.int64))
    intersect(mask, _Scores, data, left=G.graph, right=G.graph, counts=whole, context=ctx)
    get = ctx.backend.to_host
    return (get(data.common)[back], get(whole)[back], get(data.ra)[back], get(data.aa)[back],
            get(data.one)[back].astype(bool))


def _pairs(G, ebunch):
    """networkx's pairs: ``ebunch`` checked node by node first (as networkx does, which
    consumes an iterator), or every non-edge in ``nx.non_edges``' order."""
    g = G.nxg
    if ebunch is None:
        return nx.non_edges(g)
    for a, b in ebunch:
        if a not in g:
            raise nx.NodeNotFound(f"Node {a} not in G.")
        if b not in g:
            raise nx.NodeNotFound(f"Node {b} not in G.")
    return ebunch


def _predict(G, ebunch, score):
    """The generator of ``(u, v, score)``: ``score(G, pairs, u ids, v ids)`` gives a
    chunk's values as a list (it may end short, with an exception to raise after them)."""
    pairs = iter(_pairs(G, ebunch))
    index = G.node_index

    def scores():
        while chunk := list(itertools.islice(pairs, CHUNK)):
            u = np.fromiter((index(a) for a, _ in chunk), np.int64, len(chunk))
            v = np.fromiter((index(b) for _, b in chunk), np.int64, len(chunk))
            values, error = score(G, chunk, u, v)
            for (a, b), x in zip(chunk, values):
                yield (a, b, x)
            if error is not None:
                raise error
    return scores()


def _sums(which):
    def score(G, chunk, u, v):
        common, _, ra, aa, one = _score_chunk(G, u, v)
        total = ra if which == "ra" else aa
        error = None
        if which == "aa" and one.any():  # networkx's 1 / log(1), at the first such pair
            k = int(np.argmax(one))
            common, total, error = common[:k], total[:k], ZeroDivisionError("division by zero")
        return [x if c else 0 for c, x in zip(common.tolist(), total.tolist())], error
    return score


def resource_allocation_index(G, ebunch=None):
    return _predict(G, ebunch, _sums("ra"))


def adamic_adar_index(G, ebunch=None):
    return _predict(G, ebunch, _sums("aa"))


def _jaccard(G, chunk, u, v):
    common, whole, *_ = _score_chunk(G, u, v)
    distinct = _degrees(G)[1]
    union = distinct[u] + distinct[v] - whole
    ratio = common / np.maximum(union, 1)
    return [x if size else 0 for size, x in zip(union.tolist(), ratio.tolist())], None


def jaccard_coefficient(G, ebunch=None):
    return _predict(G, ebunch, _jaccard)


def _preferential(G, chunk, u, v):
    degree = _degrees(G)[0]
    return (degree[u] * degree[v]).tolist(), None


def preferential_attachment(G, ebunch=None):
    return _predict(G, ebunch, _preferential)


def common_neighbor_centrality(G, ebunch=None, alpha=0.8):
    """networkx's ``alpha * common + (1 - alpha) * len(G) / distance`` (a BFS from each
    pair's first node, kept; alpha == 1: the common neighbours alone); a pair ``(u, u)``
    raises NetworkXAlgorithmError when the generator reaches it."""
    depths = {}

    def score(G, chunk, u, v):
        same = u == v
        k = int(np.argmax(same)) if same.any() else u.size
        error = None if k == u.size else nx.NetworkXAlgorithmError(
            "Self loops are not supported")
        u, v = u[:k], v[:k]
        common = _score_chunk(G, u, v)[0]
        if alpha == 1:
            return common.tolist(), error
        hops = np.empty(u.size)
        for s in np.unique(u).tolist():  # a BFS a source
            if s not in depths:
                depths[s] = _bfs(G, G.nodes[s])[1]
            at = u == s
            hops[at] = depths[s][v[at]]
        hops[hops < 0] = math.inf
        return (alpha * common + (1 - alpha) * len(G) / hops).tolist(), error
    return _predict(G, ebunch, score)
