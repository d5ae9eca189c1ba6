"""The simulator side: whether it is on, and the warp intrinsics it lacks (test use only)."""

import sys

import numba

__all__ = ["ON_CUDASIM", "install_simulator_shims"]

ON_CUDASIM = bool(numba.config.ENABLE_CUDASIM)


def install_simulator_shims(*, switch_interval=None):
    """Make numba's CUDA simulator able to run gunpy's kernels (and yours). Test use only.

    numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) has no warp-level
    intrinsics, so a kernel that uses one fails with ``AttributeError:
    'FakeCUDAModule' object has no attribute 'shfl_sync'``, and gunpy's
    ``CudaBackend()`` refuses to start there until this has been called. It
    installs :mod:`gunpy.testing.simwarp` (see its docstring for the model),
    which monkeypatches numba's simulator for the rest of the process:

    * adds ``syncwarp``, ``activemask``, ``lanemask_lt``, ``ballot_sync``,
      ``all_sync``, ``any_sync``, ``eq_sync``, the four ``shfl_*_sync`` and
      ``match_any_sync``/``match_all_sync`` to the fake ``cuda`` module kernels
      see, and replaces its ``popc``, ``ffs``, ``clz`` and ``brev`` with
      two's-complement, width-aware versions (as on the device);
    * wraps the simulator's ``BlockManager.__init__``, ``BlockThread.run`` and
      ``BlockThread.syncthreads`` to keep per-warp state, and puts a lock around
      ``FakeCUDAShared.array``'s get-or-create (it races) when that version of
      numba-cuda still has the unlocked one.

    ``switch_interval``: if given (seconds), also calls
    ``sys.setswitchinterval(switch_interval)``, which changes the GIL switch
    interval of the **whole process**. Each simulated thread is a Python thread
    and every barrier a hand-off of the GIL, so a short interval (gunpy's test
    suite uses ``5e-4``) makes barrier-heavy kernels several times faster and
    exposes more interleavings. Left at ``None`` (the default), the interval is
    not touched; nothing in gunpy changes it otherwise.

    A no-op when the simulator is off (``NUMBA_ENABLE_CUDASIM`` was not set
    before numba was first imported): nothing is patched, the switch interval
    is not touched, and it returns False. Returns True when the shims are
    installed (now or by an earlier call). Idempotent.
    """
    from gunpy.testing import simwarp

    if not simwarp.install():
        return False
    if switch_interval is not None:
        sys.setswitchinterval(switch_interval)
    return True
