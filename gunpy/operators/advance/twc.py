"""twc: a vertex's neighbour list goes to a thread, a warp or a CTA by size.

Merrill, Garland and Grimshaw's thread/warp/CTA expansion (Gunrock section
4.4.1, "per-warp and per-CTA coarse-grained"). A block takes a tile of
``block`` frontier vertices, one per thread, then:

1. **CTA phase**: while some thread's list has at least ``block`` edges, those
   threads write their id to a shared slot (the last writer wins, Gunrock's
   shared-memory arbitration) and the whole block strips the winner's list;
2. **warp phase**: the same within each warp for lists of at least 32 edges,
   with a per-warp slot and warp votes;
3. **thread phase**: the short lists left are gathered with Merrill's
   fine-grained scan: a block-wide exclusive scan of their lengths in shared
   memory numbers their edges, and the block visits those edges in a strided
   loop, each thread finding the owner of its edge by binary search.

CPU analogue (there are no warps or CTAs): light vertices go in chunks of
vertices as in ``thread_mapped``; the edge lists of heavy vertices (degree at
least :data:`CPU_HEAVY`) are split into fixed blocks of edges shared out over
all threads, so one hub never serialises a task.
"""

import numpy as np

from gunpy.functor import hooks_cache
from gunpy.operators.advance.common import cpu_visit, cuda_visit
from gunpy.operators.common import cpu_compact

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["cuda_kernel", "cpu_kernel", "cuda_execute", "cpu_execute", "CPU_HEAVY"]

_FULL = 0xFFFFFFFF

#: CPU: vertices with at least this many out-edges have their lists split across threads
CPU_HEAVY = 4096
_CPU_EDGE_BLOCK = 2048


@hooks_cache
def cuda_kernel(hooks, spec, block):
    from gunpy.backends.cuda import kernel
    from gunpy.operators.advance.common import cuda_count_degrees
    from gunpy.operators.scan import block_inclusive_scan
    visit = cuda_visit(hooks, spec, missed=0)  # an edge not taken counts as degree 0
    nwarps = max(1, block // 32)

    def advance(row_offsets, column_indices, values, in_queue, in_length, out_queue, out_length,
                visited, data):
        cta_owner = cuda.shared.array(1, np.int32)
        warp_owner = cuda.shared.array(nwarps, np.int32)
        scan = cuda.shared.array(block, np.int64)
        small_src = cuda.shared.array(block, np.int64)
        small_start = cuda.shared.array(block, np.int64)
        tid = cuda.threadIdx.x
        lane = cuda.laneid
        warp = tid // 32
        n = in_length[0]
        found = np.int64(0)  # out-degree sum of what this thread emitted
        largest = np.int64(-1)  # and the largest of those degrees
        ntiles = (n + block - 1) // block
        for t in range(cuda.blockIdx.x, ntiles, cuda.gridDim.x):
            i = t * block + tid
            src = np.int64(-1)
            start = np.int64(0)
            end = np.int64(0)
            if i < n:
                src = np.int64(in_queue[i])
                start = row_offsets[src]
                end = row_offsets[src + 1]
            # 1. CTA phase: lists of at least `block` edges, one at a time, whole block
            while cuda.syncthreads_or(1 if end - start >= block else 0):
                if end - start >= block:
                    cta_owner[0] = tid
                cuda.syncthreads()
                owner = cta_owner[0]
                if owner == tid:
                    small_src[0] = src
                    small_start[0] = start
                    scan[0] = end
                cuda.syncthreads()
                o_src = small_src[0]
                o_start = small_start[0]
                o_end = scan[0]
                if owner == tid:
                    start = end  # this list is done
                cuda.syncthreads()
                for e in range(o_start + tid, o_end, block):
                    d = visit(o_src, e, row_offsets, column_indices, values, out_queue,
                              out_length, visited, data)
                    found += d
                    largest = max(largest, d)
                cuda.syncthreads()
            # 2. warp phase: lists of at least 32 edges, one at a time per warp
            while cuda.any_sync(_FULL, 1 if end - start >= 32 else 0):
                if end - start >= 32:
                    warp_owner[warp] = lane
                cuda.syncwarp()
                owner = warp_owner[warp]
                o_src = cuda.shfl_sync(_FULL, src, owner)
                o_start = cuda.shfl_sync(_FULL, start, owner)
                o_end = cuda.shfl_sync(_FULL, end, owner)
                if owner == lane:
                    start = end
                for e in range(o_start + lane, o_end, 32):
                    d = visit(o_src, e, row_offsets, column_indices, values, out_queue,
                              out_length, visited, data)
                    found += d
                    largest = max(largest, d)
                cuda.syncwarp()
            # 3. thread phase: a block-wide scan of the short lists' lengths ...
            length = end - start
            scan[tid] = length
            small_src[tid] = src
            small_start[tid] = start
            cuda.syncthreads()
            block_inclusive_scan(scan, tid, block)
            total = scan[block - 1]
            # ... then the block visits the flattened edges, each finding its owner
            for r in range(tid, total, block):
                lo = 0
                hi = block
                while lo < hi:  # first thread whose inclusive prefix exceeds r
                    mid = (lo + hi) // 2
                    if scan[mid] <= r:
                        lo = mid + 1
                    else:
                        hi = mid
                before = scan[lo - 1] if lo > 0 else np.int64(0)
                e = small_start[lo] + (r - before)
                d = visit(small_src[lo], e, row_offsets, column_indices, values, out_queue,
                          out_length, visited, data)
                found += d
                largest = max(largest, d)
            cuda.syncthreads()
        cuda_count_degrees(out_length, found, largest)

    return kernel(advance)


@hooks_cache
def cpu_kernel(hooks, spec):
    from numba import prange

    from gunpy.backends.cpu import kernel
    visit = cpu_visit(hooks, spec)

    def advance(row_offsets, column_indices, values, in_queue, n, tmp, starts, counts,
                nchunks, heavy, heavy_first, nheavy_blocks, visited, data):
        size = (n + nchunks - 1) // nchunks
        atomic = nchunks + nheavy_blocks > 1
        # 1. light vertices in vertex chunks; a chunk's output is bounded by its light edges
        starts[0] = 0
        for c in prange(nchunks):
            s = 0
            for i in range(c * size, min(n, (c + 1) * size)):
                v = in_queue[i]
                d = row_offsets[v + 1] - row_offsets[v]
                if d < CPU_HEAVY:
                    s += d
            starts[c + 1] = s
        for c in range(nchunks):
            starts[c + 1] += starts[c]
        light_total = starts[nchunks]
        for c in prange(nchunks):
            pos = starts[c]
            for i in range(c * size, min(n, (c + 1) * size)):
                src = in_queue[i]
                lo = row_offsets[src]
                hi = row_offsets[src + 1]
                if hi - lo >= CPU_HEAVY:
                    continue
                pos = visit(src, lo, hi, column_indices, values, tmp, pos, visited, data, atomic)
            counts[c] = pos - starts[c]
        # 2. heavy lists cut into fixed edge blocks, shared out over all threads
        for b in prange(nheavy_blocks):
            # heavy_first[k] = first block of heavy vertex k
            k = np.searchsorted(heavy_first, b, side="right") - 1
            src = heavy[k]
            lo = row_offsets[src] + (b - heavy_first[k]) * _CPU_EDGE_BLOCK
            hi = min(row_offsets[src + 1], lo + _CPU_EDGE_BLOCK)
            out0 = light_total + np.int64(b) * _CPU_EDGE_BLOCK
            pos = visit(src, lo, hi, column_indices, values, tmp, out0, visited, data, atomic)
            starts[nchunks + 1 + b] = out0
            counts[nchunks + b] = pos - out0

    return kernel(advance)


def cuda_execute(ctx, dg, frontier, out, hooks, data, *, edges, spec):
    backend = ctx.backend
    # at least two warps, so that the warp phase (32 <= degree < block) exists
    block = max(backend.block_size, 64)
    out.clear()
    backend.run(cuda_kernel(hooks, spec, block), frontier.size, dg.row_offsets,
                dg.column_indices, dg.values, frontier.queue, frontier.length, out.queue,
                out.length, ctx.visited_words(), data, block_size=block)
    out.touched(counted=spec.output == "vertex", bound=edges)  # one item an edge at most


def cpu_execute(ctx, dg, frontier, out, hooks, data, *, edges, spec):
    backend = ctx.backend
    n = frontier.size
    visited = ctx.visited_words()
    queue = frontier.queue[:n]
    deg = dg.row_offsets[queue + 1] - dg.row_offsets[queue]
    heavy = queue[deg >= CPU_HEAVY].astype(np.int64)
    hblocks = (deg[deg >= CPU_HEAVY] + _CPU_EDGE_BLOCK - 1) // _CPU_EDGE_BLOCK
    heavy_first = np.zeros(heavy.shape[0] + 1, dtype=np.int64)
    np.cumsum(hblocks, out=heavy_first[1:])
    nheavy_blocks = int(heavy_first[-1])
    nchunks = backend.chunks(n, min_chunk=256)
    tmp = ctx.scratch("advance.tmp", edges + nheavy_blocks * _CPU_EDGE_BLOCK, out.dtype)
    # starts: nchunks+1 light bounds, then one start per heavy block (shifted by one)
    starts = np.empty(nchunks + 1 + nheavy_blocks, dtype=np.int64)
    counts = np.empty(nchunks + nheavy_blocks, dtype=np.int64)
    cpu_kernel(hooks, spec)(dg.row_offsets, dg.column_indices, dg.values, frontier.queue, n, tmp,
                            starts, counts, nchunks, heavy, heavy_first[:-1].copy(),
                            nheavy_blocks, visited, data)
    chunk_starts = np.concatenate([starts[:nchunks], starts[nchunks + 1:]])
    out.set_size(cpu_compact(tmp, chunk_starts, counts, nchunks + nheavy_blocks, out.queue))
