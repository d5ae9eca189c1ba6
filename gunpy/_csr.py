"""CSR construction on the host: :func:`build_csr`, :func:`transpose_csr`, :func:`reverse_edge_ids`.

Two implementations with identical results:

* **numba** (compiled once into gunpy's kernel cache), parallel on every core and
  cache-friendly: a two-level counting sort. Rows are grouped in blocks of
  ``2**shift`` rows holding about 64 K edges each. (1) Each chunk of the edge list
  counts its edges per block; a prefix sum gives every chunk a write head in every
  block. (2) Each chunk scatters its edges, in input order, to its heads (a few
  hundred write streams, not one random write per edge over the whole graph), with
  each edge's row within its block. (3) Each block, by then a cache-sized slice,
  is sorted on its own: least-significant-digit counting passes over the column,
  then one over the row (stable, so equal edges keep input order), and is
  deduplicated and packed left; a block already in order is only packed. (4) One
  left shift per group of blocks and a ``resize`` of the arrays (no second copy
  of the graph). The arrays do not depend on the number of threads or chunks.
  The transpose is the same with columns as the key, and needs no sort within a
  column: the CSR order is the order.
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

Every edge position is an int64 (row offsets, block starts, write heads, edge
ids), so graphs past ``2**31`` stored edges index correctly.
"""

import numba
import numpy as np
from numba import prange

from gunpy._jitcache import cpu_jit

__all__ = ["build_csr", "transpose_csr", "reverse_edge_ids", "degrees_from_offsets"]

#: Largest edge count (after mirroring) that :func:`build_csr` (unweighted) and
#: :func:`transpose_csr` handle with NumPy by default; larger graphs use the
#: parallel numba kernels (below this NumPy finishes before the kernels are loaded
#: from the cache).
NUMPY_MAX_EDGES = 200_000
#: The same for weighted graphs.
NUMPY_MAX_WEIGHTED_EDGES = 200_000
#: When the packed key does not fit in 62 bits NumPy falls back to
#: ``np.lexsort``, worth it only for small edge counts.
NUMPY_MAX_LEXSORT_EDGES = 200_000
#: Edges a block of rows should hold: its columns, rows and weights sort in the cache.
_BLOCK_EDGES = 1 << 16
#: Groups of blocks per thread in the sort pass (blocks differ in size: hubs).
_GROUPS_PER_THREAD = 8
#: Widest digit of the counting passes (2**11 counters: 16 KiB).
_DIGIT_BITS = 11
#: Pack an edge's row within its block above its column when both fit in 32 bits.
_PACK_ROWS = True


# ----------------------------------------------------------------------------- chunking
def _threads():
    return max(1, int(numba.get_num_threads()))


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


def _block_shift(total, n):
    """log2 of the rows a block holds: about :data:`_BLOCK_EDGES` edges a block, at most
    2**16 rows (a row's place in its block is a uint16)."""
    per_row = max(total // max(n, 1), 1)
    rows = max(_BLOCK_EDGES // per_row, 1)
    return min(16, max(0, rows.bit_length() - 1))


def _block_heads(hist):
    """From per-(chunk, block) counts: the blocks' starts (``blocks + 1``, int64) and each
    chunk's first write position in each block (``hist``'s shape, int64): chunk ``c``
    writes block ``b`` from the block's start plus the counts of the chunks before it."""
    hist = np.asarray(hist, dtype=np.int64)
    starts = np.zeros(hist.shape[1] + 1, dtype=np.int64)
    np.cumsum(hist.sum(axis=0), out=starts[1:])
    heads = np.cumsum(hist, axis=0)
    heads -= hist
    heads += starts[:-1]
    return starts, heads


def _block_groups(starts, chunks):
    """Blocks split into ``chunks`` contiguous runs holding about equal numbers of edges."""
    return _row_bounds(starts, chunks)


# ----------------------------------------------------------------------------- kernels
@cpu_jit(parallel=True)
def _block_count(src, dst, mirror, drop_loops, bounds, shift, hist):
    # 1. each chunk of the (virtual, mirrored) edge list counts its edges per block
    m = src.shape[0]
    for c in prange(bounds.shape[0] - 1):
        h = hist[c]
        lo = bounds[c]
        hi = bounds[c + 1]
        for k in range(lo, min(hi, m)):
            u = src[k]
            if drop_loops and u == dst[k]:
                continue
            h[u >> shift] += 1
        if mirror:
            for k in range(max(lo, m), hi):  # the reversed copy: a self-loop is stored once
                u = dst[k - m]
                if u == src[k - m]:
                    continue
                h[u >> shift] += 1


@cpu_jit(inline="always")
def _place(p, u, v, mask, col_bits, packed, keys, col, row):
    if packed:  # the row within the block above the column, in one uint32
        keys[p] = np.uint32(((np.int64(u) & mask) << col_bits) | np.int64(v))
    else:
        col[p] = v
        row[p] = u & mask


@cpu_jit(parallel=True)
def _block_scatter(src, dst, w, mirror, drop_loops, bounds, shift, heads, col, row, keys,
                   col_bits, packed, val, weighted):
    # 2. each chunk writes its edges at its heads in their blocks, in input order, with
    #    each edge's row within its block (packed with the column when both fit 32 bits)
    m = src.shape[0]
    mask = (np.int64(1) << shift) - 1
    for c in prange(bounds.shape[0] - 1):
        head = heads[c]
        lo = bounds[c]
        hi = bounds[c + 1]
        for k in range(lo, min(hi, m)):
            u = src[k]
            v = dst[k]
            if drop_loops and u == v:
                continue
            b = u >> shift
            p = head[b]
            head[b] = p + 1
            _place(p, u, v, mask, col_bits, packed, keys, col, row)
            if weighted:
                val[p] = w[k]
        if mirror:
            for k in range(max(lo, m), hi):
                u = dst[k - m]
                v = src[k - m]
                if u == v:
                    continue
                b = u >> shift
                p = head[b]
                head[b] = p + 1
                _place(p, u, v, mask, col_bits, packed, keys, col, row)
                if weighted:
                    val[p] = w[k - m]


@cpu_jit
def _counting_pass(key_src, shift, mask, col_src, row_src, val_src, col_dst, row_dst,
                   val_dst, weighted, count):
    """One stable counting pass by ``(key_src >> shift) & mask``, moving all three arrays."""
    d = col_src.shape[0]
    count[:mask + 2] = 0
    for j in range(d):
        count[((np.int64(key_src[j]) >> shift) & mask) + 1] += 1
    for k in range(mask + 1):
        count[k + 1] += count[k]
    for j in range(d):
        k = (np.int64(key_src[j]) >> shift) & mask
        p = count[k]
        count[k] = p + 1
        col_dst[p] = col_src[j]
        row_dst[p] = row_src[j]
        if weighted:
            val_dst[p] = val_src[j]


@cpu_jit(parallel=True)
def _block_sort(groups, starts, shift, n, col, row, val, weighted, dedupe, new_counts):
    # 3. each block sorted by (row, column), stably, then deduplicated (the minimum
    #    weight: a later copy replaces the kept one only when strictly less) and packed
    #    left to the end of the previous block of its group; each group's edges then lie
    #    from starts[first block of the group] on
    for g in prange(groups.shape[0] - 1):
        b0 = groups[g]
        b1 = groups[g + 1]
        big = 0
        for b in range(b0, b1):
            big = max(big, starts[b + 1] - starts[b])
        c1 = np.empty(big, dtype=col.dtype)
        c2 = np.empty(big, dtype=col.dtype)
        r1 = np.empty(big, dtype=row.dtype)
        r2 = np.empty(big, dtype=row.dtype)
        v1 = np.empty(big if weighted else 0, dtype=val.dtype)
        v2 = np.empty(big if weighted else 0, dtype=val.dtype)
        count = np.empty(max(1 << shift, 1 << _DIGIT_BITS) + 2, dtype=np.int64)
        out = starts[b0]
        for b in range(b0, b1):
            bs = starts[b]
            d = starts[b + 1] - bs
            row0 = b << shift
            for r in range(min(1 << shift, n - row0)):
                new_counts[row0 + r] = 0
            if d == 0:
                continue
            xc = col[bs:bs + d]
            xr = row[bs:bs + d]
            xv = val[bs:bs + d] if weighted else val[0:0]
            # 3a. in order already (a sorted input)? then only packed
            top = np.int64(xc[0])
            ordered = True
            for j in range(1, d):
                if xc[j] > top:
                    top = np.int64(xc[j])
                if ordered and (xr[j] < xr[j - 1] or (xr[j] == xr[j - 1] and xc[j] < xc[j - 1])):
                    ordered = False
            if not ordered:
                # 3b. counting passes: the column's digits, least significant first, then
                #     the row; each reads one buffer and writes the other
                bits = 0
                while (top >> bits) > 0:
                    bits += 1
                passes = (bits + _DIGIT_BITS - 1) // _DIGIT_BITS
                width = (bits + passes - 1) // passes if passes > 0 else 0
                into_1 = True
                sh = 0
                for step in range(passes + 1):
                    if into_1:
                        yc, yr, yv = c1[:d], r1[:d], v1[:d] if weighted else v1[0:0]
                    else:
                        yc, yr, yv = c2[:d], r2[:d], v2[:d] if weighted else v2[0:0]
                    if step < passes:
                        _counting_pass(xc, sh, (np.int64(1) << width) - 1, xc, xr, xv,
                                       yc, yr, yv, weighted, count)
                        sh += width
                    else:
                        _counting_pass(xr, 0, (np.int64(1) << shift) - 1, xc, xr, xv,
                                       yc, yr, yv, weighted, count)
                    xc, xr, xv = yc, yr, yv
                    into_1 = not into_1
            # 3c. deduplicate and pack (the writes never pass the reads of this block)
            last_r = -1
            last_c = -1
            for j in range(d):
                r = np.int64(xr[j])
                x = np.int64(xc[j])
                if dedupe and r == last_r and x == last_c:
                    if weighted and xv[j] < val[out - 1]:
                        val[out - 1] = xv[j]
                    continue
                col[out] = xc[j]
                if weighted:
                    val[out] = xv[j]
                out += 1
                new_counts[row0 + r] += 1
                last_r = r
                last_c = x


@cpu_jit
def _key_pass(keys, vals, out_keys, out_vals, shift, mask, count, weighted):
    """One stable counting pass of uint32 keys by ``(key >> shift) & mask``."""
    count[:mask + 2] = 0
    for j in range(keys.shape[0]):
        count[((np.int64(keys[j]) >> shift) & mask) + 1] += 1
    for k in range(mask + 1):
        count[k + 1] += count[k]
    for j in range(keys.shape[0]):
        k = (np.int64(keys[j]) >> shift) & mask
        p = count[k]
        count[k] = p + 1
        out_keys[p] = keys[j]
        if weighted:
            out_vals[p] = vals[j]


@cpu_jit(parallel=True)
def _block_sort_packed(groups, starts, shift, n, col_bits, keys, col, val, weighted, dedupe,
                       new_counts):
    # 3, packed: each block's keys (row within the block, column) sorted by LSD counting
    #    passes over their bits, then unpacked, deduplicated and packed left as in
    #    _block_sort (keys and col are one buffer: each key is read before its place,
    #    or an earlier one, is written)
    cmask = (np.int64(1) << col_bits) - 1
    key_bits = col_bits + shift
    passes = (key_bits + _DIGIT_BITS - 1) // _DIGIT_BITS
    width = (key_bits + passes - 1) // passes if passes > 0 else 0
    wmask = (np.int64(1) << width) - 1
    for g in prange(groups.shape[0] - 1):
        b0 = groups[g]
        b1 = groups[g + 1]
        big = 0
        for b in range(b0, b1):
            big = max(big, starts[b + 1] - starts[b])
        k1 = np.empty(big, dtype=keys.dtype)
        k2 = np.empty(big, dtype=keys.dtype)
        v1 = np.empty(big if weighted else 0, dtype=val.dtype)
        v2 = np.empty(big if weighted else 0, dtype=val.dtype)
        count = np.empty((1 << _DIGIT_BITS) + 2, dtype=np.int64)
        out = starts[b0]
        for b in range(b0, b1):
            bs = starts[b]
            d = starts[b + 1] - bs
            row0 = b << shift
            for r in range(min(1 << shift, n - row0)):
                new_counts[row0 + r] = 0
            if d == 0:
                continue
            xk = keys[bs:bs + d]
            xv = val[bs:bs + d] if weighted else val[0:0]
            ordered = True
            for j in range(1, d):
                if xk[j] < xk[j - 1]:
                    ordered = False
                    break
            if not ordered:
                into_1 = True
                for step in range(passes):
                    if into_1:
                        yk, yv = k1[:d], v1[:d] if weighted else v1[0:0]
                    else:
                        yk, yv = k2[:d], v2[:d] if weighted else v2[0:0]
                    _key_pass(xk, xv, yk, yv, step * width, wmask, count, weighted)
                    xk, xv = yk, yv
                    into_1 = not into_1
            last = np.int64(-1)
            for j in range(d):
                key = np.int64(xk[j])
                if dedupe and key == last:
                    if weighted and xv[j] < val[out - 1]:
                        val[out - 1] = xv[j]
                    continue
                if weighted:
                    val[out] = xv[j]
                col[out] = key & cmask
                out += 1
                new_counts[row0 + (key >> col_bits)] += 1
                last = key


@cpu_jit
def _shift_groups(firsts, new_firsts, col, val, weighted):
    # 4. each group's packed edges moved left to their final place, group after group
    #    (a group's target ends before the next group's edges begin)
    for g in range(firsts.shape[0] - 1):
        src = firsts[g]
        dst = new_firsts[g]
        k = new_firsts[g + 1] - dst
        if src == dst:
            continue
        for j in range(k):
            col[dst + j] = col[src + j]
        if weighted:
            for j in range(k):
                val[dst + j] = val[src + j]


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
def _column_count(row_bounds, offsets, col, shift, hist):
    for c in prange(row_bounds.shape[0] - 1):
        h = hist[c]
        for e in range(offsets[row_bounds[c]], offsets[row_bounds[c + 1]]):
            h[col[e] >> shift] += 1


@cpu_jit(parallel=True)
def _column_scatter(row_bounds, offsets, col, shift, heads, in_idx, in_eid, key,
                    write_idx):
    # each chunk of rows (sources) writes its edges at its heads in their columns'
    # blocks, in CSR order, with each edge's column within its block
    mask = (1 << shift) - 1
    for c in prange(row_bounds.shape[0] - 1):
        head = heads[c]
        for u in range(row_bounds[c], row_bounds[c + 1]):
            for e in range(offsets[u], offsets[u + 1]):
                v = col[e]
                b = v >> shift
                p = head[b]
                head[b] = p + 1
                if write_idx:
                    in_idx[p] = u
                in_eid[p] = e
                key[p] = v & mask


@cpu_jit(parallel=True)
def _column_sort(groups, starts, shift, n, in_idx, in_eid, key, write_idx, in_offsets):
    # each block: one stable counting pass by column (the CSR order within a column is
    # kept), its columns' offsets written on the way
    for g in prange(groups.shape[0] - 1):
        b0 = groups[g]
        b1 = groups[g + 1]
        big = 0
        for b in range(b0, b1):
            big = max(big, starts[b + 1] - starts[b])
        ti = np.empty(big if write_idx else 0, dtype=in_idx.dtype)
        te = np.empty(big, dtype=in_eid.dtype)
        count = np.empty((1 << shift) + 1, dtype=np.int64)
        for b in range(b0, b1):
            bs = starts[b]
            d = starts[b + 1] - bs
            row0 = b << shift
            rows = min(1 << shift, n - row0)
            count[:rows + 1] = 0
            ordered = True
            for j in range(bs, bs + d):
                count[key[j] + 1] += 1
                if j > bs and key[j] < key[j - 1]:
                    ordered = False
            for r in range(rows):
                count[r + 1] += count[r]
                in_offsets[row0 + r] = bs + count[r]
            if ordered:
                continue
            for j in range(bs, bs + d):
                r = key[j]
                p = count[r]
                count[r] = p + 1
                if write_idx:
                    ti[p] = in_idx[j]
                te[p] = in_eid[j]
            for j in range(d):
                in_eid[bs + j] = te[j]
            if write_idx:
                for j in range(d):
                    in_idx[bs + j] = ti[j]


_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_PAIR_KEY = np.uint64(0x2545F4914F6CDD1D)


@cpu_jit(inline="always")
def _mix(z):
    """SplitMix64's finaliser: a bijection of uint64 that mixes every bit into every bit."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@cpu_jit(parallel=True)
def _symmetry(row_bounds, offsets, col, sums):
    # the sum of hash(u, v) - hash(v, u) over the edges u -> v: 0 when the edges are their
    # reverses as a multiset (else 0 by chance, with probability about 2**-64)
    for c in prange(row_bounds.shape[0] - 1):
        s = np.uint64(0)
        for v in range(row_bounds[c], row_bounds[c + 1]):
            hv = _mix(np.uint64(v) ^ _PAIR_KEY)
            for j in range(offsets[v], offsets[v + 1]):
                u = np.uint64(col[j])
                s += _mix(hv + u) - _mix(_mix(u ^ _PAIR_KEY) + np.uint64(v))
        sums[c] = s


@cpu_jit(parallel=True)
def _twins(row_bounds, offsets, col, rev, cursors, unsorted):
    # a symmetric graph with sorted rows, its rows v visited in order: the edge v -> u
    # meets u's row at its next unvisited entry, which is v (u's row lists its
    # neighbours in order): rev[e] = cursor[u]++. A chunk of rows starting at row r0
    # starts u's cursor at the first entry of u's row not below r0. Also: whether a row
    # is out of order (then rev means nothing). Cursors are int32 when every edge
    # position is (half the cache a cursor array takes), else int64
    n = offsets.shape[0] - 1
    for c in prange(row_bounds.shape[0] - 1):
        r0 = row_bounds[c]
        cursor = cursors[c]
        for u in range(n):
            lo = offsets[u]
            hi = offsets[u + 1]
            while lo < hi:  # the first entry >= r0
                mid = (lo + hi) >> 1
                if col[mid] < r0:
                    lo = mid + 1
                else:
                    hi = mid
            cursor[u] = lo
        out_of_order = False
        for v in range(r0, row_bounds[c + 1]):
            prev = -1
            for j in range(offsets[v], offsets[v + 1]):
                u = col[j]
                if u < prev:
                    out_of_order = True
                prev = u
                p = cursor[u]
                cursor[u] = p + 1
                rev[j] = p
        unsorted[c] = out_of_order


def _realign(row_offsets, column_indices, rev):
    """Rows out of order: the k-th smallest column of a row gets its k-th in-edge."""
    n = row_offsets.shape[0] - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(row_offsets))
    rev[np.lexsort((column_indices, rows))] = rev.copy()


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
    operators. Graphs are often built before any backend exists, so this is also where
    :func:`gunpy.backends.threads.configure` may run first: OpenMP threads that sleep
    between regions (a spinning team made each region of a small build cost ~20 ms on
    the loaded 2-core machine, against ~0.1 ms)."""
    from gunpy.backends import threads  # stdlib only, loaded with gunpy: no cycle, no cost
    threads.configure()
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


#: prefix sums longer than this run in parallel (shorter: one NumPy cumsum)
_PARALLEL_SCAN_MIN = 1 << 22


def _scan(x):
    """Inclusive prefix sum of int64 ``x`` in place."""
    if x.shape[0] > _PARALLEL_SCAN_MIN:
        _prefix_sum(x, _even_bounds(x.shape[0], 4 * _threads()))
    else:
        np.cumsum(x, out=x)


def _build_csr_numba(src, dst, weights, n, *, remove_self_loops, remove_duplicates,
                     index_dtype, mirror=False):
    weighted = weights is not None
    total = src.shape[0] * (2 if mirror else 1)
    if n == 0 or total == 0:
        return (np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=index_dtype),
                np.zeros(0, dtype=np.float64) if weighted else None)
    threads = _threads()
    shift = _block_shift(total, n)
    # the row within its block goes above the column in the same 32 bits when both fit
    # (2 bytes an edge less, and the sort moves 4 bytes an edge, not 6): worth blocks
    # up to 4 times smaller
    col_bits = _bits(n)
    packed = _PACK_ROWS and np.dtype(index_dtype) == np.int32 and col_bits + shift - 2 <= 32
    if packed:
        shift = min(shift, 32 - col_bits)
    blocks = ((n - 1) >> shift) + 1
    bounds = _even_bounds(total, threads)
    hist = np.zeros((threads, blocks), dtype=np.int64)
    _block_count(src, dst, mirror, remove_self_loops, bounds, shift, hist)
    starts, heads = _block_heads(hist)
    del hist
    m = int(starts[-1])
    col = np.empty(m, dtype=index_dtype)
    row = np.empty(0 if packed else m, dtype=np.uint16)
    keys = col.view(np.uint32) if packed else np.empty(0, dtype=np.uint32)
    val = np.empty(m if weighted else 0, dtype=np.float64)
    w = weights if weighted else np.empty(0, dtype=np.float64)
    _block_scatter(src, dst, w, mirror, remove_self_loops, bounds, shift, heads, col, row,
                   keys, col_bits, packed, val, weighted)
    del heads
    groups = _block_groups(starts, _GROUPS_PER_THREAD * threads)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    if packed:
        _block_sort_packed(groups, starts, shift, n, col_bits, keys, col, val, weighted,
                           remove_duplicates, offsets[1:])
    else:
        _block_sort(groups, starts, shift, n, col, row, val, weighted, remove_duplicates,
                    offsets[1:])
    del row, keys
    _scan(offsets)
    kept = int(offsets[-1])
    if kept != m:
        firsts = starts[groups]
        new_firsts = offsets[np.minimum(groups << shift, n)]
        _shift_groups(firsts, new_firsts, col, val, weighted)
        col.resize(kept, refcheck=False)  # realloc: shrinks in place, no second copy
        if weighted:
            val.resize(kept, refcheck=False)
    return offsets, col, (val if weighted else None)


# ----------------------------------------------------------------------------- transpose
def _by_column(row_offsets, column_indices, n, write_idx):
    """The counting sort by column: ``(in_offsets, in_indices or None, in_edge_ids)``."""
    m = column_indices.shape[0]
    threads = _threads()
    shift = _block_shift(m, n)
    blocks = ((n - 1) >> shift) + 1
    row_bounds = _row_bounds(row_offsets, threads)
    hist = np.zeros((threads, blocks), dtype=np.int64)
    _column_count(row_bounds, row_offsets, column_indices, shift, hist)
    starts, heads = _block_heads(hist)
    del hist
    in_idx = np.empty(m if write_idx else 0, dtype=column_indices.dtype)
    in_eid = np.empty(m, dtype=np.int64)
    key = np.empty(m, dtype=np.uint16)
    _column_scatter(row_bounds, row_offsets, column_indices, shift, heads, in_idx, in_eid,
                    key, write_idx)
    del heads
    in_offsets = np.empty(n + 1, dtype=np.int64)
    in_offsets[n] = m
    _column_sort(_block_groups(starts, _GROUPS_PER_THREAD * threads), starts, shift, n,
                 in_idx, in_eid, key, write_idx, in_offsets)
    return in_offsets, (in_idx if write_idx else None), in_eid


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
        return _by_column(row_offsets, column_indices, n, True)


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
            _realign(row_offsets, column_indices, rev)
        u = column_indices.astype(np.int64)
        bad = np.flatnonzero((rev < row_offsets[u]) | (rev >= row_offsets[u + 1]))
        _check_twins(int(rows[bad[0]]) if bad.size else -1)
        return rev
    if _impl != "numba":
        raise ValueError(f"unknown CSR implementation {_impl!r}")
    with _parallel_region():
        # one cursor array per chunk of rows: as many chunks as threads, fewer when
        # their cursors would outgrow a quarter of the result (or 32 MiB)
        sums = np.empty(_GROUPS_PER_THREAD * _threads(), dtype=np.uint64)
        _symmetry(_row_bounds(row_offsets, sums.shape[0]), row_offsets, column_indices, sums)
        if sums.sum(dtype=np.uint64) != 0:  # name a vertex: the NumPy check, slow but rare
            return reverse_edge_ids(row_offsets, column_indices, n, _impl="numpy")
        wide = m > np.iinfo(np.int32).max
        chunks = max(1, min(_threads(), max(2 * m, 1 << 25) // ((8 if wide else 4) * max(n, 1))))
        cursors = np.empty((chunks, n), dtype=np.int64 if wide else np.int32)
        unsorted = np.empty(chunks, dtype=np.bool_)
        rev = np.empty(m, dtype=np.int64)
        _twins(_row_bounds(row_offsets, chunks), row_offsets, column_indices, rev, cursors,
               unsorted)
        del cursors
        if unsorted.any():  # rare: a Graph built from CSR arrays with rows out of order
            del rev
            in_offsets, _, rev = _by_column(row_offsets, column_indices, n, False)
            _check_degrees(in_offsets, row_offsets)
            _realign(row_offsets, column_indices, rev)
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
