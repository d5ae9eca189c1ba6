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
from gunpy.operators.advance.common import (cpu_weight, cuda_append, cuda_count_edges,
                                           cuda_weight)
from gunpy.operators.common import cpu_compact

__all__ = ["NearFarQueue"]


@cuda.jit(device=True, inline="always")
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
        lowest = cuda_block_min(sh, acc, block)
        if tid == 0:
            cuda.atomic.min(out, 0, lowest)

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


def _cpu_ring_push():
    from numba import njit

    @njit(inline="always")
    def push(work, queued, tail, cap, v):
        """Put ``v`` on the ring unless it is there: returns ``(new tail, 1 if added)``."""
        if queued[v]:
            return tail, 0
        queued[v] = 1
        work[tail] = v
        return (tail + 1 if tail + 1 < cap else 0), 1

    return push


def _cpu_fused_source(hooks, weighted):
    """Advance and split as one serial worklist loop over the band, refills included.

    GAP's bucket fusion: while the near band stays thin, a core keeps taking
    vertices from it, relaxing their out-edges and putting the improved ones
    back (near) or on the far pile, with no pass or barrier per step; when the
    band is empty it refills from the far pile itself. It stops when the
    queued work reaches ``limit`` edges (the parallel passes take over), when
    the far pile outgrows ``far_limit`` (a parallel refill is cheaper), or
    when both piles are empty.

    ``queued`` (one byte a vertex) marks vertices in the worklist, zero on
    entry and on exit; ``stamp`` marks far-pile entries of the current epoch
    (a vertex sits on the far pile at most once an epoch; ``state[EPOCH]``
    grows by one at entry and at every refill). The worklist is a ring of
    ``work.shape[0]`` >= vertices slots. ``state`` (float64) carries the level
    and far size in and the level, far size, refills, edges examined,
    vertices expanded, near size (-1: the input alone reaches ``limit``, nothing
    was done) and epoch out.
    """
    cond_edge, apply_edge, priority = hooks.cond_edge, hooks.apply_edge, hooks.priority
    weight = cpu_weight(weighted)
    push = _cpu_ring_push()

    def fused(row_offsets, column_indices, values, in_queue, n, work, queued, far_q, stamp,
              near_out, state, limit, far_limit, data):
        cap = work.shape[0]
        level = state[0]
        far_n = np.int64(state[1])
        epoch = np.int64(state[6]) + 1
        head = np.int64(0)
        tail = np.int64(0)  # the ring's next free slot (head + count, wrapped)
        count = np.int64(0)
        qedges = np.int64(0)
        for i in range(n):
            v = in_queue[i]
            if v < 0:
                continue
            tail, added = push(work, queued, tail, cap, v)
            count += added
            qedges += added * (row_offsets[v + 1] - row_offsets[v])
        if qedges >= limit:
            # too fat to start fused: leave everything as it was
            for i in range(count):
                queued[work[i]] = 0
            state[5] = -1
            return
        refills = np.int64(0)
        examined = np.int64(0)
        expanded = np.int64(0)
        while True:
            if qedges >= limit:
                break  # fat: the parallel passes take the band from here
            if count == 0:
                if far_n == 0 or far_n > far_limit:
                    break
                lowest = np.inf
                for i in range(far_n):
                    p = np.float64(priority(far_q[i], data))
                    if p < lowest:
                        lowest = p
                if not lowest < np.inf:
                    break
                floor = level
                level = max(level, np.floor(lowest) + 1.0)
                refills += 1
                epoch += 1
                k = np.int64(0)
                for i in range(far_n):
                    v = far_q[i]
                    if stamp[v] == epoch:
                        continue  # a repeat
                    stamp[v] = epoch
                    p = priority(v, data)
                    if p < floor:
                        continue  # stale: improved below an earlier level, so processed
                    if p < level:
                        tail, added = push(work, queued, tail, cap, v)
                        count += added
                        qedges += added * (row_offsets[v + 1] - row_offsets[v])
                    else:
                        far_q[k] = v
                        k += 1
                far_n = k
                continue
            v = work[head]
            head = head + 1 if head + 1 < cap else 0
            count -= 1
            queued[v] = 0
            lo = row_offsets[v]
            hi = row_offsets[v + 1]
            qedges -= hi - lo
            examined += hi - lo
            expanded += 1
            for e in range(lo, hi):
                u = column_indices[e]
                w = weight(values, e)
                if cond_edge(v, u, e, w, data):
                    apply_edge(v, u, e, w, data)
                    p = priority(u, data)
                    if p < level:
                        tail, added = push(work, queued, tail, cap, u)
                        count += added
                        qedges += added * (row_offsets[u + 1] - row_offsets[u])
                    elif stamp[u] != epoch:
                        stamp[u] = epoch
                        far_q[far_n] = u
                        far_n += 1
        for i in range(count):
            v = work[head]
            head = head + 1 if head + 1 < cap else 0
            queued[v] = 0
            near_out[i] = v
        state[0] = level
        state[1] = far_n
        state[2] = refills
        state[3] = examined
        state[4] = expanded
        state[5] = count
        state[6] = epoch

    return fused


class NearFarQueue:
    """The near/far pile of one enactor run.

    ``level`` starts at ``initial_level`` (items with ``priority < level`` are near).
    """

    def __init__(self, ctx, *, initial_level=1.0):
        self.ctx = ctx
        self.backend = ctx.backend
        # two far piles: a refill splits one into the near slice and the other
        self._piles = [Frontier(self.backend, max(ctx.num_vertices, 1),
                                dtype=ctx.index_dtype, name=f"far{i}",
                                num_vertices=ctx.num_vertices) for i in range(2)]
        self._fuse = None
        self.reset(initial_level)

    def reset(self, initial_level=1.0):
        """Empty both piles and start again at ``initial_level`` (the arrays are kept)."""
        self.level = float(initial_level)
        for pile in self._piles:
            pile.clear()
        self.far = self._piles[0]
        self.refills = 0
        #: vertices expanded by fused steps (:meth:`advance_next`)
        self.fused_steps = 0

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
        return self.refill(out, hooks, data)

    def refill(self, out, hooks, data):
        """While ``out`` (the near slice) is empty and the far pile is not, raise the
        level past the pile's lowest priority and split the pile into ``out``."""
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

    def advance_next(self, frontier, out, hooks, data, *, weighted, limit=None):
        """Bucket fusion: advance ``frontier`` and split, many thin steps in one call.

        The backend's ``near_far.fused`` relaxes the out-edges of ``frontier``
        (``cond_edge``/``apply_edge``), puts improved vertices in the near band
        back to work at once and the others on the far pile, and refills from
        the far pile itself when the band runs dry, for as long as the queued
        work stays under ``limit`` edges (default: the backend's
        ``fuse_below``). Returns the next near frontier in ``out`` (empty only
        when both piles are), or None when the work is too fat to fuse (the
        caller then runs the advance and :meth:`next`).
        """
        fused = self.backend.operator("near_far.fused", default=_not_fused)
        return fused(self, frontier, out, hooks, data, weighted,
                     self.backend.fuse_below if limit is None else int(limit))


def _not_fused(queue, frontier, out, hooks, data, weighted, limit):
    return None


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


def cpu_fused(queue, frontier, out, hooks, data, weighted, limit):
    ctx, backend = queue.ctx, queue.backend
    n = frontier.size
    if n >= limit or limit <= 0:
        return None  # at least one edge a vertex would make it fat: skip the scan
    nv = max(ctx.num_vertices, 1)
    if queue._fuse is None:
        # the worklist ring, its membership bytes (zero between calls) and the far
        # pile's epoch stamps, made on the first fused call and kept with the queue
        # (the epoch in state[6] goes on rising across runs, so stamps stay valid)
        queue._fuse = (backend.empty(nv, ctx.index_dtype), backend.zeros(nv, np.uint8),
                       backend.zeros(nv, np.int64), np.zeros(7))
    work, queued, stamp, state = queue._fuse
    far = queue.far
    # a vertex joins the far pile at most once an epoch: what is there plus every vertex
    far.reserve(far.size + nv, keep=True)
    out.reserve(nv)
    state[0], state[1] = queue.level, far.size
    dg = backend.graph(ctx.graph)
    ctx.log(build=run_thin(
        backend, _cpu_fused_source, hooks, (bool(weighted),),
        lambda k: k(dg.row_offsets, dg.column_indices, dg.values, frontier.queue, n, work,
                    queued, far.queue, stamp, out.queue, state, limit, FAR_LIMIT, data)))
    if state[5] < 0:
        return None  # the frontier's edges reach the limit: the parallel operators
    queue.level = float(state[0])
    far.set_size(int(state[1]))
    queue.refills += int(state[2])
    queue.fused_steps += int(state[4])
    ctx.log(edges=int(state[3]))
    out.set_size(int(state[5]))
    if out.size == 0 and far.size:
        # the far pile outgrew FAR_LIMIT: a parallel refill
        return queue.refill(out, hooks, data)
    return out


#: the far pile size above which the CPU's fused loop leaves the refill to the parallel split
FAR_LIMIT = 1 << 16


#: the far pile size above which the CUDA fused kernel leaves the refill to the whole grid
CUDA_FAR_LIMIT = 1 << 15
#: the fused kernel's state vector: level, far size, refills, edges examined, vertices
#: expanded, near size (-1: not fused), far epoch, round, far piles swapped (0/1), near edges
_STATE = 10


@hooks_cache
def _cuda_fused_kernel(hooks, weighted, block):
    """Bucket fusion in one thread block: rounds of advance + split with block barriers.

    While the near band's queued work stays under ``limit`` edges, the block
    expands the current worklist into the next (improved vertices in the band,
    once a round: ``qstamp`` holds the last round a vertex was queued in) and
    appends the others to the far pile (once an epoch: ``stamp``); when the
    worklist empties it finds the far pile's minimum priority (a block
    reduction), raises the level and splits the pile into the worklist and the
    other pile. One launch and one read of ``state`` replace a launch, a
    split and a size read per step (thousands on a road network).
    """
    from gunpy.backends.cuda import kernel
    cond_edge, apply_edge, priority = hooks.cond_edge, hooks.apply_edge, hooks.priority
    weight = cuda_weight(weighted)

    @cuda.jit(device=True, inline="always")
    def queue_once(stamps, v, mark, q, counters, slot, row_offsets):
        # append v to q unless it carries mark already; counters[slot + 1] sums degrees
        if cuda.atomic.max(stamps, v, mark) < mark:
            q[cuda.atomic.add(counters, slot, 1)] = v
            cuda.atomic.add(counters, slot + 1, row_offsets[v + 1] - row_offsets[v])

    @cuda.jit(device=True, inline="always")
    def expand(cur, cnt, nxt, far_q, counters, level, rnd, epoch, qstamp, stamp, row_offsets,
               column_indices, values, data):
        examined = np.int64(0)
        for i in range(cuda.threadIdx.x, cnt, cuda.blockDim.x):
            v = cur[i]
            lo = row_offsets[v]
            hi = row_offsets[v + 1]
            examined += hi - lo
            for e in range(lo, hi):
                u = column_indices[e]
                w = weight(values, e)
                if cond_edge(v, u, e, w, data):
                    apply_edge(v, u, e, w, data)
                    if priority(u, data) < level:
                        queue_once(qstamp, u, rnd, nxt, counters, 0, row_offsets)
                    elif cuda.atomic.max(stamp, u, epoch) < epoch:
                        far_q[cuda.atomic.add(counters, 2, 1)] = u
        return examined

    @cuda.jit(device=True, inline="always")
    def split_far(far_q, fn, other, work, counters, level, floor, rnd, epoch, qstamp, stamp,
                  row_offsets, data):
        for i in range(cuda.threadIdx.x, fn, cuda.blockDim.x):
            v = far_q[i]
            if cuda.atomic.max(stamp, v, epoch) >= epoch:
                continue  # a repeat
            p = priority(v, data)
            if p < floor:
                continue  # stale: improved below an earlier level, so processed
            if p < level:
                queue_once(qstamp, v, rnd, work, counters, 0, row_offsets)
            else:
                other[cuda.atomic.add(counters, 3, 1)] = v

    def fused(in_queue, in_length, work_a, work_b, far_a, far_b, far_len_a, far_len_b, qstamp,
              stamp, near_q, near_len, state, limit, far_limit, row_offsets, column_indices,
              values, data):
        # counters: 0 next worklist size, 1 its degree sum, 2 far size, 3 other pile's size
        counters = cuda.shared.array(4, np.int64)
        red = cuda.shared.array(block, np.float64)
        tid = cuda.threadIdx.x
        level = state[0]
        epoch = np.int64(state[6]) + 1
        rnd = np.int64(state[7]) + 1
        if tid == 0:
            counters[0] = 0
            counters[1] = 0
            counters[2] = np.int64(state[1])
            counters[3] = 0
        cuda.syncthreads()
        for i in range(tid, in_length[0], cuda.blockDim.x):
            v = in_queue[i]
            if v >= 0:
                queue_once(qstamp, v, rnd, work_a, counters, 0, row_offsets)
        cuda.syncthreads()
        if counters[1] >= limit:
            if tid == 0:
                state[5] = -1  # too fat to start fused (the rounds stamped are never reused)
                state[7] = rnd
            return
        cur_is_a = True
        far_is_a = True
        refills = np.int64(0)
        examined = np.int64(0)
        expanded = np.int64(0)
        while True:
            cuda.syncthreads()
            cnt = counters[0]
            qedges = counters[1]
            fn = counters[2]
            cuda.syncthreads()  # everyone has read the counters before they are reset
            if qedges >= limit:
                break  # fat: the grid-wide operators take the band from here
            if cnt == 0:
                if fn == 0 or fn > far_limit:
                    break
                acc = np.inf
                for i in range(tid, fn, cuda.blockDim.x):
                    p = np.float64(priority(far_a[i] if far_is_a else far_b[i], data))
                    if p < acc:
                        acc = p
                lowest = cuda_block_min(red, acc, block)
                if not lowest < np.inf:
                    break
                floor = level
                level = max(level, math.floor(lowest) + 1.0)
                refills += 1
                epoch += 1
                rnd += 1
                if far_is_a:
                    split_far(far_a, fn, far_b, work_a if cur_is_a else work_b, counters, level,
                              floor, rnd, epoch, qstamp, stamp, row_offsets, data)
                else:
                    split_far(far_b, fn, far_a, work_a if cur_is_a else work_b, counters, level,
                              floor, rnd, epoch, qstamp, stamp, row_offsets, data)
                cuda.syncthreads()
                if tid == 0:
                    counters[2] = counters[3]
                    counters[3] = 0
                far_is_a = not far_is_a
                continue
            rnd += 1
            expanded += cnt
            if tid == 0:
                counters[0] = 0
                counters[1] = 0
            cuda.syncthreads()
            if cur_is_a:
                if far_is_a:
                    examined += expand(work_a, cnt, work_b, far_a, counters, level, rnd, epoch,
                                       qstamp, stamp, row_offsets, column_indices, values, data)
                else:
                    examined += expand(work_a, cnt, work_b, far_b, counters, level, rnd, epoch,
                                       qstamp, stamp, row_offsets, column_indices, values, data)
            else:
                if far_is_a:
                    examined += expand(work_b, cnt, work_a, far_a, counters, level, rnd, epoch,
                                       qstamp, stamp, row_offsets, column_indices, values, data)
                else:
                    examined += expand(work_b, cnt, work_a, far_b, counters, level, rnd, epoch,
                                       qstamp, stamp, row_offsets, column_indices, values, data)
            cur_is_a = not cur_is_a
        # the worklist left is the next near frontier
        for i in range(tid, cnt, cuda.blockDim.x):
            near_q[i] = work_a[i] if cur_is_a else work_b[i]
        cuda.syncthreads()  # a refill's last readers of red[0] are done
        red[tid] = np.float64(examined)
        cuda.syncthreads()
        if tid == 0:
            if far_is_a:
                far_len_a[0] = fn
            else:
                far_len_b[0] = fn
            total = np.float64(0)
            for t in range(cuda.blockDim.x):
                total += red[t]
            near_len[0] = cnt
            near_len[1] = qedges
            state[0] = level
            state[1] = fn
            state[2] = refills
            state[3] = total
            state[4] = expanded
            state[5] = cnt
            state[6] = epoch
            state[7] = rnd
            state[8] = 0 if far_is_a else 1
            state[9] = qedges

    return kernel(fused, launch_bounds=block)  # one block: at most `block` threads


def cuda_fused(queue, frontier, out, hooks, data, weighted, limit):
    ctx, backend = queue.ctx, queue.backend
    n = frontier.size  # known: the enactor read it after the last iteration
    if n >= limit or limit <= 0:
        return None
    nv = max(ctx.num_vertices, 1)
    if queue._fuse is None:
        # two worklists, the rounds and epochs each vertex was last queued in, the
        # state vector (device and host)
        queue._fuse = (backend.empty(nv, ctx.index_dtype), backend.empty(nv, ctx.index_dtype),
                       backend.zeros(nv, np.int64), backend.zeros(nv, np.int64),
                       backend.empty(_STATE, np.float64), np.zeros(_STATE))
    work_a, work_b, qstamp, stamp, state, host = queue._fuse
    far = queue.far
    other = queue._piles[1] if far is queue._piles[0] else queue._piles[0]
    far_n = far.size
    far.reserve(far_n + nv, keep=True)
    other.reserve(far_n + nv)
    out.reserve(nv)
    host[0], host[1], host[5] = queue.level, far_n, 0
    backend.copy_in(state, 0, host)  # level, far size and the epoch/round counters kept
    dg = backend.graph(ctx.graph)
    block = backend.one_block_size()
    backend.run(_cuda_fused_kernel(hooks, bool(weighted), block),
                block, frontier.queue, frontier.length, work_a, work_b, far.queue,
                other.queue, far.length, other.length, qstamp, stamp, out.queue, out.length, state, np.int64(limit),
                np.int64(CUDA_FAR_LIMIT), dg.row_offsets, dg.column_indices, dg.values, data,
                blocks=1, block_size=block)
    host[:] = backend.read_head(state, _STATE)  # the one sync
    if host[5] < 0:
        return None
    queue.level = float(host[0])
    if host[8]:
        queue.far = far = other
    far.assume_size(int(host[1]))
    queue.refills += int(host[2])
    queue.fused_steps += int(host[4])
    ctx.log(edges=int(host[3]))
    out.assume_size(int(host[5]))
    out.known_edges = int(host[9])
    if out.size == 0 and far.size:
        return queue.refill(out, hooks, data)  # the far pile outgrew CUDA_FAR_LIMIT
    return out
