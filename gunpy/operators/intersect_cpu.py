"""intersect on the CPU: each row's left list marked once, its edges' right lists looked up in it.

The CPU implementation of :func:`gunpy.operators.intersect` (same calls, same
hook order, same counters as the merge it stands for). A ``prange`` over the
threads' slots of marks, each running its share of chunks of consecutive edges
of the mask in turn (rows cut where the edge count says); work that fits one
chunk runs serially (:func:`gunpy.backends.cpu.run_thin`). Within a chunk,
where no list repeats a column:

1. the left list of the row ``i`` is marked in the slot's own arrays: a bit
   per vertex (a 32nd of a slot each: a probe's word stays in the L1 cache)
   and the entry's place in the list, read only on a match;
2. each edge ``i -> j`` walks ``j``'s right list up to the left list's last
   entry, testing bits, and writes the places that match into a buffer
   without a branch (a match is rare enough that a branch would mispredict on
   each one), then calls the hook on each, in list order (increasing ``k``);
3. the bits are cleared when the chunk leaves the row (marked once per row,
   not per edge: the hash-free form of the "forward" triangle algorithm's
   marking, Schank and Wagner 2005; NetworKit's LCC marks the same way).

The entries a two-pointer merge would have read are counted from the lists'
last entries (a binary search at most), so ``edges`` is the merge's. Lists that
repeat a column (CSR built by hand), or marks over :data:`MARKS_MAX_BYTES`, run
the two-pointer merge instead, and so do pairs of lists shorter than
:data:`MERGE_BELOW` entries together.
"""

import numpy as np

from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.operators.advance.common import cpu_weight
from gunpy.operators.common import lower_bound

__all__ = ["cpu_kernel", "cpu_source", "cpu_execute", "MARKS_MAX_BYTES", "PROBE_BLOCK",
           "MERGE_BELOW", "MERGE_COST"]

_STRICT = ("intersect", "strict")  # the key of "no list repeats a column", kept with a graph

#: the CPU marks lists (a slot per vertex and thread) while the marks take at most this
MARKS_MAX_BYTES = 1 << 28
#: the CPU's probes of a marked list are taken this many at a time
PROBE_BLOCK = 128
#: pairs of lists with fewer entries than this together are merged: marking a row costs
#: more than a few merge steps (luxembourg_osm's LCC: 2.6 -> 1.7 ms)
MERGE_BELOW = 8
#: an edge's intersection costs about this many of the simple items ``serial_below``
#: counts, so the mask runs in parallel from ``serial_below / MERGE_COST`` edges (2
#: threads, quiet machine, triangle counting: luxembourg_osm 1.2 -> 0.8 ms, delaunay_n16
#: 6.1 -> 4.3 ms, email-Enron 22 -> 13 ms, facebook 7.5 -> 3.7 ms, Wiki-Vote 9.8 -> 5.0
#: ms; CA-GrQc's 29 K edges, as fast either way, stay on one core)
MERGE_COST = 16


def _merge(apply_intersection, jit, lower=False):
    """``found, walked = merge(i, j, e, p, p_end, l_indices, q, q_end, r_indices, data)``:
    the two-pointer merge of both kernels.

    Walks i's sorted list in left (entries ``p:p_end``) and j's in right
    (``q:q_end``; with ``lower``, only its entries below ``j``), calls
    ``apply_intersection`` on each common neighbour, and returns the matches and
    the entries read; ``jit`` compiles it for the target (a CUDA device function
    or an njit one).
    """

    def merge(i, j, e, p, p_end, l_indices, q, q_end, r_indices, data):
        p0 = p
        q0 = q
        found = 0
        while p < p_end and q < q_end:
            a = l_indices[p]
            b = r_indices[q]
            if lower and (a >= i or b >= j):
                break  # one of the lists' parts below its row is read
            if a == b:
                apply_intersection(i, j, e, a, p, q, data)
                found += 1
                p += 1
                q += 1
            elif a < b:
                p += 1
            else:
                q += 1
        return found, (p - p0) + (q - q0)

    return jit(merge)


def _span(lower, jit):
    """``(start, end) = span(offsets, indices, row, bound)``: the entries of ``row``'s sorted
    list an intersection reads: all of them, or with ``lower`` those below ``bound`` (a
    binary search)."""
    from gunpy.operators.common import lower_bound
    search = jit(lower_bound)

    def span(offsets, indices, row, bound):
        start, end = offsets[row], offsets[row + 1]
        if lower:
            end = search(indices, start, end, bound)
        return start, end

    return jit(span)


def _marking(apply_intersection, lower=False):
    """``(mark, probe)``: mark a row's left list in a thread's marks (or clear it), and
    one edge's matches against the marked list (steps 1-2 of the module docstring);
    with ``lower``, j's list ends below ``j`` (found by the walk)."""
    from numba import njit
    search = njit(inline="always")(lower_bound)

    @njit(inline="always")
    def mark(marks, base, bits, indices, p, p_end, on, row):
        # on: each k of the list gets its bit and its place; off: its bits' words zeroed
        # (the marked list is the only one: every bit set in them is its own). Returns
        # where the list ends: p_end, or with ``lower`` its first entry not below row
        for x in range(p, p_end):
            k = indices[x]
            if lower and k >= row:
                return x
            if on:
                marks[base + k] = x - p
                marks[bits + (k >> 5)] |= 1 << (k & 31)
            else:
                marks[bits + (k >> 5)] = 0
        return p_end

    @njit(inline="always")
    def probe(i, j, e, p, p_end, l_indices, q, q_end, r_indices, marks, base, hits, bits,
              data):
        # i's list (p:p_end) is marked: bits to test, places (its edge ids) read on a
        # match; j's list (q:q_end) is walked up to i's last entry, and the reads are the
        # merge's (it stops at the smaller last entry)
        if p == p_end or q == q_end:
            return 0, 0
        a_last = l_indices[p_end - 1]
        found, q0, stop = 0, q, False
        while q < q_end and not stop:
            # a block's matches found without a branch (a match is rare enough that the
            # branch would mispredict on each), then the hook called on each, in order
            qb, h = q, 0
            for x in range(qb, min(q_end, qb + PROBE_BLOCK)):
                k = r_indices[x]
                if lower and k >= j:
                    q_end = x  # j's list (its part below j) ends here
                if k > a_last or x == q_end:
                    stop = True
                    break
                marks[hits + h] = x - qb
                h += (marks[bits + (k >> 5)] >> (k & 31)) & 1
                q = x + 1
            for y in range(h):
                x = qb + marks[hits + y]
                k = r_indices[x]
                apply_intersection(i, j, e, k, p + marks[base + k], x, data)
            found += h
        if q_end == q0:
            return 0, 0
        b_last = r_indices[q_end - 1]
        if a_last < b_last:
            return found, (p_end - p) + (q - q0)
        if a_last == b_last:
            return found, (p_end - p) + (q_end - q0)
        below = search(l_indices, p, p_end, b_last)  # the left entries under b_last
        return found, (q_end - q0) + (below - p) + ((marks[bits + (b_last >> 5)] >>
                                                     (b_last & 31)) & 1)

    return mark, probe


def cpu_kernel(hooks, weighted, with_counts=False, lower=False):
    """``(parallel, serial)`` builds of the CPU kernel."""
    return functor_pair(cpu_source, hooks, (weighted, with_counts, lower))


def cpu_source(hooks, weighted, with_counts=False, lower=False):
    """The CPU kernel's Python source for ``hooks`` (compiled by the callers)."""
    from numba import njit, prange

    cond_edge = hooks.cond_edge
    merge = _merge(hooks.apply_intersection, njit(inline="always"), lower)
    mark, probe = _marking(hooks.apply_intersection, lower)
    weight = cpu_weight(weighted)

    @njit(inline="always")
    def chunk(start, stop, n, row_offsets, column_indices, values, l_offsets, l_indices,
              r_offsets, r_indices, per_edge, marks, base, data):
        """Edges ``start:stop``: ``(matches, entries read)``."""
        hits, bits = base + n, base + n + PROBE_BLOCK
        matches = 0
        read = 0
        row, p, p_end = -1, 0, 0  # the row whose left list's span is p:p_end
        marked = False  # whether that list is marked
        # 1. the chunk's first row: the last row starting at or before edge `start`
        lo = 0
        hi = n
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if row_offsets[mid] <= start:
                lo = mid
            else:
                hi = mid
        i = lo
        e = start - 1
        while e + 1 < stop:
            e += 1
            # 2. the mask: edge e = (i, j) (rows in order), kept when cond_edge holds
            while row_offsets[i + 1] <= e:
                i += 1
            j = column_indices[e]
            if lower and j >= i:
                e = row_offsets[i + 1] - 1  # the rest of the row is above too (sorted)
                continue
            if not cond_edge(i, j, e, weight(values, e), data):
                continue
            if row != i:  # a new row: the last one's marks cleared
                if marked:
                    mark(marks, base, bits, l_indices, p, p_end, False, row)
                    marked = False
                row = i
                p, p_end = l_offsets[i], l_offsets[i + 1]
            q, q_end = r_offsets[j], r_offsets[j + 1]
            # (with lower, about half of each list is read: the part below its row)
            if marks.shape[0] == 1 or ((l_offsets[i + 1] - p + q_end - q) >> lower
                                       ) < MERGE_BELOW:
                # 3. two-pointer merge of i's list in left and j's list in right
                found, walked = merge(i, j, e, p, p_end, l_indices, q, q_end, r_indices, data)
            else:
                # 3'. i's list marked once for all its edges, j's list looked up in it
                if not marked:
                    p_end = mark(marks, base, bits, l_indices, p, p_end, True, i)
                    marked = True
                found, walked = probe(i, j, e, p, p_end, l_indices, q, q_end, r_indices,
                                      marks, base, hits, bits, data)
            matches += found
            if with_counts:
                per_edge[e] = found
            read += walked
        if marked:  # every bit is 0 again between calls
            mark(marks, base, bits, l_indices, p, p_end, False, row)
        return matches, read

    def intersect(n, m, row_offsets, column_indices, values, l_offsets, l_indices, r_offsets,
                  r_indices, counts, nchunks, per_edge, marks, data):
        size = (m + nchunks - 1) // nchunks
        stride = n + PROBE_BLOCK + n // 32 + 1
        slots = marks.shape[0] // stride if marks.shape[0] > 1 else nchunks
        per = (nchunks + slots - 1) // slots
        # a slot of marks per iteration, its chunks in turn: the marks are the slot's own
        # whichever thread runs it (numba's thread id would make the kernel uncacheable)
        for t in prange(slots):
            base = np.int64(t) * stride
            for c in range(t * per, min(nchunks, (t + 1) * per)):
                start = c * size
                # 4. the chunk's own counters: no shared total
                counts[c, 0], counts[c, 1] = chunk(
                    start, min(m, start + size), n, row_offsets, column_indices, values,
                    l_offsets, l_indices, r_offsets, r_indices, per_edge, marks, base, data)

    return intersect


def _marks(ctx, left, right):
    """Each thread's marks (see :func:`cpu_source`; the bits all 0, as the kernel leaves
    them) where no row repeats a column and they fit :data:`MARKS_MAX_BYTES`; else one
    slot (merges)."""
    from numba import config
    n, threads = ctx.num_vertices, config.NUMBA_NUM_THREADS
    size = (n + PROBE_BLOCK + n // 32 + 1) * threads
    if not (left._device.knows(_STRICT) and right._device.knows(_STRICT)) or \
            size * 4 > MARKS_MAX_BYTES:
        return ctx.kept("intersect.merge", lambda: ctx.backend.zeros(1, np.int32))
    return ctx.kept(f"intersect.marks.{threads}", lambda: ctx.backend.zeros(size, np.int32))


def cpu_execute(ctx, hooks, data, left, right, counts=None, lower=False):
    backend = ctx.backend
    with_counts = counts is not None
    dg = backend.graph(ctx.graph)
    lg = backend.graph(left)
    rg = backend.graph(right)
    n, m = dg.num_vertices, dg.num_edges
    args = (dg.row_offsets, dg.column_indices, dg.values, lg.row_offsets, lg.column_indices,
            rg.row_offsets, rg.column_indices)
    # many small chunks: a merge costs the two lists' lengths, which vary a lot
    thin = m < backend.serial_below // MERGE_COST
    nchunks = 1 if thin else backend.chunks(m, min_chunk=256, per_thread=32)
    # every chunk writes both its counters: the scratch needs no zeroing
    work = ctx.scratch("intersect.tally", 2 * nchunks, np.int64)
    tally = work[:2 * nchunks].reshape(nchunks, 2)
    per_edge = counts if with_counts else work
    marks = _marks(ctx, left, right)
    if thin:
        ctx.log(build=run_thin(backend, cpu_source, hooks, (dg.weighted, with_counts, lower),
                               lambda k: k(n, m, *args, tally, 1, per_edge, marks, data)))
    else:
        cpu_kernel(hooks, dg.weighted, with_counts, lower)[0](n, m, *args, tally, nchunks,
                                                              per_edge, marks, data)
    tot = tally.sum(axis=0)
    return int(tot[0]), int(tot[1])
