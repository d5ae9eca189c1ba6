"""fused: GAP's bucket fusion, many thin near/far steps to a call.

While the near band's queued work stays under ``limit`` edges, one call
relaxes a vertex's out-edges (``cond_edge``/``apply_edge``), puts the improved
vertices that fall in the band straight back to work and the others on the far
pile, and refills from the far pile when the band runs dry: no pass, launch or
host read per step. The band and the refill follow :mod:`.band`.

CPU: one core runs a worklist ring. CUDA: one thread block runs rounds with
block barriers; a round's vertices are expanded the TWC way (a list of at
least 32 edges by a warp, of at least 256 by the block:
:func:`~gunpy.operators.advance.common.cuda_block_expand`), so a hub is not one
thread's serial walk. A call's outcome comes back in one :data:`STATE` record.
"""

import numpy as np

from gunpy.backends.cpu import run_thin
from gunpy.functor import hooks_cache
from gunpy.operators.advance.common import cpu_weight, cuda_block_expand, cuda_weight
from gunpy.operators.near_far.band import FAR, NEAR, cpu_band, cpu_raise_level
from gunpy.operators.near_far.split import lowest_priority
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["STATE", "FAR_LIMIT", "CUDA_FAR_LIMIT", "cpu_fused", "cuda_fused"]

#: a fused call's state, in and out (one record). In: ``level``, ``far_size`` and the
#: counters kept between calls (``epoch``, ``round``). Out: the level and far size
#: reached, ``refills``, ``edges`` examined, vertices ``expanded``, ``near_size`` (-1:
#: the input alone reaches the limit, nothing was done), ``swapped`` (CUDA: the far
#: pile is now the other one) and ``near_edges`` (CUDA: the near slice's out-edges)
STATE = np.dtype([("level", np.float64), ("far_size", np.int64), ("refills", np.int64),
                  ("edges", np.int64), ("expanded", np.int64), ("near_size", np.int64),
                  ("epoch", np.int64), ("round", np.int64), ("swapped", np.int64),
                  ("near_edges", np.int64)])

#: the far pile size above which the CPU's fused loop leaves the refill to the parallel split
FAR_LIMIT = 1 << 16

#: the far pile size above which the CUDA fused kernel leaves the refill to the whole grid
CUDA_FAR_LIMIT = 1 << 15


def _write_state(st, level, far_size, refills, edges, expanded, near_size, epoch, rnd,
                 swapped, near_edges):
    """A fused call's outcome into its :data:`STATE` record ``st`` (plain Python, compiled
    inline by both targets' kernels)."""
    st["level"] = level
    st["far_size"] = far_size
    st["refills"] = refills
    st["edges"] = edges
    st["expanded"] = expanded
    st["near_size"] = near_size
    st["epoch"] = epoch
    st["round"] = rnd
    st["swapped"] = swapped
    st["near_edges"] = near_edges


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


def _cpu_fused_kernel(hooks, weighted):
    """Advance and split as one serial worklist loop over the band, refills included.

    A core keeps taking vertices from the near band, relaxing their out-edges
    and putting the improved ones back (near) or on the far pile; when the
    band is empty it refills from the far pile itself. It stops when the
    queued work reaches ``limit`` edges (the parallel passes take over), when
    the far pile outgrows ``far_limit`` (a parallel refill is cheaper), or
    when both piles are empty.

    ``queued`` (one byte a vertex) marks vertices in the worklist, zero on
    entry and on exit; ``stamp`` marks far-pile entries of the current epoch
    (a vertex sits on the far pile at most once an epoch; the epoch grows by
    one at entry and at every refill). The worklist is a ring of
    ``work.shape[0]`` >= vertices slots.
    """
    from numba import njit
    cond_edge, apply_edge, priority = hooks.cond_edge, hooks.apply_edge, hooks.priority
    weight = cpu_weight(weighted)
    push = _cpu_ring_push()
    write_state = njit(inline="always")(_write_state)
    lowest_of = lowest_priority(priority, njit(inline="always"))

    def fused(row_offsets, column_indices, values, in_queue, n, work, queued, far_q, stamp,
              near_out, state, limit, far_limit, max_expanded, data):
        st = state[0]
        cap = work.shape[0]
        level = st["level"]
        far_n = st["far_size"]
        epoch = st["epoch"] + 1
        head = np.int64(0)
        tail = np.int64(0)  # the ring's next free slot (head + count, wrapped)
        count = np.int64(0)
        qedges = np.int64(0)
        # 1. the input joins the worklist (once a vertex)
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
            st["near_size"] = -1
            return
        refills = np.int64(0)
        examined = np.int64(0)
        expanded = np.int64(0)
        while True:
            if qedges >= limit or expanded >= max_expanded:
                break  # fat (the parallel passes take the band), or the call's budget spent
            if count == 0:
                # 2. the band ran dry: raise the level past the far pile's lowest priority
                if far_n == 0 or far_n > far_limit:
                    break
                lowest = lowest_of(far_q, 0, far_n, 1, data)
                if not lowest < np.inf:
                    break
                floor = level
                level = cpu_raise_level(level, lowest)
                refills += 1
                epoch += 1
                # 3. split the far pile in place: near to the worklist, repeats and stale
                # entries dropped
                k = np.int64(0)
                for i in range(far_n):
                    v = far_q[i]
                    if stamp[v] == epoch:
                        continue  # a repeat
                    stamp[v] = epoch
                    b = cpu_band(priority(v, data), level, floor)
                    if b == NEAR:
                        tail, added = push(work, queued, tail, cap, v)
                        count += added
                        qedges += added * (row_offsets[v + 1] - row_offsets[v])
                    elif b == FAR:
                        far_q[k] = v
                        k += 1
                far_n = k
                continue
            # 4. expand one vertex of the band: improved neighbours to the band or the pile
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
                    if cpu_band(priority(u, data), level, -np.inf) == NEAR:
                        tail, added = push(work, queued, tail, cap, u)
                        count += added
                        qedges += added * (row_offsets[u + 1] - row_offsets[u])
                    elif stamp[u] != epoch:
                        stamp[u] = epoch
                        far_q[far_n] = u
                        far_n += 1
        # 5. the worklist left is the next near frontier
        for i in range(count):
            v = work[head]
            head = head + 1 if head + 1 < cap else 0
            queued[v] = 0
            near_out[i] = v
        # (the CPU: one far pile, no rounds, the near band's edges not counted)
        write_state(st, level, far_n, refills, examined, expanded, count, epoch, st["round"],
                    0, 0)

    return fused


def max_expanded(ctx):
    """The vertices one fused call may expand before it returns its band as the next
    frontier: sixteen times the vertices, far more than a shortest-path search's
    improvements, so it binds only on a functor that keeps accepting what it has seen
    (a loop in a kernel that nothing could stop)."""
    return np.int64(16 * ctx.num_vertices + 1024)


def cpu_fused(queue, frontier, out, hooks, data, weighted, limit):
    ctx, backend = queue.ctx, queue.backend
    n = frontier.size
    if n >= limit or limit <= 0:
        return None  # at least one edge a vertex would make it fat: skip the scan
    nv = max(ctx.num_vertices, 1)
    # the worklist ring, its membership bytes (zero between calls), the far pile's
    # epoch stamps and the state (its epoch goes on rising across runs, so stamps
    # stay valid)
    work, queued, stamp, state = queue.work_arrays(lambda: (
        backend.empty(nv, ctx.index_dtype), backend.zeros(nv, np.uint8),
        backend.zeros(nv, np.int64), np.zeros(1, STATE)))
    far = queue.far
    # a vertex joins the far pile at most once an epoch: what is there plus every vertex
    far.reserve(far.size + nv, keep=True)
    out.reserve(nv)
    st = state[0]
    st["level"], st["far_size"] = queue.level, far.size
    dg = backend.graph(ctx.graph)
    ctx.log(build=run_thin(
        backend, _cpu_fused_kernel, hooks, (bool(weighted),),
        lambda k: k(dg.row_offsets, dg.column_indices, dg.values, frontier.queue, n, work,
                    queued, far.queue, stamp, out.queue, state, limit,
                    -1 if queue.waiting() else FAR_LIMIT, max_expanded(ctx), data)))
    if st["near_size"] < 0:
        return None  # the frontier's edges reach the limit: the parallel operators
    queue.fused(st)
    far.set_size(int(st["far_size"]))
    ctx.log(edges=int(st["edges"]))
    out.set_size(int(st["near_size"]))
    if out.size == 0 and (far.size or queue.waiting()):
        # the far pile outgrew FAR_LIMIT (or items wait in the bins): the backend's refill
        return queue.refill(out, hooks, data)
    return out


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
    from gunpy.backends.cuda import device, kernel
    from gunpy.operators.near_far.band import cuda_band, cuda_raise_level
    from gunpy.operators.near_far.split import cuda_block_min
    cond_edge, apply_edge, priority = hooks.cond_edge, hooks.apply_edge, hooks.priority
    weight = cuda_weight(weighted)
    lowest_of = lowest_priority(priority, device)

    @device
    def queue_once(stamps, v, mark, q, counters, slot, row_offsets):
        # append v to q unless it carries mark already; counters[slot + 1] sums degrees
        if cuda.atomic.max(stamps, v, mark) < mark:
            q[cuda.atomic.add(counters, slot, 1)] = v
            cuda.atomic.add(counters, slot + 1, row_offsets[v + 1] - row_offsets[v])

    @device
    def visit(v, e, args):
        nxt, far_q, counters, level, rnd, epoch, qstamp, stamp, row_offsets, column_indices, \
            values, data = args
        u = column_indices[e]
        w = weight(values, e)
        if cond_edge(v, u, e, w, data):
            apply_edge(v, u, e, w, data)
            if cuda_band(priority(u, data), level, -np.inf) == NEAR:
                queue_once(qstamp, u, rnd, nxt, counters, 0, row_offsets)
            elif cuda.atomic.max(stamp, u, epoch) < epoch:
                far_q[cuda.atomic.add(counters, 2, 1)] = u
        return np.int64(1)  # one edge examined

    walk = cuda_block_expand(visit, block)  # hubs by the block or a warp, not one thread

    @device
    def expand(cur, cnt, nxt, far_q, counters, hub, level, rnd, epoch, qstamp, stamp,
               row_offsets, column_indices, values, data):
        examined, _ = walk(cur, cnt, row_offsets, hub, (nxt, far_q, counters, level, rnd, epoch,
                                                        qstamp, stamp, row_offsets,
                                                        column_indices, values, data))
        return examined  # the edges this thread examined

    @device
    def expand_round(cur_is_a, far_is_a, work_a, work_b, far_a, far_b, cnt, counters, hub,
                     level, rnd, epoch, qstamp, stamp, row_offsets, column_indices, values, data):
        # the current worklist into the other one and the current far pile (one inlined
        # walk: its phases are long)
        return expand(work_a if cur_is_a else work_b, cnt, work_b if cur_is_a else work_a,
                      far_a if far_is_a else far_b, counters, hub, level, rnd, epoch, qstamp,
                      stamp, row_offsets, column_indices, values, data)

    @device
    def split_far(far_q, fn, other, work, counters, level, floor, rnd, epoch, qstamp, stamp,
                  row_offsets, data):
        for i in range(cuda.threadIdx.x, fn, cuda.blockDim.x):
            v = far_q[i]
            if cuda.atomic.max(stamp, v, epoch) >= epoch:
                continue  # a repeat
            b = cuda_band(priority(v, data), level, floor)
            if b == NEAR:
                queue_once(qstamp, v, rnd, work, counters, 0, row_offsets)
            elif b == FAR:
                other[cuda.atomic.add(counters, 3, 1)] = v

    write_state = device(_write_state)

    def fused(in_queue, in_length, work_a, work_b, far_a, far_b, far_len_a, far_len_b, qstamp,
              stamp, near_q, near_len, state, limit, far_limit, max_expanded, row_offsets,
              column_indices, values, data):
        # counters: 0 next worklist size, 1 its degree sum, 2 far size, 3 other pile's size
        counters = cuda.shared.array(4, np.int64)
        red = cuda.shared.array(block, np.float64)
        hub = cuda.shared.array(4, np.int64)  # the block's bid for a hub: owner, its list
        tid = cuda.threadIdx.x
        level, epoch, rnd = state[0]["level"], state[0]["epoch"] + 1, state[0]["round"] + 1
        # 1. the input joins worklist a (once a vertex)
        if tid == 0:
            counters[0] = 0
            counters[1] = 0
            counters[2] = state[0]["far_size"]
            counters[3] = 0
        cuda.syncthreads()
        for i in range(tid, in_length[0], cuda.blockDim.x):
            v = in_queue[i]
            if v >= 0:
                queue_once(qstamp, v, rnd, work_a, counters, 0, row_offsets)
        cuda.syncthreads()
        if counters[1] >= limit:
            if tid == 0:
                # too fat to start fused (the rounds stamped are never reused)
                state[0]["near_size"] = -1
                state[0]["round"] = rnd
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
            if qedges >= limit or expanded >= max_expanded:
                break  # fat (the grid-wide operators take the band), or the budget spent
            if cnt == 0:
                # 2. the band ran dry: raise the level past the far pile's lowest priority
                if fn == 0 or fn > far_limit:
                    break
                lowest = cuda_block_min(red, lowest_of(far_a if far_is_a else far_b, tid, fn,
                                                       cuda.blockDim.x, data), block)
                if not lowest < np.inf:
                    break
                floor = level
                level = cuda_raise_level(level, lowest)
                refills += 1
                epoch += 1
                rnd += 1
                # 3. split the far pile into the worklist and the other pile
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
            # 4. one round: expand the worklist into the other one and the far pile
            rnd += 1
            expanded += cnt
            if tid == 0:
                counters[0] = 0
                counters[1] = 0
            cuda.syncthreads()
            examined += expand_round(cur_is_a, far_is_a, work_a, work_b, far_a, far_b, cnt,
                                     counters, hub, level, rnd, epoch, qstamp, stamp, row_offsets,
                                     column_indices, values, data)
            cur_is_a = not cur_is_a
        # 5. the worklist left is the next near frontier; the edges examined summed
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
            write_state(state[0], level, fn, refills, np.int64(total), expanded, cnt, epoch, rnd,
                        0 if far_is_a else 1, qedges)

    return kernel(fused, launch_bounds=block)  # one block: at most `block` threads


def cuda_fused(queue, frontier, out, hooks, data, weighted, limit):
    ctx, backend = queue.ctx, queue.backend
    n = frontier.size  # known: the enactor read it after the last iteration
    if n >= limit or limit <= 0:
        return None
    nv = max(ctx.num_vertices, 1)
    # two worklists, the rounds and epochs each vertex was last queued in, the state
    # (device and host; its epoch and round go on rising across runs)
    work_a, work_b, qstamp, stamp, state, host = queue.work_arrays(lambda: (
        backend.empty(nv, ctx.index_dtype), backend.empty(nv, ctx.index_dtype),
        backend.zeros(nv, np.int64), backend.zeros(nv, np.int64), backend.empty(1, STATE),
        np.zeros(1, STATE)))
    words = state.view(np.int64)  # the record read back as one head of 8-byte words
    far = queue.far
    other = queue.other_pile()
    far_n = far.size
    far.reserve(far_n + nv, keep=True)
    other.reserve(far_n + nv)
    out.reserve(nv)
    h = host[0]
    h["level"], h["far_size"], h["near_size"] = queue.level, far_n, 0
    backend.copy_in(state, 0, host)  # with the epoch and round kept from the last call
    dg = backend.graph(ctx.graph)
    block = backend.one_block_size()
    backend.run(_cuda_fused_kernel(hooks, bool(weighted), block),
                block, frontier.queue, frontier.length, work_a, work_b, far.queue,
                other.queue, far.length, other.length, qstamp, stamp, out.queue, out.length,
                state, np.int64(limit), np.int64(CUDA_FAR_LIMIT), max_expanded(ctx),
                dg.row_offsets,
                dg.column_indices, dg.values, data, blocks=1, block_size=block)
    host[:] = backend.read_head(words, words.shape[0]).view(STATE)  # the one sync
    if h["near_size"] < 0:
        return None
    queue.fused(h)
    if h["swapped"]:
        far = queue.swap_piles()
    far.assume_size(int(h["far_size"]))
    ctx.log(edges=int(h["edges"]))
    out.assume_size(int(h["near_size"]))
    out.known_edges = int(h["near_edges"])
    if out.size == 0 and far.size:
        return queue.refill(out, hooks, data)  # the far pile outgrew CUDA_FAR_LIMIT
    return out


FUSED = Operator("near_far.fused", "queue, frontier, out, hooks, data, weighted, limit",
                 cpu=cpu_fused, cuda=cuda_fused)
