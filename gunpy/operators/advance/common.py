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
"""

from collections import namedtuple

import numpy as np
from numba import cuda  # a module global: the simulator swaps it for its fake module

from gunpy import atomics

__all__ = ["PushSpec", "OUTPUTS", "cuda_emit", "cuda_weight", "cpu_emit", "cpu_weight", "cpu_visit",
           "cuda_append"]

PushSpec = namedtuple("PushSpec", "weighted output mark_visited")

OUTPUTS = ("vertex", "edge", "none")


def cuda_weight(weighted):
    @cuda.jit(device=True, inline="always")
    def weight(values, e):
        if weighted:
            return values[e]
        return 1.0
    return weight


@cuda.jit(device=True, inline="always")
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


def cuda_emit(output, mark_visited):
    """``emit(out_queue, out_length, visited, dst, e)``: append with a warp-aggregated atomic."""
    # plain booleans: device code cannot compare strings
    append = output != "none"
    as_vertex = output == "vertex"

    @cuda.jit(device=True, inline="always")
    def emit(out_queue, out_length, visited, dst, e):
        if mark_visited:
            atomics.or_(visited, dst >> 5, np.uint32(1) << np.uint32(dst & 31))
        if append:
            if as_vertex:
                cuda_append(out_queue, out_length, dst)
            else:
                cuda_append(out_queue, out_length, e)

    return emit


def cpu_weight(weighted):
    from numba import njit

    @njit(inline="always")
    def weight(values, e):
        if weighted:
            return values[e]
        return 1.0
    return weight


def cpu_emit(output, mark_visited):
    """``pos = emit(tmp, pos, visited, dst, e)``: append to a chunk's private slice."""
    from numba import njit
    as_vertex = output == "vertex"
    as_edge = output == "edge"

    @njit(inline="always")
    def emit(tmp, pos, visited, dst, e):
        if mark_visited:
            atomics.or_(visited, dst >> 5, np.uint32(1) << np.uint32(dst & 31))
        if as_vertex:
            tmp[pos] = dst
            return pos + 1
        if as_edge:
            tmp[pos] = e
            return pos + 1
        return pos

    return emit


def cpu_visit(hooks, spec):
    """``pos = visit(src, lo, hi, column_indices, values, tmp, pos, visited, data)``.

    Run the functor over ``src``'s edges ``lo..hi-1`` and append the accepted
    items to a chunk's private slice of ``tmp``: the inner loop every CPU push
    strategy shares (they differ only in how they cut the work into chunks).
    """
    from numba import njit
    cond_edge, apply_edge = hooks.cond_edge, hooks.apply_edge
    weight = cpu_weight(spec.weighted)
    emit = cpu_emit(spec.output, spec.mark_visited)

    @njit(inline="always")
    def visit(src, lo, hi, column_indices, values, tmp, pos, visited, data):
        for e in range(lo, hi):
            dst = column_indices[e]
            w = weight(values, e)
            if cond_edge(src, dst, e, w, data):
                apply_edge(src, dst, e, w, data)
                pos = emit(tmp, pos, visited, dst, e)
        return pos

    return visit
