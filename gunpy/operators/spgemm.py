"""spgemm: a general sparse product ``C = A B``, row by row (Gustavson), in two passes.

Gunrock's ``spgemm`` and GraphBLAS's saxpy-style ``mxm``: row ``i`` of ``C`` is
the union of the rows ``B(k, :)`` over the entries ``A(i, k)``. Two operator
calls, because the product's values belong to the caller (a semiring):

1. :func:`structure` builds ``C``'s pattern as a :class:`~gunpy.Graph`: each
   row's distinct columns are counted, the counts scanned to row offsets, and
   the rows filled and sorted by column (Gunrock's symbolic phase). Columns
   where ``exclude`` (a complemented mask) has an entry are left out.
2. :func:`spgemm` walks the products again, over a pattern's entries: every
   term ``A(i, k) B(k, j)`` whose ``(i, j)`` is an entry ``e`` of the pattern
   calls the functor's intersect hook::

       apply_intersection(i, j, e, k, p, q, data)

   with ``p`` the edge id of ``i -> k`` in ``left`` and ``q`` that of ``k -> j``
   in ``right``. One thread walks a row, ``k`` increasing, so an entry's terms
   arrive one at a time in the same order on every backend (a hook that writes
   only slot ``e`` needs no atomics, and sums fold as scipy's and SuiteSparse's
   Gustavson loops fold them). Any pattern works: a structure from step 1, or
   a mask's (then it is Gustavson's masked product).

CPU: a ``prange`` over slots, one per thread, each with its own dense accumulator
over the columns (a stamp per column: the row that last saw it; no clearing between
rows) kept in the backend's workspace, and chunks of :data:`CHUNK_ROWS` rows dealt to
the slots in turn. CUDA: a thread a row (grid-stride); the count pass
inserts the row's columns into the row's own open-addressing hash table in
global scratch, sized by the row's upper bound (the sum of ``B``'s row lengths
over ``A(i, :)``, capped at the column count, doubled to a power of two); the
fill pass copies the table out and heap-sorts it; the product pass finds each
term's entry by binary search in the sorted row. A thread a row balances
skewed rows poorly (a GPU would want rows binned by their bound).
"""

import functools

import numpy as np
from numba import cuda  # a module global: the simulator swaps it for its fake module

from gunpy.backends.cpu import functor_pair
from gunpy.functor import compile_functor, hooks_cache
from gunpy.graph import Graph
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.intersect import _lower_bound  # the same binary search
from gunpy.operators.scan import cpu_exclusive_scan, exclusive_scan

__all__ = ["spgemm", "structure", "run", "cpu_structure", "cuda_structure", "cpu_execute",
           "cuda_execute", "cpu_source", "cuda_kernel"]


# ----------------------------------------------------------------------------- CPU
#: rows a chunk of the CPU's passes holds (chunks are dealt to the slots in turn)
CHUNK_ROWS = 64
#: rows with fewer columns than this are sorted by insertion (numba's sort costs more)
INSERTION_BELOW = 32
#: a row holding more than ``1 / DENSE_ROW`` of a bit per column (its bitmap's words)
#: is read off a bitmap in order instead of sorted
DENSE_ROW = 32


@functools.lru_cache(maxsize=None)
def _cpu_structure_kernels():
    """``(count, fill)``: the two passes over the terms, each a ``prange`` over slots (one
    per thread), a slot's dense accumulator its own (``stamp[j] == i``: row ``i`` has seen
    column ``j``) and its chunks of rows dealt in turn."""
    from numba import njit, prange
    from numba.cpython.unsafe.numbers import trailing_zeros

    from gunpy.backends.cpu import kernel

    @njit(inline="always")
    def stamp_row(i, a_off, a_idx, b_off, b_idx, stamp, cols, start, write):
        # the row's distinct columns stamped (and written from start when write)
        found = 0
        for p in range(a_off[i], a_off[i + 1]):
            k = a_idx[p]
            for q in range(b_off[k], b_off[k + 1]):
                j = b_idx[q]
                if stamp[j] != i:
                    stamp[j] = i
                    if write:
                        cols[start + found] = j
                    found += 1
        return found

    @njit(inline="always")
    def stamp_bits(i, a_off, a_idx, b_off, b_idx, stamp, bits):
        # the row's distinct columns stamped and set in the slot's bitmap
        for p in range(a_off[i], a_off[i + 1]):
            k = a_idx[p]
            for q in range(b_off[k], b_off[k + 1]):
                j = b_idx[q]
                if stamp[j] != i:
                    stamp[j] = i
                    bits[j >> 5] |= np.uint32(1) << np.uint32(j & 31)

    @njit(inline="always")
    def read_bits(bits, cols, start):
        # the set bits' columns in order (each word cleared as it is read)
        w = start
        for word in range(bits.shape[0]):
            x = bits[word]
            if x:
                bits[word] = 0
                while x:
                    cols[w] = (word << 5) + trailing_zeros(x)
                    w += 1
                    x &= x - np.uint32(1)

    @njit(inline="always")
    def stamp_mask(i, x_off, x_idx, stamp, value):
        for t in range(x_off[i], x_off[i + 1]):
            stamp[x_idx[t]] = value

    @njit(inline="always")
    def sort_row(cols, start, stop):
        if stop - start >= INSERTION_BELOW:
            cols[start:stop].sort()
            return
        for t in range(start + 1, stop):
            x = cols[t]
            u = t - 1
            while u >= start and cols[u] > x:
                cols[u + 1] = cols[u]
                u -= 1
            cols[u + 1] = x

    def count(n_rows, n_cols, a_off, a_idx, b_off, b_idx, x_off, x_idx, exclude, counts,
              stamps, slots):
        nchunks = (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS
        for t in prange(slots):
            stamp = stamps[t * n_cols:(t + 1) * n_cols]
            stamp[:] = -1  # another call's rows may have stamped it
            for c in range(t, nchunks, slots):
                for i in range(c * CHUNK_ROWS, min(n_rows, (c + 1) * CHUNK_ROWS)):
                    # 1. a complemented mask's columns count as seen: never entered
                    if exclude:
                        stamp_mask(i, x_off, x_idx, stamp, i)
                    counts[i] = stamp_row(i, a_off, a_idx, b_off, b_idx, stamp, counts, 0,
                                          False)

    def fill(n_rows, n_cols, a_off, a_idx, b_off, b_idx, x_off, x_idx, exclude, offsets, cols,
             stamps, words, slots):
        nchunks = (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS
        nwords = (n_cols + 31) >> 5
        for t in prange(slots):
            stamp = stamps[t * n_cols:(t + 1) * n_cols]
            stamp[:] = -1
            bits = words[t * nwords:(t + 1) * nwords]
            bits[:] = 0
            for c in range(t, nchunks, slots):
                for i in range(c * CHUNK_ROWS, min(n_rows, (c + 1) * CHUNK_ROWS)):
                    start = offsets[i]
                    if exclude:
                        stamp_mask(i, x_off, x_idx, stamp, i)
                    if (offsets[i + 1] - start) * DENSE_ROW > nwords:
                        # 2. a dense row: its columns in order from a bitmap, no sort
                        # (email-Enron's A @ A: the structure 880 -> 400 ms)
                        stamp_bits(i, a_off, a_idx, b_off, b_idx, stamp, bits)
                        read_bits(bits, cols, start)
                    else:
                        # 2'. a sparse row: written as found, then sorted
                        found = stamp_row(i, a_off, a_idx, b_off, b_idx, stamp, cols, start,
                                          True)
                        sort_row(cols, start, start + found)

    return kernel(count), kernel(fill)


def _slots(backend, n_rows, n_cols, name, dtype):
    """``(slots, accumulators)``: a slot per thread (one for a handful of rows), each with
    a dense accumulator of ``n_cols`` from the backend's workspace (kept: a call allocates
    nothing once it has grown)."""
    from numba import config
    slots = 1 if n_rows <= CHUNK_ROWS else max(1, config.NUMBA_NUM_THREADS)
    size = max(n_cols, 1)
    return slots, backend.workspace(name, slots * size, dtype)[:slots * size]


def cpu_structure(ctx, lg, rg, xg, offsets, exclude):
    """Count, scan and fill on the CPU; returns the column indices (``offsets`` filled)."""
    backend = ctx.backend
    n, n_cols = lg.num_vertices, rg.num_vertices
    count, fill = _cpu_structure_kernels()
    slots, stamps = _slots(backend, n, n_cols, "spgemm.stamps", np.int32)
    counts = ctx.scratch("spgemm.counts", n + 1, np.int64)
    args = (n, n_cols, lg.row_offsets, lg.column_indices, rg.row_offsets, rg.column_indices,
            xg.row_offsets, xg.column_indices, exclude)
    count(*args, counts, stamps, slots)
    nnz = cpu_exclusive_scan(counts, n, offsets, backend.chunks(n))
    offsets[n] = nnz
    cols = np.empty(nnz, dtype=lg.column_indices.dtype)
    _, words = _slots(backend, n, (n_cols + 31) >> 5, "spgemm.words", np.uint32)
    fill(*args, offsets, cols, stamps, words, slots)
    return cols


def cpu_source(hooks):
    """The CPU product kernel's Python source for ``hooks`` (compiled by the callers)."""
    from numba import prange

    apply_intersection = hooks.apply_intersection

    def products(n_rows, n_cols, c_off, c_idx, a_off, a_idx, b_off, b_idx, work, slots_, slots,
                 data):
        nchunks = (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS
        for t in prange(slots):
            # slot[j]: the pattern's entry of (i, j) while row i is marked, else -1
            slot = slots_[t * n_cols:(t + 1) * n_cols]
            slot[:] = -1
            terms = 0
            for c in range(t, nchunks, slots):
                for i in range(c * CHUNK_ROWS, min(n_rows, (c + 1) * CHUNK_ROWS)):
                    if c_off[i] == c_off[i + 1]:
                        continue
                    for e in range(c_off[i], c_off[i + 1]):
                        slot[c_idx[e]] = e
                    for p in range(a_off[i], a_off[i + 1]):
                        k = a_idx[p]
                        for q in range(b_off[k], b_off[k + 1]):
                            e = slot[b_idx[q]]
                            if e >= 0:
                                apply_intersection(i, b_idx[q], e, k, p, q, data)
                                terms += 1
                    for e in range(c_off[i], c_off[i + 1]):
                        slot[c_idx[e]] = -1
            work[t] = terms

    return products


def cpu_execute(ctx, hooks, data, left, right):
    backend = ctx.backend
    cg, lg, rg = backend.graph(ctx.graph), backend.graph(left), backend.graph(right)
    n, n_cols = cg.num_vertices, rg.num_vertices
    slots, entries = _slots(backend, n, n_cols, "spgemm.slots", np.int64)
    work = ctx.scratch("spgemm.work", slots, np.int64)
    pair = functor_pair(cpu_source, hooks, ())
    k = pair[0] if slots > 1 else pair[1]
    k(n, n_cols, cg.row_offsets, cg.column_indices, lg.row_offsets, lg.column_indices,
      rg.row_offsets, rg.column_indices, work, entries, slots, data)
    return int(work[:slots].sum())


# ---------------------------------------------------------------------------- CUDA
@cuda.jit(device=True, inline="always")
def _sift_down(a, base, root, end):
    while 2 * root + 1 < end:
        child = 2 * root + 1
        if child + 1 < end and a[base + child] < a[base + child + 1]:
            child += 1
        if a[base + root] >= a[base + child]:
            return
        t = a[base + root]
        a[base + root] = a[base + child]
        a[base + child] = t
        root = child


@cuda.jit(device=True, inline="always")
def _heap_sort(a, lo, hi):
    """Sort ``a[lo:hi]`` in place (one thread, no scratch)."""
    n = hi - lo
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(a, lo, root, n)
    for end in range(n - 1, 0, -1):
        t = a[lo]
        a[lo] = a[lo + end]
        a[lo + end] = t
        _sift_down(a, lo, 0, end)


@functools.lru_cache(maxsize=None)
def _cuda_structure_kernels():
    from gunpy.backends.cuda import kernel

    def bound(n_rows, n_cols, a_off, a_idx, b_off, sizes):
        # 1. the row's table: a power of two at least twice its distinct columns' bound
        for i in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
            ub = np.int64(0)
            for p in range(a_off[i], a_off[i + 1]):
                k = a_idx[p]
                ub += b_off[k + 1] - b_off[k]
            ub = min(ub, np.int64(n_cols))
            size = np.int64(0)
            if ub > 0:
                size = np.int64(2)
                while size < 2 * ub:
                    size *= 2
            sizes[i] = size

    def count(n_rows, a_off, a_idx, b_off, b_idx, x_off, x_idx, exclude, t_off, table, counts):
        # 2. each row's distinct columns entered in its table (one writer: no atomics)
        for i in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
            base = t_off[i]
            mask = t_off[i + 1] - base - 1
            x_lo = x_off[i]
            x_hi = x_off[i + 1]
            found = 0
            for p in range(a_off[i], a_off[i + 1]):
                k = a_idx[p]
                for q in range(b_off[k], b_off[k + 1]):
                    j = b_idx[q]
                    if exclude:
                        x = _lower_bound(x_idx, x_lo, x_hi, j)
                        if x < x_hi and x_idx[x] == j:
                            continue
                    h = (np.int64(j) * np.int64(2654435761)) & mask
                    while True:
                        key = table[base + h]
                        if key == j:
                            break
                        if key < 0:
                            table[base + h] = j
                            found += 1
                            break
                        h = (h + 1) & mask
            counts[i] = found

    def fill(n_rows, t_off, table, offsets, cols):
        # 3. the table's keys copied out at the row's offset, then sorted
        for i in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
            out = offsets[i]
            for t in range(t_off[i], t_off[i + 1]):
                if table[t] >= 0:
                    cols[out] = table[t]
                    out += 1
            _heap_sort(cols, offsets[i], out)

    return kernel(bound), kernel(count), kernel(fill)


def cuda_structure(ctx, lg, rg, xg, offsets, exclude):
    """Bound, count, scan and fill on CUDA; returns the column indices (``offsets``
    filled)."""
    backend = ctx.backend
    n = lg.num_vertices
    bound, count, fill = _cuda_structure_kernels()
    sizes = ctx.scratch("spgemm.sizes", n + 1, np.int64)
    t_off = ctx.scratch("spgemm.table_offsets", n + 1, np.int64)
    backend.run(bound, n, n, rg.num_vertices, lg.row_offsets, lg.column_indices,
                rg.row_offsets, sizes)
    slots = exclusive_scan(backend, "array", n, sizes, sizes, t_off)
    backend.write(t_off, n, slots)
    table = ctx.scratch("spgemm.table", slots, lg.column_indices.dtype)
    backend.fill(table, -1)
    counts = ctx.scratch("spgemm.counts", n + 1, np.int64)
    backend.run(count, n, n, lg.row_offsets, lg.column_indices, rg.row_offsets,
                rg.column_indices, xg.row_offsets, xg.column_indices, exclude, t_off, table,
                counts)
    nnz = exclusive_scan(backend, "array", n, counts, counts, offsets)
    backend.write(offsets, n, nnz)
    cols = backend.empty(max(nnz, 1), lg.column_indices.dtype)
    backend.run(fill, n, n, t_off, table, offsets, cols)
    return cols[:nnz] if nnz else cols[:0]


@hooks_cache
def cuda_kernel(hooks):
    from gunpy.backends.cuda import kernel
    apply_intersection = hooks.apply_intersection

    def products(n_rows, c_off, c_idx, a_off, a_idx, b_off, b_idx, counters, data):
        terms = np.int64(0)
        for i in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
            lo = c_off[i]
            hi = c_off[i + 1]
            if lo == hi:
                continue
            for p in range(a_off[i], a_off[i + 1]):
                k = a_idx[p]
                for q in range(b_off[k], b_off[k + 1]):
                    j = b_idx[q]
                    e = _lower_bound(c_idx, lo, hi, j)
                    if e < hi and c_idx[e] == j:
                        apply_intersection(i, j, e, k, p, q, data)
                        terms += 1
        if terms:
            cuda.atomic.add(counters, 0, terms)

    return kernel(products)


def cuda_execute(ctx, hooks, data, left, right):
    backend = ctx.backend
    cg, lg, rg = backend.graph(ctx.graph), backend.graph(left), backend.graph(right)
    n = cg.num_vertices
    counters = ctx.scratch("spgemm.counters", 1, np.int64)
    backend.fill(counters, 0)
    backend.run(cuda_kernel(hooks), n, n, cg.row_offsets, cg.column_indices, lg.row_offsets,
                lg.column_indices, rg.row_offsets, rg.column_indices, counters, data)
    return int(backend.read(counters, 0))


# ------------------------------------------------------------------------- the API
def _check(name, g, n):
    if not isinstance(g, Graph):
        raise TypeError(f"spgemm's {name} must be a gunpy.Graph, got {type(g).__name__}")
    if g.num_vertices != n:
        raise ValueError(f"spgemm's {name} has {g.num_vertices} vertices, left {n}")


def _host(backend, arr):
    """``arr`` on the host: the CPU's own arrays as they are (the result owns them)."""
    return arr if isinstance(arr, np.ndarray) else backend.to_host(arr)


def structure(left, right, *, exclude=None, context=None):
    """The pattern of ``left @ right`` as a :class:`~gunpy.Graph` (rows sorted by column),
    without the entries ``exclude`` has (a complemented mask).

    ``C(i, j)`` is an entry when some ``k`` has ``i -> k`` in ``left`` and
    ``k -> j`` in ``right`` (values are not read: explicit zeros are entries).
    ``context``: a :class:`~gunpy.operators.Context` made for ``left``.

    Raises
    ------
    TypeError
        An operand that is not a :class:`gunpy.Graph`.
    ValueError
        Operands with different vertex counts, ``exclude``'s rows not sorted.

    Examples
    --------
    A path ``0 -> 1 -> 2 -> 3`` squared: the vertices two steps away.

    >>> import gunpy
    >>> from gunpy.operators import spgemm
    >>> G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 3])
    >>> C = spgemm.structure(G, G, context=gunpy.operators.Context(G, backend="cpu"))
    >>> C.row_offsets.tolist(), C.column_indices.tolist()
    ([0, 1, 2, 2, 2], [2, 3])
    """
    n = left.num_vertices if isinstance(left, Graph) else None
    _check("left", left, n)
    _check("right", right, n)
    if exclude is not None:
        from gunpy.operators.intersect import check_sorted
        _check("exclude", exclude, n)
        check_sorted(exclude, "exclude graph")
    ctx = context_for(left, None, context)
    backend = ctx.backend
    lg, rg = backend.graph(left), backend.graph(right)
    xg = backend.graph(exclude if exclude is not None else left)
    offsets = backend.empty(n + 1, np.int64)
    impl = backend.operator("spgemm.structure")
    cols = impl(ctx, lg, rg, xg, offsets, exclude is not None)
    offsets, cols = _host(backend, offsets), _host(backend, cols)
    ctx.log(strategy="spgemm.structure")
    return Graph(offsets, cols, None, directed=True, _trusted=True)


def spgemm(pattern, functor, data=None, *, left, right, context=None):
    """For each entry ``e = (i, j)`` of ``pattern``, call the functor on every term
    ``left(i, k) right(k, j)`` of the product; returns the number of terms.

    Each term calls ``functor.apply_intersection(i, j, e, k, p, q, data)``
    (``p``: the edge ``i -> k`` of ``left``, ``q``: the edge ``k -> j`` of
    ``right``), an entry's terms one at a time with ``k`` increasing. Terms
    whose ``(i, j)`` is not in ``pattern`` are skipped: with
    :func:`structure`'s pattern this is the general product, with a mask's it
    is the masked one. ``context``: a :class:`~gunpy.operators.Context` made
    for ``pattern``.

    Raises
    ------
    TypeError
        A graph that is not a :class:`gunpy.Graph`, a functor that is not a
        :class:`gunpy.Functor` subclass.
    ValueError
        Graphs with different vertex counts; a pattern whose rows are not sorted.

    See Also
    --------
    gunpy.operators.intersect : the dot-product form over a mask's entries.

    Examples
    --------
    ``A @ A`` of a weighted path, plus-times:

    >>> from collections import namedtuple
    >>> import numpy as np, gunpy
    >>> from gunpy import Functor
    >>> from gunpy.operators import Context, spgemm
    >>> G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 3], [2.0, 3.0, 4.0])
    >>> C = spgemm.structure(G, G, context=Context(G, backend="cpu"))
    >>> class Times(Functor):
    ...     @staticmethod
    ...     def apply_intersection(i, j, e, k, p, q, data):
    ...         data.out[e] += data.w[p] * data.w[q]
    >>> data = namedtuple("Data", "w out")(G.values, np.zeros(C.num_edges))
    >>> spgemm(C, Times, data, left=G, right=G, context=Context(C, backend="cpu"))
    2
    >>> data.out.tolist()
    [6.0, 12.0]
    """
    n = pattern.num_vertices if isinstance(pattern, Graph) else None
    _check("pattern", pattern, n)
    _check("left", left, n)
    _check("right", right, n)
    from gunpy.operators.intersect import check_sorted
    check_sorted(pattern, "pattern graph")
    ctx = context_for(pattern, None, context)
    return run(ctx, compile_functor(functor, ctx.backend), problem_data(data), left, right)


def run(ctx, hooks, data, left, right):
    """:func:`spgemm` once its arguments are checked (``hooks``: the compiled functor)."""
    if ctx.graph.num_edges == 0:
        return 0
    terms = ctx.backend.operator("spgemm")(ctx, hooks, data, left, right)
    ctx.log(edges=terms, strategy="spgemm")
    return terms


callable_module(__name__, spgemm)
