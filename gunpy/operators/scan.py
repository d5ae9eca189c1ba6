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

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["LOADERS", "exclusive_scan", "total", "cpu_exclusive_scan", "block_inclusive_scan"]

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


def __getattr__(name):
    """``block_inclusive_scan``, made on first use (imported by a kernel factory): a CPU run never
    imports numba.cuda."""
    if name == "block_inclusive_scan":
        return _block_scan()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _loader(kind):
    from gunpy.backends.cuda import device
    if kind == "array":
        @device
        def load(i, a, b):
            return np.int64(a[i])
    elif kind == "degrees":
        @device
        def load(i, a, b):
            v = b[i]
            return np.int64(a[v + 1] - a[v])
    elif kind == "nonzero":
        @device
        def load(i, a, b):
            return np.int64(1) if a[i] != 0 else np.int64(0)
    elif kind == "popcount":
        @device
        def load(i, a, b):
            return np.int64(cuda.popc(a[i]))
    else:
        raise ValueError(f"unknown scan loader {kind!r}; valid: {LOADERS}")
    return load


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
    """``tile_prefix(sh, tid, first, n, a, b, offset, out)``: exclusive prefixes of one tile.

    Thread ``tid`` owns the ``items`` inputs from ``first`` and writes ``offset`` plus
    everything before each of them to ``out``. Each input is loaded before its
    output is stored, so ``out`` may be the array the loader reads (in place).
    """
    from gunpy.backends.cuda import device
    block_inclusive_scan = _block_scan()

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

    return tile_prefix


@functools.lru_cache(maxsize=None)
def _cuda_kernels(kind, block, items):
    """``(tile_sums, tile_scan)`` for the ``kind`` loader: the first and last pass."""
    from gunpy.backends.cuda import kernel
    load = _loader(kind)
    tile = block * items
    tile_reduce = _tile_reduce(block)
    tile_prefix = _tile_prefix(load, block, items)

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
        sh = cuda.shared.array(block, np.int64)
        tid = cuda.threadIdx.x
        for t in range(cuda.blockIdx.x, (n + tile - 1) // tile, cuda.gridDim.x):
            # 1. the tile's exclusive prefixes from its offset sums[t]
            tile_prefix(sh, tid, t * tile + tid * items, n, a, b, sums[t], out)
            cuda.syncthreads()

    return kernel(tile_sums), kernel(tile_scan)


@functools.lru_cache(maxsize=None)
def _level_kernels(block, items):
    """``(scan_sums, spread_sums)``: the top's one-block scan and a level's in-place rescan."""
    from gunpy.backends.cuda import kernel
    tile = block * items
    tile_prefix = _tile_prefix(_loader("array"), block, items)

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
        sh = cuda.shared.array(block, np.int64)
        tid = cuda.threadIdx.x
        for t in range(cuda.blockIdx.x, (k + tile - 1) // tile, cuda.gridDim.x):
            # 1. the level's tile t scanned in place from the level above's prefix
            tile_prefix(sh, tid, t * tile + tid * items, k, sums, sums, offsets[t], sums)
            cuda.syncthreads()

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
def _cpu_scan_impl():
    from numba import prange

    from gunpy.backends.cpu import kernel

    def scan(values, n, out, nchunks):
        # 1. chunk sums; 2. serial scan of the sums; 3. chunk-local scans
        size = (n + nchunks - 1) // nchunks
        sums = np.zeros(nchunks + 1, dtype=np.int64)
        for c in prange(nchunks):
            s = 0
            for i in range(c * size, min(n, (c + 1) * size)):
                s += values[i]
            sums[c + 1] = s
        for c in range(nchunks):
            sums[c + 1] += sums[c]
        for c in prange(nchunks):
            run = sums[c]
            for i in range(c * size, min(n, (c + 1) * size)):
                out[i] = run
                run += values[i]
        return sums[nchunks]

    return kernel(scan)


_cpu_scan = None


def cpu_exclusive_scan(values, n, out, nchunks):
    """Exclusive prefix sum of ``values[:n]`` into ``out`` on all cores; returns the total."""
    global _cpu_scan
    if _cpu_scan is None:
        _cpu_scan = _cpu_scan_impl()
    return int(_cpu_scan(values, n, out, max(1, nchunks)))
