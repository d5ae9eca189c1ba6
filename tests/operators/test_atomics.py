"""gunpy.atomics: one function object, real atomics on the CPU and on CUDA."""

import numpy as np
import pytest
from numba import cuda  # a module global: the simulator swaps it for its fake module

from gunpy import atomics

N = 20000  # enough parallel updates that a non-atomic version would lose some


def _cpu_kernels():
    import numba
    from numba import prange

    @numba.njit(parallel=True)
    def hammer(arr, n, kind):
        for i in prange(n):
            k = i % arr.shape[0]
            if kind == 0:
                atomics.add(arr, k, 1)
            elif kind == 1:
                atomics.min(arr, k, -np.int64(i))  # prange indices may be unsigned
            elif kind == 2:
                atomics.max(arr, k, i)

    @numba.njit(parallel=True)
    def claim(owner, n):
        won = np.zeros(n, np.int64)
        for i in prange(n):
            if atomics.cas(owner, i % owner.shape[0], -1, i) == -1:
                won[i] = 1
        return won.sum()

    @numba.njit(parallel=True)
    def bits(words, n):
        for i in prange(n):
            atomics.or_(words, (i // 32) % words.shape[0], np.uint32(1) << np.uint32(i % 32))

    @numba.njit(parallel=True)
    def swap(arr, n):
        s = 0
        for i in prange(n):
            s += atomics.exch(arr, 0, i)
        return s

    return hammer, claim, bits, swap


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.uint64, np.float32,
                                   np.float64])
def test_cpu_add_min_max(dtype):
    hammer, *_ = _cpu_kernels()
    a = np.zeros(7, dtype)
    hammer(a, N, 0)
    assert a.sum() == N
    if np.dtype(dtype).kind != "u":
        m = np.zeros(7, dtype)
        hammer(m, N, 1)
        expect = [-max(i for i in range(N) if i % 7 == k) for k in range(7)]
        assert m.tolist() == expect
    x = np.zeros(7, dtype)
    hammer(x, N, 2)
    assert x.tolist() == [max(i for i in range(N) if i % 7 == k) for k in range(7)]


def test_cpu_cas_or_exch():
    _, claim, bits, swap = _cpu_kernels()
    owner = np.full(100, -1, np.int64)
    assert claim(owner, N) == 100  # exactly one winner per slot
    assert (owner >= 0).all() and all(owner[k] % 100 == k for k in range(100))
    words = np.zeros(N // 32, np.uint32)
    bits(words, N)
    assert (words == 0xFFFFFFFF).all()
    arr = np.zeros(1, np.int64)
    s = swap(arr, 1000)
    # every value but one was seen exactly once by some exch; the last stays in arr
    assert s + arr[0] == sum(range(1000))


def test_cpu_rejects_float_cas():
    import numba
    from numba.core.errors import TypingError

    @numba.njit
    def f(a):
        return atomics.cas(a, 0, 0.0, 1.0)

    with pytest.raises(TypingError):
        f(np.zeros(2))


def test_python_bodies_work_uncompiled():
    a = np.array([5, 6])
    assert atomics.min(a, 0, 3) == 5 and a[0] == 3
    assert atomics.cas(a, 1, 6, 9) == 6 and a[1] == 9
    assert atomics.cas(a, 1, 6, 1) == 9 and a[1] == 9
    assert atomics.add(a, 0, 2) == 3 and a[0] == 5
    assert atomics.or_(a, 0, 2) == 5 and a[0] == 7


@pytest.mark.sim
def test_cuda_atomics_run():
    @cuda.jit
    def k(total, owner, low, n):
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            atomics.add(total, 0, 1)
            atomics.cas(owner, i % 4, -1, i)
            atomics.min(low, 0, np.float64(100 - i))

    total = cuda.to_device(np.zeros(1, np.int64))
    owner = cuda.to_device(np.full(4, -1, np.int32))
    low = cuda.to_device(np.array([1e9]))
    k[2, 32](total, owner, low, 100)
    assert total.copy_to_host()[0] == 100
    o = owner.copy_to_host()
    assert all(o[j] % 4 == j for j in range(4))
    assert low.copy_to_host()[0] == 1.0


@pytest.mark.ptx
@pytest.mark.parametrize("op,dtypes,instr", [
    ("add", ["int32", "int64", "uint32", "float32", "float64"], "atom"),
    ("min", ["int32", "int64", "uint64", "float64"], "atom"),
    ("max", ["int32", "float32"], "atom"),
    ("cas", ["int32", "int64", "uint32"], "atom.cas"),
    ("or_", ["int32", "uint32", "uint64"], "atom.or"),
    ("exch", ["int32", "int64"], "atom.exch"),
])
def test_atomics_compile_to_ptx(op, dtypes, instr, mode):
    from numba import types
    fn = getattr(atomics, op)
    if op == "cas":
        def k(a):
            fn(a, cuda.grid(1), 0, 1)
    else:
        def k(a):
            fn(a, cuda.grid(1), 1)
    for dt in dtypes:
        ptx, _ = cuda.compile_ptx(k, (types.Array(getattr(types, dt), 1, "C"),), cc=(9, 0))
        assert instr in ptx or "atom." in ptx, (op, dt)
