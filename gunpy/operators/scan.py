"""scan: device-wide exclusive prefix sum (numba has none), multi-level reduce-then-scan.

The kernels never wait on another block (so they run correctly under the
simulator, where blocks execute one after another); a tile is ``BLOCK * ITEMS``
inputs, one block's work:

1. up: every tile of the inputs is reduced to one sum (``tile_sums``); while
   those sums are more than one tile, their tiles are reduced again, level by
   level (a billion items at 256 threads: about 1 M sums, then 1 K);
2. top: one block scans the last level's sums, at most one tile, in one pass
   (``scan_sums``), and leaves the grand total after them;
3. down: every level's tiles are scanned again in place with their offsets
   from the level above (``spread_sums``), and finally every tile of the inputs
   (``tile_scan``), which writes the output.

Every pass is spread over the whole grid: nothing runs as one block except the
top's single tile. Each level's sums live in a work array of the backend
(``backend.workspace("scan.sums.<level>")``), grown on demand and kept, so a
scan allocates nothing once the workspaces have reached its size; the kernels
write every slot they read, so nothing is zeroed either. Up to ``tile ** 2``
inputs (1 M at 256 threads) a scan is three launches and one read.

Inputs are produced by a *loader*, so the same kernels scan a plain array, the
degrees of a frontier's vertices (merge-path's first step) or 0/1 flags
(filter's compaction) without a separate gather pass. Outputs are int64.

The CPU versions are ``prange`` loops over chunks with the same two-pass shape.
"""

import functools

import numpy as np

from gunpy.operators.common import device_attributes

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["LOADERS", "exclusive_scan", "total", "cpu_exclusive_scan", "cpu_chunk_offsets",
           "cpu_chunk_scan", "block_inclusive_scan"]

#: What a scan reads: ``array`` -> a[i]; ``degrees`` -> degree of vertex b[i]
#: given row offsets a; ``nonzero`` -> 1 if a[i] != 0 else 0; ``popcount`` ->
#: the number of set bits of the 32-bit word a[i].
LOADERS = ("array", "degrees", "nonzero", "popcount")

ITEMS = 4


@functools.cache
def _block_scan():
    """:func:`block_inclusive_scan`, made on first CUDA use."""
    from gunpy.backends.cuda import device

    @device
    def block_inclusive_scan(sh, tid, block):
        """Hillis-Steele inclusive scan of the int64 shared array ``sh[0:block]``, in place.

        Every thread of the block calls it (it synchronises the block); ``tid`` is
        the thread's index. The one block scan of gunpy's kernels: the scan passes
        below and twc's thread phase use it.
        """
        offset = 1
        while offset < block:
            v = sh[tid - offset] if tid >= offset else np.int64(0)
            cuda.syncthreads()
            sh[tid] += v
            cuda.syncthreads()
            offset *= 2

    return block_inclusive_scan


__getattr__ = device_attributes(__name__, ("block_inclusive_scan",),
                                lambda: {"block_inclusive_scan": _block_scan()})


def _load_array(i, a, b):
    return np.int64(a[i])


def _load_degrees(i, a, b):
    v = b[i]
    return np.int64(a[v + 1] - a[v])


def _load_nonzero(i, a, b):
    return np.int64(1) if a[i] != 0 else np.int64(0)


def _popcount_cuda(i, a, b):
    return np.int64(cuda.popc(a[i]))


def _popcount_cpu(i, a, b):
    bits = a[i]
    s = 0
    while bits != 0:
        bits &= bits - np.uint32(1)
        s += 1
    return np.int64(s)


#: each loader's source (plain Python, compiled inline by each target); a word's bits
#: are counted by the target's own means
_LOADS = {"array": (_load_array, _load_array), "degrees": (_load_degrees, _load_degrees),
          "nonzero": (_load_nonzero, _load_nonzero), "popcount": (_popcount_cuda, _popcount_cpu)}


def _loader(kind, cpu=False):
    """The ``kind`` loader ``load(i, a, b)`` as a CUDA device function (``cpu``: inline CPU
    function)."""
    if kind not in _LOADS:
        raise ValueError(f"unknown scan loader {kind!r}; valid: {LOADERS}")
    if cpu:
        from numba import njit
        return njit(inline="always")(_LOADS[kind][1])
    from gunpy.backends.cuda import device
    return device(_LOADS[kind][0])


def _tile_reduce(block):
    """``tile_reduce(sh, tid, s)``: the sum of every thread's ``s`` over the block, in
    ``sh[0]`` (a tree in shared memory; the whole block calls it)."""
    from gunpy.backends.cuda import device
    tree_start = 1 << max(0, (block - 1).bit_length() - 1)  # half the next power of two

    @device
    def tile_reduce(sh, tid, s):
        sh[tid] = s
        cuda.syncthreads()
        stride = tree_start  # any block size, not only powers of two
        while stride > 0:
            if tid < stride and tid + stride < block:
                sh[tid] += sh[tid + stride]
            cuda.syncthreads()
            stride //= 2

    return tile_reduce


def _tile_prefix(load, block, items):
    """``(tile_prefix, scan_tiles)``.

    ``tile_prefix(sh, tid, first, n, a, b, offset, out)``: exclusive prefixes of one tile.

    Thread ``tid`` owns the ``items`` inputs from ``first`` and writes ``offset`` plus
    everything before each of them to ``out``. Each input is loaded before its
    output is stored, so ``out`` may be the array the loader reads (in place).

    ``scan_tiles(n, a, b, offsets, out)``: every tile of the ``n`` inputs, a block's in
    a grid-stride loop, scanned from its offset ``offsets[t]`` (the last pass of a scan
    and the rescan of each level below the top).
    """
    from gunpy.backends.cuda import device
    block_inclusive_scan = _block_scan()
    tile = block * items

    @device
    def tile_prefix(sh, tid, first, n, a, b, offset, out):
        # 1. each thread sums its own consecutive inputs
        s = np.int64(0)
        for k in range(items):
            if first + k < n:
                s += load(first + k, a, b)
        sh[tid] = s
        cuda.syncthreads()
        # 2. Hillis-Steele inclusive scan of the per-thread sums
        block_inclusive_scan(sh, tid, block)
        # 3. offset + threads before + items before (read before written: in place is safe)
        run = offset + sh[tid] - s
        for k in range(items):
            if first + k < n:
                x = load(first + k, a, b)
                out[first + k] = run
                run += x

    @device
    def scan_tiles(n, a, b, offsets, out):
        sh = cuda.shared.array(block, np.int64)
        tid = cuda.threadIdx.x
        for t in range(cuda.blockIdx.x, (n + tile - 1) // tile, cuda.gridDim.x):
            tile_prefix(sh, tid, t * tile + tid * items, n, a, b, offsets[t], out)
            cuda.syncthreads()

    return tile_prefix, scan_tiles


@functools.lru_cache(maxsize=None)
def _cuda_kernels(kind, block, items):
    """``(tile_sums, tile_scan)`` for the ``kind`` loader: the first and last pass."""
    from gunpy.backends.cuda import kernel
    load = _loader(kind)
    tile = block * items
    tile_reduce = _tile_reduce(block)
    scan_tiles = _tile_prefix(load, block, items)[1]

    def tile_sums(ntiles, n, a, b, sums):
        # every one of the ntiles slots is written (an empty input's one tile gets 0)
        sh = cuda.shared.array(block, np.int64)
        tid = cuda.threadIdx.x
        for t in range(cuda.blockIdx.x, ntiles, cuda.gridDim.x):
            # 1. each thread sums a strided slice of the tile (coalesced reads)
            s = np.int64(0)
            base = t * tile
            for k in range(tid, tile, block):
                if base + k < n:
                    s += load(base + k, a, b)
            # 2. tree reduction in shared memory
            tile_reduce(sh, tid, s)
            if tid == 0:
                sums[t] = sh[0]
            cuda.syncthreads()

    def tile_scan(n, a, b, sums, out):
        # each tile's exclusive prefixes from its offset sums[t]
        scan_tiles(n, a, b, sums, out)

    return kernel(tile_sums), kernel(tile_scan)


@functools.lru_cache(maxsize=None)
def _level_kernels(block, items):
    """``(scan_sums, spread_sums)``: the top's one-block scan and a level's in-place rescan."""
    from gunpy.backends.cuda import kernel
    tile_prefix, scan_tiles = _tile_prefix(_loader("array"), block, items)

    def scan_sums(sums, k):
        # one block, one pass: the top level holds at most one tile of sums
        sh = cuda.shared.array(block, np.int64)
        tid = cuda.threadIdx.x
        # 1. exclusive prefixes of sums[0:k], in place
        tile_prefix(sh, tid, tid * items, k, sums, sums, np.int64(0), sums)
        # 2. the grand total after them (sh holds the inclusive per-thread prefixes)
        if tid == block - 1:
            sums[k] = sh[block - 1]

    def spread_sums(k, sums, offsets):
        # the level's tiles scanned in place from the level above's prefixes
        scan_tiles(k, sums, sums, offsets, sums)

    return kernel(scan_sums), kernel(spread_sums)


def _tiles(n, tile):
    return max(1, (n + tile - 1) // tile)


def _levels(backend, kind, n, a, b, items):
    """The up pass and the top: ``[(sums, k), ...]`` per level, bottom first.

    Level 0 holds the inputs' tile sums, each next level the tile sums of the one
    below, up to a level of at most one tile, which one block scans; the grand
    total is left at ``sums[k]`` of that top level.
    """
    block = backend.block_size
    tile = block * items
    k_sums = _cuda_kernels(kind, block, items)[0]
    k = _tiles(n, tile)
    sums = backend.workspace("scan.sums.0", k + 1, np.int64)
    backend.run(k_sums, k * block, k, n, a, b, sums, block_size=block)
    levels = [(sums, k)]
    while k > tile:
        below, n_below = sums, k
        k = _tiles(n_below, tile)
        sums = backend.workspace(f"scan.sums.{len(levels)}", k + 1, np.int64)
        backend.run(_cuda_kernels("array", block, items)[0], k * block, k, n_below, below,
                    below, sums, block_size=block)
        levels.append((sums, k))
    backend.run(_level_kernels(block, items)[0], block, sums, k, block_size=block, blocks=1)
    return levels


def total(backend, kind, n, a, b, *, items=ITEMS):
    """Sum of the ``n`` loaded values (CUDA backend), as a Python int.

    ``items``: inputs per thread of a tile (a tile is ``backend.block_size * items``).
    """
    sums, k = _levels(backend, kind, n, a, b, items)[-1]
    return int(backend.read(sums, k))


def exclusive_scan(backend, kind, n, a, b, out, *, items=ITEMS):
    """Exclusive prefix sum of ``n`` loaded values into ``out`` (int64); returns the total.

    ``items``: inputs per thread of a tile (a tile is ``backend.block_size * items``).
    """
    block = backend.block_size
    tile = block * items
    levels = _levels(backend, kind, n, a, b, items)
    spread = _level_kernels(block, items)[1]
    for below, above in zip(levels[-2::-1], levels[:0:-1]):
        (sums, k), offsets = below, above[0]
        backend.run(spread, _tiles(k, tile) * block, k, sums, offsets, block_size=block)
    backend.run(_cuda_kernels(kind, block, items)[1], levels[0][1] * block, n, a, b,
                levels[0][0], out, block_size=block)
    top, k = levels[-1]
    return int(backend.read(top, k))


# ----------------------------------------------------------------------------- CPU
@functools.lru_cache(maxsize=None)
def cpu_chunk_offsets(kind):
    """``size = chunk_offsets(a, b, n, nchunks, offsets)``, compiled inline into a CPU
    kernel: a scan's first two passes on all cores. The ``n`` items are cut into
    ``nchunks`` chunks of ``size`` (chunk ``c``: items ``c * size`` up to ``(c + 1) *
    size``, short of ``n``); ``offsets[c]`` becomes the sum of the values the ``kind``
    loader reads (as :data:`LOADERS` on CUDA) over the chunks before ``c``, and
    ``offsets[nchunks]`` their total."""
    from numba import njit, prange
    load = _loader(kind, cpu=True)

    @njit(inline="always")
    def chunk_offsets(a, b, n, nchunks, offsets):
        # 1. each chunk's sum; 2. a serial scan of the sums
        size = (n + nchunks - 1) // nchunks
        offsets[0] = 0
        for c in prange(nchunks):
            s = np.int64(0)
            for i in range(c * size, min(n, (c + 1) * size)):
                s += load(i, a, b)
            offsets[c + 1] = s
        for c in range(nchunks):
            offsets[c + 1] += offsets[c]
        return size

    return chunk_offsets


def cpu_chunk_scan(kind, emit):
    """A CPU scan's source with a last pass of one's own: ``total = scan(a, b, n, out,
    nchunks)`` (compiled by the caller) runs :func:`cpu_chunk_offsets`, then each chunk
    hands its items their exclusive prefixes in order, ``pos = emit(i, a, b, out, pos)``
    (``emit``: an inline function returning ``pos`` plus item ``i``'s value); returns the
    total."""
    from numba import prange
    chunk_offsets = cpu_chunk_offsets(kind)

    def scan(a, b, n, out, nchunks):
        # 1.-2. chunk sums and their scan; 3. each chunk's items from its offset
        sums = np.zeros(nchunks + 1, dtype=np.int64)
        size = chunk_offsets(a, b, n, nchunks, sums)
        for c in prange(nchunks):
            pos = sums[c]
            for i in range(c * size, min(n, (c + 1) * size)):
                pos = emit(i, a, b, out, pos)
        return sums[nchunks]

    return scan


def _prefix(i, a, b, out, pos):
    out[i] = pos
    return pos + a[i]


def _cpu_scan_impl():
    from numba import njit

    from gunpy.backends.cpu import kernel
    return kernel(cpu_chunk_scan("array", njit(inline="always")(_prefix)))


_cpu_scan = None


def cpu_exclusive_scan(values, n, out, nchunks):
    """Exclusive prefix sum of ``values[:n]`` into ``out`` on all cores; returns the total."""
    global _cpu_scan
    if _cpu_scan is None:
        _cpu_scan = _cpu_scan_impl()
    return int(_cpu_scan(values, values, n, out, max(1, nchunks)))
