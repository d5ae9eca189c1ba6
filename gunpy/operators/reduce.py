"""reduce: whole-array reductions (sum, min, max) and ``iota``, on any backend.

CUDA: a grid-stride loop accumulates per thread, a shared-memory tree reduces
each block, and one atomic per block combines the blocks. CPU: NumPy.
"""

import functools

import numpy as np

from gunpy.operators.context import callable_module
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["reduce", "reduce_array", "iota", "OPS"]

OPS = ("sum", "min", "max")


def combiner(op, jit):
    """``combine(a, b)`` for ``op`` (one of :data:`OPS`), compiled with ``jit`` for its target."""
    is_sum, is_min = op == "sum", op == "min"

    @jit
    def combine(a, b):
        if is_sum:
            return a + b
        if is_min:
            return a if a <= b else b
        return a if a >= b else b

    return combine


@functools.lru_cache(maxsize=None)
def _cuda_reduce(op, is_float, block):
    from gunpy.backends.cuda import device, kernel
    acc_t = np.float64 if is_float else np.int64
    ident = _identity(op, is_float)
    is_sum, is_min = op == "sum", op == "min"
    TREE_START = 1 << max(0, (block - 1).bit_length() - 1)  # half the next power of two
    combine = combiner(op, device)

    def red(arr, n, out):
        sh = cuda.shared.array(block, acc_t)
        tid = cuda.threadIdx.x
        acc = acc_t(ident)
        # 1. each thread folds a strided slice
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            acc = combine(acc, acc_t(arr[i]))
        sh[tid] = acc
        cuda.syncthreads()
        # 2. tree reduction within the block
        stride = TREE_START  # half the next power of two: any block size
        while stride > 0:
            if tid < stride and tid + stride < block:
                sh[tid] = combine(sh[tid], sh[tid + stride])
            cuda.syncthreads()
            stride //= 2
        # 3. one atomic per block
        if tid == 0:
            if is_sum:
                cuda.atomic.add(out, 0, sh[0])
            elif is_min:
                cuda.atomic.min(out, 0, sh[0])
            else:
                cuda.atomic.max(out, 0, sh[0])

    return kernel(red), ident, acc_t


def reduce_array(backend, arr, n=None, op="sum"):
    """``op`` over ``arr[:n]`` as a Python number (identity for an empty range)."""
    if op not in OPS:
        raise ValueError(f"unknown reduction {op!r}; valid: {OPS}")
    n = arr.shape[0] if n is None else int(n)
    return REDUCE(backend, arr, n, op)


def cpu_reduce(backend, arr, n, op):
    part = arr[:n]
    if n == 0:
        return _identity(op, np.dtype(arr.dtype).kind == "f")
    return (part.sum() if op == "sum" else part.min() if op == "min" else part.max()).item()


def cuda_reduce(backend, arr, n, op):
    block = backend.block_size
    k, ident, acc_t = _cuda_reduce(op, np.dtype(arr.dtype).kind == "f", block)
    # the backend's one-word accumulator (per type): no allocation per call
    out = backend.workspace(f"reduce.{np.dtype(acc_t).str}", 1, acc_t)
    backend.fill(out, ident)
    backend.run(k, n, arr, n, out, block_size=block)
    return backend.read(out, 0)


def _identity(op, is_float):
    if op == "sum":
        return 0.0 if is_float else 0
    if op == "min":
        return np.inf if is_float else np.iinfo(np.int64).max
    return -np.inf if is_float else np.iinfo(np.int64).min


def _iota_kernel(out, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = i


@functools.lru_cache(maxsize=None)
def _iota():
    from gunpy.backends.cuda import kernel
    return kernel(_iota_kernel)


def iota(backend, out, n):
    """``out[i] = i`` for ``i < n``."""
    IOTA(backend, out, n)


def cpu_iota(backend, out, n):
    _cpu_iota()(out, n)  # in place: an arange per call cost ~50 us at 100,000 items


@functools.lru_cache(maxsize=None)
def _cpu_iota():
    from gunpy.backends.cpu import serial_kernel

    def iota(out, n):
        for i in range(n):
            out[i] = i
    return serial_kernel(iota)


def cuda_iota(backend, out, n):
    backend.run(_iota(), n, out, n)


def reduce(array, op="sum", n=None, *, context=None):
    """``op`` ("sum", "min", "max") over ``array[:n]`` (a device array), as a Python number.

    The backend is the context's, else the array's own (NumPy: the CPU).
    """
    if context is not None:
        backend = context.backend
    else:
        from gunpy.backends import get_backend
        backend = get_backend("cpu" if isinstance(array, np.ndarray) else "cuda")
    return reduce_array(backend, array, n, op)


REDUCE = Operator("reduce", "backend, arr, n, op", cpu=cpu_reduce, cuda=cuda_reduce)

IOTA = Operator("iota", "backend, out, n", cpu=cpu_iota, cuda=cuda_iota)


callable_module(__name__, reduce)
