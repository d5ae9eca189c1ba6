"""predicated: keep the frontier items whose condition is true, in order.

Gunrock's filter with a scan-and-compact pass (section 4.4.3, "Optimizing
Filter"). Negative ids (invalid placeholders) are always dropped. On a vertex
frontier the condition is ``cond_vertex(v, data)`` (then ``apply_vertex``); on
an edge frontier it is ``cond_edge(src, dst, e, weight, data)`` (then
``apply_edge``): a filter over edges.

CUDA: (1) a flag per item, running ``apply_vertex`` on kept ones; (2) an
exclusive scan of the flags (:mod:`gunpy.operators.scan`); (3) a scatter of the
kept items to their scanned positions. The output keeps the input order.
CPU: chunks of the frontier compact into their own slice, then one packing pass.
"""

import functools

import numpy as np

from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import hooks_cache
from gunpy.operators import scan
from gunpy.operators.advance.common import cpu_weight, cuda_weight
from gunpy.operators.common import cpu_compact
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["cuda_kernel", "scatter_kernel", "cpu_kernel", "cpu_source", "execute", "cuda_compact"]


@hooks_cache
def cuda_kernel(hooks, on_edges=False, weighted=False):
    from gunpy.backends.cuda import kernel
    cond_vertex, apply_vertex = hooks.cond_vertex, hooks.apply_vertex
    cond_edge, apply_edge = hooks.cond_edge, hooks.apply_edge
    weight = cuda_weight(weighted)

    def flag(in_queue, in_length, flags, edge_sources, column_indices, values, data):
        n = in_length[0]
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            x = in_queue[i]
            keep = False
            if x >= 0:
                if on_edges:
                    src = edge_sources[x]
                    dst = column_indices[x]
                    w = weight(values, x)
                    keep = cond_edge(src, dst, x, w, data)
                    if keep:
                        apply_edge(src, dst, x, w, data)
                else:
                    keep = cond_vertex(x, data)
                    if keep:
                        apply_vertex(x, data)
            flags[i] = 1 if keep else 0

    return kernel(flag)


@functools.lru_cache(maxsize=None)
def scatter_kernel():
    from gunpy.backends.cuda import kernel

    def scatter(in_queue, in_length, flags, positions, out_queue, out_length, total):
        n = in_length[0]
        start = cuda.grid(1)
        if start == 0:
            out_length[0] = total
        for i in range(start, n, cuda.gridsize(1)):
            if flags[i]:
                out_queue[positions[i]] = in_queue[i]

    return kernel(scatter)


def cpu_kernel(hooks, on_edges=False, weighted=False):
    """``(parallel, serial)`` builds of the CPU kernel."""
    return functor_pair(cpu_source, hooks, (on_edges, weighted))


def vertex_keeper(hooks):
    """``pos = keep(v, data, tmp, pos)``, the CPU filters' last step: when ``cond_vertex``
    holds, ``apply_vertex`` and append ``v`` to the chunk's slice of ``tmp``."""
    from numba import njit

    cond_vertex, apply_vertex = hooks.cond_vertex, hooks.apply_vertex

    @njit(inline="always")
    def keep(v, data, tmp, pos):
        if cond_vertex(v, data):
            apply_vertex(v, data)
            tmp[pos] = v
            return pos + 1
        return pos

    return keep


def cpu_source(hooks, on_edges, weighted):
    """The CPU kernel's Python source for ``hooks`` (compiled by the callers)."""
    from numba import prange

    keep = vertex_keeper(hooks)
    cond_edge, apply_edge = hooks.cond_edge, hooks.apply_edge
    weight = cpu_weight(weighted)

    def filter_(in_queue, n, tmp, starts, counts, nchunks, edge_sources, column_indices,
                values, data):
        size = (n + nchunks - 1) // nchunks
        for c in prange(nchunks):
            lo = c * size
            pos = lo
            for i in range(lo, min(n, lo + size)):
                x = in_queue[i]
                if x < 0:
                    continue
                if on_edges:
                    src = edge_sources[x]
                    dst = column_indices[x]
                    w = weight(values, x)
                    if cond_edge(src, dst, x, w, data):
                        apply_edge(src, dst, x, w, data)
                        tmp[pos] = x
                        pos += 1
                else:
                    pos = keep(x, data, tmp, pos)
            starts[c] = lo
            counts[c] = pos - lo

    return filter_


def cuda_compact(ctx, frontier, out, flags):
    """Steps 2-3 on CUDA: scan ``flags`` and scatter the flagged items to ``out``."""
    backend = ctx.backend
    n = frontier.size
    k_scatter = scatter_kernel()
    positions = ctx.scratch("filter.positions", n, np.int64)
    total = scan.exclusive_scan(backend, "nonzero", n, flags, flags, positions)
    backend.run(k_scatter, n, frontier.queue, frontier.length, flags, positions,
                out.queue, out.length, np.int64(total))
    out.assume_size(total)  # the scatter kernel wrote it to out.length


def execute(ctx, frontier, out, hooks, data):
    """Compact ``frontier`` into ``out``, keeping items whose condition holds."""
    n = frontier.size
    out.reserve(n)
    if n == 0:
        out.clear()
        return
    on_edges = frontier.kind == "edge"
    dg = ctx.backend.graph(ctx.graph, coo=on_edges)
    PREDICATED(ctx, frontier, out, hooks, data, dg, on_edges)


def cuda_execute(ctx, frontier, out, hooks, data, dg, on_edges):
    n = frontier.size
    flags = ctx.scratch("filter.flags", n, np.int8)
    ctx.backend.run(cuda_kernel(hooks, on_edges, dg.weighted and on_edges), n, frontier.queue,
                    frontier.length, flags, dg.edge_sources, dg.column_indices, dg.values, data)
    cuda_compact(ctx, frontier, out, flags)


def cpu_execute(ctx, frontier, out, hooks, data, dg, on_edges):
    backend = ctx.backend
    n = frontier.size
    weighted = dg.weighted and on_edges
    args = (dg.edge_sources, dg.column_indices, dg.values, data)
    nchunks = backend.chunks(n)
    starts = np.empty(nchunks, dtype=np.int64)
    counts = np.empty(nchunks, dtype=np.int64)
    if nchunks == 1 or n < backend.serial_below:
        # one serial pass straight into the output queue: nothing to compact
        build = run_thin(backend, cpu_source, hooks, (on_edges, weighted),
                         lambda k: k(frontier.queue, n, out.queue, starts, counts, 1, *args))
        out.set_size(counts[0])
        ctx.log(build=build)
        return
    parallel, _ = cpu_kernel(hooks, on_edges, weighted)
    tmp = ctx.scratch(f"filter.tmp.{frontier.kind}", n, frontier.dtype)
    parallel(frontier.queue, n, tmp, starts, counts, nchunks, *args)
    out.set_size(cpu_compact(tmp, starts, counts, nchunks, out.queue))


PREDICATED = Operator("filter.predicated", "ctx, frontier, out, hooks, data, dg, on_edges",
                      cpu=cpu_execute, cuda=cuda_execute)
