"""scan: device-wide exclusive prefix sum (numba has none), reduce-then-scan.

Three kernels, none of which waits on another block (so they run correctly
under the simulator, where blocks execute one after another):

1. every tile of ``BLOCK * ITEMS`` inputs is reduced to one sum;
2. one block scans the tile sums (a serial loop over chunks with a carry), and
   leaves the grand total after them;
3. every tile scans its inputs again in shared memory and adds its tile offset.

Inputs are produced by a *loader*, so the same kernels scan a plain array, the
degrees of a frontier's vertices (merge-path's first step) or 0/1 flags
(filter's compaction) without a separate gather pass. Outputs are int64.

The CPU versions are ``prange`` loops over chunks with the same two-pass shape.
"""

import functools

import numpy as np

from numba import cuda  # a module global: the simulator swaps it for its fake module

__all__ = ["LOADERS", "exclusive_scan", "total", "cpu_exclusive_scan", "block_inclusive_scan"]

#: What a scan reads: ``array`` -> a[i]; ``degrees`` -> degree of vertex b[i]
#: given row offsets a; ``nonzero`` -> 1 if a[i] != 0 else 0; ``popcount`` ->
#: the number of set bits of the 32-bit word a[i].
LOADERS = ("array", "degrees", "nonzero", "popcount")

ITEMS = 4


@cuda.jit(device=True, inline="always")
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


def _loader(kind):
    if kind == "array":
        @cuda.jit(device=True, inline="always")
        def load(i, a, b):
            return np.int64(a[i])
    elif kind == "degrees":
        @cuda.jit(device=True, inline="always")
        def load(i, a, b):
            v = b[i]
            return np.int64(a[v + 1] - a[v])
    elif kind == "nonzero":
        @cuda.jit(device=True, inline="always")
        def load(i, a, b):
            return np.int64(1) if a[i] != 0 else np.int64(0)
    elif kind == "popcount":
        @cuda.jit(device=True, inline="always")
        def load(i, a, b):
            return np.int64(cuda.popc(a[i]))
    else:
        raise ValueError(f"unknown scan loader {kind!r}; valid: {LOADERS}")
    return load


@functools.lru_cache(maxsize=None)
def _cuda_kernels(kind, block):
    from gunpy.backends.cuda import kernel
    load = _loader(kind)
    tile = block * ITEMS
    TREE_START = 1 << max(0, (block - 1).bit_length() - 1)  # half the next power of two

    def tile_sums(n, a, b, sums):
        sh = cuda.shared.array(block, np.int64)
        tid = cuda.threadIdx.x
        ntiles = (n + tile - 1) // tile
        for t in range(cuda.blockIdx.x, ntiles, cuda.gridDim.x):
            # 1. each thread sums a strided slice of the tile
            s = np.int64(0)
            base = t * tile
            for k in range(tid, tile, block):
                i = base + k
                if i < n:
                    s += load(i, a, b)
            sh[tid] = s
            cuda.syncthreads()
            # 2. tree reduction in shared memory
            stride = TREE_START  # half the next power of two: any block size
            while stride > 0:
                if tid < stride and tid + stride < block:
                    sh[tid] += sh[tid + stride]
                cuda.syncthreads()
                stride //= 2
            if tid == 0:
                sums[t] = sh[0]
            cuda.syncthreads()

    def scan_sums(sums, ntiles):
        # one block: exclusive scan of the tile sums in chunks of `block`, with a carry
        sh = cuda.shared.array(block, np.int64)
        tid = cuda.threadIdx.x
        carry = np.int64(0)
        for base in range(0, ntiles, block):
            i = base + tid
            x = sums[i] if i < ntiles else np.int64(0)
            sh[tid] = x
            cuda.syncthreads()
            block_inclusive_scan(sh, tid, block)
            if i < ntiles:
                sums[i] = carry + sh[tid] - x
            chunk_total = sh[block - 1]
            cuda.syncthreads()
            carry += chunk_total
        if tid == 0:
            sums[ntiles] = carry

    def tile_scan(n, a, b, sums, out):
        sh = cuda.shared.array(block, np.int64)
        tid = cuda.threadIdx.x
        ntiles = (n + tile - 1) // tile
        for t in range(cuda.blockIdx.x, ntiles, cuda.gridDim.x):
            # 1. each thread owns ITEMS consecutive inputs and sums them
            first = t * tile + tid * ITEMS
            s = np.int64(0)
            for k in range(ITEMS):
                if first + k < n:
                    s += load(first + k, a, b)
            sh[tid] = s
            cuda.syncthreads()
            # 2. Hillis-Steele inclusive scan of the per-thread sums
            block_inclusive_scan(sh, tid, block)
            # 3. write exclusive prefixes: tile offset + threads before + items before
            run = sums[t] + sh[tid] - s
            for k in range(ITEMS):
                if first + k < n:
                    out[first + k] = run
                    run += load(first + k, a, b)
            cuda.syncthreads()

    return kernel(tile_sums), kernel(scan_sums), kernel(tile_scan)


def _tiles(n, block):
    return max(1, (n + block * ITEMS - 1) // (block * ITEMS))


def _sums_pass(backend, kind, n, a, b, block):
    k_sums, k_scan, _ = _cuda_kernels(kind, block)
    ntiles = _tiles(n, block)
    sums = backend.zeros(ntiles + 1, np.int64)
    backend.run(k_sums, ntiles * block, n, a, b, sums, block_size=block)
    # the tile-sum scan is one block whatever the size: it is a short serial loop
    backend.run(k_scan, block, sums, ntiles, block_size=block, blocks=1)
    return sums, ntiles


def total(backend, kind, n, a, b):
    """Sum of the ``n`` loaded values (CUDA backend), as a Python int."""
    block = backend.block_size
    sums, ntiles = _sums_pass(backend, kind, n, a, b, block)
    return int(backend.read(sums, ntiles))


def exclusive_scan(backend, kind, n, a, b, out):
    """Exclusive prefix sum of ``n`` loaded values into ``out`` (int64); returns the total."""
    block = backend.block_size
    _, _, k_tile = _cuda_kernels(kind, block)
    sums, ntiles = _sums_pass(backend, kind, n, a, b, block)
    backend.run(k_tile, ntiles * block, n, a, b, sums, out, block_size=block)
    return int(backend.read(sums, ntiles))


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
