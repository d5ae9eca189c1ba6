"""CSR construction kernels (numba, CPU): counting sort, per-row sort, dedupe.

These run once per graph on the host, so they are plain ``njit`` code cached on
disk; they are not part of any backend.
"""

import numpy as np
from numba import njit, prange

__all__ = ["build_csr", "transpose_csr", "degrees_from_offsets"]


@njit(cache=True)
def _count_rows(src, n, keep):
    counts = np.zeros(n + 1, dtype=np.int64)
    for i in range(src.shape[0]):
        if keep[i]:
            counts[src[i] + 1] += 1
    for v in range(n):
        counts[v + 1] += counts[v]
    return counts


@njit(cache=True)
def _scatter(src, dst, w, keep, offsets, col, val, weighted):
    cursor = offsets[:-1].copy()
    for i in range(src.shape[0]):
        if keep[i]:
            p = cursor[src[i]]
            col[p] = dst[i]
            if weighted:
                val[p] = w[i]
            cursor[src[i]] = p + 1


@njit(parallel=True, cache=True)
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


@njit(parallel=True, cache=True)
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
              index_dtype=np.int32):
    """Build sorted CSR arrays from validated int64 edge arrays.

    Returns ``(row_offsets int64, column_indices index_dtype, values float64 or None)``.
    Rows are sorted by column; duplicates keep their minimum weight.
    """
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


@njit(cache=True)
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


def transpose_csr(row_offsets, column_indices, n):
    """CSC of a CSR graph: ``(in_offsets, in_indices, in_edge_ids)``.

    ``in_edge_ids[p]`` is the CSR id of the edge stored at CSC position ``p``,
    so edge-indexed data (weights) is shared by both views.
    """
    m = column_indices.shape[0]
    in_offsets = np.empty(n + 1, dtype=np.int64)
    in_idx = np.empty(m, dtype=column_indices.dtype)
    in_eid = np.empty(m, dtype=np.int64)
    _transpose(row_offsets, column_indices, n, in_offsets, in_idx, in_eid)
    return in_offsets, in_idx, in_eid


def degrees_from_offsets(offsets):
    return np.diff(offsets)
