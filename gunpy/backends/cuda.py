"""The CUDA backend: ``numba.cuda`` kernels on a GPU (or numba's simulator).

Functor hooks become ``cuda.jit(device=True, inline="always")`` functions:
numba inlines them into each operator kernel before type inference, so a kernel
and its functors compile to PTX for any compute capability without a driver
(``numba.cuda.compile_ptx(..., cc=(9, 0))``), and there is no call overhead.

Every kernel is a grid-stride loop, so a launch may use fewer threads than
items. Under the simulator each simulated thread costs about 0.2 ms, so the
launch configuration there is tiny (one or two blocks of 32-64 threads).

Launches go through each kernel's cached launcher
(:mod:`gunpy.backends.launcher`: argument types resolved once per signature, no
small-grid warnings); launches, small uploads (from the pinned
:class:`StagingRing`) and device-to-device copies are queued in order on
:attr:`CudaBackend.stream`. The backend counts ``launches``, ``syncs`` (every
device-to-host copy, wait and blocking upload) and ``uploads`` (queued
host-to-device writes): :meth:`~gunpy.backends.base.Backend.counts`.

The simulator has no warp intrinsics: call
:func:`gunpy.testing.install_simulator_shims` before constructing the backend
there (``CudaBackend()`` raises a ``RuntimeError`` saying so otherwise).

gunpy leans on numba-cuda internals that change between releases (the launcher's
driver call, the linker, the simulator), so ``CudaBackend()`` first checks the
installed numba-cuda against :data:`NUMBA_CUDA_SUPPORTED` and raises
:class:`UnsupportedNumbaCuda` naming both (:func:`check_numba_cuda`): an install
with ``pip --no-deps`` (an offline GPU machine) skips setup.cfg's pin, and the
wrong version would otherwise fail at a kernel's second launch or fall back
silently to numba's slow launch path. ``gunpy info`` runs the same check.

``GUNPY_CUDA_LINEINFO=1`` (read when a kernel is made) compiles kernels with line
information (``cuda.jit(lineinfo=True)``: the same machine code, with a map back
to the Python source), so that compute-sanitizer names the file and line of each
hazard; they are cached apart from the plain kernels.
"""

import functools
import os
import re

import numba
import numpy as np
from numba import cuda

from gunpy._jitcache import cuda_jit
from gunpy.backends.base import Backend
from gunpy.backends.launcher import DriverCopies, LaunchStream, launch_path, launcher

__all__ = ["CudaBackend", "StagingRing", "kernel", "device", "bind", "fill_kernel", "ON_CUDASIM",
           "NUMBA_CUDA_SUPPORTED", "UnsupportedNumbaCuda", "check_numba_cuda"]

ON_CUDASIM = bool(numba.config.ENABLE_CUDASIM)

#: the numba-cuda releases gunpy runs on, ``(lowest, first excluded)``: setup.cfg's
#: ``numba-cuda>=0.30.2,<0.31``
NUMBA_CUDA_SUPPORTED = ((0, 30, 2), (0, 31, 0))

# what goes wrong below the supported range (numba-cuda's release tags, read against
# gunpy/backends/launcher.py), lowest first: (first release of the range, what fails)
_KNOWN_FAILURES = (
    ((0, 0, 0), "creating the CUDA backend fails (no driver._to_core_stream)"),
    ((0, 24, 0), "launches fall back silently to numba's slow launch path"),
    ((0, 26, 0), "every kernel's second launch fails with an ImportError "
                 "(numba.cuda._compat.CUDA_CORE_GE_1_0 appeared in 0.30.2)"),
)


class UnsupportedNumbaCuda(RuntimeError):
    """The installed numba-cuda is outside :data:`NUMBA_CUDA_SUPPORTED`."""


def _release(text):
    """``"0.30.4"`` -> ``(0, 30, 4)``; a pre-release counts as its release (``0.31.0rc1`` ->
    ``(0, 31, 0)``); None where no version can be read."""
    m = re.match(r"\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?", str(text))
    if m is None:
        return None
    return tuple(int(x or 0) for x in m.groups())


def _installed_numba_cuda():
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("numba-cuda")
    except PackageNotFoundError:
        return None


def check_numba_cuda(installed=None):
    """Return the installed numba-cuda's version if gunpy supports it, else raise.

    ``installed``: the version string to judge (default: the one installed).
    Raises :class:`UnsupportedNumbaCuda` naming the installed and the supported
    versions, what fails with the installed one, and how to get a supported one.
    ``GUNPY_UNSUPPORTED_NUMBA_CUDA=1`` in the environment turns the error into a
    warning, to try an untested release at one's own risk.
    """
    if installed is None:
        installed = _installed_numba_cuda()
    lo, hi = NUMBA_CUDA_SUPPORTED
    supported = f">={'.'.join(map(str, lo))},<{hi[0]}.{hi[1]}"
    have = _release(installed) if installed else None
    in_range = have is not None and lo <= have < hi
    if in_range and hasattr(np, "row_stack"):
        return installed
    if in_range:
        why = f"it calls np.row_stack, which NumPy {np.__version__} no longer has (removed in 2.5)"
    elif have is None:
        why = "its version cannot be read" if installed else "it is not installed as a package"
    elif have >= hi:
        why = "this release is untested (gunpy uses numba-cuda internals that change)"
    else:
        why = [what for first, what in _KNOWN_FAILURES if have >= first][-1]
    fix = "'numpy<2.5'" if in_range else f"'numba-cuda{supported}'"
    msg = (f"gunpy's CUDA backend supports numba-cuda {supported}; this Python has "
           f"numba-cuda {installed or '(none)'}: {why}. Fix: pip install "
           f"{fix} (offline: carry the wheels, bench/carry-wheels), or set "
           f"GUNPY_UNSUPPORTED_NUMBA_CUDA=1 to try it anyway")
    if os.environ.get("GUNPY_UNSUPPORTED_NUMBA_CUDA", "") not in ("", "0"):
        import warnings
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
        return installed
    raise UnsupportedNumbaCuda(msg)

# Warp intrinsics gunpy's kernels call. numba's simulator has none of them; they
# come from the test shim (gunpy.testing.install_simulator_shims), which this
# module never installs: importing gunpy changes nothing in numba or the process.
_WARP_INTRINSICS = ("activemask", "lanemask_lt", "ballot_sync", "any_sync", "shfl_sync",
                    "shfl_xor_sync")


def _check_simulator_shims():
    """Raise a clear RuntimeError if the simulator lacks the warp intrinsics.

    Without it, the first kernel that uses one fails deep inside a simulated
    thread with ``AttributeError: 'FakeCUDAModule' object has no attribute ...``.
    """
    from numba.cuda.simulator import kernelapi

    missing = [n for n in _WARP_INTRINSICS if not hasattr(kernelapi.FakeCUDAModule, n)]
    if missing:
        raise RuntimeError(
            "gunpy's CUDA backend under numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) needs "
            "warp intrinsics the simulator does not have (cuda." + ", cuda.".join(missing)
            + "); call gunpy.testing.install_simulator_shims() before using backend='cuda'")


def bind(pyfunc):
    """Set the module global ``cuda = None`` of ``pyfunc``'s module to ``numba.cuda``; returns
    ``pyfunc``.

    The operator modules do not import ``numba.cuda`` (about 0.4 s, which a CPU run
    never needs): they say ``cuda = None``, and :func:`kernel` and :func:`device`
    bind it as they make that module's CUDA code. It stays a module global
    because the simulator swaps exactly those (the function's ``__globals__``
    that are ``numba.cuda``) for its fake module while a kernel runs. A module
    without that placeholder (a user's functor hooks) is left alone.
    """
    if pyfunc.__globals__.get("cuda", cuda) is None:
        pyfunc.__globals__["cuda"] = cuda
    return pyfunc


def device(pyfunc, **options):
    """``cuda.jit(device=True, inline="always")(pyfunc)``, with ``cuda`` bound in ``pyfunc``'s
    module first (:func:`bind`); ``options`` go to ``cuda.jit``."""
    options.setdefault("inline", "always")
    return cuda.jit(device=True, **options)(bind(pyfunc))


def kernel(pyfunc, **options):
    """Compile an operator kernel for the CUDA target (lazily, per argument types).

    ``options`` go to ``cuda.jit`` (``launch_bounds=`` for kernels launched at
    one block size). Compiled kernels go to the persistent cache
    (:mod:`gunpy._jitcache`). ``GUNPY_CUDA_LINEINFO=1``: with line information
    (for compute-sanitizer; see the module docstring). ``cuda`` is bound in
    ``pyfunc``'s module first (:func:`bind`).
    """
    if os.environ.get("GUNPY_CUDA_LINEINFO", "") not in ("", "0") and not ON_CUDASIM:
        options.setdefault("lineinfo", True)
    return cuda_jit(bind(pyfunc), **options)


def _check_block_size(threads):
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) \
            or not 32 <= threads <= 1024 or threads % 32:
        raise ValueError(f"block_size must be a multiple of 32 from 32 to 1024, got {threads!r}")
    return int(threads)


def _fill(arr, value, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        arr[i] = value


#: ``fill_kernel[blocks, threads](arr, value, n)``: ``arr[:n] = value`` (what
#: :meth:`CudaBackend.fill` launches)
fill_kernel = kernel(_fill)


class CudaBackend(Backend):
    """Kernels on the GPU. ``block_size``: threads a block (a multiple of 32, 32 to 1,024;
    default 256, 32 under the simulator). Kernels that run as one block (the fused
    BFS levels and near/far steps) take at most :attr:`one_block_max` threads and are
    compiled with that launch bound, so every block size loads."""
    name = "cuda"
    counts_launches = True
    #: the largest block of the one-block fused kernels (they use ~100 registers a thread)
    one_block_max = 512
    #: the stream kernels, uploads and device copies run on, in order
    #: (:class:`gunpy.backends.launcher.LaunchStream`: the default stream)
    stream = None

    def __init__(self, *, block_size=None):
        check_numba_cuda()  # before anything else: a wrong version fails later, obscurely
        if ON_CUDASIM:
            _check_simulator_shims()
            self.block_size = 32 if block_size is None else block_size
            self.max_blocks = 2
            self.num_sms = 1
        else:
            from gunpy.backends import toolchain
            # the link path, chosen and checked before any kernel is built or launched
            self.link_plan = toolchain.ensure_loadable()
            self.block_size = 256 if block_size is None else block_size
            dev = cuda.get_current_device()
            self.num_sms = dev.MULTIPROCESSOR_COUNT
            # enough resident blocks to fill every SM several times over
            self.max_blocks = self.num_sms * 32
        # launches, uploads and device-to-device copies are ordered on one stream
        self.stream = LaunchStream(cuda.default_stream())

    @property
    def block_size(self):
        return self._block_size

    @block_size.setter
    def block_size(self, threads):
        self._block_size = _check_block_size(threads)

    def one_block_size(self):
        """Threads of a kernel that runs as a single block (its launch bound too)."""
        return min(self.block_size, self.one_block_max)

    def launch(self, items, *, block_size=None):
        """``(blocks, threads)`` for a grid-stride kernel over ``items`` items."""
        threads = block_size or self.block_size
        blocks = max(1, min(self.max_blocks, (max(items, 1) + threads - 1) // threads))
        return blocks, threads

    def run(self, kernel, items, *args, block_size=None, blocks=None, shared=0):
        """Launch a grid-stride ``kernel`` over ``items`` items (nothing when 0).

        Through the kernel's cached launcher (:mod:`gunpy.backends.launcher`): types
        are resolved once per argument signature, on :attr:`stream`, never warning
        about small grids."""
        if items <= 0:
            return  # a grid of 0 blocks "succeeds" silently in the simulator: never launch it
        self.launches += 1
        b, t = self.launch(items, block_size=block_size)
        if blocks is not None:
            b = blocks
        try:
            launcher(kernel).launch(b, t, args, shared=shared, stream=self.stream)
        except Exception as exc:
            err = exc if ON_CUDASIM else _launch_error(kernel, b, t, exc)
            if err is exc:
                raise
            raise err from exc

    # -- arrays -----------------------------------------------------------------
    def memory_info(self):
        try:
            free, total = cuda.current_context().get_memory_info()
            return int(free), int(total)
        except Exception:  # the simulator has no memory to report
            return None

    def _alloc(self, n, dtype):
        self.allocs += 1
        try:
            return cuda.device_array(int(n), dtype=dtype)
        except Exception as exc:  # out of memory: say how much was asked for
            need = int(n) * np.dtype(dtype).itemsize
            raise MemoryError(f"cannot allocate {need / 2**20:.1f} MiB on the GPU "
                              f"({int(n)} x {np.dtype(dtype).name}): {exc}") from exc

    def asarray(self, host):
        host = np.ascontiguousarray(host)
        arr = self._alloc(host.shape[0], host.dtype)
        if host.shape[0]:
            self._host_to_device(arr, 0, host)  # staged when small; a graph's arrays block (a sync)
        return arr

    def empty(self, n, dtype):
        return self._alloc(n, dtype)

    def full(self, n, value, dtype):
        arr = self._alloc(n, dtype)
        self.fill(arr, value)
        return arr

    def fill(self, arr, value):
        n = arr.shape[0]
        self.run(fill_kernel, n, arr, arr.dtype.type(value), n)

    # every device-to-host copy waits for the kernels before it: a host synchronisation
    def to_host(self, arr):
        self.syncs += 1
        return arr.copy_to_host()

    def read(self, arr, i=0):
        self.syncs += 1
        copies = self._copies(arr)
        if copies is not None:
            return copies.to_host(arr, i, 1)[0].item()
        return arr[i:i + 1].copy_to_host()[0].item()

    def write(self, arr, i, value):
        self._host_to_device(arr, i, np.array([value], dtype=arr.dtype))

    def copy_in(self, arr, at, host):
        if host.shape[0]:
            self._host_to_device(arr, at, np.ascontiguousarray(host, dtype=arr.dtype))

    def _host_to_device(self, arr, at, host):
        """``arr[at:at + len(host)] = host``: from the pinned staging ring, asynchronously
        on :attr:`stream` (an upload; the ring's rare wait is a sync), or, for more than
        the ring takes, a blocking copy from pageable memory (a sync)."""
        staged = self._staging().stage(host)
        if staged is None:
            self.syncs += 1
            arr[at:at + host.shape[0]].copy_to_device(host)
        else:
            self.uploads += 1
            copies = self._copies(arr)
            if copies is not None:
                copies.to_device(arr, at, staged)
            else:
                arr[at:at + host.shape[0]].copy_to_device(staged, stream=self.stream.numba)

    def _staging(self):
        ring = self.__dict__.get("_ring")
        if ring is None:
            ring = self._ring = StagingRing(self)
        return ring

    def _copies(self, arr):
        """The small copies' driver path (:class:`DriverCopies`) for ``arr``, or None:
        numba's copies (the simulator, ``GUNPY_LAUNCHER=numba``, a strided view)."""
        copies = self.__dict__.get("_driver_copies", False)
        if copies is False:
            copies = self._driver_copies = (None if ON_CUDASIM or launch_path() == "numba"
                                            else DriverCopies(self.stream))
        return copies if copies is not None and arr.strides[0] == arr.dtype.itemsize else None

    def adopt(self, G):
        dev = G._on_device
        return dev.row_offsets, dev.column_indices, dev.values

    def device_reverse(self, G, row_offsets, column_indices):
        if G.on_device is None:
            return None
        from gunpy.backends.device_build import reverse_view
        return reverse_view(self, row_offsets, column_indices, G.num_vertices, G.index_dtype,
                            G.directed)

    def head_to_host(self, arr, n):
        if n == 0:
            return np.zeros(0, dtype=arr.dtype)
        self.syncs += 1
        copies = self._copies(arr)
        if copies is not None and n * arr.dtype.itemsize <= copies.LANDING:
            return copies.to_host(arr, 0, n)
        return arr[:n].copy_to_host()

    def synchronize(self):
        self.syncs += 1
        cuda.synchronize()

    def copy(self, src, dst, n):
        if n:  # device to device: asynchronous, in order with the launches
            dst[:n].copy_to_device(src[:n], stream=self.stream.numba)

    def device_function(self, pyfunc):
        if ON_CUDASIM:
            pyfunc = _widened(_in_python(pyfunc))
        return cuda.jit(device=True, inline="always")(pyfunc)

    def value_function(self, pyfunc):
        return cuda.jit(device=True, inline="always")(pyfunc)  # a GraphBLAS op: as typed


def _in_python(pyfunc, _done=None):
    """Under the simulator, ``pyfunc`` with the ``numba.njit`` helpers it calls (and the
    ones they call) bound to their Python functions.

    Compiled, an ``njit(inline="always")`` helper is inlined into the hook, arrays and
    all; the simulator runs the hook in Python, where calling the compiled helper with
    a device array fails (numba cannot unbox it). Its Python function does what the
    compiled one does. Only globals the code names are looked at; the hook's module is
    not changed.
    """
    done = {} if _done is None else _done
    if pyfunc in done:
        return done[pyfunc]
    done[pyfunc] = pyfunc  # a helper that calls itself: stop at the cycle
    names = getattr(getattr(pyfunc, "__code__", None), "co_names", ())
    found = {name: pyfunc.__globals__[name] for name in names
             if isinstance(pyfunc.__globals__.get(name), numba.core.dispatcher.Dispatcher)}
    if not found:
        return pyfunc
    scope = dict(pyfunc.__globals__)
    scope.update({name: _in_python(disp.py_func, done) for name, disp in found.items()})
    rebound = functools.update_wrapper(
        type(pyfunc)(pyfunc.__code__, scope, pyfunc.__name__, pyfunc.__defaults__,
                     pyfunc.__closure__), pyfunc)
    done[pyfunc] = rebound
    return rebound


def _widened(pyfunc):
    """Under the simulator, a hook with its narrow integer arguments made ``int64``.

    Compiled code (numba on the CPU, numba-cuda on a GPU) does integer arithmetic on
    ``int32`` vertex ids in 64 bits (numba widens integers to ``intp``); the simulator
    runs the hook in Python on NumPy scalars, where ``np.int32(v) * 2654435761`` raises
    ``OverflowError`` and ``v * 3`` wraps at 32 bits. Widening the arguments makes the
    simulator compute what compiled code computes.
    """
    @functools.wraps(pyfunc)
    def hook(*args):
        return pyfunc(*[np.int64(a) if isinstance(a, np.integer) and a.itemsize < 8 else a
                        for a in args])
    return hook


class StagingRing:
    """Pinned host memory that small uploads are copied from, asynchronously, in order.

    A copy from pageable host memory blocks the host until the device has it; one
    from pinned memory is queued on the stream and the host goes on. The ring is
    ``nbytes`` of pinned memory in two halves; :meth:`stage` copies a host array into
    the next free bytes and returns that view for ``copy_to_device(view, stream=)``.
    Leaving a half records an event on the stream (every copy from it queued
    before); coming back to it waits on that event, so no byte is overwritten
    before its copy ran. That wait, once per half a ring of uploads, is counted as a
    sync on the backend; an array over half the ring is not staged (``None``).
    """

    def __init__(self, backend, nbytes=1 << 18):
        self.backend = backend
        self.buffer = cuda.pinned_array(nbytes, dtype=np.uint8)
        self.half = nbytes // 2
        self.at = self.current = 0  # the next free byte, and the half it is in
        self.left = [None, None]  # per half: the event recorded when it was last left

    def stage(self, host):
        """A pinned copy of the contiguous array ``host`` (``None`` when it is too big)."""
        size = host.nbytes
        if size > self.half:
            return None
        start = (self.at + 15) & ~15  # 16-byte aligned, as the driver likes
        if start + size > (self.current + 1) * self.half:
            start = self._next_half()
        view = self.buffer[start:start + size]
        view[:] = host.reshape(-1).view(np.uint8)
        self.at = start + size
        return view.view(host.dtype)

    def _next_half(self):
        event = cuda.event() if ON_CUDASIM else cuda.event(timing=False)
        event.record(self.backend.stream.numba)
        self.left[self.current] = event
        self.current = other = 1 - self.current
        waited, self.left[other] = self.left[other], None
        if waited is not None:  # its copies were queued half a ring ago: done, or nearly
            self.backend.syncs += 1
            waited.synchronize()
        return other * self.half

def _launch_error(kernel, blocks, threads, exc):
    """A failed launch (or link) as an error that says which kernel, why, and what to do."""
    from numba.cuda.cudadrv.driver import CudaAPIError, LinkerError

    from gunpy.backends import toolchain
    name = getattr(getattr(kernel, "py_func", None), "__qualname__", repr(kernel))
    if isinstance(exc, LinkerError):
        return toolchain.ToolchainError(f"kernel {name} did not link: {exc}")
    if isinstance(exc, CudaAPIError):
        try:
            limits = kernel.get_max_threads_per_block()
            limit = min(limits.values()) if isinstance(limits, dict) else int(limits)
        except Exception:
            limit = None
        if limit is not None and threads > limit:
            return toolchain.ToolchainError(
                f"kernel {name} cannot run {threads} threads a block (its registers allow at "
                f"most {limit}); use a smaller block_size")
        return toolchain.ToolchainError(
            f"launching kernel {name} on {blocks} blocks of {threads} threads failed: {exc}")
    return exc
