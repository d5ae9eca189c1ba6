"""What every push strategy shares: the kernel spec and the inline emit/weight helpers.

A push kernel is specialised on a :class:`PushSpec`:

``weighted``
    read ``values[e]`` (else every weight is 1.0 and ``values`` is never touched);
``output``
    ``"vertex"`` appends ``dst``, ``"edge"`` appends the edge id ``e`` (an edge
    frontier), ``"none"`` appends nothing (the advance is run for its side effects);
``mark_visited``
    also set ``dst``'s bit in the visited bitmap (32-bit words), which pull
    traversal reads; fused here so that push needs no extra pass.
``skip_visited``
    test ``dst``'s visited bit before calling the functor and skip the edge
    when it is set (the functor declared :attr:`gunpy.Functor.skip_visited`):
    Gunrock's visited-bitmask culling, done where the edge is read, so a
    visited destination costs one read of a small bitmap instead of the
    functor's atomic.
"""

import functools
from collections import namedtuple

import numpy as np

from gunpy import atomics
from gunpy.operators.common import device_attributes

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["PushSpec", "OUTPUTS", "cuda_emit", "cuda_weight", "cuda_accept", "cuda_visit",
           "cpu_emit", "cpu_weight", "cpu_visit", "cuda_append", "cuda_count_edges",
           "cuda_count_degrees", "cuda_tally", "cuda_warp_sum", "cuda_warp_max",
           "cuda_block_expand"]

PushSpec = namedtuple("PushSpec", "weighted output mark_visited skip_visited")

OUTPUTS = ("vertex", "edge", "none")

_WARP_HELPERS = ("cuda_append", "cuda_warp_sum", "cuda_warp_max", "cuda_count_degrees",
                 "cuda_count_edges", "cuda_tally")


def cuda_weight(weighted):
    from gunpy.backends.cuda import device

    @device
    def weight(values, e):
        if weighted:
            return values[e]
        return 1.0
    return weight


@functools.cache
def _warp_helpers():
    """The warp-level device functions every push kernel shares (and its tally of what it
    emitted), made on first CUDA use."""
    from gunpy.backends.cuda import device

    @device
    def cuda_append(queue, length, item):
        """Append ``item`` with one atomic per converged group of lanes (warp aggregation)."""
        mask = cuda.activemask()
        leader = cuda.ffs(mask) - 1
        rank = cuda.popc(mask & cuda.lanemask_lt())
        base = 0
        if cuda.laneid == leader:
            base = cuda.atomic.add(length, 0, cuda.popc(mask))
        base = cuda.shfl_sync(mask, base, leader)
        queue[base + rank] = item

    @device
    def cuda_warp_sum(x):
        """The sum of ``x`` over the warp, in every lane (a butterfly of full-mask shuffles:
        all 32 lanes must call it)."""
        off = 16
        while off > 0:
            x += cuda.shfl_xor_sync(0xFFFFFFFF, x, off)
            off //= 2
        return x

    @device
    def cuda_warp_max(x):
        """The largest ``x`` over the warp, in every lane (all 32 lanes must call it)."""
        off = 16
        while off > 0:
            y = cuda.shfl_xor_sync(0xFFFFFFFF, x, off)
            if y > x:
                x = y
            off //= 2
        return x

    @device
    def cuda_count_degrees(out_length, edges, largest):
        """Add every thread's ``edges`` to ``out_length[1]`` and raise ``out_length[2]`` to the
        largest ``largest``: one atomic of each per block.

        A warp sums (and maxes) with shuffles, its first lane leaves the result in
        shared memory, and after a block barrier the first warp combines the
        warps' and makes the block's two global atomics. Called once, by every
        thread of every block (all have left the grid-stride loop: full warps for
        the shuffles, the whole block for the barrier), at the end of a push
        kernel. ``largest`` is -1 for a thread that emitted nothing; the slot
        starts at -1 (:meth:`gunpy.Frontier.set_size`), so it stays -1 when
        nothing was emitted.
        """
        sums = cuda.shared.array(32, np.int64)  # a slot a warp (at most 32 warps a block)
        tops = cuda.shared.array(32, np.int64)
        lane = cuda.laneid
        warp = cuda.threadIdx.x // 32
        total = cuda_warp_sum(np.int64(edges))
        top = cuda_warp_max(np.int64(largest))
        if lane == 0:
            sums[warp] = total
            tops[warp] = top
        cuda.syncthreads()
        if warp == 0:
            nwarps = (cuda.blockDim.x + 31) // 32
            total = sums[lane] if lane < nwarps else np.int64(0)
            top = tops[lane] if lane < nwarps else np.int64(-1)
            total = cuda_warp_sum(total)
            top = cuda_warp_max(top)
            if lane == 0:
                if total != 0:
                    cuda.atomic.add(out_length, 1, total)
                if top >= 0:
                    cuda.atomic.max(out_length, 2, top)

    @device
    def cuda_tally(total, largest, d):
        """A thread's ``(total, largest)`` of the degrees it emitted, with ``d`` (-1: nothing
        emitted, the tally as it was), for :func:`cuda_count_degrees` at the kernel's end."""
        if d >= 0:
            return total + d, max(largest, d)
        return total, largest

    @device
    def cuda_count_edges(out_length, edges):
        """Add every thread's ``edges`` to ``out_length[1]`` (one atomic a block); see
        :func:`cuda_count_degrees`, which also keeps the largest degree."""
        cuda_count_degrees(out_length, edges, np.int64(-1))

    return {"cuda_append": cuda_append, "cuda_warp_sum": cuda_warp_sum,
            "cuda_warp_max": cuda_warp_max, "cuda_count_degrees": cuda_count_degrees,
            "cuda_count_edges": cuda_count_edges, "cuda_tally": cuda_tally}


#: ``cuda_append`` and the other warp helpers: made on first use (:func:`_warp_helpers`)
__getattr__ = device_attributes(__name__, _WARP_HELPERS, _warp_helpers)


def cuda_emit(output, mark_visited):
    """``emit(out_queue, out_length, visited, dst, e, row_offsets)``: append ``dst`` (or
    the edge ``e``) with a warp-aggregated atomic, mark ``dst`` visited when asked, and
    return the out-degree of an appended vertex (else 0).

    The one emit contract of every push strategy: a kernel sums what its thread
    emitted and hands the sum to :func:`cuda_count_edges` at its end, so the
    output frontier knows its own push work (``out_length[1]``; the launcher calls
    ``out.touched(counted=spec.output == "vertex", bound=edges)``) and the next
    level needs no degree scan.
    """
    from gunpy.backends.cuda import device
    cuda_append = _warp_helpers()["cuda_append"]
    # plain booleans: device code cannot compare strings
    append = output != "none"
    as_vertex = output == "vertex"

    @device
    def emit(out_queue, out_length, visited, dst, e, row_offsets):
        if mark_visited:
            atomics.or_(visited, dst >> 5, np.uint32(1) << np.uint32(dst & 31))
        if append:
            if as_vertex:
                cuda_append(out_queue, out_length, dst)
                return np.int64(row_offsets[dst + 1] - row_offsets[dst])
            cuda_append(out_queue, out_length, e)
        return np.int64(0)

    return emit


def cuda_block_expand(visit, block):
    """``(total, largest) = expand(cur, n, row_offsets, hub, args)``: a block walks the
    edge lists of ``cur[:n]``'s vertices the TWC way, calling ``visit(src, e, args)``
    on each edge.

    For kernels that run as one block (the fused BFS levels and near/far
    steps): the block takes a tile of ``block`` vertices, one a thread; a list
    of at least ``min(256, block)`` edges is walked by the whole block, one of
    at least 32 by its warp, the rest by their own thread, so a hub costs a
    few strided steps instead of thousands of dependent ones (Merrill et al.'s
    thread/warp/CTA expansion, Gunrock section 4.4.1). Threads with a big list
    bid for the block through ``hub`` (4 shared int64 slots; the last writer
    wins) and for their warp by a ballot; the winner's list is broadcast and
    every lane strides it. Every edge is visited exactly once, by one thread.

    ``visit`` returns the out-degree of the vertex it emitted, or -1;
    ``expand`` returns the thread's sum of those degrees and their largest
    (-1: none). Every thread of the block must call it with the same ``n``.
    """
    from gunpy.backends.cuda import device
    cuda_tally = _warp_helpers()["cuda_tally"]
    cta = min(256, block)

    @device
    def expand(cur, n, row_offsets, hub, args):
        tid = cuda.threadIdx.x
        lane = cuda.laneid
        total = np.int64(0)
        largest = np.int64(-1)
        for base in range(0, n, block):
            src = np.int64(0)
            start = np.int64(0)
            end = np.int64(0)
            if base + tid < n:
                src = np.int64(cur[base + tid])
                start = np.int64(row_offsets[src])
                end = np.int64(row_offsets[src + 1])
            # one loop, one visit site (the phases share it: a kernel inlines visit once)
            phase = 0
            while phase < 3:
                o_src = src
                first = start
                last = end
                step = np.int64(1)
                if phase == 0:
                    # 1. block phase: lists of at least `cta` edges, one at a time, all threads
                    if cuda.syncthreads_or(1 if end - start >= cta else 0):
                        if end - start >= cta:
                            hub[0] = tid
                        cuda.syncthreads()
                        if hub[0] == tid:
                            hub[1] = src
                            hub[2] = start
                            hub[3] = end
                            start = end  # this list is done
                        cuda.syncthreads()  # (the next bid follows syncthreads_or: all have read)
                        o_src = hub[1]
                        first = hub[2] + tid
                        last = hub[3]
                        step = block
                    else:
                        phase = 1
                if phase == 1:
                    # 2. warp phase: lists of at least 32 edges, one at a time per warp
                    bids = cuda.ballot_sync(0xFFFFFFFF, end - start >= 32)
                    if bids:
                        owner = cuda.ffs(bids) - 1
                        o_src = cuda.shfl_sync(0xFFFFFFFF, src, owner)
                        first = cuda.shfl_sync(0xFFFFFFFF, start, owner) + lane
                        last = cuda.shfl_sync(0xFFFFFFFF, end, owner)
                        step = 32
                        if lane == owner:
                            start = end
                    else:
                        phase = 2
                if phase == 2:
                    # 3. thread phase: the short lists, each by its own thread
                    first = start
                    phase = 3
                for e in range(first, last, step):
                    total, largest = cuda_tally(total, largest, visit(o_src, e, args))
        return total, largest

    return expand


def cuda_accept(hooks, spec):
    """``accept(src, dst, e, w, visited, data)``: the functor's verdict on one edge.

    Skips visited destinations first when ``spec.skip_visited``; runs
    ``apply_edge`` when ``cond_edge`` holds.
    """
    from gunpy.backends.cuda import device
    cond_edge, apply_edge = hooks.cond_edge, hooks.apply_edge
    skip = bool(spec.skip_visited)

    @device
    def accept(src, dst, e, w, visited, data):
        if skip and (visited[dst >> 5] >> np.uint32(dst & 31)) & np.uint32(1):
            return False
        if cond_edge(src, dst, e, w, data):
            apply_edge(src, dst, e, w, data)
            return True
        return False

    return accept


def cuda_visit(hooks, spec, missed=-1):
    """``d = visit(src, e, row_offsets, column_indices, values, out_queue, out_length,
    visited, data)``: the functor on the edge ``e`` out of ``src`` (:func:`cuda_accept`)
    and, where it takes it, the emit (:func:`cuda_emit`); returns what the emit returned,
    or ``missed`` for an edge not taken. Every push kernel's step for one edge."""
    from gunpy.backends.cuda import device
    accept = cuda_accept(hooks, spec)
    weight = cuda_weight(spec.weighted)
    emit = cuda_emit(spec.output, spec.mark_visited)

    @device
    def visit(src, e, row_offsets, column_indices, values, out_queue, out_length, visited,
              data):
        dst = column_indices[e]
        w = weight(values, e)
        if accept(src, dst, e, w, visited, data):
            return emit(out_queue, out_length, visited, dst, e, row_offsets)
        return np.int64(missed)

    return visit


def cpu_weight(weighted):
    from numba import njit

    @njit(inline="always")
    def weight(values, e):
        if weighted:
            return values[e]
        return 1.0
    return weight


def cpu_emit(output):
    """``pos = emit(tmp, pos, dst, e)``: append to a chunk's private slice."""
    from numba import njit
    as_vertex = output == "vertex"
    as_edge = output == "edge"

    @njit(inline="always")
    def emit(tmp, pos, dst, e):
        if as_vertex:
            tmp[np.uint64(pos)] = dst
            return pos + 1
        if as_edge:
            tmp[np.uint64(pos)] = e
            return pos + 1
        return pos

    return emit


def cpu_visit(hooks, spec):
    """``pos = visit(src, lo, hi, column_indices, values, tmp, pos, visited, data, atomic)``.

    Run the functor over ``src``'s edges ``lo..hi-1`` and append the accepted
    items to a chunk's private slice of ``tmp``: the inner loop every CPU push
    strategy shares (they differ only in how they cut the work into chunks).

    ``atomic``: other chunks run at the same time and may mark bits in the same
    bitmap word, so visited marks are atomic ORs; a lone chunk marks with a
    plain store, reusing the word it read for the ``skip_visited`` test (no
    one else writes the bitmap meanwhile: hooks never see it).
    """
    from numba import njit
    cond_edge, apply_edge = hooks.cond_edge, hooks.apply_edge
    weight = cpu_weight(spec.weighted)
    emit = cpu_emit(spec.output)
    skip = bool(spec.skip_visited)
    mark = bool(spec.mark_visited)

    @njit(inline="always")
    def visit(src, lo, hi, column_indices, values, tmp, pos, visited, data, atomic):
        # the kernel's own indexing is unsigned: numba checks every signed index for
        # wrap-around (road network BFS levels, one core: 2.7 -> 2.3 ms); the hooks get
        # the signed values they always had
        for ue in range(np.uint64(lo), np.uint64(hi)):
            dst = column_indices[ue]
            if dst < 0:  # never (a graph's indices are not negative): LLVM learns dst >= 0
                continue  # and drops numba's wrap-around test on every hook's dst index
            word_at = np.uint64(dst) >> np.uint64(5)
            bit = np.uint32(1) << np.uint32(dst & 31)
            word = np.uint32(0)
            if skip:
                word = visited[word_at]
                if word & bit:
                    continue
            e = np.int64(ue)
            w = weight(values, ue)
            if cond_edge(src, dst, e, w, data):
                apply_edge(src, dst, e, w, data)
                if mark:
                    if atomic:
                        atomics.or_(visited, word_at, bit)
                    elif skip:
                        visited[word_at] = word | bit
                    else:
                        visited[word_at] |= bit
                pos = emit(tmp, pos, dst, e)
        return pos

    return visit
