"""priority_queue: the two-level near/far pile (Davidson et al.; Gunrock section 4.4.2).

A user-defined ``priority(v, data)`` splits a frontier: vertices whose priority
is below the current **level** form the *near* slice, which is returned as the
next frontier; the others go to the *far* pile. When the near slice runs dry
the level moves up to just above the smallest priority left in the far pile
(skipping empty buckets) and the far pile is split again, with repeats dropped
(a vertex may have been pushed to the far pile several times). SSSP's priority
is ``distance / delta``, which makes this delta-stepping with two buckets.

CUDA: one pass appends each item to the near or far queue with warp-aggregated
atomics; a block reduction finds the far pile's minimum priority.
CPU: chunks fill private slices of a near and a far buffer; a packing pass
appends them.
"""

import math

import numpy as np
from numba import cuda  # a module global: the simulator swaps it for its fake module

from gunpy import atomics
from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.frontier import Frontier
from gunpy.functor import hooks_cache
from gunpy.operators import bitmap
from gunpy.operators.advance.common import cuda_append, cuda_count_edges
from gunpy.operators.common import cpu_compact

__all__ = ["NearFarQueue"]


@hooks_cache
def _cuda_kernels(hooks, block):
    from gunpy.backends.cuda import kernel
    priority = hooks.priority

    def split(in_queue, in_length, level, floor, dedupe, seen, near_q, near_len, far_q, far_len,
              row_offsets, data):
        n = in_length[0]
        found = np.int64(0)  # out-degree sum of this thread's near items (the next push's work)
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            v = in_queue[i]
            if v < 0:
                continue
            if dedupe:
                bit = np.uint32(1) << np.uint32(v & 31)
                if atomics.or_(seen, v >> 5, bit) & bit:
                    continue
            p = priority(v, data)
            if p < floor:
                continue  # stale: improved below an earlier level, so already processed
            if p < level:
                cuda_append(near_q, near_len, v)
                found += row_offsets[v + 1] - row_offsets[v]
            else:
                cuda_append(far_q, far_len, v)
        cuda_count_edges(near_len, found)

    def min_priority(in_queue, in_length, out, data):
        sh = cuda.shared.array(block, np.float64)
        tid = cuda.threadIdx.x
        acc = np.inf
        for i in range(cuda.grid(1), in_length[0], cuda.gridsize(1)):
            p = np.float64(priority(in_queue[i], data))
            if p < acc:
                acc = p
        sh[tid] = acc
        cuda.syncthreads()
        stride = block // 2
        while stride > 0:
            if tid < stride and sh[tid + stride] < sh[tid]:
                sh[tid] = sh[tid + stride]
            cuda.syncthreads()
            stride //= 2
        if tid == 0:
            cuda.atomic.min(out, 0, sh[0])

    return kernel(split), kernel(min_priority)


def _cpu_split_source(hooks):
    from numba import prange

    priority = hooks.priority

    def split(in_queue, n, level, floor, dedupe, seen, near_tmp, far_tmp, starts, near_counts,
              far_counts, nchunks, data):
        size = (n + nchunks - 1) // nchunks
        for c in prange(nchunks):
            lo = c * size
            a = lo
            b = lo
            for i in range(lo, min(n, lo + size)):
                v = in_queue[i]
                if v < 0:
                    continue
                if dedupe:
                    bit = np.uint32(1) << np.uint32(v & 31)
                    if atomics.or_(seen, v >> 5, bit) & bit:
                        continue
                p = priority(v, data)
                if p < floor:
                    continue  # stale: improved below an earlier level, so already processed
                if p < level:
                    near_tmp[a] = v
                    a += 1
                else:
                    far_tmp[b] = v
                    b += 1
            starts[c] = lo
            near_counts[c] = a - lo
            far_counts[c] = b - lo

    return split


@hooks_cache
def _cpu_kernels(hooks):
    from numba import prange

    from gunpy.backends.cpu import kernel_pair
    priority = hooks.priority

    def min_priority(in_queue, n, nchunks, data):
        size = (n + nchunks - 1) // nchunks
        best = np.full(nchunks, np.inf)
        for c in prange(nchunks):
            b = np.inf
            for i in range(c * size, min(n, (c + 1) * size)):
                p = np.float64(priority(in_queue[i], data))
                if p < b:
                    b = p
            best[c] = b
        return best.min()

    # (parallel, serial) builds of each
    return functor_pair(_cpu_split_source, hooks, ()), kernel_pair(min_priority)


class NearFarQueue:
    """The near/far pile of one enactor run.

    ``level`` starts at ``initial_level`` (items with ``priority < level`` are near).
    """

    def __init__(self, ctx, *, initial_level=1.0):
        self.ctx = ctx
        self.backend = ctx.backend
        self.level = float(initial_level)
        # two far piles: a refill splits one into the near slice and the other
        self._piles = [Frontier(self.backend, max(ctx.num_vertices, 1),
                                dtype=ctx.index_dtype, name=f"far{i}",
                                num_vertices=ctx.num_vertices) for i in range(2)]
        self.far = self._piles[0]
        self.refills = 0

    def _split(self, frontier, out, hooks, data, *, dedupe, far_out, floor=-np.inf):
        """Split ``frontier`` into ``out`` (near, overwritten) and ``far_out`` (appended).

        Items below ``floor`` are dropped: when the far pile is split at a new
        level, an entry whose priority fell below the previous level was
        improved while that level was current, went to the near slice then, and
        has been processed already.
        """
        ctx, backend = self.ctx, self.backend
        n = frontier.size_bound()  # the kernels read the true size: no host read here
        if far_out.size_bound() + n > far_out.capacity:
            # the bounds say the pile might overflow: read the true sizes before growing it
            n = frontier.size
            far_out.reserve(far_out.size + n, keep=True)
        out.reserve(n)
        seen = ctx.visited_words() if not dedupe else \
            ctx.scratch("pq.seen", bitmap.num_words(ctx.num_vertices), np.uint32)
        if dedupe:
            backend.fill(seen, 0)
        backend.operator("near_far.split")(ctx, frontier, out, far_out, hooks, data, self.level,
                                           float(floor), dedupe, seen)

    def _min_far_priority(self, hooks, data):
        return self.backend.operator("near_far.min_priority")(self.backend, self.far, hooks, data)

    def next(self, frontier, out, hooks, data, *, dedupe=False):
        """The next near frontier (in ``out``); the rest of ``frontier`` joins the far pile.

        ``dedupe``: drop repeated items of ``frontier`` on the way (one bitmap
        test-and-set each), so a traversal whose advance emits a vertex once per
        improvement needs no unique filter before the split.
        Returns the frontier to process next: empty only when near and far both are.
        """
        self._split(frontier, out, hooks, data, dedupe=dedupe, far_out=self.far)
        while out.size == 0 and self.far.size > 0:  # one read, and only when near ran dry
            # the near slice ran dry: raise the level past the far pile's minimum
            # and split the far pile again (dropping its repeats)
            lowest = self._min_far_priority(hooks, data)
            if not math.isfinite(lowest):
                break
            floor = self.level
            self.level = max(self.level, math.floor(lowest) + 1.0)
            self.refills += 1
            pile = self.far
            self.far = self._piles[1] if pile is self._piles[0] else self._piles[0]
            self.far.clear()
            self._split(pile, out, hooks, data, dedupe=True, far_out=self.far, floor=floor)
        return out


# -- the backends' implementations (named in their operator tables) --------------------
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
    out = backend.empty(1, np.float64)
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
