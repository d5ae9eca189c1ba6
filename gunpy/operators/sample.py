"""sample: visit the first ``k`` out-edges of each frontier vertex (neighbour sampling).

Afforest's sampling step (Sutton, Ben-Nun and Barak, IPDPS 2018, section III-B):
for every vertex ``v`` of the frontier (``None``: every vertex) and each of its
first ``k`` out-edges ``(v, dst, e)`` in CSR order, ``cond_edge`` runs and,
where it holds, ``apply_edge``. Nothing is emitted: the operator is run for its
effects, like a push advance with ``output="none"`` over a sample of the edges.
An advance whose functor turns the other edges down still reads every edge
and calls the functor on it: on a mesh of average degree 6 with ``k = 2``,
three times the calls (``delaunay_n16``: CC's sampling pass 1.8 -> 0.8 ms).

CUDA: a thread per vertex in a grid-stride loop (``k`` is small, so no load
balancing), the edges visited counted on a context tally (no sync).
CPU: a ``prange`` over vertices; one pass on one core below ``serial_below``
sampled edges (:func:`gunpy.backends.cpu.run_thin`).
"""

import numpy as np

from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import compile_functor, hooks_cache
from gunpy.operators.advance.common import cpu_weight, cuda_weight
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["sample", "run", "execute", "cuda_kernel", "cpu_source", "cuda_execute",
           "cpu_execute"]


def _first_edges(hooks, weight, jit):
    """``first_edges(v, k, row_offsets, column_indices, values, data)``: the functor on
    ``v``'s first ``k`` out-edges, in CSR order; returns how many (both targets' body)."""
    cond_edge, apply_edge = hooks.cond_edge, hooks.apply_edge

    @jit
    def first_edges(v, k, row_offsets, column_indices, values, data):
        first = np.int64(row_offsets[v])
        last = min(np.int64(row_offsets[v + 1]), first + k)
        for e in range(first, last):
            dst = column_indices[e]
            w = weight(values, e)
            if cond_edge(v, dst, e, w, data):
                apply_edge(v, dst, e, w, data)
        return max(last - first, 0)

    return first_edges


@hooks_cache
def cuda_kernel(hooks, weighted, all_vertices):
    from gunpy.backends.cuda import device, kernel
    first_edges = _first_edges(hooks, cuda_weight(weighted), device)

    def sample(queue, length, k, row_offsets, column_indices, values, data, tally, slot):
        n = length[0]
        visited = np.int64(0)
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            # 1. the functor on the vertex's first k edges
            v = np.int64(i) if all_vertices else np.int64(queue[i])
            if v >= 0:
                visited += first_edges(v, k, row_offsets, column_indices, values, data)
        # 2. the edges visited (a statistic): one atomic a thread, read once per run
        if visited:
            cuda.atomic.add(tally, slot, visited)

    return kernel(sample)


def cpu_source(hooks, weighted, all_vertices):
    """The CPU kernel's Python source for ``hooks`` (compiled by the callers); the kernel
    returns the number of edges it visited."""
    from numba import njit, prange

    first_edges = _first_edges(hooks, cpu_weight(weighted), njit(inline="always"))

    def sample_(queue, n, k, row_offsets, column_indices, values, data):
        visited = 0
        for i in prange(n):
            v = np.int64(i) if all_vertices else np.int64(queue[i])
            if v >= 0:
                visited += first_edges(v, k, row_offsets, column_indices, values, data)
        return visited

    return sample_


def execute(ctx, frontier, hooks, data, k):
    """Visit the first ``k`` out-edges of ``frontier``'s vertices (``None``: every vertex);
    returns the edges visited, or None where the kernel left that count on a context
    tally (:meth:`~gunpy.operators.Context.tally`)."""
    if isinstance(k, (bool, np.bool_)) or int(k) != k or k < 0:
        raise ValueError(f"sample's k must be a non-negative integer, got {k!r}")
    backend = ctx.backend
    all_vertices = frontier is None
    queue, length, n = ctx.items(frontier)
    if n == 0 or k == 0:
        return 0
    dg = backend.graph(ctx.graph)
    return SAMPLE(ctx, dg, hooks, data, queue, length, n, all_vertices,
                  np.int64(k))


def cuda_execute(ctx, dg, hooks, data, queue, length, n, all_vertices, k):
    tally, slot = ctx.tally("edges")
    ctx.backend.run(cuda_kernel(hooks, dg.weighted, all_vertices), n, queue, length, k,
                    dg.row_offsets, dg.column_indices, dg.values, data, tally, np.int64(slot))
    return None  # the kernel counted the edges it visited


def cpu_execute(ctx, dg, hooks, data, queue, length, n, all_vertices, k):
    backend = ctx.backend
    args = (queue, n, k, dg.row_offsets, dg.column_indices, dg.values, data)
    visited = [0]

    def call(kernel):
        visited[0] = kernel(*args)

    # the work: at most k edges a vertex
    if min(n * int(k), dg.num_edges) < backend.serial_below:
        ctx.log(build=run_thin(backend, cpu_source, hooks, (dg.weighted, all_vertices), call))
    else:
        call(functor_pair(cpu_source, hooks, (dg.weighted, all_vertices))[0])
    return int(visited[0])


def sample(graph, frontier, functor, data=None, *, k, context=None):
    """Run ``functor``'s ``cond_edge`` (then ``apply_edge`` where it holds) on the first
    ``k`` out-edges of each vertex of ``frontier`` (``None``: every vertex), in CSR order.

    Emits nothing (it is run for its effects on ``data``) and returns ``frontier``;
    the edges visited are logged in the context's record. ``context``: see
    :func:`gunpy.operators.advance`.

    Examples
    --------
    Each vertex of the path 0-1-2-3 counts its first out-edge's destination:

    >>> from collections import namedtuple
    >>> import numpy as np, gunpy
    >>> from gunpy import Functor, atomics, operators as ops
    >>> from gunpy.operators.sample import sample
    >>> class Count(Functor):
    ...     @staticmethod
    ...     def cond_edge(src, dst, edge, weight, data):
    ...         atomics.add(data.hits, dst, 1)
    ...         return False
    >>> G = gunpy.generators.path(4)
    >>> data = namedtuple("Data", "hits")(np.zeros(4, dtype=np.int64))
    >>> ctx = ops.Context(G, backend="cpu")
    >>> _ = sample(G, None, Count, data, k=1, context=ctx)
    >>> data.hits.tolist(), ctx.record["edges"]
    ([1, 2, 1, 0], 4)
    """
    ctx = context_for(graph, frontier, context)
    run(ctx, frontier, compile_functor(functor, ctx.backend), problem_data(data), k)
    ctx.done()
    return frontier


def run(ctx, frontier, hooks, data, k):
    """:func:`sample` once its arguments are checked (``hooks``: the compiled functor)."""
    if frontier is not None:
        frontier.ensure_queue(ctx.scratch)
    visited = execute(ctx, frontier, hooks, data, k)
    ctx.log(edges=visited or 0, direction="push", strategy="sample")
    return frontier


SAMPLE = Operator("sample", "ctx, dg, hooks, data, queue, length, n, all_vertices, k",
                  cpu=cpu_execute, cuda=cuda_execute)


callable_module(__name__, sample)
