"""CSR and reverse (CSC) arrays built on the GPU, from edges already there.

Both are a sort of 64-bit keys (``row * n + column``) carrying each entry's edge id:
:func:`sort_pairs` is a bitonic sorting network (``log2(size) * (log2(size) + 1) / 2``
grid-stride launches over a power-of-two size, no shared memory and no block waiting
on another, so it runs as written under the simulator too). Then one pass marks the
entries to keep (the first of equal keys when duplicates go), an exclusive scan
(:mod:`gunpy.operators.scan`) places them, and every vertex finds its row's start by a
binary search of the sorted keys. Columns come out sorted within each row, as the host
build leaves them, and a duplicate edge keeps its smallest weight.
"""

import numpy as np

from gunpy.backends.cuda import device, kernel
from gunpy.operators.common import lower_bound as _lower_bound

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["sort_pairs", "build_csr", "transpose", "reverse_view", "factorize", "lower_bound"]

_MAX = np.iinfo(np.int64).max


#: :func:`gunpy.operators.common.lower_bound` as a CUDA device function
lower_bound = device(_lower_bound)


def _bitonic_step(keys, ids, j, k, size):
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        other = i ^ j
        if other > i:
            a, b = keys[i], keys[other]
            if (a > b) if (i & k) == 0 else (a < b):
                keys[i], keys[other] = b, a
                ids[i], ids[other] = ids[other], ids[i]


def _edge_keys(src, dst, m, n, mirror, drop_loops, keys, ids, size):
    # entry i: edge i; entry m + i: its mirror (a self-loop is stored once); the rest: padding
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        key = _MAX
        e = i
        if i < m:
            u, v = np.int64(src[i]), np.int64(dst[i])
            if not (drop_loops and u == v):
                key = u * n + v
        elif mirror and i < 2 * m:
            e = i - m
            u, v = np.int64(src[e]), np.int64(dst[e])
            if u != v:
                key = v * n + u
        keys[i] = key
        ids[i] = e


def _reverse_keys(row_offsets, column_indices, m, n, keys, ids, size):
    # CSR edge e (row u, column v) keyed v * n + u; u found by a binary search of the offsets
    for e in range(cuda.grid(1), size, cuda.gridsize(1)):
        key = _MAX
        if e < m:  # the row: the last whose offset is <= e
            row = lower_bound(row_offsets, 0, n + 1, e + 1) - 1
            key = np.int64(column_indices[e]) * n + row
        keys[e] = key
        ids[e] = e


def _mark_first(keys, count, dedupe, flags):
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        k = keys[i]
        flags[i] = 1 if k != _MAX and (not dedupe or i == 0 or k != keys[i - 1]) else 0


def _emit(keys, ids, flags, pos, count, n, weights, weighted, dedupe, cols, vals):
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        if flags[i]:
            p = pos[i]
            k = keys[i]
            cols[p] = k % n
            if weighted:
                w = weights[ids[i]]
                j = i + 1
                while dedupe and j < count and keys[j] == k:  # the duplicates it stands for
                    x = weights[ids[j]]
                    w = x if x < w else w
                    j += 1
                vals[p] = w


def _row_starts(keys, count, pos, kept, total, n, offsets):
    # offsets[v]: the kept entries before the first key of row v (binary search)
    for v in range(cuda.grid(1), n + 1, cuda.gridsize(1)):
        first = lower_bound(keys, 0, count, np.int64(v) * n)
        offsets[v] = total if first >= count else (pos[first] if kept else first)


def _split(keys, ids, count, n, rows, edge_ids):
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        rows[i] = keys[i] % n
        edge_ids[i] = ids[i]


def _first_difference(a, b, count, out):
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        if a[i] != b[i]:
            cuda.atomic.min(out, 0, i)


def _no_in_edges(in_offsets, n, words, bits):
    # bit v of the packed words: vertex v has no in-edge (pull skips it)
    for w in range(cuda.grid(1), words, cuda.gridsize(1)):
        word = np.uint32(0)
        for b in range(32):
            v = w * 32 + b
            if v < n and in_offsets[v] == in_offsets[v + 1]:
                word |= np.uint32(1) << np.uint32(b)
        bits[w] = word


def _label_keys(src, dst, m, keys, ids, size):
    # entry i: src[i], entry m + i: dst[i], the rest padding
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        key = _MAX
        if i < m:
            key = np.int64(src[i])
        elif i < 2 * m:
            key = np.int64(dst[i - m])
        keys[i] = key
        ids[i] = i


def _ranks(keys, ids, flags, pos, count, out, uniques):
    # each entry's rank among the distinct keys, back at its place; the distinct keys
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        out[ids[i]] = pos[i] + flags[i] - 1
        if flags[i]:
            uniques[pos[i]] = keys[i]


bitonic_step_kernel = kernel(_bitonic_step)
label_keys_kernel = kernel(_label_keys)
ranks_kernel = kernel(_ranks)
first_difference_kernel = kernel(_first_difference)
no_in_edges_kernel = kernel(_no_in_edges)
edge_keys_kernel = kernel(_edge_keys)
reverse_keys_kernel = kernel(_reverse_keys)
mark_first_kernel = kernel(_mark_first)
emit_kernel = kernel(_emit)
row_starts_kernel = kernel(_row_starts)
split_kernel = kernel(_split)


def _pow2(count):
    return 1 << max(int(count) - 1, 0).bit_length()


def sort_pairs(backend, keys, ids):
    """Sort ``keys`` (int64, a power-of-two length) ascending, carrying ``ids`` along."""
    size = keys.shape[0]
    k = 2
    while k <= size:
        j = k // 2
        while j:
            backend.run(bitonic_step_kernel, size, keys, ids, np.int64(j), np.int64(k),
                        np.int64(size))
            j //= 2
        k *= 2


def build_csr(backend, src, dst, weights, n, index_dtype, *, mirror, remove_self_loops,
              remove_duplicates):
    """``(row_offsets int64, column_indices, values float64 or None)`` on the device from
    edges on the device (ids checked in range by the caller); ``mirror``: each edge also
    stored reversed (an undirected graph). The host build's rules: self-loops and
    duplicates removed unless asked not to, a duplicate keeping its smallest weight."""
    m = src.shape[0]
    count = 2 * m if mirror else m
    size = _pow2(count)
    keys, ids = backend.empty(size, np.int64), backend.empty(size, np.int64)
    backend.run(edge_keys_kernel, size, src, dst, np.int64(m), np.int64(n), mirror,
                remove_self_loops, keys, ids, np.int64(size))
    sort_pairs(backend, keys, ids)
    flags = backend.empty(max(count, 1), np.int8)
    backend.run(mark_first_kernel, count, keys, np.int64(count), remove_duplicates, flags)
    pos = backend.empty(max(count, 1), np.int64)
    from gunpy.operators.scan import exclusive_scan
    total = exclusive_scan(backend, "nonzero", count, flags, flags, pos) if count else 0
    cols = backend.empty(max(total, 1), index_dtype)
    weighted = weights is not None
    vals = backend.empty(max(total, 1), np.float64) if weighted else backend.empty(1, np.float64)
    backend.run(emit_kernel, count, keys, ids, flags, pos, np.int64(count), np.int64(n),
                weights if weighted else vals, weighted, remove_duplicates, cols, vals)
    offsets = backend.empty(n + 1, np.int64)
    backend.run(row_starts_kernel, n + 1, keys, np.int64(count), pos, True, np.int64(total),
                np.int64(n), offsets)
    return offsets, cols[:total], (vals[:total] if weighted else None)


def factorize(backend, src, dst):
    """Number the distinct values of two integer device arrays in sorted order: ``(ids,
    uniques)``, ``ids`` (int64) the numbers of ``src`` then ``dst``, ``uniques`` the values
    (int64, sorted). A value of 2**63 - 1 (the sort's padding) is refused."""
    from gunpy.operators.reduce import reduce_array
    for a in (src, dst):
        if a.dtype.kind not in "iu" or a.dtype.itemsize == 8 and a.dtype.kind == "u":
            raise ValueError(f"vertex labels in GPU memory must be integers (int64 at most), "
                             f"got {a.dtype}: other labels are renumbered on the host "
                             "(df.to_pandas())")
    if any(a.shape[0] and reduce_array(backend, a, op="max") == _MAX for a in (src, dst)):
        raise ValueError(f"a vertex label of {_MAX} (2**63 - 1) cannot be renumbered on the "
                         "device")
    m = src.shape[0]
    count = 2 * m
    size = _pow2(count)
    keys, ids = backend.empty(size, np.int64), backend.empty(size, np.int64)
    backend.run(label_keys_kernel, size, src, dst, np.int64(m), keys, ids, np.int64(size))
    sort_pairs(backend, keys, ids)
    flags = backend.empty(max(count, 1), np.int8)
    backend.run(mark_first_kernel, count, keys, np.int64(count), True, flags)
    pos = backend.empty(max(count, 1), np.int64)
    from gunpy.operators.scan import exclusive_scan
    total = exclusive_scan(backend, "nonzero", count, flags, flags, pos) if count else 0
    out, uniques = backend.empty(max(count, 1), np.int64), backend.empty(max(total, 1), np.int64)
    backend.run(ranks_kernel, count, keys, ids, flags, pos, np.int64(count), out, uniques)
    return out[:count], uniques[:total]


def transpose(backend, row_offsets, column_indices, n, index_dtype):
    """``(in_offsets int64, in_indices, in_edge_ids int64)`` of a device CSR: its reverse,
    each in-edge with the CSR id of the edge it reverses, sources sorted in each row."""
    m = column_indices.shape[0]
    size = _pow2(m)
    keys, ids = backend.empty(size, np.int64), backend.empty(size, np.int64)
    backend.run(reverse_keys_kernel, size, row_offsets, column_indices, np.int64(m),
                np.int64(n), keys, ids, np.int64(size))
    sort_pairs(backend, keys, ids)
    rows, edge_ids = backend.empty(max(m, 1), index_dtype), backend.empty(max(m, 1), np.int64)
    backend.run(split_kernel, m, keys, ids, np.int64(m), np.int64(n), rows, edge_ids)
    offsets = backend.empty(n + 1, np.int64)
    backend.run(row_starts_kernel, n + 1, keys, np.int64(m), ids, False, np.int64(m),
                np.int64(n), offsets)
    return offsets, rows[:m], edge_ids[:m]


def _same(backend, a, b):
    if a.shape[0] != b.shape[0]:
        return False
    out = backend.asarray(np.array([_MAX], dtype=np.int64))
    backend.run(first_difference_kernel, a.shape[0], a, b, np.int64(a.shape[0]), out)
    return backend.read(out) == _MAX


def reverse_view(backend, row_offsets, column_indices, n, index_dtype, directed):
    """A device graph's reverse view for pull: ``(in_offsets, in_indices, in_edge_ids,
    no_in_edges)``, the last a bitmap (uint32 words) of the vertices with no in-edge. An
    undirected graph is its own reverse, and the transpose's edge ids are its twins map
    when its rows are sorted and its adjacency symmetric; None when they are not (the
    host's check then names the vertex, or realigns rows out of order)."""
    io, ii, ie = transpose(backend, row_offsets, column_indices, n, index_dtype)
    if not directed:
        if not (_same(backend, io, row_offsets) and _same(backend, ii, column_indices)):
            return None
        io, ii = row_offsets, column_indices
    words = max(1, (n + 31) // 32)
    bits = backend.empty(words, np.uint32)
    backend.run(no_in_edges_kernel, words, io, np.int64(n), np.int64(words), bits)
    return io, ii, ie, bits
