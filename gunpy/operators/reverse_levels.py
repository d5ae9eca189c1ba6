"""reverse_levels: a neighbor-reduce over a traversal's levels, deepest first, many to a call.

Brandes's backward phase (Gunrock section 5.1.3) walks the BFS levels from the
deepest up: every vertex of a level gathers over its out-edges from the level
below, which is final by then. On a road network that is a thousand levels
of a few dozen vertices, and per level the host work around a
:mod:`~gunpy.operators.neighbor_reduce` call costs far more than its edges.
Two steps make the walk cheap:

1. :func:`group`: the vertices grouped by level (a counting sort of a level
   array such as BFS depths) into a :class:`~gunpy.frontier.FrontierStore`,
   one frontier per level, as if each level had been saved (Gunrock 4.4.3's
   output-frontier storage) but with no work per level during the
   traversal, so the forward phase may run its thin levels fused
   (:mod:`gunpy.operators.levels`). A store filled level by level with
   :meth:`~gunpy.Enactor.save_frontier` serves as well.
2. :func:`reverse_levels`: ``out[v] = op of gather_edge over v's edges`` for
   the vertices of the stored levels ``start, start - 1, ...`` down to
   ``stop`` (or upward, ``ascending=True``), as many levels to a call as the
   backend runs fused: one writer per vertex, no atomics, each level's values
   final before the next level reads them. Every level gets its own ``stats.per_iteration`` record
   (strategy ``"neighbor_reduce"``, its edges read), the first the caller's,
   the later ones in ``ctx.record["then"]``, as :mod:`~gunpy.operators.levels`
   does.

CPU: one core runs every level under ``serial_below`` vertices in one call (a
level that large runs the parallel neighbor-reduce kernel alone); with
``fuse_below`` 0 (fusion off) one level a call. CUDA: thin levels (under
``fuse_below`` out-edges and no list of :data:`CUDA_HUB` or more, which
:func:`group` counts into each level's length row) run in one thread block, a
thread per vertex and a barrier between levels: one launch and no sync for all
of them (over in-edges, one read of their edges); any other level, or a store
of frontiers saved one by one, is a grid-wide neighbor-reduce over its stored
frontier (one launch, its edges counted in the kernel, no sync).
"""

import functools

import numpy as np

from gunpy.backends.cpu import run_thin, serial_kernel
from gunpy.functor import compile_functor, hooks_cache
from gunpy.operators import neighbor_reduce as nr
from gunpy.operators.advance.common import cpu_weight, cuda_weight
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["reverse_levels", "group", "run", "run_group", "cpu_group", "cuda_group",
           "cpu_reverse_reduce", "cuda_reverse_reduce", "CUDA_HUB"]


# ----------------------------------------------------------------------------- group
def _group_source(levels, n, num_levels, ids, offsets, lengths, row, row_offsets):
    # 1. count each level's vertices (offsets[l + 1]), out-edges and largest out-degree
    # (its length row, as a frontier's length holds them), 2. the levels' starts,
    # 3. scatter in id order (offsets[l] runs to the level's end), 4. shift the starts back
    for i in range(num_levels + 1):
        offsets[i] = 0
    for i in range(row * num_levels):
        lengths[i] = 0
    for v in range(n):
        lv = levels[v]
        if lv >= 0 and lv < num_levels:
            offsets[lv + 1] += 1
            d = row_offsets[v + 1] - row_offsets[v]
            lengths[row * lv + 1] += d
            lengths[row * lv + 2] = max(lengths[row * lv + 2], d)
    for i in range(num_levels):
        lengths[row * i] = offsets[i + 1]  # each level's device length, as save() copies it
        offsets[i + 1] += offsets[i]
    for v in range(n):
        lv = levels[v]
        if lv >= 0 and lv < num_levels:
            ids[offsets[lv]] = v
            offsets[lv] += 1
    for i in range(num_levels, 0, -1):
        offsets[i] = offsets[i - 1]
    offsets[0] = 0


@functools.cache
def _cpu_group_kernel():
    return serial_kernel(_group_source, nrt=False)


def cpu_group(ctx, levels, num_levels, ids, offsets, lengths, row):
    """Group ``0..n-1`` by ``levels`` into ``ids`` (one core, in id order); returns the
    ``num_levels + 1`` offsets and the levels' length rows as host arrays."""
    row_offsets = ctx.backend.graph(ctx.graph).row_offsets
    _cpu_group_kernel()(levels, ctx.num_vertices, num_levels, ids, offsets, lengths, row,
                        row_offsets)
    return offsets[:num_levels + 1], lengths[:row * num_levels].reshape(num_levels, row)


def _cuda_count(levels, n, num_levels, lengths, row, row_offsets):
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        lv = levels[v]
        if lv >= 0 and lv < num_levels:
            d = row_offsets[v + 1] - row_offsets[v]
            cuda.atomic.add(lengths, row * lv, 1)
            cuda.atomic.add(lengths, row * lv + 1, d)
            cuda.atomic.max(lengths, row * lv + 2, d)


def _cuda_scatter(levels, n, num_levels, ids, offsets, lengths, row):
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        lv = levels[v]
        if lv >= 0 and lv < num_levels:
            # the row's last slot (zeroed by the fill) is the level's cursor; the order
            # within a level is free
            ids[offsets[lv] + cuda.atomic.add(lengths, row * lv + row - 1, 1)] = v


@functools.cache
def _cuda_group_kernels():
    from gunpy.backends.cuda import kernel
    return kernel(_cuda_count), kernel(_cuda_scatter)


def cuda_group(ctx, levels, num_levels, ids, offsets, lengths, row):
    """Group by level on the device: count (atomics into the length rows), one read of the
    rows, the levels' starts uploaded, scatter (an atomic cursor per level, in its row)."""
    backend, n = ctx.backend, ctx.num_vertices
    count, scatter = _cuda_group_kernels()
    backend.fill(lengths[:row * num_levels], 0)
    backend.run(count, n, levels, np.int64(n), np.int64(num_levels), lengths, np.int64(row),
                backend.graph(ctx.graph).row_offsets)
    rows = backend.read_head(lengths, row * num_levels).reshape(num_levels, row)  # the sync
    host = np.zeros(num_levels + 1, dtype=np.int64)
    np.cumsum(rows[:, 0], out=host[1:])
    backend.copy_in(offsets, 0, host)
    backend.run(scatter, n, levels, np.int64(n), np.int64(num_levels), ids, offsets, lengths,
                np.int64(row))
    return host, rows


def group(graph, levels, num_levels, store, *, context=None):
    """Fill ``store`` (a :class:`~gunpy.frontier.FrontierStore`) with one frontier per level:
    frontier ``l`` holds the vertices ``v`` with ``levels[v] == l``, for ``l`` in
    ``0..num_levels-1`` (others are left out). ``levels``: an int device array with
    a slot per vertex (BFS depths, -1 unreachable). Returns ``store``."""
    ctx = context_for(graph, None, context)
    return run_group(ctx, levels, int(num_levels), store)


def run_group(ctx, levels, num_levels, store):
    """:func:`group` once its arguments are checked."""
    ids, offsets, lengths, row = store.layout(ctx.num_vertices, num_levels, ctx.index_dtype)
    host, rows = GROUP(ctx, levels, num_levels, ids, offsets,
                       lengths, row)
    store.set_offsets(host, rows=rows)
    return store


# ----------------------------------------------------------------------------- reduce
def _as_is(i):
    return i


def _vertex_reduce(hooks, weight, incoming, op, apply, jit, index):
    """``reduce_vertex(v, first, last, nbrs, edge_ids, values, out, data)``: ``out[v]`` =
    ``op`` over ``gather_edge`` on ``v``'s edges at positions ``first..last-1`` (in-edges
    ``u -> v`` when ``incoming``), then ``apply_vertex(v, data)`` when asked: a level's
    step for one vertex on both targets. ``index`` takes an id read from an array (the
    CPU's ``_index``: known not negative)."""
    gather_edge, apply_vertex = hooks.gather_edge, hooks.apply_vertex
    combine, ident = nr._combiner(op, jit)

    @jit
    def reduce_vertex(v, first, last, nbrs, edge_ids, values, out, data):
        acc = ident
        for p in range(first, last):
            u = index(nbrs[p])
            e = index(edge_ids[p]) if incoming else np.int64(p)
            if incoming:
                acc = combine(acc, gather_edge(u, v, e, weight(values, e), data))
            else:
                acc = combine(acc, gather_edge(v, u, e, weight(values, e), data))
        out[v] = acc
        if apply:
            apply_vertex(v, data)

    return reduce_vertex


def _cpu_source(hooks, weighted, incoming, op, apply):
    from numba import njit
    _index = nr._index
    reduce_vertex = _vertex_reduce(hooks, cpu_weight(weighted), incoming, op, apply,
                                   njit(inline="always"), _index)

    def walk(ids, offsets, start, stop, step, offs, nbrs, edge_ids, values, out, data, info):
        # levels start, start + step, ..., stop (step -1 or 1); info[k]: the k-th level's
        # edges read. Ids and positions are known not negative (unsigned, or _index's
        # llvm.assume): numba then fixes no negative index on the arrays the hooks index
        # with them
        k = 0
        for lv in range(start, stop + step, step):
            read = 0
            for i in range(np.uint64(offsets[lv]), np.uint64(offsets[lv + 1])):
                v = _index(np.int64(ids[i]))
                first, last = offs[v], offs[v + 1]
                read += last - first
                reduce_vertex(v, np.uint64(first), np.uint64(last), nbrs, edge_ids, values, out,
                              data)
            info[k] = read
            k += 1

    return walk


def _run_end(thin, start, stop, step):
    """The last level of the run of thin levels from ``start`` (thin) towards ``stop``;
    ``thin(lo, hi)``: a bool array, whether each of the levels ``lo..hi-1`` is thin (one
    NumPy pass: a walk may cover as many levels as vertices, one per distinct distance)."""
    lo, hi = (stop, start) if step < 0 else (start + 1, stop + 1)
    seg = thin(lo, hi)
    fat = np.flatnonzero(~(seg[::-1] if step < 0 else seg))
    return start + step * int(fat[0] if fat.size else seg.size)


def cpu_reverse_reduce(ctx, dg, hooks, data, out, store, start, stop, incoming, op, apply,
                       step=-1):
    """The levels from ``start`` towards ``stop`` (``step`` -1: down, 1: up): every one
    under ``serial_below`` vertices on one core in one call (one level a call with
    ``fuse_below`` 0); a larger level alone, through neighbor_reduce's parallel kernel.
    Returns each level's edges read."""
    backend = ctx.backend
    sizes = store.sizes
    if sizes[start] >= backend.serial_below:
        nr.run(ctx, store.get(start), hooks, data, out, "in" if incoming else "out", "auto", op,
               apply)
        return [None]  # on neighbor_reduce's tally
    last = start
    if backend.fuse_below > 0:
        rows = store.level_rows
        last = _run_end(lambda lo, hi: (rows[lo:hi, 0] if rows is not None else
                                        np.diff(store.offsets[lo:hi + 1])) < backend.serial_below,
                        start, stop, step)
    count = abs(start - last) + 1
    offs, nbrs, edge_ids = nr._arrays(dg, incoming)
    info = ctx.scratch("reverse_levels.info", count, np.int64)
    ids, offsets = store.ids, store.offsets_array()
    ctx.log(build=run_thin(backend, _cpu_source, hooks, (dg.weighted, incoming, op, apply),
                           lambda k: k(ids, offsets, start, last, step, offs, nbrs, edge_ids,
                                       dg.values, out, data, info)))
    return info[:count].tolist()


@hooks_cache
def _cuda_kernel(hooks, weighted, incoming, op, apply, block):
    from gunpy.backends.cuda import device, kernel
    reduce_vertex = _vertex_reduce(hooks, cuda_weight(weighted), incoming, op, apply, device,
                                   device(_as_is))

    def walk(ids, offsets, start, stop, step, offs, nbrs, edge_ids, values, out, data, info):
        # one block: a thread per vertex of a level, a barrier before the next level
        read = cuda.shared.array(1, np.int64)
        tid = cuda.threadIdx.x
        k = 0
        for lv in range(start, stop + step, step):
            if tid == 0:
                read[0] = 0
            cuda.syncthreads()
            mine = np.int64(0)
            for i in range(offsets[lv] + tid, offsets[lv + 1], cuda.blockDim.x):
                v = ids[i]
                reduce_vertex(v, offs[v], offs[v + 1], nbrs, edge_ids, values, out, data)
                mine += offs[v + 1] - offs[v]
            if mine:
                cuda.atomic.add(read, 0, mine)
            cuda.syncthreads()  # the level's values are written: the next level may read
            if tid == 0:
                info[k] = read[0]
            k += 1

    return kernel(walk, launch_bounds=block)  # one block: at most `block` threads


#: a level whose largest list is longer runs grid-wide (one thread would walk it all)
CUDA_HUB = 256


def _cuda_thin(rows, lv, limit):
    return rows[lv, 1] < limit and rows[lv, 2] < CUDA_HUB


def cuda_reverse_reduce(ctx, dg, hooks, data, out, store, start, stop, incoming, op, apply,
                        step=-1):
    """Thin levels (under ``fuse_below`` out-edges, no list of :data:`CUDA_HUB` or more,
    as counted by :func:`group`) in one block, one launch for all of them (their edges
    read back in one copy only for in-edges; the out-edges were counted by the group).
    Any other level alone: neighbor_reduce's grid-wide kernel over its stored frontier
    (its device length written by the group or the save; edges on a tally, no sync)."""
    backend, rows = ctx.backend, store.level_rows
    limit = backend.fuse_below
    if rows is None or not _cuda_thin(rows, start, limit):
        nr.run(ctx, store.get(start), hooks, data, out, "in" if incoming else "out", "auto", op,
               apply)
        return [None]
    last = _run_end(lambda lo, hi: (rows[lo:hi, 1] < limit) & (rows[lo:hi, 2] < CUDA_HUB),
                    start, stop, step)
    count = abs(start - last) + 1
    block = backend.one_block_size()
    info = ctx.scratch("reverse_levels.info", count, np.int64)
    offs, nbrs, edge_ids = nr._arrays(dg, incoming)
    backend.run(_cuda_kernel(hooks, dg.weighted, incoming, op, apply, block), block, store.ids,
                store.offsets_array(), np.int64(start), np.int64(last), np.int64(step), offs,
                nbrs, edge_ids, dg.values, out, data, info, blocks=1, block_size=block)
    if incoming:
        return backend.read_head(info, count).tolist()  # the one sync
    lo, hi = sorted((start, last))
    read = rows[lo:hi + 1, 1]
    return (read[::-1] if step < 0 else read).tolist()


def run(ctx, store, hooks, data, out, start, stop, edges, op, apply=False, step=-1):
    """:func:`reverse_levels` once its arguments are checked (``hooks``: the compiled
    functor; ``step`` -1 walks down from ``start``, 1 up); returns the number of levels
    run."""
    if (start - stop) * step > 0:
        return 0
    incoming = edges == "in"
    dg = ctx.backend.graph(ctx.graph, csc=incoming)
    read = REVERSE_REDUCE(ctx, dg, hooks, data, out, store,
                          start, stop, incoming, op, apply, step)
    if read[0] is not None:
        ctx.log(edges=read[0], direction="pull", strategy="neighbor_reduce")
    else:  # neighbor_reduce logged it
        ctx.log(direction="pull", strategy="neighbor_reduce")
    if len(read) > 1:
        # the later levels' (size, edges) rows: an Enactor logs each as an iteration like
        # the first (the call's time and counts are the first's)
        rows = np.empty((len(read) - 1, 2), dtype=np.int64)
        lo, hi = sorted((start, start + step * (len(read) - 1)))
        sizes = np.diff(store.offsets[lo:hi + 2])
        rows[:, 0] = (sizes[::-1] if step < 0 else sizes)[1:]
        rows[:, 1] = read[1:]
        ctx.record["then"] = rows
    return len(read)


def reverse_levels(graph, store, functor, data, out, *, start, stop=None, edges="out", op="sum",
                   apply=False, ascending=False, context=None):
    """``out[v] = op of functor.gather_edge over v's edges`` for the vertices of the
    stored levels ``start``, ``start - 1``, ... down to ``stop`` (default 0), deepest
    first; with ``ascending=True``, ``start``, ``start + 1``, ... up to ``stop``
    (default the last level) instead: a forward sweep over in-edges, each level
    reading the levels above (shortest-path counts from a source, say).

    ``store``: a :class:`~gunpy.frontier.FrontierStore` (from :func:`group` or saved
    frontiers); ``edges``: ``"out"`` or ``"in"`` (the reverse graph); ``op``:
    ``"sum"``, ``"min"`` or ``"max"``; ``apply``: also run ``functor.apply_vertex`` on
    each vertex once its ``out[v]`` is written (as
    :func:`~gunpy.operators.neighbor_reduce`'s ``apply``).
    The backend runs as many levels to a call as it fuses; returns how many ran
    (at least one when ``start >= stop``, or ``start <= stop`` ascending): call again
    from ``start - ran`` (``start + ran``). Each
    level's work is logged in the context's record (the later levels' in
    ``ctx.record["then"]``).

    Examples
    --------
    Each vertex sums ``1 + paths[w]`` over its successors ``w`` one level down:

    >>> from collections import namedtuple
    >>> import numpy as np
    >>> import gunpy
    >>> from gunpy import Functor, operators as ops
    >>> from gunpy.frontier import FrontierStore
    >>> from gunpy.operators import reverse_levels as rl
    >>> class Paths(Functor):
    ...     @staticmethod
    ...     def gather_edge(src, dst, edge, weight, data):
    ...         if data.depth[dst] == data.depth[src] + 1:
    ...             return 1.0 + data.paths[dst]
    ...         return 0.0
    >>> G = gunpy.Graph.from_edges([0, 0, 1, 2], [1, 2, 3, 3], directed=True)
    >>> ctx = ops.Context(G, "cpu")
    >>> depth = np.array([0, 1, 1, 2], dtype=np.int32)
    >>> store = rl.group(G, depth, 3, FrontierStore(ctx.backend, 4), context=ctx)
    >>> [store.get(i).to_numpy().tolist() for i in range(len(store))]
    [[0], [1, 2], [3]]
    >>> data = namedtuple("Data", "depth paths")(depth, np.zeros(4))
    >>> rl.reverse_levels(G, store, Paths, data, data.paths, start=1, context=ctx)
    2
    >>> data.paths.tolist()
    [4.0, 1.0, 1.0, 0.0]
    """
    if edges not in ("in", "out"):
        raise ValueError(f"reverse_levels edges must be 'in' or 'out', got {edges!r}")
    if op not in nr.OPS:
        raise ValueError(f"unknown reverse_levels op {op!r}; valid: {nr.OPS}")
    step = 1 if ascending else -1
    if stop is None:
        stop = len(store) - 1 if ascending else 0
    if min(start, stop) < 0 or max(start, stop) >= len(store):
        raise IndexError(f"levels {start} to {stop}: the store holds {len(store)}")
    ctx = context_for(graph, None, context)
    ran = run(ctx, store, compile_functor(functor, ctx.backend), problem_data(data), out,
              int(start), int(stop), edges, op, bool(apply), step)
    ctx.done()
    return ran


GROUP = Operator("levels.group", "ctx, levels, num_levels, ids, offsets, lengths, row",
                 cpu=cpu_group, cuda=cuda_group)

REVERSE_REDUCE = Operator("levels.reverse_reduce",
                          "ctx, dg, hooks, data, out, store, start, stop, incoming, op, apply",
                          cpu=cpu_reverse_reduce, cuda=cuda_reverse_reduce)


callable_module(__name__, reverse_levels)

