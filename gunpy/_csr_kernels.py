"""The numba kernels of :mod:`gunpy._csr` (host-side drivers, chunking and the NumPy paths
live there): the two-level counting sort of :func:`gunpy._csr.build_csr` (count, scatter,
sort within blocks, shift left), the counting sort by column of
:func:`gunpy._csr.transpose_csr`, the prefix sum, the symmetry hash and twin-id cursor
pass of :func:`gunpy._csr.reverse_edge_ids`, and the packing pass of
:func:`gunpy._csr.build_csr_in_place`. Compiled once into gunpy's kernel cache.
"""

import numpy as np
from numba import prange

from gunpy._jitcache import cpu_jit


#: Widest digit of the counting passes (2**11 counters: 16 KiB).
_DIGIT_BITS = 11


@cpu_jit(inline="always")
def _place(p, u, v, mask, col_bits, packed, keys, col, row):
    if packed:  # the row within the block above the column, in one uint32
        keys[p] = np.uint32(((np.int64(u) & mask) << col_bits) | np.int64(v))
    else:
        col[p] = v
        row[p] = u & mask


@cpu_jit(inline="always")
def _take(head, u, v, j, shift, scatter, col, row, keys, col_bits, packed, val, w, weighted):
    # the edge u -> v (input edge j) takes the next place of its block (head[b]: the
    # block's edges so far); with `scatter` it is also written there
    b = u >> shift
    p = head[b]
    head[b] = p + 1
    if scatter:
        _place(p, u, v, (np.int64(1) << shift) - 1, col_bits, packed, keys, col, row)
        if weighted:
            val[p] = w[j]


@cpu_jit(inline="always")
def _walk_chunk(src, dst, mirror, drop_loops, lo, hi, head, shift, scatter, col, row, keys,
                col_bits, packed, val, w, weighted):
    # the edges lo..hi-1 of the (virtual, mirrored) edge list, in input order, to _take
    m = src.shape[0]
    for k in range(lo, min(hi, m)):
        if not (drop_loops and src[k] == dst[k]):
            _take(head, src[k], dst[k], k, shift, scatter, col, row, keys, col_bits, packed,
                  val, w, weighted)
    if mirror:
        for k in range(max(lo, m), hi):  # the reversed copies: a self-loop is stored once
            if dst[k - m] != src[k - m]:
                _take(head, dst[k - m], src[k - m], k - m, shift, scatter, col, row, keys,
                      col_bits, packed, val, w, weighted)


@cpu_jit(parallel=True)
def _block_count(src, dst, mirror, drop_loops, bounds, shift, hist):
    # 1. each chunk of the edge list counts its edges per block
    for c in prange(bounds.shape[0] - 1):
        h = hist[c]  # (stands in for the arrays a count never writes)
        _walk_chunk(src, dst, mirror, drop_loops, bounds[c], bounds[c + 1], h, shift, False,
                    h, h, h, 0, False, h, h, False)


@cpu_jit(parallel=True)
def _block_scatter(src, dst, w, mirror, drop_loops, bounds, shift, heads, col, row, keys,
                   col_bits, packed, val, weighted):
    # 2. each chunk writes its edges at its heads in their blocks, in input order, with
    #    each edge's row within its block (packed with the column when both fit 32 bits)
    for c in prange(bounds.shape[0] - 1):
        _walk_chunk(src, dst, mirror, drop_loops, bounds[c], bounds[c + 1], heads[c], shift,
                    True, col, row, keys, col_bits, packed, val, w, weighted)


@cpu_jit(inline="always")
def _digit_heads(key_src, d, shift, mask, count):
    # count[k]: where the first of key_src[:d] with digit (key >> shift) & mask == k goes
    count[:mask + 2] = 0
    for j in range(d):
        count[((np.int64(key_src[j]) >> shift) & mask) + 1] += 1
    for k in range(mask + 1):
        count[k + 1] += count[k]


@cpu_jit
def _counting_pass(key_src, shift, mask, col_src, row_src, val_src, col_dst, row_dst,
                   val_dst, weighted, count):
    """One stable counting pass by ``(key_src >> shift) & mask``, moving all three arrays."""
    d = col_src.shape[0]
    _digit_heads(key_src, d, shift, mask, count)
    for j in range(d):
        k = (np.int64(key_src[j]) >> shift) & mask
        p = count[k]
        count[k] = p + 1
        col_dst[p] = col_src[j]
        row_dst[p] = row_src[j]
        if weighted:
            val_dst[p] = val_src[j]


@cpu_jit(inline="always")
def _group(groups, starts, g):
    # group g's blocks b0..b1-1, its first edge and the edges of its largest block
    b0 = groups[g]
    b1 = groups[g + 1]
    big = 0
    for b in range(b0, b1):
        big = max(big, starts[b + 1] - starts[b])
    return b0, b1, starts[b0], big


@cpu_jit(inline="always")
def _open_block(starts, b, shift, n, new_counts):
    # block b's (first edge, edges, first row), its rows' new counts zeroed
    row0 = b << shift
    for r in range(min(1 << shift, n - row0)):
        new_counts[row0 + r] = 0
    return starts[b], starts[b + 1] - starts[b], row0


@cpu_jit(parallel=True)
def _block_sort(groups, starts, shift, n, col, row, val, weighted, dedupe, new_counts):
    # 3. each block sorted by (row, column), stably, then deduplicated (the minimum
    #    weight: a later copy replaces the kept one only when strictly less) and packed
    #    left to the end of the previous block of its group; each group's edges then lie
    #    from starts[first block of the group] on
    for g in prange(groups.shape[0] - 1):
        b0, b1, out, big = _group(groups, starts, g)
        c1 = np.empty(big, dtype=col.dtype)
        c2 = np.empty(big, dtype=col.dtype)
        r1 = np.empty(big, dtype=row.dtype)
        r2 = np.empty(big, dtype=row.dtype)
        v1 = np.empty(big if weighted else 0, dtype=val.dtype)
        v2 = np.empty(big if weighted else 0, dtype=val.dtype)
        count = np.empty(max(1 << shift, 1 << _DIGIT_BITS) + 2, dtype=np.int64)
        for b in range(b0, b1):
            bs, d, row0 = _open_block(starts, b, shift, n, new_counts)
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
    _digit_heads(keys, keys.shape[0], shift, mask, count)
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
        b0, b1, out, big = _group(groups, starts, g)
        k1 = np.empty(big, dtype=keys.dtype)
        k2 = np.empty(big, dtype=keys.dtype)
        v1 = np.empty(big if weighted else 0, dtype=val.dtype)
        v2 = np.empty(big if weighted else 0, dtype=val.dtype)
        count = np.empty((1 << _DIGIT_BITS) + 2, dtype=np.int64)
        for b in range(b0, b1):
            bs, d, row0 = _open_block(starts, b, shift, n, new_counts)
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
        b0, b1, _, big = _group(groups, starts, g)
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


# ----------------------------------------------------------------------------- in place
@cpu_jit
def _keys_to_columns(keys, col, offsets, drop_loops, dedupe):
    # sorted int64 keys ``src << 32 | dst`` to CSR: each key's low half (its column) packed
    # left over the keys it is read from (``col`` is the same buffer as int32: the j-th
    # column's bytes lie at or before the j-th key's, read by then), self-loops and
    # duplicates dropped, the row offsets counted on the way; returns the edges kept
    # (-1 for an id of n or more)
    n = offsets.shape[0] - 1
    j = 0
    row = 0
    prev = -1
    offsets[0] = 0
    for i in range(keys.shape[0]):
        x = keys[i]
        u = x >> 32
        v = x & 0xFFFFFFFF
        if (drop_loops and u == v) or (dedupe and x == prev):
            continue
        prev = x
        if u >= n or v >= n:  # an id out of range: nothing is written past the offsets
            return -1
        while row < u:
            row += 1
            offsets[row] = j
        col[j] = np.int32(v)
        j += 1
    while row < n:
        row += 1
        offsets[row] = j
    return j


@cpu_jit(inline="always")
def _lower_first(offsets, v, u, by_degree):
    # the edge v - u goes from the lower end to the higher: by (degree, id), or by id
    if not by_degree:
        return v < u
    dv = offsets[v + 1] - offsets[v]
    du = offsets[u + 1] - offsets[u]
    return dv < du or (dv == du and v < u)


@cpu_jit(parallel=True)
def _orient_count(row_bounds, offsets, col, by_degree, counts, unsorted):
    # each row's edges to a higher end; a run of rows with a row not strictly increasing
    # (repeats, or out of order) is flagged
    for c in prange(row_bounds.shape[0] - 1):
        bad = False
        for v in range(row_bounds[c], row_bounds[c + 1]):
            k = 0
            prev = -1
            for e in range(offsets[v], offsets[v + 1]):
                u = col[e]
                bad = bad or u <= prev
                prev = u
                if _lower_first(offsets, v, u, by_degree):
                    k += 1
            counts[v + 1] = k
        unsorted[c] = bad


@cpu_jit(parallel=True)
def _orient_fill(row_bounds, offsets, col, by_degree, out_offsets, out_col):
    for c in prange(row_bounds.shape[0] - 1):
        for v in range(row_bounds[c], row_bounds[c + 1]):
            p = out_offsets[v]
            if not by_degree:  # a sorted row's higher ids are its last ones
                for e in range(offsets[v + 1] - (out_offsets[v + 1] - p), offsets[v + 1]):
                    out_col[p] = col[e]
                    p += 1
                continue
            for e in range(offsets[v], offsets[v + 1]):
                u = col[e]
                if _lower_first(offsets, v, u, by_degree):
                    out_col[p] = u
                    p += 1


@cpu_jit(parallel=True)
def _row_order(row_bounds, offsets, col, order):
    # per run of rows: 2 when every row is strictly increasing, 1 when sorted with
    # repeats, 0 when some row goes down
    for c in prange(row_bounds.shape[0] - 1):
        best = 2
        for v in range(row_bounds[c], row_bounds[c + 1]):
            for e in range(offsets[v] + 1, offsets[v + 1]):
                if col[e] < col[e - 1]:
                    best = 0
                    break
                if col[e] == col[e - 1]:
                    best = 1
            if best == 0:
                break
        order[c] = best
