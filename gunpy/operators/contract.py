"""contract: a graph's quotient by vertex labels (communities become vertices).

Louvain's second phase. ``labels`` (int64, one per vertex, each a vertex id
``0..n-1``) are first renumbered in place to ``0..k-1``, in the order of the
old labels (the smallest old label becomes 0). The quotient graph has a vertex
per label; an undirected edge ``u - v`` of weight ``w`` (1.0 when unweighted)
adds ``w`` to the edge between ``labels[u]`` and ``labels[v]``, once, so an
edge inside a community (a self-loop included) adds to that community's
self-loop. That is networkx's quotient in ``louvain_partitions``: a vertex's
weighted degree (its self-loop counted twice) is its community's total, and the
quotient's total weight is the graph's. Only undirected graphs are contracted.

How (CPU): the labels' presence marks and a prefix give the new ids; the
vertices are counted into their communities, then each community's members'
edges are summed per neighbouring community through a dense slot table (a
stamp per community: no clearing between communities) and sorted; one core,
``O(n + m)`` plus the sorts. The quotient is a host :class:`~gunpy.Graph` (the
next level's input), built from these arrays without another check.

CUDA: the labels are read back (one copy a call), contracted by the CPU kernel
and the renumbered labels written back: a gunpy Graph lives on the host, so
the quotient's arrays go there in any case; a device-side contraction (sort by
pair, segmented sums) would save the labels' round trip.
"""

import functools

import numpy as np

from gunpy.operators.context import callable_module, context_for

__all__ = ["contract", "run", "cpu_contract", "cuda_contract"]


@functools.lru_cache(maxsize=None)
def _cpu_kernels():
    from numba import njit

    from gunpy._jitcache import cpu_jit  # kept in the persistent kernel cache
    from gunpy.operators.neighbor_best import pair_sorter

    sort = pair_sorter(njit(inline="always"))

    @cpu_jit
    def relabel(labels, n):
        # 1. the labels present, numbered in order: labels[v] becomes that number
        ids = np.zeros(max(n, 1), dtype=np.int64)
        for v in range(n):
            ids[labels[v]] = 1
        k = 0
        for c in range(n):
            if ids[c]:
                ids[c] = k
                k += 1
        for v in range(n):
            labels[v] = ids[labels[v]]
        return k

    @cpu_jit
    def quotient(row_offsets, column_indices, values, weighted, labels, n, k):
        # 2. members of each community, in vertex order (a counting sort)
        first = np.zeros(k + 1, dtype=np.int64)
        for v in range(n):
            first[labels[v] + 1] += 1
        for c in range(k):
            first[c + 1] += first[c]
        members = np.empty(max(n, 1), dtype=np.int64)
        fill = first[:k].copy()
        for v in range(n):
            members[fill[labels[v]]] = v
            fill[labels[v]] += 1
        # 3. each community's edges summed per neighbouring community (a slot per pair)
        offsets = np.zeros(k + 1, dtype=np.int64)
        cols = np.empty(max(row_offsets[n], 1), dtype=np.int64)
        sums = np.empty(max(row_offsets[n], 1), dtype=np.float64)
        stamp = np.full(max(k, 1), -1, dtype=np.int64)
        slot = np.empty(max(k, 1), dtype=np.int64)
        length = 0
        for c in range(k):
            start = length
            for i in range(first[c], first[c + 1]):
                u = members[i]
                for p in range(row_offsets[u], row_offsets[u + 1]):
                    v = column_indices[p]
                    d = labels[v]
                    w = values[p] if weighted else 1.0
                    if d == c and v != u:
                        w *= 0.5  # stored both ways, one self-loop weight in all
                    if stamp[d] != c:
                        stamp[d], slot[d] = c, length
                        cols[length], sums[length] = d, 0.0
                        length += 1
                    sums[slot[d]] += w
            sort(cols, sums, start, length - start)
            offsets[c + 1] = length
        return offsets, cols[:length], sums[:length]

    return relabel, quotient


def cpu_contract(ctx, G, labels):
    relabel, quotient = _cpu_kernels()
    n = G.num_vertices
    k = relabel(labels, n)
    weighted = G.values is not None
    values = G.values if weighted else np.zeros(1, dtype=np.float64)
    offsets, cols, sums = quotient(G.row_offsets, G.column_indices, values, weighted, labels, n,
                                   k)
    # the quotient's ids fit the graph's index type (k <= n); arrays of their own
    return offsets, cols.astype(G.column_indices.dtype), sums.copy()


def cuda_contract(ctx, G, labels):
    backend = ctx.backend
    host = backend.to_host(labels)  # one copy back; the quotient is a host graph anyway
    result = cpu_contract(ctx, G, host)
    backend.copy_in(labels, 0, host)
    return result


def contract(graph, labels, *, context=None):
    """The quotient of the undirected ``graph`` by ``labels``: a weighted, undirected
    :class:`~gunpy.Graph` with a vertex per distinct label; ``labels`` (an int64 device
    array of vertex ids, one per vertex) is renumbered in place to ``0..k-1`` in the order
    of the old labels.

    An edge of weight ``w`` adds ``w`` once to the edge between its ends' labels; an edge
    inside a label (a self-loop included) adds to that label's self-loop (kept). Weighted
    degrees (a self-loop counted twice) and the total weight are preserved: networkx's
    quotient graph in Louvain. ``context``: see :func:`gunpy.operators.advance`.

    Raises
    ------
    ValueError
        ``graph`` is directed, or ``labels`` is not one id in ``0..n-1`` per vertex.

    Examples
    --------
    Two triangles joined by an edge, contracted by their triangle:

    >>> import numpy as np, gunpy
    >>> from gunpy import operators as ops
    >>> G = gunpy.Graph.from_edges([0, 0, 1, 2, 3, 3, 4], [1, 2, 2, 3, 4, 5, 5],
    ...                            directed=False)
    >>> labels = np.array([2, 2, 2, 5, 5, 5])
    >>> Q = ops.contract(G, labels, context=ops.Context(G, backend="cpu"))
    >>> labels.tolist(), Q.num_vertices
    ([0, 0, 0, 1, 1, 1], 2)
    >>> Q.to_scipy().toarray().tolist()
    [[3.0, 1.0], [1.0, 3.0]]
    """
    ctx = context_for(graph, None, context)
    if graph.directed:
        raise ValueError("contract needs an undirected graph")
    host = ctx.backend.to_host(labels)
    n = graph.num_vertices
    if host.shape != (n,) or host.dtype != np.int64 or \
            (n and not 0 <= host.min() <= host.max() < n):
        raise ValueError(f"labels must be an int64 array of {n} vertex ids in 0..{n - 1}")
    return run(ctx, labels)


def run(ctx, labels):
    """:func:`contract` once its arguments are checked."""
    from gunpy.graph import Graph
    G = ctx.graph
    n = G.num_vertices
    if labels.shape[0] != n or labels.dtype != np.int64:
        raise ValueError(f"labels must be an int64 array of {n} vertex ids")
    offsets, cols, sums = ctx.backend.operator("contract")(ctx, G, labels)
    ctx.log(edges=G.num_edges, strategy="contract")
    return Graph(offsets, cols, sums, directed=False, _trusted=True)


callable_module(__name__, contract)
