"""spgemm on CUDA: a thread a row; the count pass enters the row's columns in its own
open-addressing hash table in global scratch (sized by the row's bound: the sum of
``B``'s row lengths over ``A(i, :)``, plus a complemented mask's row, capped at the
column count, doubled to a power of two; the mask's columns entered first, marked, so
that the terms that hit them are skipped), the fill pass copies the table out and heap-sorts it, the product pass finds each
term's entry by binary search in the sorted row (see :mod:`gunpy.operators.spgemm`).
"""

import functools

import numpy as np

from gunpy.functor import hooks_cache
from gunpy.operators.common import problem_data
from gunpy.operators.scan import exclusive_scan

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["cuda_structure", "cuda_execute", "cuda_product", "cuda_kernel"]


@functools.cache
def _heap_helpers():
    """``_heap_sort``: a row's columns sorted in place, made on first CUDA use."""
    from gunpy.backends.cuda import device

    @device
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

    @device
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

    return _heap_sort


@functools.lru_cache(maxsize=None)
def _cuda_structure_kernels():
    from gunpy.backends.cuda import kernel
    _heap_sort = _heap_helpers()

    def bound(n_rows, n_cols, a_off, a_idx, b_off, x_off, exclude, sizes):
        # 1. the row's table: a power of two at least twice its distinct columns' bound
        # (the mask's columns too: they are entered first, and disjoint from the row's)
        for i in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
            ub = np.int64(0)
            for p in range(a_off[i], a_off[i + 1]):
                k = a_idx[p]
                ub += b_off[k + 1] - b_off[k]
            if exclude and ub > 0:
                ub += x_off[i + 1] - x_off[i]
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
            found = 0
            if exclude and mask >= 0:
                # a complemented mask's columns entered first, as -2 - j: a term that
                # finds its column so marked is skipped (no search of the mask's row)
                for x in range(x_off[i], x_off[i + 1]):
                    j = x_idx[x]
                    h = (np.int64(j) * np.int64(2654435761)) & mask
                    while table[base + h] != -1 and table[base + h] != -2 - j:
                        h = (h + 1) & mask
                    table[base + h] = -2 - j
            for p in range(a_off[i], a_off[i + 1]):
                k = a_idx[p]
                for q in range(b_off[k], b_off[k + 1]):
                    j = b_idx[q]
                    h = (np.int64(j) * np.int64(2654435761)) & mask
                    while True:
                        key = table[base + h]
                        if key == j or key == -2 - j:
                            break
                        if key == -1:
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
                rg.row_offsets, xg.row_offsets, exclude, sizes)
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
    from gunpy.operators.intersect import _search_helpers
    _lower_bound = _search_helpers()[0]  # the same binary search
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


def cuda_product(ctx, hooks, data, lg, rg, xg, offsets, exclude):
    """The structure's kernels, then the product's over it: ``(column indices, terms)``."""
    backend = ctx.backend
    cols = cuda_structure(ctx, lg, rg, xg, offsets, exclude)
    data = problem_data(data(cols.shape[0]) if callable(data) else data)
    if cols.shape[0] == 0:
        return cols, 0
    n = lg.num_vertices
    counters = ctx.scratch("spgemm.counters", 1, np.int64)
    backend.fill(counters, 0)
    backend.run(cuda_kernel(hooks), n, n, offsets, cols, lg.row_offsets, lg.column_indices,
                rg.row_offsets, rg.column_indices, counters, data)
    return cols, int(backend.read(counters, 0))
