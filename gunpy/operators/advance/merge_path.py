"""merge_path: the frontier's edges are cut into equal chunks; each edge finds its source by binary search.

Davidson et al.'s load-balanced partitioning, Gunrock's "LB" advance (section
4.4.1): (1) an exclusive scan of the frontier's degrees numbers every edge to
visit 0..m_f-1; (2) a sorted search gives each chunk of ``block * ITEMS`` edge
ranks the first frontier position it touches; (3) each thread takes ranks of a
chunk and finds the source of each by a binary search between the chunk's
bounds, so work is balanced within and across blocks whatever the degrees (a
hub's list is split over many blocks).

CPU analogue: the same scan, then ``nchunks`` equal edge ranges, one per task,
each starting from a ``searchsorted`` of its first rank; a task writes its
accepted items to the slice of a scratch buffer that starts at its first rank
(it cannot emit more than it visits), and a packing pass compacts them.
"""

import functools

import numpy as np

from gunpy.functor import hooks_cache
from gunpy.operators import scan
from gunpy.operators.advance.common import cpu_visit, cuda_visit
from gunpy.operators.common import cpu_compact

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["cuda_kernels", "cpu_kernel", "cuda_execute", "cpu_execute", "ITEMS"]

#: edge ranks per thread in one chunk
ITEMS = 4


@functools.cache
def _owner_search():
    """``_owner``: the binary search of merge-path, made on first CUDA use."""
    from gunpy.backends.cuda import device

    @device
    def _owner(scanned, lo, hi, r):
        """Last index i in [lo, hi) with scanned[i] <= r (upper bound minus one)."""
        while lo < hi:
            mid = (lo + hi) // 2
            if scanned[mid] <= r:
                lo = mid + 1
            else:
                hi = mid
        return lo - 1

    return _owner


@hooks_cache
def cuda_kernels(hooks, spec, block):
    from gunpy.backends.cuda import kernel
    from gunpy.operators.advance.common import cuda_count_degrees, cuda_tally
    _owner = _owner_search()
    visit = cuda_visit(hooks, spec)
    chunk = block * ITEMS

    def partition(scanned, n, total, starts, nchunks):
        # 2. sorted search: the frontier position holding each chunk's first rank
        for c in range(cuda.grid(1), nchunks + 1, cuda.gridsize(1)):
            r = min(np.int64(c) * chunk, total - 1) if total > 0 else 0
            i = _owner(scanned, 0, n, r)
            starts[c] = i if i > 0 else 0

    def expand(row_offsets, column_indices, values, in_queue, scanned, n, total, starts,
               nchunks, out_queue, out_length, visited, data):
        found = np.int64(0)  # out-degree sum of what this thread emitted
        largest = np.int64(-1)  # and the largest of those degrees
        for c in range(cuda.blockIdx.x, nchunks, cuda.gridDim.x):
            lo = starts[c]
            hi = min(n, starts[c + 1] + 1)
            end = min(np.int64(c + 1) * chunk, total)
            # 3. every thread maps its ranks back to (source, edge) inside the chunk's bounds
            for r in range(np.int64(c) * chunk + cuda.threadIdx.x, end, block):
                i = _owner(scanned, lo, hi, r)
                src = in_queue[i]
                e = row_offsets[src] + (r - scanned[i])
                d = visit(src, e, row_offsets, column_indices, values, out_queue, out_length,
                          visited, data)
                found, largest = cuda_tally(found, largest, d)
        cuda_count_degrees(out_length, found, largest)

    return kernel(partition), kernel(expand)


@hooks_cache
def cpu_kernel(hooks, spec):
    from numba import prange

    from gunpy.backends.cpu import kernel
    visit = cpu_visit(hooks, spec)

    def advance(row_offsets, column_indices, values, in_queue, n, scanned, total, tmp, starts,
                counts, nchunks, visited, data):
        # 1. degree scan: scanned[i] = edges before frontier position i, scanned[n] = total
        size = (total + nchunks - 1) // nchunks
        atomic = nchunks > 1
        for c in prange(nchunks):
            r = np.int64(c) * size
            stop = min(total, r + size)
            starts[c] = r
            pos = r
            if r < stop:
                # 2. the frontier position holding this task's first rank
                i = np.searchsorted(scanned[:n + 1], r, side="right") - 1
                # 3. walk the task's ranks, one neighbour-list segment at a time
                while r < stop:
                    src = in_queue[i]
                    seg_end = min(stop, scanned[i + 1])
                    base = row_offsets[src] - scanned[i]
                    pos = visit(src, base + r, base + seg_end, column_indices, values, tmp, pos,
                                visited, data, atomic)
                    r = seg_end
                    i += 1
            counts[c] = pos - starts[c]

    return kernel(advance)


@functools.lru_cache(maxsize=None)
def _cpu_degree_scan():
    from numba import prange

    from gunpy.backends.cpu import kernel

    def degrees(row_offsets, in_queue, n, out):
        for i in prange(n):
            v = in_queue[i]
            out[i] = row_offsets[v + 1] - row_offsets[v]

    return kernel(degrees)


def cuda_execute(ctx, dg, frontier, out, hooks, data, *, edges, spec):
    backend = ctx.backend
    n = frontier.size
    scanned = ctx.scratch("merge_path.scan", n + 1, np.int64)
    block = backend.block_size
    total = scan.exclusive_scan(backend, "degrees", n, dg.row_offsets, frontier.queue, scanned)
    chunk = block * ITEMS
    nchunks = max(1, (total + chunk - 1) // chunk)
    starts = ctx.scratch("merge_path.starts", nchunks + 1, np.int64)
    k_part, k_expand = cuda_kernels(hooks, spec, block)
    out.clear()
    backend.run(k_part, nchunks + 1, scanned, n, np.int64(total), starts, np.int64(nchunks))
    backend.run(k_expand, nchunks * block, dg.row_offsets, dg.column_indices, dg.values,
                frontier.queue, scanned, n, np.int64(total), starts, np.int64(nchunks),
                out.queue, out.length, ctx.visited_words(), data, block_size=block)
    out.touched(counted=spec.output == "vertex", bound=edges)  # one item an edge at most


def cpu_execute(ctx, dg, frontier, out, hooks, data, *, edges, spec):
    backend = ctx.backend
    n = frontier.size
    visited = ctx.visited_words()
    scanned = ctx.scratch("merge_path.scan", n + 1, np.int64)
    degrees = ctx.scratch("merge_path.degrees", n, np.int64)
    _cpu_degree_scan()(dg.row_offsets, frontier.queue, n, degrees)
    total = scan.cpu_exclusive_scan(degrees, n, scanned, backend.chunks(n))
    scanned[n] = total
    nchunks = backend.chunks(total, min_chunk=1024)
    tmp = ctx.scratch("advance.tmp", total, out.dtype)
    starts = np.empty(nchunks, dtype=np.int64)
    counts = np.empty(nchunks, dtype=np.int64)
    cpu_kernel(hooks, spec)(dg.row_offsets, dg.column_indices, dg.values, frontier.queue, n,
                            scanned, total, tmp, starts, counts, nchunks, visited, data)
    out.set_size(cpu_compact(tmp, starts, counts, nchunks, out.queue))
