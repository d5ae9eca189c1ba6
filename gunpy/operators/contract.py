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
vertices are counted into their communities (one core, ``O(n)``), then each
community's members' edges are summed per neighbouring community through a
dense slot table (a stamp per community: no clearing between communities) and
sorted, the communities split into a chunk a thread of about equal edges, each
chunk with its own table, each community's run written from its edge count's
prefix and packed after; ``O(n + m)`` plus the sorts (one core below the
backend's ``serial_below`` edges). The quotient is a host :class:`~gunpy.Graph` (the
next level's input), built from these arrays without another check.

CUDA: the labels are read back (one copy a call), contracted by the CPU kernel
and the renumbered labels written back: a gunpy Graph lives on the host, so
the quotient's arrays go there in any case; a device-side contraction (sort by
pair, segmented sums) would save the labels' round trip.
"""

import functools

import numpy as np

from gunpy.backends import get_backend
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.operator import Operator

__all__ = ["contract", "run", "cpu_contract", "cuda_contract"]


@functools.lru_cache(maxsize=None)
def _cpu_kernels():
    from numba import njit, prange

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

    def quotient(row_offsets, column_indices, values, weighted, labels, n, k, nchunks):
        # 2. members of each community, in vertex order (a counting sort), and each
        #    community's edges, their prefix an upper bound on where its output starts
        first = np.zeros(k + 1, dtype=np.int64)
        for v in range(n):
            first[labels[v] + 1] += 1
        for c in range(k):
            first[c + 1] += first[c]
        members = np.empty(max(n, 1), dtype=np.int64)
        fill = first[:k].copy()
        work = np.zeros(k + 1, dtype=np.int64)
        for v in range(n):
            members[fill[labels[v]]] = v
            fill[labels[v]] += 1
            work[labels[v] + 1] += row_offsets[v + 1] - row_offsets[v]
        for c in range(k):
            work[c + 1] += work[c]
        # chunks of communities of about equal edges, each with its own slot table
        bounds = np.searchsorted(work[:k], np.arange(nchunks + 1) * (work[k] // nchunks + 1))
        bounds[nchunks] = k
        cols = np.empty(max(work[k], 1), dtype=np.int64)
        sums = np.empty(max(work[k], 1), dtype=np.float64)
        count = np.zeros(k + 1, dtype=np.int64)
        stamp = np.full(max(k, 1) * nchunks, -1, dtype=np.int64)
        slot = np.empty(max(k, 1) * nchunks, dtype=np.int64)
        # 3. each community's edges summed per neighbouring community (a slot per pair),
        #    written from its bound on, sorted
        for j in prange(nchunks):
            base = j * k
            for c in range(bounds[j], bounds[j + 1]):
                start = length = work[c]
                for i in range(first[c], first[c + 1]):
                    u = members[i]
                    for p in range(row_offsets[u], row_offsets[u + 1]):
                        v = column_indices[p]
                        d = labels[v]
                        w = values[p] if weighted else 1.0
                        if d == c and v != u:
                            w *= 0.5  # stored both ways, one self-loop weight in all
                        if stamp[base + d] != c:
                            stamp[base + d], slot[base + d] = c, length
                            cols[length], sums[length] = d, 0.0
                            length += 1
                        sums[slot[base + d]] += w
                sort(cols, sums, start, length - start)
                count[c + 1] = length - start
        # 4. the runs packed: community c's at offsets[c]
        offsets = count
        for c in range(k):
            offsets[c + 1] += offsets[c]
        out_cols = np.empty(max(offsets[k], 1), dtype=np.int64)
        out_sums = np.empty(max(offsets[k], 1), dtype=np.float64)
        for j in prange(nchunks):
            for c in range(bounds[j], bounds[j + 1]):
                for i in range(offsets[c + 1] - offsets[c]):
                    out_cols[offsets[c] + i] = cols[work[c] + i]
                    out_sums[offsets[c] + i] = sums[work[c] + i]
        return offsets, out_cols[:offsets[k]], out_sums[:offsets[k]]

    return relabel, cpu_jit(quotient, parallel=True), cpu_jit(quotient)


def cpu_contract(ctx, G, labels):
    return _host_contract(G, labels, ctx.backend)


def _host_contract(G, labels, cpu):
    """The quotient's arrays, contracted on the host's cores (``cpu``: the CPU backend,
    whose ``serial_below`` and threads it follows)."""
    relabel, parallel, serial = _cpu_kernels()
    n = G.num_vertices
    k = relabel(labels, n)
    weighted = G.values is not None
    values = G.values if weighted else np.zeros(1, dtype=np.float64)
    # one core below serial_below edges: no thread pool to start
    thin = G.num_edges < cpu.serial_below
    quotient, nchunks = (serial, 1) if thin else (parallel, cpu.num_threads)
    offsets, cols, sums = quotient(G.row_offsets, G.column_indices, values, weighted, labels, n,
                                   k, nchunks)
    # the quotient's ids fit the graph's index type (k <= n); arrays of their own
    return offsets, cols.astype(G.column_indices.dtype), sums.copy()


def cuda_contract(ctx, G, labels):
    backend = ctx.backend
    host = backend.to_host(labels)  # one copy back; the quotient is a host graph anyway
    result = _host_contract(G, host, get_backend("cpu"))
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
    offsets, cols, sums = CONTRACT(ctx, G, labels)
    ctx.log(edges=G.num_edges, strategy="contract")
    return Graph(offsets, cols, sums, directed=False, _trusted=True)


CONTRACT = Operator("contract", "ctx, G, labels", cpu=cpu_contract, cuda=cuda_contract)


callable_module(__name__, contract)
