"""split: a frontier goes to the near slice or the far pile; the far pile's lowest priority.

CUDA: one pass appends each item to the near or far queue with warp-aggregated
atomics; a block reduction finds the far pile's minimum priority.
CPU: chunks fill private slices of a near and a far buffer; a packing pass
appends them. Both classify through :func:`~gunpy.operators.near_far.band.band`.
"""

import functools

import numpy as np

from gunpy import atomics
from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import hooks_cache
from gunpy.operators.common import cpu_compact, device_attributes
from gunpy.operators.near_far.band import FAR, NEAR, cpu_band
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["cuda_split", "cpu_split", "cuda_min_priority", "cpu_min_priority", "cuda_block_min",
           "lowest_priority"]


@functools.cache
def _block_min():
    """:func:`cuda_block_min`, made on first CUDA use."""
    from gunpy.backends.cuda import device

    @device
    def cuda_block_min(sh, acc, block):
        """The minimum of every thread's ``acc`` in the block (``sh``: ``block`` shared slots)."""
        tid = cuda.threadIdx.x
        sh[tid] = acc
        cuda.syncthreads()
        stride = 1
        while stride < block:  # half the next power of two: any block size
            stride *= 2
        stride //= 2
        while stride > 0:
            if tid < stride and tid + stride < block and sh[tid + stride] < sh[tid]:
                sh[tid] = sh[tid + stride]
            cuda.syncthreads()
            stride //= 2
        return sh[0]

    return cuda_block_min


__getattr__ = device_attributes(__name__, ("cuda_block_min",),
                                lambda: {"cuda_block_min": _block_min()})


def lowest_priority(priority, jit):
    """``lowest(q, first, stop, step, data)``: the lowest ``priority`` of the items
    ``q[first:stop:step]`` (inf for none), compiled with ``jit``: a thread's or a chunk's
    share of a far pile's minimum (here and in :mod:`.fused`)."""
    @jit
    def lowest(q, first, stop, step, data):
        acc = np.inf
        for i in range(first, stop, step):
            p = np.float64(priority(q[i], data))
            if p < acc:
                acc = p
        return acc

    return lowest


def _fresh(v, dedupe, seen):
    """False for a hole (``v < 0``) and, with ``dedupe``, for an item already seen (one
    bitmap test-and-set): plain Python, compiled inline by both targets' split."""
    if v < 0:
        return False
    if dedupe:
        bit = np.uint32(1) << np.uint32(v & 31)
        return (atomics.or_(seen, v >> 5, bit) & bit) == 0
    return True


@hooks_cache
def _cuda_kernels(hooks, block):
    from gunpy.backends.cuda import device, kernel
    from gunpy.operators.advance.common import cuda_append, cuda_count_edges
    from gunpy.operators.near_far.band import cuda_band
    cuda_block_min = _block_min()
    fresh = device(_fresh)
    priority = hooks.priority
    lowest = lowest_priority(priority, device)

    def split(in_queue, in_length, level, floor, dedupe, seen, near_q, near_len, far_q, far_len,
              row_offsets, data):
        n = in_length[0]
        found = np.int64(0)  # out-degree sum of this thread's near items (the next push's work)
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            # 1. drop holes and (dedupe) repeats
            v = in_queue[i]
            if not fresh(v, dedupe, seen):
                continue
            # 2. classify; a stale item (below the floor) was processed at an earlier level
            b = cuda_band(priority(v, data), level, floor)
            if b == NEAR:
                cuda_append(near_q, near_len, v)
                found += row_offsets[v + 1] - row_offsets[v]
            elif b == FAR:
                cuda_append(far_q, far_len, v)
        # 3. the near slice's out-edges, for the next push
        cuda_count_edges(near_len, found)

    def min_priority(in_queue, in_length, out, data):
        sh = cuda.shared.array(block, np.float64)
        tid = cuda.threadIdx.x
        acc = lowest(in_queue, cuda.grid(1), in_length[0], cuda.gridsize(1), data)
        least = cuda_block_min(sh, acc, block)
        if tid == 0:
            cuda.atomic.min(out, 0, least)

    return kernel(split), kernel(min_priority)


def _cpu_split_source(hooks):
    from numba import njit, prange

    fresh = njit(inline="always")(_fresh)
    priority = hooks.priority

    def split(in_queue, n, level, floor, dedupe, seen, near_tmp, far_tmp, starts, near_counts,
              far_counts, nchunks, data):
        size = (n + nchunks - 1) // nchunks
        for c in prange(nchunks):
            lo = c * size
            a = lo
            b = lo
            for i in range(lo, min(n, lo + size)):
                # 1. drop holes and (dedupe) repeats
                v = in_queue[i]
                if not fresh(v, dedupe, seen):
                    continue
                # 2. classify into the chunk's slices; stale items are dropped
                k = cpu_band(priority(v, data), level, floor)
                if k == NEAR:
                    near_tmp[a] = v
                    a += 1
                elif k == FAR:
                    far_tmp[b] = v
                    b += 1
            starts[c] = lo
            near_counts[c] = a - lo
            far_counts[c] = b - lo

    return split


@hooks_cache
def _cpu_kernels(hooks):
    from numba import njit, prange

    from gunpy.backends.cpu import kernel_pair
    lowest = lowest_priority(hooks.priority, njit(inline="always"))

    def min_priority(in_queue, n, nchunks, data):
        size = (n + nchunks - 1) // nchunks
        best = np.full(nchunks, np.inf)
        for c in prange(nchunks):
            best[c] = lowest(in_queue, c * size, min(n, (c + 1) * size), 1, data)
        return best.min()

    # (parallel, serial) builds of each
    return functor_pair(_cpu_split_source, hooks, ()), kernel_pair(min_priority)


# -- the backends' implementations (the operators at the end name them) ---------------
def cuda_split(ctx, frontier, out, far_out, hooks, data, level, floor, dedupe, seen):
    backend = ctx.backend
    k_split, _ = _cuda_kernels(hooks, backend.block_size)
    n = frontier.size_bound()
    far_bound = far_out.size_bound() + n
    out.clear()
    backend.run(k_split, n, frontier.queue, frontier.length, np.float64(level),
                np.float64(floor), dedupe, seen, out.queue, out.length, far_out.queue,
                far_out.length, backend.graph(ctx.graph).row_offsets, data)
    out.touched(counted=True, bound=n)
    far_out.touched(bound=far_bound)


def cpu_split(ctx, frontier, out, far_out, hooks, data, level, floor, dedupe, seen):
    backend = ctx.backend
    n = frontier.size
    (k_split, _), _ = _cpu_kernels(hooks)
    nchunks = backend.chunks(n)
    starts = np.empty(nchunks, dtype=np.int64)
    nc = np.empty(nchunks, dtype=np.int64)
    fc = np.empty(nchunks, dtype=np.int64)
    base = far_out.size
    if nchunks == 1 or n < backend.serial_below:
        # one serial pass straight into both outputs: nothing to compact
        ctx.log(build=run_thin(
            backend, _cpu_split_source, hooks, (),
            lambda k: k(frontier.queue, n, level, floor, dedupe, seen, out.queue,
                        far_out.queue[base:], starts, nc, fc, 1, data)))
        out.set_size(nc[0])
        far_out.set_size(base + fc[0])
        return
    near_tmp = ctx.scratch("pq.near", n, frontier.dtype)
    far_tmp = ctx.scratch("pq.far", n, frontier.dtype)
    k_split(frontier.queue, n, level, floor, dedupe, seen, near_tmp, far_tmp, starts, nc, fc,
            nchunks, data)
    out.set_size(cpu_compact(near_tmp, starts, nc, nchunks, out.queue))
    added = cpu_compact(far_tmp, starts, fc, nchunks, far_out.queue[base:])
    far_out.set_size(base + added)


_INF = np.full(1, np.inf)


def cuda_min_priority(backend, far, hooks, data):
    _, k_min = _cuda_kernels(hooks, backend.block_size)
    out = backend.workspace("near_far.min_priority", 1, np.float64)
    backend.copy_in(out, 0, _INF)  # an upload, not a fill launch
    # a grid for the pile's size bound (the kernel reads the true size): no read here
    backend.run(k_min, far.size_bound(), far.queue, far.length, out, data,
                block_size=backend.block_size)
    return backend.read(out, 0)


def cpu_min_priority(backend, far, hooks, data):
    _, (k_min, k_min_serial) = _cpu_kernels(hooks)
    n = far.size
    if n < backend.serial_below:
        return float(k_min_serial(far.queue, n, 1, data))
    return float(k_min(far.queue, n, backend.chunks(n), data))


SPLIT = Operator("near_far.split",
                 "ctx, frontier, out, far_out, hooks, data, level, floor, dedupe, seen",
                 cpu=cpu_split, cuda=cuda_split)

MIN_PRIORITY = Operator("near_far.min_priority", "backend, far, hooks, data", cpu=cpu_min_priority,
                        cuda=cuda_min_priority)
