"""The CPU backend: ``numba.njit(parallel=True)`` kernels over NumPy arrays.

Kernels are ``prange`` loops over chunks of the frontier (or of its edges), so
every core works and each chunk writes its output to a private slice that a
second pass compacts: no shared counter is hammered by atomics. Functor hooks
become ordinary ``njit`` functions that LLVM inlines; their atomics are real
``atomicrmw`` / ``cmpxchg`` instructions (:mod:`gunpy.atomics`).
"""

import time

import numba
import numpy as np

from gunpy.backends.base import Backend

__all__ = ["CpuBackend", "kernel", "serial_kernel", "kernel_pair", "FasterOf"]


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


class FasterOf:
    """Pick the faster of two builds of one kernel by timing both on live calls.

    ``call(run, size)`` runs ``run(build)`` with one of the two builds
    ``(parallel, serial)``. Calls of fewer than ``small`` items, which cost
    mostly a fixed overhead, always take the serial build. On larger ones the
    first call of each build compiles it and is not timed; then they alternate
    for ``samples`` calls each, timed per item, and the serial build serves
    every later call unless the parallel one's fastest sample beat the serial
    one's by ``margin`` (noise only adds time; and a parallel call can pay for
    waking the thread pool, which a few samples rarely catch).

    Which build is faster depends on the functor: a serial loop that hands the
    ``data`` tuple to the hooks pays numba's reference counting per edge when
    its pruning gives up on the hook's branches (BC's forward functor: 42 ms
    per source serial against 24 ms through the parallel build with one
    chunk), while BFS's runs serially in two thirds of the time.
    """

    __slots__ = ("builds", "samples", "small", "margin", "times", "chosen", "_calls")

    def __init__(self, builds, samples=8, small=64, margin=0.8):
        self.builds = builds
        self.samples = samples
        self.small = small
        self.margin = margin
        self.times = ([], [])
        self.chosen = None
        self._calls = 0

    def call(self, run, size):
        if size < self.small:
            return run(self.builds[1])
        if self.chosen is not None:
            return run(self.builds[self.chosen])
        k = self._calls % 2
        self._calls += 1
        if self._calls <= 2:  # each build's first call compiles it
            return run(self.builds[k])
        t0 = time.perf_counter_ns()
        result = run(self.builds[k])
        self.times[k].append((time.perf_counter_ns() - t0) / size)
        if len(self.times[1]) >= self.samples:
            # the floor of each (noise only ever adds time), and the parallel build
            # must win clearly: its samples rarely catch the idle pool's wake-up
            a, b = (min(t) for t in self.times)
            self.chosen = 0 if a < self.margin * b else 1
        return result


class CpuBackend(Backend):
    name = "cpu"
    #: work smaller than this (frontier vertices, or edges for advance) runs as one
    #: chunk, with no compaction: the serial build (advance: whichever build
    #: :class:`FasterOf` timed faster), as the pool's start and join would cost more
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
