"""The CPU backend: ``numba.njit(parallel=True)`` kernels over NumPy arrays.

Kernels are ``prange`` loops over chunks of the frontier (or of its edges), so
every core works and each chunk writes its output to a private slice that a
second pass compacts: no shared counter is hammered by atomics. Functor hooks
become ordinary ``njit`` functions that LLVM inlines; their atomics are real
``atomicrmw`` / ``cmpxchg`` instructions (:mod:`gunpy.atomics`).
"""

import os

import numba
import numpy as np
from numba.core.errors import NumbaError

from gunpy._jitcache import cpu_jit
from gunpy.backends import threads
from gunpy.backends.base import Backend

__all__ = ["CpuBackend", "kernel", "serial_kernel", "kernel_pair", "functor_pair", "run_thin",
           "THIN_BUILDS"]


def kernel(pyfunc):
    """Compile an operator kernel for the CPU target (parallel), with the persistent cache."""
    return cpu_jit(pyfunc, parallel=True)


def kernel_pair(pyfunc):
    """``(parallel, serial)`` builds of one kernel source (``prange`` is a plain loop in the second).

    For work that fits one chunk (a thin frontier) the serial build skips the
    thread pool's start and join, which on long-diameter graphs costs more
    than the level's edges. numba compiles each build on its first call.
    """
    return kernel(pyfunc), serial_kernel(pyfunc)


def serial_kernel(pyfunc, *, nrt=True):
    """Compile a helper that must run on one core, with the persistent cache.

    ``nrt=False`` compiles it without numba's reference counting (see
    :func:`run_thin`): only for sources that allocate nothing.
    """
    if nrt:
        return cpu_jit(pyfunc)
    return cpu_jit(pyfunc, _nrt=False)


#: how one-chunk ("thin") work runs on the CPU, see :func:`run_thin`
THIN_BUILDS = ("nrt_free", "serial", "parallel")


def functor_pair(source, hooks, args):
    """``kernel_pair(source(hooks, *args))``, built once per (source, hooks, args).

    Kept in ``hooks.kernels``, so the kernels go with their functor class.
    """
    key = (functor_pair, source, args)
    pair = hooks.kernels.get(key)
    if pair is None:
        pair = hooks.kernels[key] = kernel_pair(source(hooks, *args))
    return pair


def _nrt_free(source, hooks, args):
    key = (_nrt_free, source, args)
    k = hooks.kernels.get(key)
    if k is None:
        from gunpy.backends import get_backend
        from gunpy.functor import compile_functor
        free = compile_functor(hooks.functor, get_backend("cpu"), nrt=False)
        k = hooks.kernels[key] = serial_kernel(source(free, *args), nrt=False)
    return k


def _resolve_thin(source, hooks, args, build):
    if build == "nrt_free":
        return [_nrt_free(source, hooks, args), "nrt_free"]
    pair = functor_pair(source, hooks, args)
    return [pair[0] if build == "parallel" else pair[1], build]


def run_thin(backend, source, hooks, args, call):
    """Run one-chunk work through the build ``backend.thin_build`` names; returns that build.

    ``source(hooks, *args)`` makes the kernel's Python source and ``call(k)``
    runs it. The builds:

    ``"nrt_free"`` (the default)
        the serial build compiled without numba's reference counting, with
        the functor's hooks compiled the same way. A serial loop that hands
        the ``data`` tuple of arrays to the hooks otherwise pays an atomic
        increment and decrement per array per edge wherever numba's pruning
        gives up on the hooks' branches (measured on the road network, 64
        frontier vertices: BC's forward functor 4.5 us without, 15.7 us with
        reference counting, 10.6 us through the parallel build with one
        chunk; BFS 2.0 / 2.5 / 5.1 us). A hook that allocates needs the
        reference counts: its build fails to compile, which is remembered,
        and the plain serial build runs instead (recorded as ``"serial"``).
        One thread runs it, so :mod:`gunpy.atomics` are plain loads and
        stores there (road network: BFS 5.8 -> 4.9 ms, CC 6.1 -> 4.8 ms).
    ``"serial"``
        the serial build with reference counting.
    ``"parallel"``
        the parallel build with one chunk (starts the thread pool).

    The rule is fixed, so runs are reproducible; the build each level used is
    in its ``stats.per_iteration`` entry (``"build"``).
    """
    # [kernel, build name], found with one cheap look-up per level in the hooks' own
    # kernel store (hashing the hooks with their dispatchers would cost ~1 us a level)
    key = (run_thin, source, args, backend.thin_build)
    entry = hooks.kernels.get(key)
    if entry is None:
        entry = hooks.kernels[key] = _resolve_thin(source, hooks, args, backend.thin_build)
    if entry[1] == "nrt_free":
        try:
            call(entry[0])
            return "nrt_free"
        except NumbaError:  # compile-time: nothing ran
            entry[0], entry[1] = functor_pair(source, hooks, args)[1], "serial"
    call(entry[0])
    return entry[1]


class _Alias:
    """A writable view's source for a read-only array (``np.asarray(_Alias(a))``): the same
    memory, kept alive by the view's base."""

    def __init__(self, arr):
        face = dict(arr.__array_interface__)
        face["data"] = (face["data"][0], False)
        self.__array_interface__ = face
        self.base = arr


class CpuBackend(Backend):
    name = "cpu"
    #: a push advance over fewer than :attr:`serial_below` edges is one thin pass
    #: whatever the strategy ("advance.thin" returns True when it ran)
    #: work smaller than this (frontier vertices, or edges for advance and
    #: neighbor_reduce) runs as one chunk, with no compaction, through the build
    #: :attr:`thin_build` names. One core passes over 500,000 simple items in about
    #: 1 ms; a parallel region's start and join cost tens of microseconds on an idle
    #: machine, and on a busy one (other processes, or another OpenMP library's
    #: spinning threads in the same process) the region waits for its slowest,
    #: descheduled thread. Measured on a shared 2-core machine (bench/road.py's
    #: calls, interleaved; medians): with 4,096, 2**17 and 2**19, CC on the
    #: luxembourg road network took 582, 145 and 43 ms, PageRank on delaunay_n16
    #: 66, 19 and 16 ms, BFS on RMAT-18 322, 220 and 150 ms. RMAT-18's SpMV
    #: (8M edges) and its fat levels stay parallel.
    serial_below = 1 << 19
    #: which build runs one-chunk work: "nrt_free" (default), "serial" or "parallel"
    #: (see :func:`run_thin`); also set by ``GUNPY_CPU_THIN_BUILD``
    thin_build = "nrt_free"
    #: when set, overrides every kernel's smallest chunk. Tests set it to 1 (and
    #: ``serial_below`` to 0) so that tiny graphs run the chunked parallel kernels.
    force_min_chunk = None
    #: a fused levels call's cap: the per-level records are read in place (no copy), so
    #: a road network's ~1,000 BFS levels take one call, not three (luxembourg_osm: ~50 us)
    fuse_max_levels = 8192

    @property
    def fuse_levels_below(self):
        """The edges a fused BFS level may reach: up to :attr:`serial_below`, since one
        core runs such a level whether fused or not (the fused loop saves each level's
        host work: delaunay_n16 BFS 5.05 -> 3.57 ms against ``fuse_below``'s 4,096);
        none while ``fuse_below`` is 0 (fusion off)."""
        return max(self.fuse_below, self.serial_below) if self.fuse_below > 0 else 0

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

    # allocations are counted like a GPU's (see Backend.counts)
    def asarray(self, host):
        self.allocs += 1
        return np.array(host, copy=True)

    def share(self, host):
        # the graph's arrays in place, no copy (on a fresh graph the copy was most of a first
        # BFS: 32 MB on RMAT-18). They are read-only, and numba types a read-only array apart
        # from a writable one (every kernel would compile twice), so kernels get a writable
        # alias of the same memory; no kernel writes a graph array.
        if host.flags.writeable:
            return host
        return np.asarray(_Alias(host))

    def empty(self, n, dtype):
        self.allocs += 1
        return np.empty(n, dtype=dtype)

    def full(self, n, value, dtype):
        self.allocs += 1
        return np.full(n, value, dtype=dtype)

    def fill(self, arr, value):
        arr[:] = value

    def to_host(self, arr):
        return np.array(arr, copy=True)

    def take(self, arr):
        return arr  # already NumPy, and given up by its owner

    def read(self, arr, i=0):
        return arr[i].item()

    def write(self, arr, i, value):
        arr[i] = value

    def copy_in(self, arr, at, host):
        arr[at:at + host.shape[0]] = host

    def head_to_host(self, arr, n):
        return arr[:n].copy()

    duplicate = head_to_host

    def set_length(self, length, n):
        length[0], length[1], length[2] = n, 0, -1  # a host array: no temporary

    def copy(self, src, dst, n):
        dst[:n] = src[:n]

    def work_splits(self):
        # every level as one thin chunk, then every level cut into as many chunks as
        # possible: a default call's kernels are among those of the two runs
        names = ("serial_below", "force_min_chunk")
        own = {k: self.__dict__[k] for k in names if k in self.__dict__}
        try:
            for setting in ((2**62, None), (0, 1)):
                self.serial_below, self.force_min_chunk = setting
                yield setting
        finally:
            # put back what was there: an instance attribute left behind would hide the
            # class's settings (and a test's monkeypatch of them) for good
            for k in names:
                if k in own:
                    setattr(self, k, own[k])
                else:
                    self.__dict__.pop(k, None)

    def __init__(self):
        # the OpenMP wait policy, before the first parallel region (see gunpy.backends.threads)
        threads.configure()
        # then numba's threads start, so that bind() knows whether Python threads must
        # take turns (the workqueue layer aborts the process on concurrent regions)
        numba.get_num_threads()
        build = os.environ.get("GUNPY_CPU_THIN_BUILD")
        if build:
            if build not in THIN_BUILDS:
                raise ValueError(f"GUNPY_CPU_THIN_BUILD={build!r}; valid: {', '.join(THIN_BUILDS)}")
            self.thin_build = build

    def bind(self, impl):
        """``impl`` run one thread at a time where numba's threading layer is not
        threadsafe (:func:`gunpy.backends.threads.region`)."""
        return threads.serialised(impl)

    def device_function(self, pyfunc, *, nrt=True):
        if nrt:
            return numba.njit(nogil=True)(pyfunc)
        return numba.njit(nogil=True, _nrt=False)(pyfunc)

    def value_function(self, pyfunc):
        return numba.njit(nogil=True, error_model="numpy")(pyfunc)
