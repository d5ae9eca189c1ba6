"""neighbor_mex: each vertex takes the smallest key none of its edges gives.

The minimum excluded value ("mex") of a vertex's neighbourhood, the step of
greedy and Jones-Plassmann colouring (the first colour no coloured neighbour
has): for every vertex ``v`` of the frontier (``None``: all vertices) whose
``cond_vertex(v, data)`` holds, the functor's ``gather_edge(v, u, edge, weight,
data)`` gives an integer key for each out-edge ``v -> u`` (a negative key: the
edge is left out), and ``out[v]`` becomes the smallest non-negative integer no
edge gives. A vertex without kept edges takes 0. The result depends on neither
the edge order nor the number of threads.

How (CUDA and CPU alike): a thread per vertex reads its edges in windows of 64
keys: a pass over the edges sets a bit of a 64-bit word for each key inside the
window ``[base, base + 64)``; a word with a clear bit holds the answer (its
lowest clear bit), a full one moves the window on. The mex of ``d`` edges is at
most ``d``, so a vertex takes at most ``d // 64 + 1`` passes over its edges, in
registers only: no workspace, no sort, no atomics. CUDA: a grid-stride loop,
the edges read counted on a context tally; CPU: a ``prange`` over the vertices,
one core below ``serial_below`` edges (:func:`gunpy.backends.cpu.run_thin`).
"""

import numpy as np

from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import compile_functor, hooks_cache
from gunpy.operators.advance.common import cpu_weight, cuda_weight
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["neighbor_mex", "run", "execute", "cuda_kernel", "cpu_source", "cuda_execute",
           "cpu_execute"]

#: a window's word when every key in it is taken
FULL = np.uint64(0xFFFFFFFFFFFFFFFF)


def _vertex_mex(hooks, weight, jit):
    """``vertex_mex(v, ...)``: ``out[v]`` = the smallest key no edge of ``v`` gives;
    returns the edges read (0 where ``cond_vertex`` turns ``v`` down)."""
    gather_edge, cond_vertex = hooks.gather_edge, hooks.cond_vertex
    check = not hooks.default_cond_vertex

    @jit
    def vertex_mex(v, row_offsets, column_indices, values, out, data):
        if check and not cond_vertex(v, data):
            return np.int64(0)
        lo, hi = np.int64(row_offsets[v]), np.int64(row_offsets[v + 1])
        base = np.int64(0)
        word = FULL
        read = np.int64(0)
        while word == FULL:
            # 1. one pass over the edges: a bit for each key inside [base, base + 64)
            word = np.uint64(0)
            for p in range(lo, hi):
                key = np.int64(gather_edge(v, column_indices[p], p, weight(values, p), data))
                if base <= key < base + 64:
                    word |= np.uint64(1) << np.uint64(key - base)
            read += hi - lo
            # 2. every key of the window taken: the next one (the mex is at most the degree)
            if word == FULL:
                base += 64
        # 3. the lowest clear bit of the window
        free = np.int64(0)
        while (word >> np.uint64(free)) & np.uint64(1):
            free += 1
        out[v] = base + free
        return read

    return vertex_mex


@hooks_cache
def cuda_kernel(hooks, weighted, all_vertices):
    from gunpy.backends.cuda import device, kernel
    vertex_mex = _vertex_mex(hooks, cuda_weight(weighted), device)

    def mex(queue, length, row_offsets, column_indices, values, out, data, tally, slot):
        n = length[0]
        read = np.int64(0)
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            v = np.int64(i) if all_vertices else np.int64(queue[i])
            if v >= 0:
                read += vertex_mex(v, row_offsets, column_indices, values, out, data)
        if read:  # the edges read (a statistic): one atomic a thread, read once per run
            cuda.atomic.add(tally, slot, read)

    return kernel(mex)


def cpu_source(hooks, weighted, all_vertices):
    """The CPU kernel's Python source for ``hooks``; the kernel returns the edges read."""
    from numba import njit, prange
    vertex_mex = _vertex_mex(hooks, cpu_weight(weighted), njit(inline="always"))

    def mex_(queue, n, row_offsets, column_indices, values, out, data):
        read = 0
        for i in prange(n):
            v = np.int64(i) if all_vertices else np.int64(queue[i])
            if v >= 0:
                read += vertex_mex(v, row_offsets, column_indices, values, out, data)
        return read

    return mex_


def execute(ctx, frontier, hooks, data, out):
    """``out[v]`` = the mex for the frontier's vertices (``None``: all); returns the edges
    read, or None where the kernel left that count on a context tally."""
    backend = ctx.backend
    all_vertices = frontier is None
    queue, length, n = ctx.items(frontier)
    if n == 0:
        return 0
    dg = backend.graph(ctx.graph)
    return NEIGHBOR_MEX(ctx, dg, hooks, data, out, queue, length, n,
                        all_vertices)


def cuda_execute(ctx, dg, hooks, data, out, queue, length, n, all_vertices):
    tally, slot = ctx.tally("edges")
    ctx.backend.run(cuda_kernel(hooks, dg.weighted, all_vertices), n, queue, length,
                    dg.row_offsets, dg.column_indices, dg.values, out, data, tally,
                    np.int64(slot))
    return None  # the kernel counted the edges it read


def cpu_execute(ctx, dg, hooks, data, out, queue, length, n, all_vertices):
    backend = ctx.backend
    build = (dg.weighted, all_vertices)
    args = (queue, n, dg.row_offsets, dg.column_indices, dg.values, out, data)
    read = [0]

    def call(kernel):
        read[0] = kernel(*args)

    if (dg.num_edges if all_vertices else n) < backend.serial_below:
        ctx.log(build=run_thin(backend, cpu_source, hooks, build, call))
    else:
        call(functor_pair(cpu_source, hooks, build)[0])
    return int(read[0])


def neighbor_mex(graph, frontier, functor, data, out, *, context=None):
    """``out[v]`` = the smallest non-negative integer that no out-edge of ``v`` gives as
    ``functor.gather_edge(v, u, edge, weight, data)`` (negative keys are left out), for
    the vertices of ``frontier`` (``None``: every vertex) where ``functor.cond_vertex``
    holds.

    ``out`` is an integer device array with a slot per vertex; the other slots keep
    their values. Returns ``out``; the edges read are logged in the context's record.
    ``context``: see :func:`gunpy.operators.advance`.

    Examples
    --------
    Greedy colouring of a 5-cycle in vertex order, a vertex at a time: each takes
    the first colour (key) its coloured neighbours leave free (-1: not coloured yet):

    >>> from collections import namedtuple
    >>> import numpy as np, gunpy
    >>> from gunpy import Functor, operators as ops
    >>> class FirstFree(Functor):
    ...     @staticmethod
    ...     def gather_edge(v, u, edge, weight, data):
    ...         return data.colors[u]
    >>> G = gunpy.Graph.from_edges([0, 1, 2, 3, 4], [1, 2, 3, 4, 0], directed=False)
    >>> data = namedtuple("Data", "colors")(np.full(5, -1, dtype=np.int32))
    >>> ctx = ops.Context(G, backend="cpu")
    >>> for v in range(5):
    ...     _ = ops.neighbor_mex(G, ctx.frontier([v]), FirstFree, data, data.colors,
    ...                          context=ctx)
    >>> data.colors.tolist()
    [0, 1, 0, 1, 2]
    """
    ctx = context_for(graph, frontier, context)
    run(ctx, frontier, compile_functor(functor, ctx.backend), problem_data(data), out)
    ctx.done()
    return out


def run(ctx, frontier, hooks, data, out):
    """:func:`neighbor_mex` once its arguments are checked (``hooks``: the compiled functor)."""
    if frontier is not None:
        frontier.ensure_queue(ctx.scratch)
    read = execute(ctx, frontier, hooks, data, out)
    ctx.log(edges=read or 0, direction="pull", strategy="neighbor_mex")
    return out


NEIGHBOR_MEX = Operator("neighbor_mex",
                        "ctx, dg, hooks, data, out, queue, length, n, all_vertices",
                        cpu=cpu_execute, cuda=cuda_execute)


callable_module(__name__, neighbor_mex)
