"""CSR construction on the host: :func:`build_csr`, :func:`transpose_csr`, :func:`reverse_edge_ids`
(and :func:`build_csr_in_place`, the readers' build of a large unweighted directed graph
inside the buffer of its edges).

:func:`build_csr` has two implementations with identical results:

* **numba** (kernels in :mod:`gunpy._csr_kernels`, compiled once into gunpy's kernel
  cache, driven from here), parallel on every core and cache-friendly: a two-level
  counting sort. Rows are grouped in blocks of
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

import sys

import numba
import numpy as np

from gunpy._csr_kernels import (
    _block_count, _block_scatter, _block_sort, _block_sort_packed, _column_count,
    _column_scatter, _column_sort, _keys_to_columns, _orient_count, _orient_fill, _prefix_sum,
    _row_order, _shift_groups, _symmetry, _twins,
)

__all__ = ["build_csr", "build_csr_in_place", "transpose_csr", "reverse_edge_ids",
           "degrees_from_offsets", "orient", "row_order"]

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


def build_csr_in_place(pairs, n, *, remove_self_loops=True, remove_duplicates=True):
    """The CSR arrays of an unweighted directed edge list, built inside its own buffer.

    ``pairs``: an (m, 2) int32 array that owns its memory, each row ``(dst, src)``, with
    ids below ``n``. It is consumed: read as one int64 key ``src << 32 | dst`` an edge
    (a little-endian machine), sorted in place (NumPy's ``ndarray.sort``), packed into
    the columns by one pass that also counts the rows, then shrunk by a ``realloc``.
    Returns ``(row_offsets int64, column_indices int32)``, the columns a view of that
    buffer, as :func:`build_csr` would build them (rows sorted, self-loops and
    duplicates dropped as asked); peak memory is the edge list and the row offsets.
    """
    if (sys.byteorder != "little" or pairs.dtype != np.int32 or pairs.ndim != 2
            or pairs.shape[1] != 2 or not pairs.flags.owndata
            or not pairs.flags.c_contiguous):
        raise ValueError("build_csr_in_place needs an owned (m, 2) int32 array of "
                         "(dst, src) rows on a little-endian machine")
    m = pairs.shape[0]
    keys = pairs.view(np.int64).reshape(m)
    keys.sort()
    offsets = np.empty(n + 1, dtype=np.int64)
    kept = _keys_to_columns(keys, pairs.reshape(2 * m), offsets, remove_self_loops,
                            remove_duplicates)
    del keys
    if kept < 0:
        raise ValueError(f"build_csr_in_place: an id is not below n={n}")
    pairs.resize(((kept + 1) // 2, 2), refcheck=False)  # shrinks in place
    return offsets, pairs.reshape(-1)[:kept]


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


def reverse_edge_ids(row_offsets, column_indices, n, *, symmetric=False, _impl=None):
    """For an undirected (symmetric) graph: ``rev[e]`` = the CSR id of edge ``e``'s twin.

    The reverse graph of a symmetric graph is the graph itself; only the edge ids
    differ: position ``e`` (the edge ``v -> u``, read as the in-edge ``u -> v`` of
    ``v``) maps to the CSR id of ``u -> v``. A repeated edge pairs its k-th copy in
    row ``v`` with the k-th copy in row ``u``; rows need not be sorted. ``_impl``
    as in :func:`build_csr`.

    ``symmetric=True``: the caller knows the adjacency is symmetric (gunpy mirrored it:
    ``Graph.from_edges(directed=False)``), so the parallel build skips its symmetry
    check (a hash of every edge both ways); the twins are the same.

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
        if not symmetric:
            sums = np.empty(_GROUPS_PER_THREAD * _threads(), dtype=np.uint64)
            _symmetry(_row_bounds(row_offsets, sums.shape[0]), row_offsets, column_indices,
                      sums)
            if sums.sum(dtype=np.uint64) != 0:  # name a vertex: the NumPy check, slow, rare
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


def orient(row_offsets, column_indices, *, by_degree=True):
    """Each edge of a simple undirected CSR (both directions stored, rows strictly
    increasing) once, from its lower end to its higher, by (degree, id) or by id
    alone: ``(offsets, columns)`` with rows still sorted, or None when a row is not
    strictly increasing. One parallel pass counts, one fills (triangle counting's
    oriented graph; by id, each row's kept columns are its last ones)."""
    n = row_offsets.shape[0] - 1
    row_bounds = _row_bounds(row_offsets, 4 * _threads())
    counts = np.zeros(n + 1, dtype=np.int64)
    unsorted = np.zeros(row_bounds.shape[0] - 1, dtype=np.bool_)
    _orient_count(row_bounds, row_offsets, column_indices, by_degree, counts, unsorted)
    if unsorted.any():
        return None
    _scan(counts)
    cols = np.empty(int(counts[-1]), dtype=column_indices.dtype)
    _orient_fill(row_bounds, row_offsets, column_indices, by_degree, counts, cols)
    return counts, cols


def row_order(row_offsets, column_indices):
    """2 when every neighbour list is strictly increasing, 1 when every one is sorted but
    some repeat a column, 0 when some list goes down: one parallel pass."""
    if column_indices.shape[0] < 2:
        return 2
    row_bounds = _row_bounds(row_offsets, 4 * _threads())
    order = np.zeros(row_bounds.shape[0] - 1, dtype=np.int64)
    _row_order(row_bounds, row_offsets, column_indices, order)
    return int(order.min()) if order.shape[0] else 2
