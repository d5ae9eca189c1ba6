"""thread_mapped: a frontier vertex's whole neighbour list goes to one thread.

Gunrock section 4.4.1, "per-thread fine-grained": the cheapest mapping, with no
set-up cost; good on graphs whose degrees are small and even (road networks,
meshes), poor when one hub holds a long list (that thread runs alone).

CUDA: a grid-stride loop over the frontier; accepted edges are appended to the
output queue with a warp-aggregated atomic on its length.
CPU: the frontier is cut into chunks of vertices; a chunk's output cannot
exceed its edges, so it appends to its own slice of a scratch buffer and a
second pass packs the slices (no shared counter).

Every push strategy module has this shape: ``cuda_kernel(hooks, spec)``,
``cpu_kernel(hooks, spec)`` and one ``<backend>_execute(ctx, dg, frontier, out,
hooks, data, *, edges, spec)`` per backend, which
:func:`gunpy.operators.advance.register_strategy` makes the operator
``"advance.push.<name>"``; ``spec`` is a
:class:`~gunpy.operators.advance.common.PushSpec`.
"""

import numpy as np

from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import hooks_cache
from gunpy.operators.advance.common import cpu_visit, cuda_visit
from gunpy.operators.common import cpu_compact
from gunpy.operators.operator import Operator
from gunpy.operators.scan import cpu_chunk_offsets

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["cuda_kernel", "cpu_source", "cpu_kernel", "cpu_serial", "cpu_thin",
           "cuda_execute", "cpu_execute"]


@hooks_cache
def cuda_kernel(hooks, spec):
    from gunpy.backends.cuda import kernel
    from gunpy.operators.advance.common import cuda_count_degrees, cuda_tally
    visit = cuda_visit(hooks, spec)

    def advance(row_offsets, column_indices, values, in_queue, in_length,
                out_queue, out_length, visited, data):
        n = in_length[0]
        found = np.int64(0)  # out-degree sum of what this thread emitted
        largest = np.int64(-1)  # and the largest of those degrees
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            src = in_queue[i]
            for e in range(row_offsets[src], row_offsets[src + 1]):
                d = visit(src, e, row_offsets, column_indices, values, out_queue, out_length,
                          visited, data)
                found, largest = cuda_tally(found, largest, d)
        cuda_count_degrees(out_length, found, largest)

    return kernel(advance)


def cpu_source(hooks, spec):
    """The CPU kernel's Python source for ``hooks`` (compiled by the callers)."""
    from numba import prange

    visit = cpu_visit(hooks, spec)
    chunk_offsets = cpu_chunk_offsets("degrees")

    def advance(row_offsets, column_indices, values, in_queue, n, tmp, starts, counts,
                nchunks, visited, data):
        atomic = nchunks > 1
        # 1. a chunk's output is bounded by its edges: starts[c] = edges before chunk c
        size = chunk_offsets(row_offsets, in_queue, n, nchunks, starts)
        # 2. expand: each chunk appends accepted items to its own slice of tmp
        for c in prange(nchunks):
            pos = starts[c]
            for i in range(c * size, min(n, (c + 1) * size)):
                src = in_queue[i]
                pos = visit(src, row_offsets[src], row_offsets[src + 1], column_indices, values,
                            tmp, pos, visited, data, atomic)
            counts[c] = pos - starts[c]

    return advance


def cpu_kernel(hooks, spec):
    """``(parallel, serial)`` builds of the CPU kernel."""
    return functor_pair(cpu_source, hooks, (spec,))


def cuda_execute(ctx, dg, frontier, out, hooks, data, *, edges, spec):
    out.clear()
    ctx.backend.run(cuda_kernel(hooks, spec), frontier.size, dg.row_offsets, dg.column_indices,
                    dg.values, frontier.queue, frontier.length, out.queue, out.length,
                    ctx.visited_words(), data)
    out.touched(counted=spec.output == "vertex", bound=edges)  # one item an edge at most


def cpu_execute(ctx, dg, frontier, out, hooks, data, *, edges, spec):
    backend = ctx.backend
    n = frontier.size
    visited = ctx.visited_words()
    nchunks = backend.chunks(n, min_chunk=256)
    if nchunks == 1:
        cpu_serial(ctx, dg, frontier, out, hooks, data, spec)
        return
    starts = np.empty(nchunks + 1, dtype=np.int64)
    counts = np.empty(nchunks, dtype=np.int64)
    parallel = cpu_kernel(hooks, spec)[0]
    tmp = ctx.scratch("advance.tmp", edges, out.dtype)
    parallel(dg.row_offsets, dg.column_indices, dg.values, frontier.queue, n, tmp, starts,
             counts, nchunks, visited, data)
    out.set_size(cpu_compact(tmp, starts, counts, nchunks, out.queue))


def cpu_serial(ctx, dg, frontier, out, hooks, data, spec):
    """One pass over a thin frontier as a single chunk, straight into ``out``.

    Every CPU strategy cuts the work into chunks; a frontier that fits one
    chunk gains nothing from more, and needs no compaction (``out`` is reserved
    for its edges). The lone chunk sets visited bits with a plain OR. It runs
    the build :func:`gunpy.backends.cpu.run_thin` picks by a fixed rule.
    """
    n = frontier.size
    starts, counts = ctx.kept("advance.thin", _thin_buffers)
    visited = ctx.visited_words()
    build = run_thin(ctx.backend, cpu_source, hooks, (spec,),
                     lambda k: k(dg.row_offsets, dg.column_indices, dg.values, frontier.queue, n,
                                 out.queue, starts, counts, 1, visited, data))
    out.set_size(counts[0])
    ctx.log(build=build)


def _thin_buffers():
    return np.empty(2, dtype=np.int64), np.empty(1, dtype=np.int64)  # starts, counts


def cpu_thin(ctx, dg, frontier, out, hooks, data, *, edges, spec):
    """The CPU's shortcut for every strategy: a frontier with fewer than
    ``serial_below`` edges is one chunk whatever the mapping, run by :func:`cpu_serial`.
    Returns True when it handled the advance."""
    if edges >= ctx.backend.serial_below:
        return False
    cpu_serial(ctx, dg, frontier, out, hooks, data, spec)
    return True


#: a push advance that a backend may run its own way whatever the strategy, before
#: the strategy's: it returns True when it did (the CPU runs a thin frontier as one pass)
THIN = Operator("advance.thin", "ctx, dg, frontier, out, hooks, data, *, edges, spec",
                cpu=cpu_thin)
