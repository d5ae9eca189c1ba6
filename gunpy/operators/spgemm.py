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
3. :func:`product` does both for the general or complemented-mask product: the
   CPU counts, then fills each row and folds its terms in one pass, the row's
   mask columns marked in its dense accumulator first so that neither pass
   enters them (the terms of a row walked twice while its ``B`` rows are in
   cache, instead of a third pass over every row).

CPU: a ``prange`` over slots, one per thread, each with its own dense accumulator
over the columns (a stamp per column: the row that last saw it; no clearing between
rows) and a bitmap of them, kept in the backend's workspace, and chunks of
:data:`CHUNK_ROWS` rows dealt to the slots in turn. A row with many terms for its
bitmap's words ORs every term's bit in with no test, clears the mask's bits and
counts or reads the words in order (no sort); a sparse row stamps and sorts. CUDA (:mod:`gunpy.operators.spgemm_cuda`): a thread a row, each
with a hash table of its columns; a thread a row balances skewed rows poorly (a GPU
would want rows binned by their bound).
"""

import functools

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from gunpy.backends.cpu import functor_pair
from gunpy.functor import compile_functor
from gunpy.graph import Graph
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.operator import Operator
from gunpy.operators.scan import cpu_exclusive_scan
# the CUDA implementations live beside; the operators below name them
from gunpy.operators.spgemm_cuda import (cuda_execute, cuda_kernel, cuda_product,  # noqa: F401
                                         cuda_structure)

__all__ = ["spgemm", "structure", "product", "run", "cpu_structure", "cuda_structure",
           "cpu_execute", "cuda_execute", "cpu_source", "cuda_kernel", "cpu_product",
           "cuda_product"]


# ----------------------------------------------------------------------------- CPU
#: rows a chunk of the CPU's passes holds (chunks are dealt to the slots in turn)
CHUNK_ROWS = 64
#: rows with fewer columns than this are sorted by insertion (numba's sort costs more)
INSERTION_BELOW = 32
#: a row holding more than ``1 / DENSE_ROW`` of a bit per column (its bitmap's words)
#: is read off a bitmap in order instead of sorted
DENSE_ROW = 32


@njit(inline="always")
def _stamp_row(i, a_off, a_idx, b_off, b_idx, stamp, cols, start, write):
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
def _or_bits(i, a_off, a_idx, b_off, b_idx, bits):
    # every term's column set in the slot's bitmap (no test: a bit set twice is harmless)
    for p in range(a_off[i], a_off[i + 1]):
        k = a_idx[p]
        for q in range(b_off[k], b_off[k + 1]):
            j = b_idx[q]
            bits[j >> 5] |= np.uint32(1) << np.uint32(j & 31)


@njit(inline="always")
def _row_bits(i, a_off, a_idx, b_off, b_idx, x_off, x_idx, exclude, bits):
    # the row's columns in the slot's bitmap, a complemented mask's (exclude) taken out
    _or_bits(i, a_off, a_idx, b_off, b_idx, bits)
    if exclude:
        for t in range(x_off[i], x_off[i + 1]):
            x = x_idx[t]
            bits[x >> 5] &= ~(np.uint32(1) << np.uint32(x & 31))


@njit(inline="always")
def _count_bits(bits):
    # the set bits counted (each word cleared as it is read)
    found = 0
    for word in range(bits.shape[0]):
        x = bits[word]
        if x:
            bits[word] = 0
            while x:
                found += 1
                x &= x - np.uint32(1)
    return found


@njit(inline="always")
def _bound(i, a_off, a_idx, b_off):
    # the row's terms (an upper bound on its columns)
    ub = 0
    for p in range(a_off[i], a_off[i + 1]):
        k = a_idx[p]
        ub += b_off[k + 1] - b_off[k]
    return ub


@njit(inline="always")
def _read_bits(bits, cols, start):
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
def _stamp_mask(i, x_off, x_idx, stamp, value):
    for t in range(x_off[i], x_off[i + 1]):
        stamp[x_idx[t]] = value


@njit(inline="always")
def _row_chunks(n_rows):
    return (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS


@njit(inline="always")
def _slot(t, accumulators, n_cols, words):
    # slot t's dense accumulator (every column -1: another call's rows may have marked it)
    # and its bitmap of the columns (clear)
    nwords = (n_cols + 31) >> 5
    acc = accumulators[t * n_cols:(t + 1) * n_cols]
    acc[:] = -1
    bits = words[t * nwords:(t + 1) * nwords]
    bits[:] = 0
    return acc, bits


def _row_folder(apply_intersection):
    """``terms = fold(i, lo, hi, cols, slot, a_off, a_idx, b_off, b_idx, data)``: every term
    of row ``i`` whose column is one of the row's entries ``lo..hi-1`` (columns
    ``cols[lo:hi]``) handed to ``apply_intersection``, ``k`` increasing; ``slot`` (-1 at
    those columns on entry) maps a column to its entry meanwhile and is -1 there again
    after."""
    @njit(inline="always")
    def fold(i, lo, hi, cols, slot, a_off, a_idx, b_off, b_idx, data):
        for e in range(lo, hi):
            slot[cols[e]] = e
        terms = 0
        for p in range(a_off[i], a_off[i + 1]):
            k = a_idx[p]
            for q in range(b_off[k], b_off[k + 1]):
                e = slot[b_idx[q]]
                if e >= 0:
                    apply_intersection(i, b_idx[q], e, k, p, q, data)
                    terms += 1
        for e in range(lo, hi):
            slot[cols[e]] = -1
        return terms

    return fold


@njit(inline="always")
def _sort_row(cols, start, stop):
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


@functools.lru_cache(maxsize=None)
def _cpu_structure_kernels():
    """``(count, fill)``: the two passes over the terms, each a ``prange`` over slots (one
    per thread), a slot's dense accumulator its own (``stamp[j] == i``: row ``i`` has seen
    column ``j``) and its chunks of rows dealt in turn."""
    from numba import prange

    from gunpy.backends.cpu import kernel

    def count(n_rows, n_cols, a_off, a_idx, b_off, b_idx, x_off, x_idx, exclude, counts,
              stamps, words, slots):
        for t in prange(slots):
            stamp, bits = _slot(t, stamps, n_cols, words)
            for c in range(t, _row_chunks(n_rows), slots):
                for i in range(c * CHUNK_ROWS, min(n_rows, (c + 1) * CHUNK_ROWS)):
                    if _bound(i, a_off, a_idx, b_off) >= bits.shape[0]:
                        # 1. more terms than bitmap words: OR them in, the mask's out, count
                        # (no per-term test; RMAT-14's A @ A: most terms)
                        _row_bits(i, a_off, a_idx, b_off, b_idx, x_off, x_idx, exclude, bits)
                        counts[i] = _count_bits(bits)
                        continue
                    # 1'. a complemented mask's columns count as seen: never entered
                    if exclude:
                        _stamp_mask(i, x_off, x_idx, stamp, i)
                    counts[i] = _stamp_row(i, a_off, a_idx, b_off, b_idx, stamp, counts, 0,
                                          False)

    def fill(n_rows, n_cols, a_off, a_idx, b_off, b_idx, x_off, x_idx, exclude, offsets, cols,
             stamps, words, slots):
        for t in prange(slots):
            stamp, bits = _slot(t, stamps, n_cols, words)
            for c in range(t, _row_chunks(n_rows), slots):
                for i in range(c * CHUNK_ROWS, min(n_rows, (c + 1) * CHUNK_ROWS)):
                    start = offsets[i]
                    if (offsets[i + 1] - start) * DENSE_ROW > bits.shape[0]:
                        # 2. a dense row: its columns in order from a bitmap, no sort
                        # (email-Enron's A @ A: the structure 880 -> 400 ms)
                        _row_bits(i, a_off, a_idx, b_off, b_idx, x_off, x_idx, exclude, bits)
                        _read_bits(bits, cols, start)
                    else:
                        # 2'. a sparse row: written as found, then sorted
                        if exclude:
                            _stamp_mask(i, x_off, x_idx, stamp, i)
                        found = _stamp_row(i, a_off, a_idx, b_off, b_idx, stamp, cols, start,
                                          True)
                        _sort_row(cols, start, start + found)

    return kernel(count), kernel(fill)


def _slots(backend, n_rows, n_cols, name, dtype):
    """``(slots, accumulators)``: a slot per thread (one for a handful of rows), each with
    a dense accumulator of ``n_cols`` from the backend's workspace (kept: a call allocates
    nothing once it has grown)."""
    from numba import config
    slots = 1 if n_rows <= CHUNK_ROWS else max(1, config.NUMBA_NUM_THREADS)
    size = max(n_cols, 1)
    return slots, backend.workspace(name, slots * size, dtype)[:slots * size]


def _cpu_count(ctx, lg, rg, xg, offsets, exclude):
    """The count pass and its scan (``offsets`` filled); ``(nnz, args, stamps, slots)``."""
    backend = ctx.backend
    n, n_cols = lg.num_vertices, rg.num_vertices
    slots, stamps = _slots(backend, n, n_cols, "spgemm.stamps", np.int32)
    counts = ctx.scratch("spgemm.counts", n + 1, np.int64)
    args = (n, n_cols, lg.row_offsets, lg.column_indices, rg.row_offsets, rg.column_indices,
            xg.row_offsets, xg.column_indices, exclude)
    _, words = _slots(backend, n, (n_cols + 31) >> 5, "spgemm.words", np.uint32)
    _cpu_structure_kernels()[0](*args, counts, stamps, words, slots)
    nnz = cpu_exclusive_scan(counts, n, offsets, backend.chunks(n))
    offsets[n] = nnz
    return nnz, args, stamps, slots


def cpu_structure(ctx, lg, rg, xg, offsets, exclude):
    """Count, scan and fill on the CPU; returns the column indices (``offsets`` filled)."""
    nnz, args, stamps, slots = _cpu_count(ctx, lg, rg, xg, offsets, exclude)
    cols = np.empty(nnz, dtype=lg.column_indices.dtype)
    _, words = _slots(ctx.backend, args[0], (args[1] + 31) >> 5, "spgemm.words", np.uint32)
    _cpu_structure_kernels()[1](*args, offsets, cols, stamps, words, slots)
    return cols


def cpu_product(ctx, hooks, data, lg, rg, xg, offsets, exclude):
    """Count and scan, then one pass that fills each row and folds its terms at once
    (the row's ``B`` rows still in cache); returns ``(column indices, terms)``."""
    backend = ctx.backend
    nnz, args, _, slots = _cpu_count(ctx, lg, rg, xg, offsets, exclude)
    cols = np.empty(nnz, dtype=lg.column_indices.dtype)
    data = problem_data(data(nnz) if callable(data) else data)
    if nnz == 0:
        return cols, 0
    _, entries = _slots(backend, args[0], args[1], "spgemm.slots", np.int64)
    _, words = _slots(backend, args[0], (args[1] + 31) >> 5, "spgemm.words", np.uint32)
    work = ctx.scratch("spgemm.work", slots, np.int64)
    pair = functor_pair(cpu_product_source, hooks, ())
    (pair[0] if slots > 1 else pair[1])(*args, offsets, cols, entries, words, work, slots,
                                        data)
    return cols, int(work[:slots].sum())


def cpu_product_source(hooks):
    """The CPU's fused fill-and-product kernel's source for ``hooks``: per row, the
    columns found and ordered (``slot[j]``: -1 unseen, -2 seen, -3 the mask's), then each
    column given its entry (``slot[j] = e``) and every term folded into it."""
    from numba import prange

    fold = _row_folder(hooks.apply_intersection)

    def product(n_rows, n_cols, a_off, a_idx, b_off, b_idx, x_off, x_idx, exclude, offsets,
                cols, slots_, words, work, slots, data):
        for t in prange(slots):
            slot, bits = _slot(t, slots_, n_cols, words)
            terms = 0
            for c in range(t, _row_chunks(n_rows), slots):
                for i in range(c * CHUNK_ROWS, min(n_rows, (c + 1) * CHUNK_ROWS)):
                    start, stop = offsets[i], offsets[i + 1]
                    if start == stop:
                        continue
                    # 1. the row's columns: from a bitmap in order, the mask's taken out
                    # (dense), or found (the mask's marked first: never entered), sorted
                    dense = (stop - start) * DENSE_ROW > bits.shape[0]
                    if dense:
                        _row_bits(i, a_off, a_idx, b_off, b_idx, x_off, x_idx, exclude, bits)
                        _read_bits(bits, cols, start)
                    else:
                        if exclude:
                            _stamp_mask(i, x_off, x_idx, slot, -3)
                        found = start
                        for p in range(a_off[i], a_off[i + 1]):
                            k = a_idx[p]
                            for q in range(b_off[k], b_off[k + 1]):
                                j = b_idx[q]
                                if slot[j] == -1:
                                    slot[j] = -2
                                    cols[found] = j
                                    found += 1
                        _sort_row(cols, start, stop)
                    # 2. each column's entry, then the terms again (k increasing)
                    terms += fold(i, start, stop, cols, slot, a_off, a_idx, b_off, b_idx, data)
                    if exclude and not dense:
                        _stamp_mask(i, x_off, x_idx, slot, -1)
            work[t] = terms

    return product


def cpu_source(hooks):
    """The CPU product kernel's Python source for ``hooks`` (compiled by the callers)."""
    from numba import prange

    fold = _row_folder(hooks.apply_intersection)

    def products(n_rows, n_cols, c_off, c_idx, a_off, a_idx, b_off, b_idx, work, slots_, slots,
                 data):
        for t in prange(slots):
            # slot[j]: the pattern's entry of (i, j) while row i is marked, else -1
            slot = slots_[t * n_cols:(t + 1) * n_cols]
            slot[:] = -1
            terms = 0
            for c in range(t, _row_chunks(n_rows), slots):
                for i in range(c * CHUNK_ROWS, min(n_rows, (c + 1) * CHUNK_ROWS)):
                    if c_off[i] == c_off[i + 1]:
                        continue
                    terms += fold(i, c_off[i], c_off[i + 1], c_idx, slot, a_off, a_idx, b_off,
                                  b_idx, data)
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


# ------------------------------------------------------------------------- the API
def _check(name, g, n):
    if not isinstance(g, Graph):
        raise TypeError(f"spgemm's {name} must be a gunpy.Graph, got {type(g).__name__}")
    if g.num_vertices != n:
        raise ValueError(f"spgemm's {name} has {g.num_vertices} vertices, left {n}")


def _host(backend, arr):
    """``arr`` on the host: the CPU's own arrays as they are (the result owns them)."""
    return arr if isinstance(arr, np.ndarray) else backend.to_host(arr)


def _operands(left, right, exclude, context):
    """``(n, exclude's device graph (left's when None), context)``, the operands checked."""
    n = left.num_vertices if isinstance(left, Graph) else None
    _check("left", left, n)
    _check("right", right, n)
    if exclude is not None:
        from gunpy.operators.intersect import check_sorted
        _check("exclude", exclude, n)
        check_sorted(exclude, "exclude graph")
    ctx = context_for(left, None, context)
    return n, ctx.backend.graph(exclude if exclude is not None else left), ctx


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
    n, xg, ctx = _operands(left, right, exclude, context)
    backend = ctx.backend
    lg, rg = backend.graph(left), backend.graph(right)
    offsets = backend.empty(n + 1, np.int64)
    impl = STRUCTURE.on(backend)
    cols = impl(ctx, lg, rg, xg, offsets, exclude is not None)
    offsets, cols = _host(backend, offsets), _host(backend, cols)
    ctx.log(strategy="spgemm.structure")
    return Graph(offsets, cols, None, directed=True, _trusted=True)


def product(left, right, functor, data=None, *, exclude=None, context=None):
    """The general (or complemented-mask) product in one call: :func:`structure`'s
    pattern, and each of its entries' terms folded as :func:`spgemm` folds them.

    ``data``: the functor's data, or a function of the pattern's entry count that returns
    it (arrays indexed by the entry ``e`` are sized by it). Returns ``(pattern, terms)``.
    The CPU fills each row and folds its terms in one pass (the row's terms walked twice
    while they are in cache); ``exclude``'s columns are marked first and never entered.
    Raises as :func:`structure`.

    Examples
    --------
    >>> from collections import namedtuple
    >>> import numpy as np, gunpy
    >>> from gunpy import Functor
    >>> from gunpy.operators import spgemm
    >>> G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 3], [2.0, 3.0, 4.0])
    >>> class Times(Functor):
    ...     @staticmethod
    ...     def apply_intersection(i, j, e, k, p, q, data):
    ...         data.out[e] += data.w[p] * data.w[q]
    >>> Data = namedtuple("Data", "w out")
    >>> made = {}
    >>> C, terms = spgemm.product(G, G, Times, lambda m: made.setdefault(
    ...     "d", Data(G.values, np.zeros(m))), context=gunpy.operators.Context(G, "cpu"))
    >>> C.column_indices.tolist(), made["d"].out.tolist(), terms
    ([2, 3], [6.0, 12.0], 2)
    """
    n, xg, ctx = _operands(left, right, exclude, context)
    backend = ctx.backend
    offsets = backend.empty(n + 1, np.int64)
    cols, terms = PRODUCT(ctx, compile_functor(functor, backend), data, backend.graph(left),
                          backend.graph(right), xg, offsets, exclude is not None)
    ctx.log(edges=terms, strategy="spgemm.product")
    return Graph(_host(backend, offsets), _host(backend, cols), None, directed=True,
                 _trusted=True), terms


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
    terms = SPGEMM(ctx, hooks, data, left, right)
    ctx.log(edges=terms, strategy="spgemm")
    return terms


STRUCTURE = Operator("spgemm.structure", "ctx, lg, rg, xg, offsets, exclude", cpu=cpu_structure,
                     cuda=cuda_structure)

SPGEMM = Operator("spgemm", "ctx, hooks, data, left, right", cpu=cpu_execute, cuda=cuda_execute)

PRODUCT = Operator("spgemm.product", "ctx, hooks, data, lg, rg, xg, offsets, exclude",
                   cpu=cpu_product, cuda=cuda_product)


callable_module(__name__, spgemm)
