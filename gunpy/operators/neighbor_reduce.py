"""neighbor_reduce: each vertex sums a value over its in-edges (or out-edges).

Gunrock's NeighborReduce (and GraphBLAS's row-based SpMV, "pull"): for every
vertex ``v`` of the frontier (``None``: all vertices), ``out[v]`` becomes the
sum of ``gather_edge(src, dst, edge, weight, data)`` over ``v``'s in-edges
``src -> v`` (``edges="in"``, which needs the reverse graph) or over its
out-edges ``v -> dst`` (``edges="out"``). It is a gather: one writer per
vertex, no atomics, which is why PageRank's pull variant uses it.
``op="min"`` / ``"max"`` reduce with min or max instead (identity: +-inf).

CUDA mappings: a thread per vertex, or a warp per vertex with a shuffle
reduction for long lists (chosen by average degree, or ``mapping=``).
CPU: a ``prange`` over vertices.
"""

import numpy as np
from numba import cuda  # a module global: the simulator swaps it for its fake module

from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import compile_functor, hooks_cache
from gunpy.operators.advance.common import cpu_weight, cuda_weight
from gunpy.operators.common import degree_sum, problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.reduce import combiner

__all__ = ["neighbor_reduce", "run", "execute", "cuda_execute", "cpu_execute", "MAPPINGS", "OPS"]

MAPPINGS = ("thread", "warp", "auto")
OPS = ("sum", "min", "max")


def _combiner(op, jit):
    """``(combine, identity)``: reduce's combine, and the float identity of ``op``."""
    ident = 0.0 if op == "sum" else (np.inf if op == "min" else -np.inf)
    return combiner(op, jit), ident


_FULL = 0xFFFFFFFF


@hooks_cache
def cuda_kernel(hooks, weighted, incoming, mapping, op="sum"):
    from gunpy.backends.cuda import kernel
    gather_edge = hooks.gather_edge
    weight = cuda_weight(weighted)
    combine, ident = _combiner(op, cuda.jit(device=True, inline="always"))

    @cuda.jit(device=True, inline="always")
    def edge_value(v, p, offsets_nbrs, edge_ids, values, data):
        u = offsets_nbrs[p]
        e = edge_ids[p] if incoming else p
        w = weight(values, e)
        if incoming:
            return gather_edge(u, v, e, w, data)
        return gather_edge(v, u, e, w, data)

    def by_thread(queue, length, all_vertices, offsets, nbrs, edge_ids, values, out, data,
                  tally, slot):
        n = length[0]
        read = np.int64(0)
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            v = i if all_vertices else queue[i]
            acc = ident
            for p in range(offsets[v], offsets[v + 1]):
                acc = combine(acc, edge_value(v, p, nbrs, edge_ids, values, data))
            out[v] = acc
            read += offsets[v + 1] - offsets[v]
        # the edges read (a statistic): counted here, not by a degree scan and a read
        if read and not all_vertices:
            cuda.atomic.add(tally, slot, read)

    def by_warp(queue, length, all_vertices, offsets, nbrs, edge_ids, values, out, data,
                tally, slot):
        n = length[0]
        lane = cuda.laneid
        read = np.int64(0)
        for i in range(cuda.grid(1) // 32, n, cuda.gridsize(1) // 32):
            v = i if all_vertices else queue[i]
            acc = ident
            # 1. lanes stride over the list; 2. a butterfly reduction
            for p in range(offsets[v] + lane, offsets[v + 1], 32):
                acc = combine(acc, edge_value(v, p, nbrs, edge_ids, values, data))
            off = 16
            while off > 0:
                acc = combine(acc, cuda.shfl_xor_sync(_FULL, acc, off))
                off //= 2
            if lane == 0:
                out[v] = acc
                read += offsets[v + 1] - offsets[v]
        if read and not all_vertices:  # lane 0 of each warp: the edges read
            cuda.atomic.add(tally, slot, read)

    return kernel(by_warp if mapping == "warp" else by_thread)


def cpu_kernel(hooks, weighted, incoming, op="sum"):
    """``(parallel, serial)`` builds of the CPU kernel."""
    return functor_pair(cpu_source, hooks, (weighted, incoming, op))


def cpu_source(hooks, weighted, incoming, op):
    """The CPU kernel's Python source for ``hooks`` (compiled by the callers)."""
    from numba import njit, prange

    gather_edge = hooks.gather_edge
    weight = cpu_weight(weighted)
    combine, ident = _combiner(op, njit(inline="always"))

    def reduce_(queue, n, all_vertices, offsets, nbrs, edge_ids, values, out, data):
        read = 0  # the edges read (a statistic, counted here rather than by a degree pass)
        for i in prange(n):
            v = np.int64(i) if all_vertices else np.int64(queue[i])
            read += offsets[v + 1] - offsets[v]
            acc = ident
            for p in range(offsets[v], offsets[v + 1]):
                u = nbrs[p]
                e = edge_ids[p] if incoming else p
                w = weight(values, e)
                if incoming:
                    acc = combine(acc, gather_edge(u, v, e, w, data))
                else:
                    acc = combine(acc, gather_edge(v, u, e, w, data))
            out[v] = acc
        return read

    return reduce_


def execute(ctx, frontier, hooks, data, out, *, edges="in", mapping="auto", op="sum"):
    """``out[v] = op of gather_edge over v's edges`` for the frontier's vertices; returns the
    edges read, or None where the kernel left that count on a context tally
    (:meth:`~gunpy.operators.Context.tally`: no degree scan, no sync for a statistic)."""
    if op not in OPS:
        raise ValueError(f"unknown neighbor_reduce op {op!r}; valid: {OPS}")
    if edges not in ("in", "out"):
        raise ValueError(f"neighbor_reduce edges must be 'in' or 'out', got {edges!r}")
    if mapping not in MAPPINGS:
        raise ValueError(f"unknown neighbor_reduce mapping {mapping!r}; valid: {MAPPINGS}")
    backend = ctx.backend
    incoming = edges == "in"
    dg = backend.graph(ctx.graph, csc=incoming)
    offsets = dg.in_offsets if incoming else dg.row_offsets
    all_vertices = frontier is None
    if all_vertices:
        queue, length, n = ctx.dummy_queue, ctx.vertex_count, ctx.num_vertices
    else:
        queue, length, n = frontier.queue, frontier.length, frontier.size
    if n == 0:
        return 0
    tallied = backend.operator("neighbor_reduce")(ctx, dg, hooks, data, out, queue, length, n,
                                                  all_vertices, incoming, mapping, op)
    if all_vertices:
        return dg.num_edges
    if tallied:
        return None
    # the edges read: the frontier's in- (or out-) degree sum
    return degree_sum(backend, offsets, queue, n)


def _arrays(dg, incoming):
    if incoming:
        return dg.in_offsets, dg.in_indices, dg.in_edge_ids
    return dg.row_offsets, dg.column_indices, dg.in_edge_ids


def cuda_execute(ctx, dg, hooks, data, out, queue, length, n, all_vertices, incoming, mapping,
                 op):
    offsets, nbrs, edge_ids = _arrays(dg, incoming)
    if mapping == "auto":
        mapping = "warp" if dg.num_edges >= 16 * max(dg.num_vertices, 1) else "thread"
    k = cuda_kernel(hooks, dg.weighted, incoming, mapping, op)
    items = n * 32 if mapping == "warp" else n
    tally, slot = ctx.tally("edges") if not all_vertices else (ctx.vertex_count, 0)
    ctx.backend.run(k, items, queue, length, all_vertices, offsets, nbrs, edge_ids, dg.values,
                    out, data, tally, np.int64(slot))
    return True  # the kernel counted the edges it read


def cpu_execute(ctx, dg, hooks, data, out, queue, length, n, all_vertices, incoming, mapping,
                op):
    backend = ctx.backend
    offsets, nbrs, edge_ids = _arrays(dg, incoming)
    args = (queue, n, all_vertices, offsets, nbrs, edge_ids, dg.values, out, data)
    read = [0]
    # the work is the edges: over every vertex, the graph's (a frontier's: its size)
    if (dg.num_edges if all_vertices else n) < backend.serial_below:
        def call(k):
            read[0] = k(*args)
        ctx.log(build=run_thin(backend, cpu_source, hooks, (dg.weighted, incoming, op), call))
    else:
        read[0] = cpu_kernel(hooks, dg.weighted, incoming, op)[0](*args)
    if all_vertices:
        return False  # execute logs the graph's edges
    # the kernel's count of a frontier's edges, on the tally a GPU's kernel adds to
    tally, slot = ctx.tally("edges")
    tally[slot] += read[0]
    return True


def neighbor_reduce(graph, frontier, functor, data, out, *, edges="in", mapping="auto", op="sum",
                    context=None):
    """``out[v] = op of functor.gather_edge`` over ``v``'s in- (or out-) edges.

    For the vertices of ``frontier`` (``None``: every vertex); ``out`` is a
    float64 device array with a slot per vertex; the others keep their values.
    Returns ``out``; the edges read are logged in the context's record.
    """
    ctx = context_for(graph, frontier, context)
    run(ctx, frontier, compile_functor(functor, ctx.backend), problem_data(data), out,
        edges, mapping, op)
    ctx.flush()  # a standalone call's edges are in ctx.record when it returns
    return out


def run(ctx, frontier, hooks, data, out, edges, mapping, op):
    """:func:`neighbor_reduce` once its arguments are checked (``hooks``: the compiled functor)."""
    if frontier is not None:
        frontier.ensure_queue(ctx.scratch)
    read = execute(ctx, frontier, hooks, data, out, edges=edges, mapping=mapping, op=op)
    ctx.log(edges=read or 0, direction="pull", strategy="neighbor_reduce")
    return out


callable_module(__name__, neighbor_reduce)
