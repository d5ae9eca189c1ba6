"""CSR construction on the host: :func:`build_csr`, :func:`transpose_csr`, :func:`reverse_edge_ids`.

Two implementations with identical results:

* **numba** (compiled once into gunpy's kernel cache), parallel on every core:
  a counting sort by row (each chunk of the edge list counts its rows, a prefix
  sum turns the counts into one cursor per chunk and row, and each chunk
  scatters its edges in input order), then each row sorted by column (in place;
  insertion sort for short rows, skipped for rows already sorted), deduplicated
  and packed to the left of its own slot, then one left shift of every chunk of
  rows and a ``resize`` of the arrays (no second copy of the graph). The
  counting sort is stable and the row sort keeps input order among equal
  columns, so the arrays do not depend on the number of threads.
* **NumPy** for small graphs (:data:`NUMPY_MAX_EDGES`): every edge becomes one
  int64 key ``src * n + dst`` (with the edge's position packed into the low bits
  when weights must follow it), and one ``np.sort`` of that key orders the edges
  by (row, column, input order). Nothing to load: below a few hundred thousand
  edges it is done before the kernels are read from the cache.

Rows are sorted by column; a duplicate edge keeps the minimum weight (the first
of the equal minima in input order, NaN when the first copy is NaN), exactly as
the sequential ``if w < kept: kept = w`` of the numba kernel. ``mirror=True``
stores each edge both ways (a self-loop once) without building the mirrored
list: the edge list is read as if its reversed copy followed it.

Every edge position is an int64 (row offsets, cursors, edge ids), so graphs past
``2**31`` stored edges index correctly; per-chunk counts are int64 too.
"""

import numba
import numpy as np
from numba import prange

from gunpy._jitcache import cpu_jit

__all__ = ["build_csr", "transpose_csr", "reverse_edge_ids", "degrees_from_offsets"]

#: Largest edge count (after mirroring) that :func:`build_csr` (unweighted) and
#: :func:`transpose_csr` handle with NumPy by default; larger graphs use the
#: parallel numba kernels (on 2 cores about 4x NumPy's speed from ~1 M edges on;
#: below this NumPy finishes before the kernels are loaded from the cache).
NUMPY_MAX_EDGES = 200_000
#: The same for weighted graphs.
NUMPY_MAX_WEIGHTED_EDGES = 200_000
#: When the packed key does not fit in 62 bits NumPy falls back to
#: ``np.lexsort``, worth it only for small edge counts.
NUMPY_MAX_LEXSORT_EDGES = 200_000
#: Rows up to this length are sorted by insertion (in place, stable).
_INSERTION_MAX = 32
#: Chunks per thread in the per-row passes (rows differ wildly in length).
_ROW_CHUNKS_PER_THREAD = 8


# ----------------------------------------------------------------------------- chunking
def _threads():
    return max(1, int(numba.get_num_threads()))


def _scatter_chunks(total, n):
    """How many chunks count and scatter the edge list: one per thread, fewer when the
    per-chunk cursors (``chunks * n`` int64) would outgrow half the scattered columns
    (int32) or 32 MiB, whichever is larger. The arrays do not depend on it."""
    budget = max(2 * total, 1 << 25)
    return int(max(1, min(_threads(), budget // (8 * max(n, 1)))))


def _even_bounds(total, chunks):
    """``chunks + 1`` int64 bounds splitting ``0..total`` evenly (exact for any int64 total)."""
    c = np.arange(chunks + 1, dtype=np.int64)
    q, r = divmod(int(total), int(chunks))
    return c * q + np.minimum(c, r)


def _row_bounds(offsets, chunks):
    """Rows split into ``chunks`` contiguous runs holding about equal numbers of edges."""
    n = offsets.shape[0] - 1
    targets = _even_bounds(int(offsets[-1]), chunks)
    b = np.searchsorted(offsets, targets, side="left").astype(np.int64)
    b[0], b[-1] = 0, n
    return np.maximum.accumulate(np.minimum(b, n))


# ----------------------------------------------------------------------------- kernels
@cpu_jit(parallel=True)
def _count_rows(src, dst, mirror, drop_loops, bounds, counts):
    # 1. each chunk of the (virtual, mirrored) edge list counts the edges of each row
    m = src.shape[0]
    for c in prange(bounds.shape[0] - 1):
        cnt = counts[c]
        lo = bounds[c]
        hi = bounds[c + 1]
        for k in range(lo, min(hi, m)):
            u = src[k]
            if drop_loops and u == dst[k]:
                continue
            cnt[u] += 1
        if mirror:
            for k in range(max(lo, m), hi):  # the reversed copy: a self-loop is stored once
                u = dst[k - m]
                if u == src[k - m]:
                    continue
                cnt[u] += 1


@cpu_jit(parallel=True)
def _cursors(counts, offsets, blocks, start):
    # 2. per row: the chunks' counts become their start positions within the row and
    #    offsets[v + 1] the row's size (prefix-summed in between); then (start) the row's
    #    offset is added. Positions are int64: a row may pass 2**31 edges.
    nchunks = counts.shape[0]
    for b in prange(blocks.shape[0] - 1):
        if start:
            for c in range(nchunks):
                cnt = counts[c]
                for v in range(blocks[b], blocks[b + 1]):
                    cnt[v] += offsets[v]
            continue
        for v in range(blocks[b], blocks[b + 1]):
            acc = np.int64(0)
            for c in range(nchunks):
                t = counts[c, v]
                counts[c, v] = acc
                acc += t
            offsets[v + 1] = acc


@cpu_jit(parallel=True)
def _prefix_sum(x, blocks):
    # inclusive prefix sum in place, in two passes over blocks (int64)
    nb = blocks.shape[0] - 1
    sums = np.zeros(nb + 1, dtype=np.int64)
    for b in prange(nb):
        s = np.int64(0)
        for i in range(blocks[b], blocks[b + 1]):
            s += x[i]
        sums[b + 1] = s
    for b in range(nb):
        sums[b + 1] += sums[b]
    for b in prange(nb):
        s = sums[b]
        for i in range(blocks[b], blocks[b + 1]):
            s += x[i]
            x[i] = s


@cpu_jit(parallel=True)
def _scatter(src, dst, w, mirror, drop_loops, bounds, cursor, col, val, weighted):
    # 3. each chunk writes its edges at its rows' cursors, in input order (a stable sort)
    m = src.shape[0]
    for c in prange(bounds.shape[0] - 1):
        cur = cursor[c]
        lo = bounds[c]
        hi = bounds[c + 1]
        for k in range(lo, min(hi, m)):
            u = src[k]
            v = dst[k]
            if drop_loops and u == v:
                continue
            p = cur[u]
            cur[u] = p + 1
            col[p] = v
            if weighted:
                val[p] = w[k]
        if mirror:
            for k in range(max(lo, m), hi):
                u = dst[k - m]
                v = src[k - m]
                if u == v:
                    continue
                p = cur[u]
                cur[u] = p + 1
                col[p] = v
                if weighted:
                    val[p] = w[k - m]


@cpu_jit
def _sort_row(col, val, lo, hi, weighted, tmp_col, tmp_val):
    """Sort ``col[lo:hi]`` in place, stably (``val`` follows): insertion sort for short
    rows, else a least-significant-digit radix sort (bytes) through the scratch arrays."""
    ordered = True
    top = col[lo] if hi > lo else 0
    for j in range(lo + 1, hi):
        if col[j] < col[j - 1]:
            ordered = False
        if col[j] > top:
            top = col[j]
    if ordered:
        return
    if hi - lo <= _INSERTION_MAX:
        for j in range(lo + 1, hi):
            x = col[j]
            i = j - 1
            if weighted:
                y = val[j]
                while i >= lo and col[i] > x:
                    col[i + 1] = col[i]
                    val[i + 1] = val[i]
                    i -= 1
                val[i + 1] = y
            else:
                while i >= lo and col[i] > x:
                    col[i + 1] = col[i]
                    i -= 1
            col[i + 1] = x
        return
    d = hi - lo
    # digit width: the fewest passes whose counting (2 * 2**width) and moving (2 * d)
    # cost least, at most 11 bits a digit
    bits = 0
    while (np.int64(top) >> bits) > 0:
        bits += 1
    best = -1
    width = bits
    for passes in range(1, bits + 1):
        w = (bits + passes - 1) // passes
        if w > 11:
            continue
        cost = passes * ((2 << w) + 2 * d)
        if best < 0 or cost < best:
            best = cost
            width = w
    mask = (np.int64(1) << width) - 1
    a_col = col[lo:hi]
    a_val = val[lo:hi] if weighted else val[0:0]
    b_col = tmp_col[:d]
    b_val = tmp_val[:d] if weighted else tmp_val[0:0]
    count = np.empty(mask + 2, dtype=np.int64)
    in_tmp = False
    shift = 0
    while shift < bits:
        count[:] = 0
        for j in range(d):
            count[((np.int64(a_col[j]) >> shift) & mask) + 1] += 1
        for k in range(mask + 1):
            count[k + 1] += count[k]
        for j in range(d):
            k = (np.int64(a_col[j]) >> shift) & mask
            p = count[k]
            count[k] = p + 1
            b_col[p] = a_col[j]
            if weighted:
                b_val[p] = a_val[j]
        a_col, b_col = b_col, a_col
        a_val, b_val = b_val, a_val
        in_tmp = not in_tmp
        shift += width
    if in_tmp:  # the sorted row is in the scratch arrays: copy it back
        for j in range(d):
            col[lo + j] = a_col[j]
        if weighted:
            for j in range(d):
                val[lo + j] = a_val[j]


@cpu_jit(parallel=True)
def _sort_dedupe_pack(row_bounds, offsets, col, val, weighted, dedupe, new_counts):
    # 4. each row sorted, deduplicated (the minimum weight: a later copy replaces the kept
    #    one only when strictly less) and packed left, to the end of the previous row of
    #    its chunk; each chunk's rows then lie from offsets[first row of the chunk] on
    for c in prange(row_bounds.shape[0] - 1):
        longest = 0
        for v in range(row_bounds[c], row_bounds[c + 1]):
            longest = max(longest, offsets[v + 1] - offsets[v])
        tmp_col = np.empty(longest if longest > _INSERTION_MAX else 0, dtype=col.dtype)
        tmp_val = np.empty(tmp_col.shape[0] if weighted else 0, dtype=val.dtype)
        out = offsets[row_bounds[c]]
        for v in range(row_bounds[c], row_bounds[c + 1]):
            lo = offsets[v]
            hi = offsets[v + 1]
            _sort_row(col, val, lo, hi, weighted, tmp_col, tmp_val)
            k = 0
            for j in range(lo, hi):  # out + k <= j: writes never pass the reads
                x = col[j]
                if dedupe and k > 0 and x == col[out + k - 1]:
                    if weighted and val[j] < val[out + k - 1]:
                        val[out + k - 1] = val[j]
                    continue
                col[out + k] = x
                if weighted:
                    val[out + k] = val[j]
                k += 1
            new_counts[v] = k
            out += k


@cpu_jit
def _shift_chunks(row_bounds, offsets, new_offsets, col, val, weighted):
    # 5. each chunk's packed rows moved left to their final place, chunk after chunk
    #    (a chunk's target ends before the next chunk's data begins)
    for c in range(row_bounds.shape[0] - 1):
        src = offsets[row_bounds[c]]
        dst = new_offsets[row_bounds[c]]
        k = new_offsets[row_bounds[c + 1]] - dst
        if src == dst:
            continue
        for j in range(k):
            col[dst + j] = col[src + j]
        if weighted:
            for j in range(k):
                val[dst + j] = val[src + j]


@cpu_jit(parallel=True)
def _count_columns(row_bounds, offsets, col, counts):
    for c in prange(row_bounds.shape[0] - 1):
        cnt = counts[c]
        for e in range(offsets[row_bounds[c]], offsets[row_bounds[c + 1]]):
            cnt[col[e]] += 1


@cpu_jit(parallel=True)
def _scatter_columns(row_bounds, offsets, col, cursor, in_idx, in_eid, write_idx):
    # each chunk of rows (sources) writes its edges at its columns' cursors: within a
    # column the edges are in CSR order, whatever the chunks
    for c in prange(row_bounds.shape[0] - 1):
        cur = cursor[c]
        for u in range(row_bounds[c], row_bounds[c + 1]):
            for e in range(offsets[u], offsets[u + 1]):
                v = col[e]
                p = cur[v]
                cur[v] = p + 1
                if write_idx:
                    in_idx[p] = u
                in_eid[p] = e


@cpu_jit(parallel=True)
def _align_and_check(row_bounds, offsets, col, eid):
    # eid (column v's in-edges by source) realigned with row v's own order, then checked:
    # the partner of the edge v -> u must be an edge of row u. Returns the first bad row
    # (a graph called undirected whose adjacency is not symmetric), or -1.
    nb = row_bounds.shape[0] - 1
    bad = np.full(nb, -1, dtype=np.int64)
    for c in prange(nb):
        for v in range(row_bounds[c], row_bounds[c + 1]):
            lo = offsets[v]
            hi = offsets[v + 1]
            ordered = True
            for j in range(lo + 1, hi):
                if col[j] < col[j - 1]:
                    ordered = False
                    break
            if not ordered:  # the k-th smallest column gets the k-th in-edge
                order = np.argsort(col[lo:hi], kind="mergesort")
                got = eid[lo:hi].copy()
                for k in range(hi - lo):
                    eid[lo + order[k]] = got[k]
            for j in range(lo, hi):
                u = col[j]
                r = eid[j]
                if r < offsets[u] or r >= offsets[u + 1]:
                    if bad[c] < 0:
                        bad[c] = v
                    break
    first = -1
    for c in range(nb):
        if bad[c] >= 0:
            first = bad[c]
            break
    return first


# ----------------------------------------------------------------------------- build
def build_csr(src, dst, weights, n, *, remove_self_loops=True, remove_duplicates=True,
              index_dtype=np.int32, mirror=False, _impl=None):
    """Build sorted CSR arrays from validated integer edge arrays.

    Returns ``(row_offsets int64, column_indices index_dtype, values float64 or None)``.
    Rows are sorted by column; duplicates keep their minimum weight. ``mirror=True``
    also stores every edge reversed (a self-loop once), as if ``(src + dst, dst + src)``
    were given. ``src`` and ``dst`` may be int32 or int64 and are never modified.
    ``_impl`` ("numpy" or "numba") forces one implementation (tests); by default NumPy
    builds every graph up to :data:`NUMPY_MAX_EDGES` edges
    (:data:`NUMPY_MAX_WEIGHTED_EDGES` weighted).
    """
    kw = dict(remove_self_loops=remove_self_loops, remove_duplicates=remove_duplicates,
              index_dtype=index_dtype)
    m = src.shape[0] * (2 if mirror else 1)
    weighted = weights is not None
    if _impl is None:
        packed = _packed_fits(m, n, weighted)
        limit = NUMPY_MAX_WEIGHTED_EDGES if weighted else NUMPY_MAX_EDGES
        if (packed and m <= limit) or (not packed and m <= NUMPY_MAX_LEXSORT_EDGES):
            _impl = "numpy"
        else:
            _impl = "numba"
    if _impl == "numpy":
        if mirror:
            src, dst, weights = _mirrored(src, dst, weights)
        return _build_csr_numpy(src, dst, weights, n, **kw)
    if _impl == "numba":
        with _parallel_region():
            return _build_csr_numba(src, dst, weights, n, mirror=mirror, **kw)
    raise ValueError(f"unknown CSR implementation {_impl!r}")


def _parallel_region():
    """:func:`gunpy.backends.threads.region`: under numba's workqueue layer, which aborts
    on overlapping parallel regions, threads building graphs take turns with gunpy's
    operators."""
    from gunpy.backends import threads  # stdlib only, loaded with gunpy: no cycle, no cost
    return threads.region()


def _mirrored(src, dst, w):
    off = src != dst
    s = np.concatenate([src, dst[off]]).astype(np.int64, copy=False)
    d = np.concatenate([dst, src[off]]).astype(np.int64, copy=False)
    return s, d, (None if w is None else np.concatenate([w, w[off]]))


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


def _vertex_blocks(n):
    return _even_bounds(n, min(max(n, 1), 4 * _threads()))


#: prefix sums longer than this run in parallel (shorter: one NumPy cumsum)
_PARALLEL_SCAN_MIN = 1 << 22


def _scan(x):
    """Inclusive prefix sum of int64 ``x`` in place."""
    if x.shape[0] > _PARALLEL_SCAN_MIN:
        _prefix_sum(x, _even_bounds(x.shape[0], 4 * _threads()))
    else:
        np.cumsum(x, out=x)


def _offsets_and_cursors(counts, n):
    """Row offsets (int64, ``n + 1``) from per-chunk counts, which become each chunk's
    absolute write position per row."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    blocks = _vertex_blocks(n)
    _cursors(counts, offsets, blocks, False)
    _scan(offsets)
    _cursors(counts, offsets, blocks, True)
    return offsets


def _build_csr_numba(src, dst, weights, n, *, remove_self_loops, remove_duplicates,
                     index_dtype, mirror=False):
    weighted = weights is not None
    total = src.shape[0] * (2 if mirror else 1)
    if n == 0 or total == 0:
        return (np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=index_dtype),
                np.zeros(0, dtype=np.float64) if weighted else None)
    chunks = _scatter_chunks(total, n)
    bounds = _even_bounds(total, chunks)
    counts = np.zeros((chunks, n), dtype=np.int64)
    _count_rows(src, dst, mirror, remove_self_loops, bounds, counts)
    offsets = _offsets_and_cursors(counts, n)
    m = int(offsets[-1])
    col = np.empty(m, dtype=index_dtype)
    val = np.empty(m if weighted else 0, dtype=np.float64)
    w = weights if weighted else np.empty(0, dtype=np.float64)
    _scatter(src, dst, w, mirror, remove_self_loops, bounds, counts, col, val, weighted)
    del counts
    row_bounds = _row_bounds(offsets, _ROW_CHUNKS_PER_THREAD * _threads())
    new_counts = np.empty(n + 1, dtype=np.int64)
    new_counts[0] = 0
    _sort_dedupe_pack(row_bounds, offsets, col, val, weighted, remove_duplicates,
                      new_counts[1:])
    _scan(new_counts)
    kept = int(new_counts[-1])
    if kept != m:
        _shift_chunks(row_bounds, offsets, new_counts, col, val, weighted)
        col.resize(kept, refcheck=False)  # realloc: shrinks in place, no second copy
        if weighted:
            val.resize(kept, refcheck=False)
    return new_counts, col, (val if weighted else None)


# ----------------------------------------------------------------------------- transpose
def _column_cursors(row_offsets, column_indices, n):
    """Row chunks, in-offsets and per-chunk cursors for a counting sort by column."""
    m = column_indices.shape[0]
    chunks = _scatter_chunks(m, n)
    row_bounds = _row_bounds(row_offsets, chunks)
    counts = np.zeros((chunks, n), dtype=np.int64)
    _count_columns(row_bounds, row_offsets, column_indices, counts)
    in_offsets = _offsets_and_cursors(counts, n)
    return row_bounds, in_offsets, counts


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
    if n == 0 or m == 0:
        return (np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=column_indices.dtype),
                np.zeros(0, dtype=np.int64))
    row_offsets = np.ascontiguousarray(row_offsets, dtype=np.int64)
    with _parallel_region():
        row_bounds, in_offsets, cursor = _column_cursors(row_offsets, column_indices, n)
        in_idx = np.empty(m, dtype=column_indices.dtype)
        in_eid = np.empty(m, dtype=np.int64)
        _scatter_columns(row_bounds, row_offsets, column_indices, cursor, in_idx, in_eid, True)
    return in_offsets, in_idx, in_eid


def reverse_edge_ids(row_offsets, column_indices, n, *, _impl=None):
    """For an undirected (symmetric) graph: ``rev[e]`` = the CSR id of edge ``e``'s twin.

    The reverse graph of a symmetric graph is the graph itself; only the edge ids
    differ: position ``e`` (the edge ``v -> u``, read as the in-edge ``u -> v`` of
    ``v``) maps to the CSR id of ``u -> v``. A repeated edge pairs its k-th copy in
    row ``v`` with the k-th copy in row ``u``; rows need not be sorted. ``_impl``
    as in :func:`build_csr`.

    Raises
    ------
    ValueError
        The adjacency is not symmetric (a graph marked undirected that is not).
    """
    m = column_indices.shape[0]
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    row_offsets = np.ascontiguousarray(row_offsets, dtype=np.int64)
    if _impl is None:
        _impl = "numpy" if m <= NUMPY_MAX_EDGES else "numba"
    if _impl == "numpy":
        in_offsets, _, rev = _transpose_numpy(row_offsets, column_indices, n)
        _check_degrees(in_offsets, row_offsets)
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(row_offsets))
        if np.any((column_indices[1:] < column_indices[:-1]) & (rows[1:] == rows[:-1])):
            # the k-th smallest column of a row gets the row's k-th in-edge
            rev[np.lexsort((column_indices, rows))] = rev.copy()
        u = column_indices.astype(np.int64)
        bad = np.flatnonzero((rev < row_offsets[u]) | (rev >= row_offsets[u + 1]))
        _check_twins(int(rows[bad[0]]) if bad.size else -1)
        return rev
    if _impl != "numba":
        raise ValueError(f"unknown CSR implementation {_impl!r}")
    with _parallel_region():
        row_bounds, in_offsets, cursor = _column_cursors(row_offsets, column_indices, n)
        _check_degrees(in_offsets, row_offsets)
        rev = np.empty(m, dtype=np.int64)
        _scatter_columns(row_bounds, row_offsets, column_indices, cursor,
                         np.empty(0, dtype=column_indices.dtype), rev, False)
        del cursor
        bad = _align_and_check(_row_bounds(row_offsets, _ROW_CHUNKS_PER_THREAD * _threads()),
                               row_offsets, column_indices, rev)
    _check_twins(bad)
    return rev


def _check_degrees(in_offsets, row_offsets):
    if not np.array_equal(in_offsets, row_offsets):
        v = int(np.flatnonzero(in_offsets != row_offsets)[0]) - 1
        raise ValueError(f"an undirected graph's adjacency must be symmetric: vertex {v} "
                         f"has {int(row_offsets[v + 1] - row_offsets[v])} out-edges but "
                         f"{int(in_offsets[v + 1] - in_offsets[v])} in-edges")


def _check_twins(bad):
    if bad >= 0:
        raise ValueError(f"an undirected graph's adjacency must be symmetric: an edge of "
                         f"vertex {bad} has no twin in the reverse direction")


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
