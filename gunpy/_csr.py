"""CSR construction on the host: :func:`build_csr` and :func:`transpose_csr`.

Two implementations with identical results:

* **NumPy** (the default for all but huge graphs, see :data:`NUMPY_MAX_EDGES`):
  every edge becomes one int64 key ``src * n + dst`` (with the edge's position
  packed into the low bits when weights must follow it), and one ``np.sort`` of
  that key (SIMD sort, not ``argsort``) orders the edges by (row, column, input
  order). Nothing to compile, so a fresh process builds a graph at once: the
  numba kernels below take about 4 s to compile on first use (the transpose
  another 2 s), which every new user paid on the first ``datasets.load``.
* **numba** (compiled once into gunpy's kernel cache): counting sort by row, parallel per-row sort
  and dedupe. Used past the thresholds, where its warm speed on 2+ cores
  outweighs its one-time compile.

Rows are sorted by column; a duplicate edge keeps the minimum weight (the first
of the equal minima in input order, NaN when the first copy is NaN), exactly as
the sequential ``if w < kept: kept = w`` of the numba kernel.
"""

import numpy as np
from numba import prange

from gunpy._jitcache import cpu_jit

__all__ = ["build_csr", "transpose_csr", "degrees_from_offsets"]

#: Largest edge count (after mirroring) that :func:`build_csr` (unweighted) and
#: :func:`transpose_csr` handle with NumPy; larger graphs use the numba kernels.
#: (Measured on 2 cores: unweighted NumPy is as fast as the warm numba kernels,
#: or faster, up to 40 M edges; the transpose about as fast from 4 M on.)
NUMPY_MAX_EDGES = 20_000_000
#: The same for weighted graphs: the weights follow a permutation, and NumPy
#: matches warm numba up to ~10 M edges but is ~1.8x slower at 20 M.
NUMPY_MAX_WEIGHTED_EDGES = 10_000_000
#: When the packed key does not fit in 62 bits NumPy falls back to
#: ``np.lexsort``, worth it only for small edge counts.
NUMPY_MAX_LEXSORT_EDGES = 1_000_000


@cpu_jit
def _count_rows(src, n, keep):
    counts = np.zeros(n + 1, dtype=np.int64)
    for i in range(src.shape[0]):
        if keep[i]:
            counts[src[i] + 1] += 1
    for v in range(n):
        counts[v + 1] += counts[v]
    return counts


@cpu_jit
def _scatter(src, dst, w, keep, offsets, col, val, weighted):
    cursor = offsets[:-1].copy()
    for i in range(src.shape[0]):
        if keep[i]:
            p = cursor[src[i]]
            col[p] = dst[i]
            if weighted:
                val[p] = w[i]
            cursor[src[i]] = p + 1


@cpu_jit(parallel=True)
def _sort_dedupe_rows(offsets, col, val, weighted, dedupe, new_counts):
    # 1. each row is sorted by column; duplicates keep the minimum weight
    n = offsets.shape[0] - 1
    for v in prange(n):
        lo = offsets[v]
        hi = offsets[v + 1]
        if hi - lo == 0:
            new_counts[v] = 0
            continue
        seg = col[lo:hi]
        if weighted:
            order = np.argsort(seg, kind="mergesort")
            cs = seg[order]
            ws = val[lo:hi][order]
        else:
            cs = np.sort(seg)
            ws = val[lo:lo]
        k = 0
        for j in range(hi - lo):
            if dedupe and k > 0 and cs[j] == col[lo + k - 1]:
                if weighted and ws[j] < val[lo + k - 1]:
                    val[lo + k - 1] = ws[j]
                continue
            col[lo + k] = cs[j]
            if weighted:
                val[lo + k] = ws[j]
            k += 1
        new_counts[v] = k


@cpu_jit(parallel=True)
def _compact(offsets, new_offsets, col, val, out_col, out_val, weighted):
    n = offsets.shape[0] - 1
    for v in prange(n):
        lo = offsets[v]
        nlo = new_offsets[v]
        for j in range(new_offsets[v + 1] - nlo):
            out_col[nlo + j] = col[lo + j]
            if weighted:
                out_val[nlo + j] = val[lo + j]


def build_csr(src, dst, weights, n, *, remove_self_loops=True, remove_duplicates=True,
              index_dtype=np.int32, _impl=None):
    """Build sorted CSR arrays from validated int64 edge arrays.

    Returns ``(row_offsets int64, column_indices index_dtype, values float64 or None)``.
    Rows are sorted by column; duplicates keep their minimum weight. The input
    arrays are never modified. ``_impl`` ("numpy" or "numba") forces one
    implementation (tests); by default NumPy builds every graph up to
    :data:`NUMPY_MAX_EDGES` edges (:data:`NUMPY_MAX_WEIGHTED_EDGES` weighted).
    """
    kw = dict(remove_self_loops=remove_self_loops, remove_duplicates=remove_duplicates,
              index_dtype=index_dtype)
    m = src.shape[0]
    weighted = weights is not None
    if _impl is None:
        packed = _packed_fits(m, n, weighted)
        limit = NUMPY_MAX_WEIGHTED_EDGES if weighted else NUMPY_MAX_EDGES
        if (packed and m <= limit) or (not packed and m <= NUMPY_MAX_LEXSORT_EDGES):
            _impl = "numpy"
        else:
            _impl = "numba"
    if _impl == "numpy":
        return _build_csr_numpy(src, dst, weights, n, **kw)
    if _impl == "numba":
        return _build_csr_numba(src, dst, weights, n, **kw)
    raise ValueError(f"unknown CSR implementation {_impl!r}")


def _bits(x):
    """Bits needed to hold the integers 0..x-1."""
    return max(int(x) - 1, 0).bit_length()


def _packed_fits(m, n, weighted):
    """Whether the key ``(src * n + dst) << bits(m) | position`` (no position when
    unweighted) fits in 62 bits, leaving int64's largest value free as a sentinel."""
    return _bits(n * n) + (_bits(m) if weighted else 0) <= 62


_SENTINEL = np.iinfo(np.int64).max


def _build_csr_numpy(src, dst, weights, n, *, remove_self_loops, remove_duplicates,
                     index_dtype):
    weighted = weights is not None
    m = src.shape[0]
    if n == 0 or m == 0:
        return (np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=index_dtype),
                np.zeros(0, dtype=np.float64) if weighted else None)
    if not _packed_fits(m, n, weighted):
        return _build_csr_numpy_lexsort(src, dst, weights, n, remove_self_loops,
                                        remove_duplicates, index_dtype)
    key = src.astype(np.int64)  # a copy: the caller's arrays are only read
    key *= n
    key += dst
    if weighted:
        # the edge's position in the low bits makes one np.sort a stable sort
        pbits = _bits(m)
        key <<= pbits
        key |= np.arange(m, dtype=np.int64)
    kept = m
    if remove_self_loops:
        loop = src == dst
        nloops = int(np.count_nonzero(loop))
        if nloops:
            key[loop] = _SENTINEL  # sorts last, then cut off
            kept = m - nloops
    key.sort()
    key = key[:kept]
    ws = None
    if weighted:
        ws = weights[key & ((1 << pbits) - 1)]
        key >>= pbits
    if remove_duplicates and kept > 1:
        first = np.empty(kept, dtype=bool)
        first[0] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        if not first.all():
            starts = np.flatnonzero(first)
            if weighted:
                ws = _segment_min(ws, first, starts)
            key = key[starts]
    # key = row * n + column, sorted: row v starts at the first key >= v * n
    offsets = np.searchsorted(key, np.arange(0, (n + 1) * n, n, dtype=np.int64))
    col = np.empty(key.shape[0], dtype=index_dtype)
    np.remainder(key, n, out=col, casting="unsafe")
    return offsets.astype(np.int64, copy=False), col, ws


def _build_csr_numpy_lexsort(src, dst, w, n, remove_self_loops, remove_duplicates,
                             index_dtype):
    """Fallback when the packed sort key does not fit in 62 bits."""
    s, d = src, dst
    if remove_self_loops:
        keep = s != d
        if not keep.all():
            s, d = s[keep], d[keep]
            w = w[keep] if w is not None else None
    order = np.lexsort((d, s))  # stable
    ss, dd = s[order], d[order]
    ws = w[order] if w is not None else None
    if remove_duplicates and ss.shape[0] > 1:
        first = np.empty(ss.shape[0], dtype=bool)
        first[0] = True
        first[1:] = (ss[1:] != ss[:-1]) | (dd[1:] != dd[:-1])
        if not first.all():
            starts = np.flatnonzero(first)
            if ws is not None:
                ws = _segment_min(ws, first, starts)
            ss, dd = ss[starts], dd[starts]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(ss, minlength=n), out=offsets[1:])
    return offsets, dd.astype(index_dtype), ws


def _segment_min(ws, first, starts):
    """Per run of equal edges (``first`` marks each run's start) the weight the numba
    kernel keeps: the first copy, replaced by every later one that is strictly less."""
    val = np.fmin.reduceat(ws, starts)  # the minimum, NaNs skipped
    zero = ws == 0
    if zero.any() and np.signbit(ws[zero]).any():
        # -0.0 == 0.0: the first zero of the run is kept, with its sign
        gid = np.cumsum(first) - 1
        z = np.flatnonzero(zero)
        gz = gid[z]
        lead = np.empty(z.shape[0], dtype=bool)
        lead[0] = True
        np.not_equal(gz[1:], gz[:-1], out=lead[1:])
        hit = val[gz[lead]] == 0
        val[gz[lead][hit]] = ws[z[lead][hit]]
    nan0 = np.isnan(ws[starts])
    if nan0.any():
        val[nan0] = ws[starts][nan0]  # a NaN first copy is never replaced
    return val


def _build_csr_numba(src, dst, weights, n, *, remove_self_loops, remove_duplicates,
                     index_dtype):
    weighted = weights is not None
    keep = np.ones(src.shape[0], dtype=np.bool_)
    if remove_self_loops:
        keep = src != dst
    offsets = _count_rows(src, n, keep)
    m = int(offsets[-1])
    col = np.empty(m, dtype=index_dtype)
    val = np.empty(m if weighted else 0, dtype=np.float64)
    w = weights if weighted else np.empty(0, dtype=np.float64)
    _scatter(src, dst, w, keep, offsets, col, val, weighted)
    new_counts = np.empty(n, dtype=np.int64)
    _sort_dedupe_rows(offsets, col, val, weighted, remove_duplicates, new_counts)
    new_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(new_counts, out=new_offsets[1:])
    if int(new_offsets[-1]) == m:
        return offsets, col, (val if weighted else None)
    out_col = np.empty(int(new_offsets[-1]), dtype=index_dtype)
    out_val = np.empty(out_col.shape[0] if weighted else 0, dtype=np.float64)
    _compact(offsets, new_offsets, col, val, out_col, out_val, weighted)
    return new_offsets, out_col, (out_val if weighted else None)


@cpu_jit
def _transpose(offsets, col, n, in_offsets, in_idx, in_eid):
    counts = np.zeros(n + 1, dtype=np.int64)
    for e in range(col.shape[0]):
        counts[col[e] + 1] += 1
    for v in range(n):
        counts[v + 1] += counts[v]
    in_offsets[:] = counts
    cursor = counts[:-1].copy()
    for u in range(n):
        for e in range(offsets[u], offsets[u + 1]):
            d = col[e]
            p = cursor[d]
            in_idx[p] = u
            in_eid[p] = e
            cursor[d] = p + 1


def transpose_csr(row_offsets, column_indices, n, *, _impl=None):
    """CSC of a CSR graph: ``(in_offsets, in_indices, in_edge_ids)``.

    ``in_edge_ids[p]`` is the CSR id of the edge stored at CSC position ``p``,
    so edge-indexed data (weights) is shared by both views. Within a column the
    edges are in CSR order (by source). ``_impl`` as in :func:`build_csr`.
    """
    m = column_indices.shape[0]
    if _impl is None:
        _impl = "numpy" if m <= NUMPY_MAX_EDGES else "numba"
    if _impl == "numpy" and _bits(n) + _bits(m) <= 63:
        return _transpose_numpy(row_offsets, column_indices, n)
    if _impl not in ("numpy", "numba"):
        raise ValueError(f"unknown CSR implementation {_impl!r}")
    in_offsets = np.empty(n + 1, dtype=np.int64)
    in_idx = np.empty(m, dtype=column_indices.dtype)
    in_eid = np.empty(m, dtype=np.int64)
    _transpose(row_offsets, column_indices, n, in_offsets, in_idx, in_eid)
    return in_offsets, in_idx, in_eid


def _transpose_numpy(row_offsets, column_indices, n):
    m = column_indices.shape[0]
    in_offsets = np.zeros(n + 1, dtype=np.int64)
    if m == 0:
        return in_offsets, np.zeros(0, dtype=column_indices.dtype), np.zeros(0, dtype=np.int64)
    np.cumsum(np.bincount(column_indices, minlength=n), out=in_offsets[1:])
    # (column, CSR id) packed in one key: np.sort is a stable sort by column
    pbits = _bits(m)
    key = column_indices.astype(np.int64)
    key <<= pbits
    key |= np.arange(m, dtype=np.int64)
    key.sort()
    in_eid = key & ((1 << pbits) - 1)
    src = np.repeat(np.arange(n, dtype=column_indices.dtype), np.diff(row_offsets))
    return in_offsets, src[in_eid], in_eid


def degrees_from_offsets(offsets):
    return np.diff(offsets)
