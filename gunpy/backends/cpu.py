"""The CPU backend: ``numba.njit(parallel=True)`` kernels over NumPy arrays.

Kernels are ``prange`` loops over chunks of the frontier (or of its edges), so
every core works and each chunk writes its output to a private slice that a
second pass compacts: no shared counter is hammered by atomics. Functor hooks
become ordinary ``njit`` functions that LLVM inlines; their atomics are real
``atomicrmw`` / ``cmpxchg`` instructions (:mod:`gunpy.atomics`).
"""

import numba
import numpy as np

from gunpy.backends.base import Backend

__all__ = ["CpuBackend", "kernel", "serial_kernel", "kernel_pair"]


def kernel(pyfunc):
    """Compile an operator kernel for the CPU target (parallel)."""
    return numba.njit(parallel=True, nogil=True)(pyfunc)


def kernel_pair(pyfunc):
    """``(parallel, serial)`` builds of one kernel source (``prange`` is a plain loop in the second).

    For work that fits one chunk (a thin frontier) the serial build skips the
    thread pool's start and join, which on long-diameter graphs costs more
    than the level's edges. numba compiles each build on its first call.
    """
    return kernel(pyfunc), serial_kernel(pyfunc)


def serial_kernel(pyfunc):
    """Compile a helper that must run on one core."""
    return numba.njit(nogil=True)(pyfunc)


class CpuBackend(Backend):
    name = "cpu"
    #: work smaller than this (frontier vertices, or edges for advance) runs as one
    #: serial pass: the thread pool's start and join would cost more than the work.
    serial_below = 4096
    #: when set, overrides every kernel's smallest chunk. Tests set it to 1 (and
    #: ``serial_below`` to 0) so that tiny graphs run the chunked parallel kernels.
    force_min_chunk = None

    @property
    def num_threads(self):
        return numba.get_num_threads()

    def chunks(self, work, *, min_chunk=256, per_thread=8):
        """How many chunks to split ``work`` items into."""
        if work <= 0:
            return 1
        if self.force_min_chunk is not None:
            min_chunk = self.force_min_chunk
        return int(max(1, min(work // min_chunk, per_thread * self.num_threads)))

    def asarray(self, host):
        return np.array(host, copy=True)

    def empty(self, n, dtype):
        return np.empty(n, dtype=dtype)

    def full(self, n, value, dtype):
        return np.full(n, value, dtype=dtype)

    def fill(self, arr, value):
        arr[:] = value

    def to_host(self, arr):
        return np.array(arr, copy=True)

    def read(self, arr, i=0):
        return arr[i].item()

    def write(self, arr, i, value):
        arr[i] = value

    def copy_in(self, arr, at, host):
        arr[at:at + host.shape[0]] = host

    def head_to_host(self, arr, n):
        return arr[:n].copy()

    def device_function(self, pyfunc):
        return numba.njit(nogil=True)(pyfunc)
