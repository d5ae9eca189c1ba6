"""The CUDA backend: ``numba.cuda`` kernels on a GPU (or numba's simulator).

Functor hooks become ``cuda.jit(device=True, inline="always")`` functions:
numba inlines them into each operator kernel before type inference, so a kernel
and its functors compile to PTX for any compute capability without a driver
(``numba.cuda.compile_ptx(..., cc=(9, 0))``), and there is no call overhead.

Every kernel is a grid-stride loop, so a launch may use fewer threads than
items. Under the simulator each simulated thread costs about 0.2 ms, so the
launch configuration there is tiny (one or two blocks of 32-64 threads).

The simulator has no warp intrinsics: call
:func:`gunpy.testing.install_simulator_shims` before constructing the backend
there (``CudaBackend()`` raises a ``RuntimeError`` saying so otherwise).
"""

import numba
import numpy as np
from numba import cuda

from gunpy._jitcache import cuda_jit
from gunpy.backends.base import Backend, operator_table

__all__ = ["CudaBackend", "kernel", "ON_CUDASIM"]

ON_CUDASIM = bool(numba.config.ENABLE_CUDASIM)

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


def kernel(pyfunc):
    """Compile an operator kernel for the CUDA target (lazily, per argument types).

    Compiled kernels go to the persistent cache (:mod:`gunpy._jitcache`).
    """
    return cuda_jit(pyfunc)


def _fill(arr, value, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        arr[i] = value


_fill_kernel = kernel(_fill)


class CudaBackend(Backend):
    name = "cuda"
    operators = operator_table("cuda")
    counts_launches = True

    def __init__(self):
        if ON_CUDASIM:
            _check_simulator_shims()
            self.block_size = 32
            self.max_blocks = 2
            self.num_sms = 1
        else:
            self.block_size = 256
            dev = cuda.get_current_device()
            self.num_sms = dev.MULTIPROCESSOR_COUNT
            # enough resident blocks to fill every SM several times over
            self.max_blocks = self.num_sms * 32

    def launch(self, items, *, block_size=None):
        """``(blocks, threads)`` for a grid-stride kernel over ``items`` items."""
        threads = block_size or self.block_size
        blocks = max(1, min(self.max_blocks, (max(items, 1) + threads - 1) // threads))
        return blocks, threads

    def run(self, kernel, items, *args, block_size=None, blocks=None, shared=0):
        """Launch a grid-stride ``kernel`` over ``items`` items (nothing when 0)."""
        if items <= 0:
            return  # a grid of 0 blocks "succeeds" silently in the simulator: never launch it
        self.launches += 1
        b, t = self.launch(items, block_size=block_size)
        if blocks is not None:
            b = blocks
        if shared:
            kernel[b, t, 0, shared](*args)
        else:
            kernel[b, t](*args)

    # -- arrays -----------------------------------------------------------------
    def memory_info(self):
        try:
            free, total = cuda.current_context().get_memory_info()
            return int(free), int(total)
        except Exception:  # the simulator has no memory to report
            return None

    def _alloc(self, n, dtype):
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
            arr.copy_to_device(host)
        return arr

    def empty(self, n, dtype):
        return self._alloc(n, dtype)

    def full(self, n, value, dtype):
        arr = self._alloc(n, dtype)
        self.fill(arr, value)
        return arr

    def fill(self, arr, value):
        n = arr.shape[0]
        if n:
            self.launches += 1
            blocks, threads = self.launch(n)
            _fill_kernel[blocks, threads](arr, arr.dtype.type(value), n)

    # every device-to-host copy waits for the kernels before it: a host synchronisation
    def to_host(self, arr):
        self.syncs += 1
        return arr.copy_to_host()

    def read(self, arr, i=0):
        self.syncs += 1
        return arr[i:i + 1].copy_to_host()[0].item()

    def write(self, arr, i, value):
        self.uploads += 1
        arr[i:i + 1].copy_to_device(np.array([value], dtype=arr.dtype))

    def copy_in(self, arr, at, host):
        if host.shape[0]:
            self.uploads += 1
            arr[at:at + host.shape[0]].copy_to_device(host)

    def head_to_host(self, arr, n):
        if n == 0:
            return np.zeros(0, dtype=arr.dtype)
        self.syncs += 1
        return arr[:n].copy_to_host()

    def synchronize(self):
        self.syncs += 1
        cuda.synchronize()

    def copy(self, src, dst, n):
        if n:
            dst[:n].copy_to_device(src[:n])

    def device_function(self, pyfunc):
        return cuda.jit(device=True, inline="always")(pyfunc)
