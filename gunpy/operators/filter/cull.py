"""cull: drop duplicate and already-visited vertices, then filter as usual.

The filter of idempotent traversal (``mode="cull"``, against the visited set
kept across iterations) and of duplicate removal within one frontier
(``mode="unique"``, against a bitmap cleared for the call: how SSSP drops the
repeats of vertices relaxed several times in one advance). It is the filter (Gunrock section 4.4.3, "Idempotent
Operation", after Merrill et al.'s contract-expand BFS). An idempotent advance
uses no atomics, so several frontier vertices may discover the same neighbour
and the output holds duplicates. Culling removes them with, cheapest first:

1. **warp culling**: the lanes of a warp hash their vertex into a per-warp
   shared-memory table; of several lanes holding the same vertex, one survives;
2. **history culling**: a per-block shared-memory table remembers the vertices
   the block kept recently, across the tiles it processes;
3. **global bitmask culling**: a vertex whose bit is already set in the visited
   bitmap was in an earlier frontier. Survivors set their bit with an atomic OR
   whose old value also catches the duplicates the two heuristics missed, so no
   duplicate leaves the filter: the heuristics exist to spare those atomics.

Survivors then go through ``cond_vertex`` / ``apply_vertex`` and the same
scan-and-scatter compaction as the predicated filter.

CPU analogue: each task keeps a private history table (there are no warps) and
tests-and-sets the bitmask with an atomic OR.
"""

import numpy as np

from gunpy import atomics
from gunpy.functor import hooks_cache
from gunpy.operators.common import cpu_compact
from gunpy.operators.filter import predicated
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["cuda_kernel", "cpu_kernel", "execute", "WARP_HASH", "HISTORY", "warp_hash_slots"]

#: slots of each warp's hash table and of each block's history table
WARP_HASH = 128
HISTORY = 512


def warp_hash_slots(block):
    """Slots of each warp's hash table at ``block`` threads: ``WARP_HASH``, halved while the
    block's tables and history would take more than half the 48 KB of static shared memory
    a kernel may declare (16 KB at 256 threads; at 1,024 threads 32 slots a warp, 16 KB:
    with 128 it would be 53,248 B, which does not assemble)."""
    from gunpy.backends.toolchain import SHARED_STATIC_LIMIT
    nwarps = max(1, block // 32)
    per_warp = WARP_HASH
    while per_warp > 8 and nwarps * per_warp * 12 + HISTORY * 8 > SHARED_STATIC_LIMIT // 2:
        per_warp //= 2
    return per_warp


@hooks_cache
def cuda_kernel(hooks, block):
    from gunpy.backends.cuda import kernel
    cond_vertex, apply_vertex = hooks.cond_vertex, hooks.apply_vertex
    nwarps = max(1, block // 32)
    per_warp = warp_hash_slots(block)
    slots = nwarps * per_warp  # shared-array sizes must be compile-time constants

    def cull(in_queue, in_length, flags, visited, counts, at, data):
        warp_hash = cuda.shared.array(slots, np.int64)
        lane_hash = cuda.shared.array(slots, np.int32)
        history = cuda.shared.array(HISTORY, np.int64)
        tid = cuda.threadIdx.x
        lane = tid % 32
        warp = tid // 32
        for k in range(tid, HISTORY, block):
            history[k] = -1
        cuda.syncthreads()
        n = in_length[0]
        ntiles = (n + block - 1) // block
        culled = 0
        for t in range(cuda.blockIdx.x, ntiles, cuda.gridDim.x):
            i = t * block + tid
            v = np.int64(-1)
            if i < n:
                v = np.int64(in_queue[i])
            keep = v >= 0
            # 1. warp culling: of the lanes holding the same vertex, one survives
            h = warp * per_warp + (v & (per_warp - 1))
            if keep:
                warp_hash[h] = v
            cuda.syncwarp()
            if keep and warp_hash[h] == v:
                lane_hash[h] = lane
            cuda.syncwarp()
            if keep and warp_hash[h] == v and lane_hash[h] != lane:
                keep = False
                culled += 1
            cuda.syncwarp()
            # 2. history culling: vertices this block kept recently
            if keep:
                slot = v % HISTORY
                if history[slot] == v:
                    keep = False
                    culled += 1
                else:
                    history[slot] = v
            # 3. bitmask culling; the atomic OR's old value also catches what 1-2 missed
            if keep:
                bit = np.uint32(1) << np.uint32(v & 31)
                if visited[v >> 5] & bit:
                    keep = False
                elif atomics.or_(visited, v >> 5, bit) & bit:
                    keep = False
            # 4. the functor's own predicate on the survivors
            if keep:
                keep = cond_vertex(v, data)
                if keep:
                    apply_vertex(v, data)
            if i < n:
                flags[i] = 1 if keep else 0
            cuda.syncthreads()
        if culled:  # the statistic, left on the device (Context.tally)
            cuda.atomic.add(counts, at, culled)

    return kernel(cull)


@hooks_cache
def cpu_kernel(hooks):
    from numba import prange

    from gunpy.backends.cpu import kernel_pair
    keep = predicated.vertex_keeper(hooks)

    def cull(in_queue, n, tmp, starts, counts, culled, nchunks, visited, data):
        size = (n + nchunks - 1) // nchunks
        for c in prange(nchunks):
            history = np.full(HISTORY, -1, dtype=np.int64)
            lo = c * size
            pos = lo
            dropped = 0
            for i in range(lo, min(n, lo + size)):
                v = np.int64(in_queue[i])
                if v < 0:
                    continue
                # 1. history culling in a task-private table
                slot = v % HISTORY
                if history[slot] == v:
                    dropped += 1
                    continue
                history[slot] = v
                # 2. bitmask test-and-set
                bit = np.uint32(1) << np.uint32(v & 31)
                if visited[v >> 5] & bit or atomics.or_(visited, v >> 5, bit) & bit:
                    continue
                # 3. the functor's own predicate on the survivors
                pos = keep(v, data, tmp, pos)
            starts[c] = lo
            counts[c] = pos - lo
            culled[c] = dropped

    return kernel_pair(cull)


def execute(ctx, frontier, out, hooks, data, *, visited=None):
    """Cull and filter ``frontier`` into ``out``; returns how many the heuristics dropped,
    or None where a kernel left that count on a context tally (:meth:`Context.tally`:
    it reaches the record at the next :meth:`Context.flush`, costing no sync here).

    ``visited`` defaults to the enactor's visited bitmap; a freshly cleared
    bitmap instead makes this a per-call duplicate remover (``mode="unique"``).
    """
    n = frontier.size
    out.reserve(n)
    if n == 0:
        out.clear()
        return 0
    if frontier.kind != "vertex":
        raise ValueError("culling filters work on vertex frontiers")
    if visited is None:
        visited = ctx.visited_words()
    return CULL(ctx, frontier, out, hooks, data, visited)


def cuda_execute(ctx, frontier, out, hooks, data, visited):
    backend = ctx.backend
    n = frontier.size
    block = backend.block_size
    flags = ctx.scratch("filter.flags", n, np.int8)
    counts, slot = ctx.tally("culled")  # no fill, no read: the statistic costs nothing here
    backend.run(cuda_kernel(hooks, block), n, frontier.queue, frontier.length, flags,
                visited, counts, np.int64(slot), data, block_size=block)
    predicated.cuda_compact(ctx, frontier, out, flags)
    return None


def cpu_execute(ctx, frontier, out, hooks, data, visited):
    backend = ctx.backend
    n = frontier.size
    nchunks = backend.chunks(n)
    starts = np.empty(nchunks, dtype=np.int64)
    counts = np.empty(nchunks, dtype=np.int64)
    culled = np.zeros(nchunks, dtype=np.int64)
    parallel, serial = cpu_kernel(hooks)
    if nchunks == 1 or n < backend.serial_below:
        # one serial pass straight into the output queue: nothing to compact
        serial(frontier.queue, n, out.queue, starts, counts, culled, 1, visited, data)
        out.set_size(counts[0])
        return int(culled[0])
    tmp = ctx.scratch("filter.tmp", n, frontier.dtype)
    parallel(frontier.queue, n, tmp, starts, counts, culled, nchunks, visited, data)
    out.set_size(cpu_compact(tmp, starts, counts, nchunks, out.queue))
    return int(culled.sum())


CULL = Operator("filter.cull", "ctx, frontier, out, hooks, data, visited", cpu=cpu_execute,
                cuda=cuda_execute)
