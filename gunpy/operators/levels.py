"""levels: thin push levels of advance + filter, many to a call.

A BFS on a road network or a mesh runs hundreds of levels of a few dozen
vertices each; per level, the host work around the operators (choosing a
strategy, sizing the output, logging, reading the frontier's length) costs
far more than the edges. While a level's out-edges stay under ``limit``, this
operator runs the next level in the same call: the frontier's out-edges go
through ``cond_edge``/``apply_edge`` (with the visited-bit test and mark of a
push advance), what they accept through ``cond_vertex``/``apply_vertex`` (a
predicated filter), and what that keeps is the next level. It stops at a
level boundary: a level whose out-edges reach ``limit`` (the grid-wide
operators take it), an empty level, ``max_levels`` levels, or (given a
:data:`PushRule`) a level the push-pull rule would pull: the levels decide
it one at a time, as :class:`~gunpy.direction.PushPull` would between calls.

CPU: one core runs the levels (below ``limit`` edges the push kernels run one
serial chunk anyway). CUDA: one thread block, a block barrier between levels:
one launch and one read for all of them. A hub would make a level one
thread's thousands of dependent steps, so the block walks each level the TWC
way (:func:`~gunpy.operators.advance.common.cuda_block_expand`): a list of at
least 32 edges goes to a warp, one of at least 256 (the block's size if
smaller) to the whole block. The read also brings the last level's largest
out-degree (``out.known_max_degree``), which ``load_balance="auto"`` reads.

Every level's (frontier size, out-edges) is reported, so the enactor logs one
iteration per level as before (their ``strategy`` is ``"fused"``).
"""

from collections import namedtuple

import numpy as np

from gunpy import atomics
from gunpy.backends.cpu import run_thin
from gunpy.functor import hooks_cache
from gunpy.operators.advance.common import (PushSpec, cpu_visit, cuda_accept, cuda_block_expand,
                                           cuda_weight)
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["run", "fused", "cpu_levels", "cuda_levels", "LevelsSpec", "PushRule", "MAX_LEVELS",
           "level_cap"]

#: ``weighted``: read ``values[e]``; ``skip_visited``/``mark_visited``: the visited
#: bitmap's test before ``cond_edge`` and mark after it; ``filtered``: call the
#: functor's ``cond_vertex``/``apply_vertex`` on what the edges accept
LevelsSpec = namedtuple("LevelsSpec", "weighted skip_visited mark_visited filtered")

#: the push-pull rule the levels follow (:class:`~gunpy.direction.PushPull`, Beamer's
#: heuristic): a level of ``floor`` out-edges or more that exceed ``unvisited`` (the
#: unvisited edges' estimate, net of the level's own) over ``alpha`` and that grew since
#: the level before (``prev`` out-edges) would pull, so the levels stop before it
PushRule = namedtuple("PushRule", "floor alpha unvisited prev")


def _rule_args(rule, limit):
    # the kernels' four rule arguments; no rule: a floor no fused level reaches
    if rule is None:
        return np.float64(limit), np.float64(1.0), np.int64(0), np.int64(0)
    return (np.float64(rule.floor), np.float64(rule.alpha), np.int64(rule.unvisited),
            np.int64(rule.prev))


#: levels one call runs at most where the backend does not say (its
#: ``fuse_max_levels``; the per-level sizes come back in one array)
MAX_LEVELS = 512


def level_cap(backend):
    """The most levels one call runs on ``backend``."""
    return int(getattr(backend, "fuse_max_levels", MAX_LEVELS))


def _push_spec(spec):
    # the push advance's spec for one level: vertices out, the visited test and mark
    return PushSpec(spec.weighted, "vertex", spec.mark_visited, spec.skip_visited)


def _cpu_source(hooks, spec):
    from numba import njit
    cond_vertex, apply_vertex = hooks.cond_vertex, hooks.apply_vertex
    # one core: no visited-bit test before cond_edge, which rejects a visited destination
    # itself (skip_visited's promise) with plain loads here; the mark stays for pull
    visit = cpu_visit(hooks, _push_spec(spec._replace(skip_visited=False)))
    filtered = bool(spec.filtered)

    @njit(inline="always")
    def edges_of(queue, n, row_offsets):
        m = 0
        for i in range(np.uint64(n)):
            at = np.uint64(queue[i])
            m += row_offsets[at + np.uint64(1)] - row_offsets[at]
        return m

    def levels(row_offsets, column_indices, values, in_queue, n, m, buf_a, buf_b, out_queue,
               visited, limit, max_levels, info, data, floor, alpha, unvisited, prev, dmax):
        # info: [levels run, last frontier size, its out-edges, then (size, edges) a level]
        k = 0
        ncur = n
        mcur = m  # a level's out-edges; -1: not counted yet
        cur = in_queue
        while ncur > 0 and k < max_levels:
            # the limit and the push-pull rule (Beamer's, as PushPull.choose asks it: stop
            # at a level it would pull, one of `floor` out-edges or more that exceed the
            # unvisited edges, net of its own, over alpha, and grew since the level
            # before) need the level's out-edges only where ncur * dmax does not settle
            # them: a road network's never (a pass over the level saved, ~14 % of it)
            if mcur < 0 and (ncur * dmax >= limit or ncur * dmax >= floor):
                mcur = edges_of(cur, ncur, row_offsets)
            if mcur >= 0:
                rest = unvisited - mcur if unvisited > mcur else 0
                if mcur >= limit or (mcur >= floor and mcur > rest / alpha and mcur > prev):
                    break
            nxt = buf_a if k % 2 == 0 else buf_b
            nn = 0
            mine = 0  # this level's out-edges, counted as it runs
            # indices unsigned: no wrap-around test on each (see cpu_visit)
            for i in range(np.uint64(ncur)):
                # 1. the push advance's edge visit (one core: plain visited marks)
                src = cur[i]
                if src < 0:  # never: as in cpu_visit, the hooks' src indexes unchecked
                    continue
                at = np.uint64(src)
                lo, hi = row_offsets[at], row_offsets[at + np.uint64(1)]
                mine += hi - lo
                start = nn
                nn = visit(src, lo, hi, column_indices, values, nxt, nn, visited, data, False)
                # 2. the predicated filter on what src's edges accepted
                if filtered:
                    keep = start
                    for j in range(np.uint64(start), np.uint64(nn)):
                        dst = nxt[j]
                        if cond_vertex(dst, data):
                            apply_vertex(dst, data)
                            nxt[np.uint64(keep)] = dst
                            keep += 1
                    nn = keep
            unvisited = unvisited - mine if unvisited > mine else 0
            prev = mine
            info[3 + 2 * k] = ncur
            info[4 + 2 * k] = mine
            k += 1
            ncur = nn
            mcur = -1
            cur = nxt
        if mcur < 0:  # the level left over (maybe none): its out-edges for the caller
            mcur = edges_of(cur, ncur, row_offsets)
        if k > 0:
            last = buf_a if (k - 1) % 2 == 0 else buf_b
            for i in range(ncur):
                out_queue[i] = last[i]
        # k == 0: nothing ran (the first level reaches limit), info[2] is its out-edges
        info[0] = k
        info[1] = ncur
        info[2] = mcur

    return levels


@hooks_cache
def _cuda_kernel(hooks, spec, block):
    from gunpy.backends.cuda import device, kernel
    from gunpy.operators.advance.common import cuda_append
    cond_vertex, apply_vertex = hooks.cond_vertex, hooks.apply_vertex
    weight = cuda_weight(spec.weighted)
    accept = cuda_accept(hooks, _push_spec(spec))
    mark, filtered = bool(spec.mark_visited), bool(spec.filtered)

    @device
    def visit(src, e, args):
        nxt, counters, row_offsets, column_indices, values, visited, data = args
        # 1. the push advance's edge visit: the visited test, cond_edge/apply_edge
        dst = column_indices[e]
        if not accept(src, dst, e, weight(values, e), visited, data):
            return np.int64(-1)
        if mark:
            atomics.or_(visited, dst >> 5, np.uint32(1) << np.uint32(dst & 31))
        # 2. the predicated filter, then the next level (counters[0] its length)
        if filtered:
            if not cond_vertex(dst, data):
                return np.int64(-1)
            apply_vertex(dst, data)
        cuda_append(nxt, counters, dst)
        return np.int64(row_offsets[dst + 1] - row_offsets[dst])

    walk = cuda_block_expand(visit, block)  # hubs by the block or a warp, not one thread

    @device
    def expand(cur, ncur, nxt, counters, hub, row_offsets, column_indices, values, visited,
               data):
        found, largest = walk(cur, ncur, row_offsets, hub, (nxt, counters, row_offsets,
                                                            column_indices, values, visited,
                                                            data))
        if found:  # out-edges of what this thread appended, and their largest list
            cuda.atomic.add(counters, 1, found)
        if largest >= 0:
            cuda.atomic.max(counters, 2, largest)

    def levels(in_queue, in_length, m, buf_a, buf_b, out_queue, out_length, visited, limit,
               max_levels, info, row_offsets, column_indices, values, data, floor, alpha,
               unvisited, prev):
        # the next level's size, out-edges and largest out-degree
        counters = cuda.shared.array(3, np.int64)
        hub = cuda.shared.array(4, np.int64)  # the block's bid for a hub: owner, its list
        tid = cuda.threadIdx.x
        k = 0
        ncur = np.int64(in_length[0])
        mcur = m
        if mcur < 0:  # the first level's out-edges, not known to the caller
            if tid == 0:
                counters[1] = 0
            cuda.syncthreads()
            for i in range(tid, ncur, cuda.blockDim.x):
                v = in_queue[i]
                cuda.atomic.add(counters, 1, row_offsets[v + 1] - row_offsets[v])
            cuda.syncthreads()
            mcur = counters[1]
            cuda.syncthreads()
        while ncur > 0 and mcur < limit and k < max_levels:  # the same values in every thread
            # the push-pull rule, as on the CPU: stop at a level it would pull
            unvisited = unvisited - mcur if unvisited > mcur else 0
            if mcur >= floor and mcur > unvisited / alpha and mcur > prev:
                break
            prev = mcur
            if tid == 0:
                counters[0] = 0
                counters[1] = 0
                counters[2] = -1
                info[3 + 2 * k] = ncur
                info[4 + 2 * k] = mcur
            cuda.syncthreads()
            if k == 0:
                expand(in_queue, ncur, buf_a, counters, hub, row_offsets, column_indices, values,
                       visited, data)
            elif k % 2 == 1:
                expand(buf_a, ncur, buf_b, counters, hub, row_offsets, column_indices, values,
                       visited, data)
            else:
                expand(buf_b, ncur, buf_a, counters, hub, row_offsets, column_indices, values,
                       visited, data)
            cuda.syncthreads()
            ncur = counters[0]
            mcur = counters[1]
            k += 1
            cuda.syncthreads()  # every thread has read the counters before they are reset
        if k > 0:
            for i in range(tid, ncur, cuda.blockDim.x):
                out_queue[i] = buf_a[i] if (k - 1) % 2 == 0 else buf_b[i]
            if tid == 0:
                out_length[0] = ncur
                out_length[1] = mcur
                out_length[2] = counters[2]
        if tid == 0:
            # k == 0: nothing ran (the first level reaches limit), info[2] is its out-edges
            info[0] = k
            info[1] = ncur
            info[2] = mcur
            # after the levels' records: the last level's largest out-degree (-1: none)
            info[3 + 2 * max_levels] = counters[2] if k > 0 else -1

    # minBlocksPerSM 1: CUDA 13.0's ptxas otherwise kept heavier functors (weighted BC, SCC) to
    # 64 registers and spilled; one block at most `block` threads
    return kernel(levels, launch_bounds=(block, 1))


def _buffers(ctx, limit, max_levels):
    """The two level buffers and the limit the kernel runs under: a level runs only while
    its out-edges stay under that limit, and its output is at most its out-edges, so the
    buffers hold it. They have a slot per edge of the graph and one more (a level with no
    duplicates has no more out-edges than the graph has edges), so a level with
    duplicates (a functor that accepts a vertex twice) past that stops the fused call
    instead of writing past its buffer."""
    size = max(1, min(int(limit), ctx.graph.num_edges + 1))
    return (ctx.scratch("levels.a", size, ctx.index_dtype),
            ctx.scratch("levels.b", size, ctx.index_dtype), min(int(limit), size))


def cpu_levels(ctx, dg, frontier, out, hooks, data, *, edges, limit, max_levels, spec,
               rule=None):
    a, b, limit = _buffers(ctx, limit, max_levels)
    info = ctx.scratch("levels.info", 3 + 2 * max_levels, np.int64)  # the kernel writes it
    out.reserve(a.shape[0])
    dmax = _largest_degree(ctx, dg)
    ctx.log(build=run_thin(
        ctx.backend, _cpu_source, hooks, (spec,),
        lambda k: k(dg.row_offsets, dg.column_indices, dg.values, frontier.queue,
                    frontier.size, edges, a, b, out.queue, ctx.visited_words(), limit,
                    max_levels, info, data, *_rule_args(rule, limit), dmax)))
    return _finish(frontier, out, info, lambda n: out.set_size(n))


def _largest_degree(ctx, dg):
    # the graph's largest out-degree, kept with the scratch (once per graph)
    hit = ctx.kept("levels.dmax", lambda: [None, 0])
    if hit[0] is not dg.row_offsets:
        ro = dg.row_offsets
        hit[:] = [ro, np.int64(np.diff(ro).max()) if ro.shape[0] > 1 else np.int64(0)]
    return hit[1]


def _finish(frontier, out, info, set_size):
    k = int(info[0])
    if k == 0:
        frontier.known_edges = int(info[2])  # the first level was too fat: its edges
    else:
        set_size(int(info[1]))
        out.known_edges = int(info[2])
    return info[3:3 + 2 * k].reshape(k, 2).copy()  # the scratch is the next call's


def cuda_levels(ctx, dg, frontier, out, hooks, data, *, edges, limit, max_levels, spec,
                rule=None):
    backend = ctx.backend
    a, b, limit = _buffers(ctx, limit, max_levels)
    info = ctx.scratch("levels.info", 4 + 2 * max_levels, np.int64)
    out.reserve(a.shape[0])
    block = backend.one_block_size()
    backend.run(_cuda_kernel(hooks, spec, block), block, frontier.queue, frontier.length,
                np.int64(edges), a, b, out.queue, out.length, ctx.visited_words(),
                np.int64(limit), np.int64(max_levels), info, dg.row_offsets, dg.column_indices,
                dg.values, data, *_rule_args(rule, limit), blocks=1, block_size=block)
    host = backend.read_head(info, 4 + 2 * max_levels)  # the one sync
    levels = _finish(frontier, out, host, lambda n: out.assume_size(n))
    if len(levels) and host[3 + 2 * max_levels] >= 0:
        out.known_max_degree = int(host[3 + 2 * max_levels])
    return levels


def run(ctx, frontier, out, hooks, data, *, limit, edges=None, max_levels=None,
        skip_visited=False, mark_visited=False, rule=None):
    """Run push levels of ``hooks`` from ``frontier`` while they stay under ``limit`` edges.

    ``frontier`` (a queue; ``edges`` out-edges, counted by the kernel when
    None) is the first level; the last level reached, whole, is left in
    ``out`` with its ``known_edges``. Returns a ``(levels, 2)`` array of each
    level run: its frontier size and out-edges. None run when the first
    level reaches ``limit``: then ``frontier.known_edges`` is set. With ``rule``
    (a :data:`PushRule`), the levels also stop before one that rule would pull.

    The first level's edges go to ``ctx.record`` (``strategy`` ``"fused"``); each
    level after it is a row of ``ctx.record["then"]``, which an
    :class:`~gunpy.Enactor` logs as iterations (records made when read).
    """
    cap = level_cap(ctx.backend)
    max_levels = cap if max_levels is None else int(min(max_levels, cap))
    if (edges is not None and edges >= limit) or frontier.size == 0 or max_levels <= 0:
        return np.zeros((0, 2), dtype=np.int64)
    dg = ctx.backend.graph(ctx.graph)
    spec = LevelsSpec(bool(dg.weighted), bool(skip_visited), bool(mark_visited),
                      not (hooks.default_cond_vertex and hooks.default_apply_vertex))
    levels = LEVELS(ctx, dg, frontier, out, hooks, data, edges=-1 if edges is None else int(edges),
                    limit=int(limit), max_levels=max_levels, spec=spec, rule=rule)
    if len(levels):
        # the first level is the caller's iteration; the others are logged as their own,
        # from their (size, edges) rows (the call's time is the first level's)
        ctx.log(edges=int(levels[0, 1]), direction="push", strategy="fused")
        ctx.record["then"] = levels[1:]
    return levels


def fused(ctx, frontier, out, hooks, data, plan, *, push_pull=None, visited=False, skip=False):
    """Run the levels ``plan`` allows (a :class:`~gunpy.operators.fusion.LevelsPlan`;
    None: no fused levels).

    ``visited``: the traversal keeps a visited bitmap (marked; tested too with
    ``skip``, the functor's ``skip_visited``). Returns ``out`` holding the last
    level reached, or None when none ran (the first level reaches the limit).
    The levels are accounted to ``push_pull`` as the pushes they were.
    """
    if plan is None:
        return None
    frontier.ensure_queue(ctx.scratch)
    levels = run(ctx, frontier, out, hooks, data, edges=frontier.known_edges,
                 limit=plan.limit, max_levels=plan.max_levels, skip_visited=skip and visited,
                 mark_visited=visited, rule=plan.rule)
    if len(levels) == 0:
        return None
    if push_pull is not None:
        push_pull.pushed(levels)
    return out


LEVELS = Operator("advance.levels",
                  "ctx, dg, frontier, out, hooks, data, *, edges, limit, max_levels, spec, rule",
                  cpu=cpu_levels, cuda=cuda_levels)
