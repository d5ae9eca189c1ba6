"""neighbor_reduce: each vertex sums a value over its in-edges (or out-edges).

Gunrock's NeighborReduce (and GraphBLAS's row-based SpMV, "pull"): for every
vertex ``v`` of the frontier (``None``: all vertices), ``out[v]`` becomes the
sum of ``gather_edge(src, dst, edge, weight, data)`` over ``v``'s in-edges
``src -> v`` (``edges="in"``, which needs the reverse graph) or over its
out-edges ``v -> dst`` (``edges="out"``). It is a gather: one writer per
vertex, no atomics, which is why PageRank's pull variant uses it.
``op="min"`` / ``"max"`` reduce with min or max instead (identity: +-inf).

Fused with a compute (a vertex program's gather and apply in one pass):
``apply=True`` runs the functor's ``apply_vertex(v, data)`` on each vertex
right after ``out[v]`` is written, by the thread that wrote it; with
``aggregates=k`` (1 to 4) ``apply_vertex`` returns a tuple of ``k`` floats
and the call returns their sums over the vertices (Pregel's aggregators:
PageRank's L1 change and next dangling mass), accumulated per thread and
combined per block: no per-vertex array, no extra pass, one read.

CUDA mappings: a thread per vertex, or a warp per vertex with a shuffle
reduction for long lists (chosen by average degree, or ``mapping=``).
CPU: a ``prange`` over vertices.
"""

import numpy as np
from llvmlite import ir as llvm_ir
from numba.extending import intrinsic

from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import compile_functor, hooks_cache, reads_edge_data
from gunpy.operators.advance.common import cpu_weight, cuda_weight
from gunpy.operators.common import degree_sum, problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.operator import Operator
from gunpy.operators.reduce import combiner

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["neighbor_reduce", "run", "execute", "cuda_execute", "cpu_execute", "MAPPINGS", "OPS",
           "MAX_AGGREGATES"]

MAPPINGS = ("thread", "warp", "auto")
OPS = ("sum", "min", "max")
#: the most sums one call returns (``aggregates=``)
MAX_AGGREGATES = 4


@hooks_cache
def _reads_edge(hooks, weighted):
    """Whether ``gather_edge`` may read its edge (or, ``weighted``, its weight): judged from
    its bytecode once per compiled functor, not on every call."""
    return reads_edge_data(hooks, ("gather_edge",), weighted=weighted)


def _combiner(op, jit):
    """``(combine, identity)``: reduce's combine, and the float identity of ``op``."""
    ident = 0.0 if op == "sum" else (np.inf if op == "min" else -np.inf)
    return combiner(op, jit), ident


def _finisher(hooks, apply, aggregates, jit):
    """``finish(v, data)``: the hook's apply step as four floats (zeros past ``aggregates``;
    the kernels keep four accumulators and add only the first ``aggregates``)."""
    apply_vertex = hooks.apply_vertex
    if not aggregates:
        @jit
        def finish(v, data):
            if apply:
                apply_vertex(v, data)
            return 0.0, 0.0, 0.0, 0.0
        return finish
    # a hook's tuple is at least `aggregates` long: read past it only as a repeat
    i1, i2, i3 = (min(i, aggregates - 1) for i in (1, 2, 3))

    @jit
    def finish(v, data):
        r = apply_vertex(v, data)
        return float(r[0]), float(r[i1]), float(r[i2]), float(r[i3])
    return finish


_FULL = 0xFFFFFFFF


@hooks_cache
def cuda_kernel(hooks, weighted, incoming, mapping, op="sum", apply=False, aggregates=0):
    from gunpy.backends.cuda import device, kernel
    gather_edge = hooks.gather_edge
    weight = cuda_weight(weighted)
    ids = _reads_edge(hooks, weighted)  # as execute's
    combine, ident = _combiner(op, device)
    finish = _finisher(hooks, apply, aggregates, device)
    add_up = _cuda_add_up(aggregates, device)

    @device
    def edge_value(v, p, offsets_nbrs, edge_ids, values, data):
        u = offsets_nbrs[p]
        e = edge_ids[p] if incoming and ids else p
        w = weight(values, e)
        if incoming:
            return gather_edge(u, v, e, w, data)
        return gather_edge(v, u, e, w, data)

    def by_thread(queue, length, all_vertices, offsets, nbrs, edge_ids, values, out, data,
                  tally, slot, sums):
        n = length[0]
        read = np.int64(0)
        s0 = s1 = s2 = s3 = 0.0
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            v = i if all_vertices else queue[i]
            acc = ident
            for p in range(offsets[v], offsets[v + 1]):
                acc = combine(acc, edge_value(v, p, nbrs, edge_ids, values, data))
            out[v] = acc
            a = finish(v, data)
            s0, s1, s2, s3 = s0 + a[0], s1 + a[1], s2 + a[2], s3 + a[3]
            read += offsets[v + 1] - offsets[v]
        # the edges read (a statistic): counted here, not by a degree scan and a read
        if read and not all_vertices:
            cuda.atomic.add(tally, slot, read)
        if aggregates:
            add_up(sums, s0, s1, s2, s3)

    def by_warp(queue, length, all_vertices, offsets, nbrs, edge_ids, values, out, data,
                tally, slot, sums):
        n = length[0]
        lane = cuda.laneid
        read = np.int64(0)
        s0 = s1 = s2 = s3 = 0.0
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
                a = finish(v, data)
                s0, s1, s2, s3 = s0 + a[0], s1 + a[1], s2 + a[2], s3 + a[3]
                read += offsets[v + 1] - offsets[v]
        if read and not all_vertices:  # lane 0 of each warp: the edges read
            cuda.atomic.add(tally, slot, read)
        if aggregates:
            add_up(sums, s0, s1, s2, s3)

    return kernel(by_warp if mapping == "warp" else by_thread)


def _cuda_add_up(aggregates, device):
    """``add_up(sums, s0, s1, s2, s3)``: every thread's sums into ``sums[:aggregates]``.

    Every thread of the block calls it: 1. a butterfly reduction in each warp;
    2. lane 0 of each warp adds to the block's shared sums; 3. thread 0 adds
    those to ``sums``: one global atomic per block and aggregate."""
    k = max(aggregates, 1)

    @device
    def add_up(sums, s0, s1, s2, s3):
        sh = cuda.shared.array(4, np.float64)
        if cuda.threadIdx.x < 4:
            sh[cuda.threadIdx.x] = 0.0
        cuda.syncthreads()
        off = 16
        while off > 0:
            s0 += cuda.shfl_xor_sync(_FULL, s0, off)
            if k > 1:
                s1 += cuda.shfl_xor_sync(_FULL, s1, off)
            if k > 2:
                s2 += cuda.shfl_xor_sync(_FULL, s2, off)
            if k > 3:
                s3 += cuda.shfl_xor_sync(_FULL, s3, off)
            off //= 2
        if cuda.laneid == 0:
            cuda.atomic.add(sh, 0, s0)
            if k > 1:
                cuda.atomic.add(sh, 1, s1)
            if k > 2:
                cuda.atomic.add(sh, 2, s2)
            if k > 3:
                cuda.atomic.add(sh, 3, s3)
        cuda.syncthreads()
        if cuda.threadIdx.x < k:
            cuda.atomic.add(sums, cuda.threadIdx.x, sh[cuda.threadIdx.x])

    return add_up


@intrinsic
def _index(typingctx, i):
    """``i`` itself, with LLVM told that it is not negative (``llvm.assume``): a graph's
    vertex and edge ids are not, and numba would otherwise fix a negative index on every
    array the hooks index with them (road network: an edge's gather 15 % faster)."""
    def codegen(context, builder, signature, args):
        value, = args
        assume = builder.module.declare_intrinsic(
            "llvm.assume", fnty=llvm_ir.FunctionType(llvm_ir.VoidType(), [llvm_ir.IntType(1)]))
        builder.call(assume, [builder.icmp_signed(">=", value, llvm_ir.Constant(value.type, 0))])
        return value
    return i(i), codegen


def cpu_kernel(hooks, weighted, incoming, op="sum", apply=False, aggregates=0,
               all_vertices=False):
    """``(parallel, serial)`` builds of the CPU kernel."""
    return functor_pair(cpu_source, hooks, (weighted, incoming, op, apply, aggregates,
                                            all_vertices))


def cpu_source(hooks, weighted, incoming, op, apply=False, aggregates=0, all_vertices=False):
    """The CPU kernel's Python source for ``hooks`` (compiled by the callers): it returns
    ``(edges read, s0, s1, s2, s3)``, the sums of the apply step's aggregates.

    ``all_vertices`` is compiled in (the kernel's argument of that name is not read): a
    vertex id that is the loop's index needs no negative-index fix on each array it
    indexes, nor edge positions taken as unsigned (road network PageRank: 0.87 -> 0.64 ms
    a pass); neighbour and edge ids are known not negative (:func:`_index`)."""
    from numba import njit, prange

    gather_edge = hooks.gather_edge
    weight = cpu_weight(weighted)
    ids = _reads_edge(hooks, weighted)  # as execute's
    combine, ident = _combiner(op, njit(inline="always"))
    finish = _finisher(hooks, apply, aggregates, njit(inline="always"))
    k, every = aggregates, all_vertices
    one = np.uint64(1)

    @njit(inline="always")
    def edge_value(v, p, nbrs, edge_ids, values, data):
        u = _index(nbrs[p])
        e = _index(edge_ids[p]) if incoming and ids else np.int64(p)
        w = weight(values, e)
        if incoming:
            return gather_edge(u, v, e, w, data)
        return gather_edge(v, u, e, w, data)

    def reduce_(queue, n, all_vertices, offsets, nbrs, edge_ids, values, out, data):
        read = 0  # the edges read (a statistic, counted here rather than by a degree pass)
        s0 = s1 = s2 = s3 = 0.0  # per-thread sums in a parallel build (prange reductions)
        for i in prange(n):
            # not _index: an llvm.assume on the frontier's vertex is miscompiled in this
            # prange for AMD Zen 4 (LLVM's znver4 target): every other vertex read no edge
            v = np.int64(i) if every else np.int64(queue[i])
            start, stop = offsets[v], offsets[v + 1]
            read += stop - start
            acc = ident
            # two edges a step into the one accumulator, in list order (the same sums as
            # one at a time): LLVM's own unrolling by 8 leaves a short list to its
            # remainder loop (PageRank's pass: road network 7-13 %, delaunay_n16 2-9 %,
            # RMAT-18 5-8 % faster; by 4: no gain; two accumulators: no more, other sums)
            p, end = np.uint64(start), np.uint64(stop)
            while p + one < end:
                acc = combine(acc, edge_value(v, p, nbrs, edge_ids, values, data))
                acc = combine(acc, edge_value(v, p + one, nbrs, edge_ids, values, data))
                p += np.uint64(2)
            if p < end:
                acc = combine(acc, edge_value(v, p, nbrs, edge_ids, values, data))
            out[v] = acc
            a = finish(v, data)
            if k > 0:
                s0 += a[0]
            if k > 1:
                s1 += a[1]
            if k > 2:
                s2 += a[2]
            if k > 3:
                s3 += a[3]
        return read, s0, s1, s2, s3

    return reduce_


def execute(ctx, frontier, hooks, data, out, *, edges="in", mapping="auto", op="sum",
            apply=False, sums=None):
    """``out[v] = op of gather_edge over v's edges`` for the frontier's vertices; returns the
    edges read, or None where the kernel left that count on a context tally
    (:meth:`~gunpy.operators.Context.tally`: no degree scan, no sync for a statistic).

    ``apply``: run ``apply_vertex`` after each ``out[v]``; ``sums``: None, or a float64
    device array whose ``k`` slots receive the sums of the ``k`` aggregates ``apply_vertex``
    returns (written by the implementation, zeros when there is no vertex)."""
    if op not in OPS:
        raise ValueError(f"unknown neighbor_reduce op {op!r}; valid: {OPS}")
    if edges not in ("in", "out"):
        raise ValueError(f"neighbor_reduce edges must be 'in' or 'out', got {edges!r}")
    if mapping not in MAPPINGS:
        raise ValueError(f"unknown neighbor_reduce mapping {mapping!r}; valid: {MAPPINGS}")
    backend = ctx.backend
    incoming = edges == "in"
    # in_edge_ids only when gather_edge reads edge / weight (an undirected graph's twins)
    ids = incoming and _reads_edge(hooks, ctx.graph.weighted)
    dg = backend.graph(ctx.graph, csc=incoming, edge_ids=ids)
    offsets = dg.in_offsets if incoming else dg.row_offsets
    all_vertices = frontier is None
    queue, length, n = ctx.items(frontier)
    if n == 0:
        if sums is not None:
            backend.fill(sums, 0.0)
        return 0
    impl = NEIGHBOR_REDUCE.on(backend)
    args = (ctx, dg, hooks, data, out, queue, length, n, all_vertices, incoming, mapping, op)
    # the fused apply and its sums only when asked: implementations that predate them
    # keep working for everything else
    tallied = impl(*args, apply=apply, sums=sums) if apply or sums is not None else impl(*args)
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
                 op, *, apply=False, sums=None):
    offsets, nbrs, edge_ids = _arrays(dg, incoming)
    if mapping == "auto":
        mapping = "warp" if dg.num_edges >= 16 * max(dg.num_vertices, 1) else "thread"
    k = 0 if sums is None else sums.shape[0]
    kern = cuda_kernel(hooks, dg.weighted, incoming, mapping, op, apply, k)
    items = n * 32 if mapping == "warp" else n
    tally, slot = ctx.tally("edges") if not all_vertices else (ctx.vertex_count, 0)
    if sums is None:
        sums = ctx.kept("neighbor_reduce.no_sums", lambda: ctx.backend.zeros(1, np.float64))
    else:
        ctx.backend.fill(sums, 0.0)  # the blocks add theirs
    ctx.backend.run(kern, items, queue, length, all_vertices, offsets, nbrs, edge_ids,
                    dg.values, out, data, tally, np.int64(slot), sums)
    return True  # the kernel counted the edges it read


def cpu_execute(ctx, dg, hooks, data, out, queue, length, n, all_vertices, incoming, mapping,
                op, *, apply=False, sums=None):
    backend = ctx.backend
    offsets, nbrs, edge_ids = _arrays(dg, incoming)
    args = (queue, n, all_vertices, offsets, nbrs, edge_ids, dg.values, out, data)
    key = (dg.weighted, incoming, op, bool(apply), 0 if sums is None else sums.shape[0],
           bool(all_vertices))
    got = [None]
    # the work is the edges: over every vertex, the graph's (a frontier's: its size). A
    # pass over every vertex goes parallel from half serial_below's edges (2 threads, quiet
    # machine, PageRank's 20 passes: delaunay_n16's 393 K edges 12.1 -> 7.7 ms; below
    # ~200 K edges one core wins: facebook's 176 K 2.6 against 3.2 ms parallel)
    if (dg.num_edges < backend.serial_below // 2) if all_vertices else \
            (n < backend.serial_below):
        def call(k):
            got[0] = k(*args)
        ctx.log(build=run_thin(backend, cpu_source, hooks, key, call))
    else:
        got[0] = cpu_kernel(hooks, *key)[0](*args)
    read = got[0][0]
    if sums is not None:
        sums[:] = got[0][1:1 + sums.shape[0]]
    if all_vertices:
        return False  # execute logs the graph's edges
    # the kernel's count of a frontier's edges, on the tally a GPU's kernel adds to
    tally, slot = ctx.tally("edges")
    tally[slot] += read
    return True


def neighbor_reduce(graph, frontier, functor, data, out, *, edges="in", mapping="auto", op="sum",
                    apply=False, aggregates=0, context=None):
    """``out[v] = op of functor.gather_edge`` over ``v``'s in- (or out-) edges.

    For the vertices of ``frontier`` (``None``: every vertex); ``out`` is a
    float64 device array with a slot per vertex; the others keep their values.
    Returns ``out``; the edges read are logged in the context's record.

    ``gather_edge(src, dst, edge, weight, data)`` is called with the edge's own
    direction: with ``edges="in"`` it is ``(u, v, ...)`` for each in-edge ``u -> v``
    of ``v`` (``dst`` is the vertex being reduced), with ``edges="out"`` it is
    ``(v, u, ...)``. A vertex with no such edge gets ``op``'s identity: 0.0 for
    ``"sum"``, ``inf`` for ``"min"``, ``-inf`` for ``"max"``.

    ``apply=True`` runs ``functor.apply_vertex(v, data)`` on each vertex right
    after its ``out[v]`` is written, in the same pass (a fused :func:`compute`:
    it may read ``out[v]`` and overwrite it). ``aggregates=k`` (1 to
    :data:`MAX_AGGREGATES`; implies ``apply``): ``apply_vertex`` returns a tuple
    of ``k`` floats, and the call returns their sums over the vertices, a tuple
    of ``k`` floats (one read), instead of ``out``.

    Examples
    --------
    >>> import numpy as np, gunpy
    >>> from gunpy import Functor, operators as ops
    >>> class Degree(Functor):
    ...     @staticmethod
    ...     def gather_edge(src, dst, edge, weight, data):
    ...         return weight
    ...     @staticmethod
    ...     def apply_vertex(v, data):      # after out[v]: the in-degree, and its square
    ...         return (data[0][v], data[0][v] ** 2)
    >>> G = gunpy.Graph.from_edges([0, 0, 1], [1, 2, 2], num_vertices=3)
    >>> ctx = ops.Context(G, backend="cpu")
    >>> out = np.zeros(3)
    >>> ops.neighbor_reduce(G, None, Degree, (out,), out, aggregates=2, context=ctx)
    (3.0, 5.0)
    >>> out.tolist()
    [0.0, 1.0, 2.0]
    """
    ctx = context_for(graph, frontier, context)
    result = run(ctx, frontier, compile_functor(functor, ctx.backend), problem_data(data), out,
                 edges, mapping, op, apply, aggregates)
    ctx.done()
    return result


def run(ctx, frontier, hooks, data, out, edges, mapping, op, apply=False, aggregates=0):
    """:func:`neighbor_reduce` once its arguments are checked (``hooks``: the compiled functor);
    returns ``out``, or the sums of the ``aggregates``."""
    if isinstance(aggregates, bool) or aggregates not in range(MAX_AGGREGATES + 1):
        raise ValueError(f"neighbor_reduce aggregates must be an integer from 0 to "
                         f"{MAX_AGGREGATES}, got {aggregates!r}")
    if frontier is not None:
        frontier.ensure_queue(ctx.scratch)
    sums = None
    if aggregates:
        # the backend's sums, one per aggregate count (no allocation per call)
        sums = ctx.backend.workspace(f"neighbor_reduce.sums{aggregates}", aggregates, np.float64)
    read = execute(ctx, frontier, hooks, data, out, edges=edges, mapping=mapping, op=op,
                   apply=apply or bool(aggregates), sums=sums)
    ctx.log(edges=read or 0, direction="pull", strategy="neighbor_reduce")
    if sums is None:
        return out
    return tuple(ctx.backend.read_head(sums, aggregates).tolist())


NEIGHBOR_REDUCE = Operator("neighbor_reduce",
                           "ctx, dg, hooks, data, out, queue, length, n, all_vertices, "
                           "incoming, mapping, op, *, apply, sums",
                           cpu=cpu_execute, cuda=cuda_execute)


callable_module(__name__, neighbor_reduce)
