"""Warp intrinsics for numba's CUDA simulator. For testing only.

Installed only on request: :func:`gunpy.testing.install_simulator_shims` (or
:func:`install` here). Importing gunpy, including ``gunpy.backends.cuda``, never
imports this module or patches numba; gunpy's CUDA backend under the simulator
refuses to start until the intrinsics are there.

numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) runs every CUDA thread of a
block as a Python thread. It has ``syncthreads`` but no warp-level intrinsics,
so a kernel that uses a ballot or a shuffle fails there with
``AttributeError: 'FakeCUDAModule' object has no attribute 'shfl_sync'``.
:func:`install` adds them to the simulator's fake ``cuda`` module, so that
unchanged kernel source (``from numba import cuda`` ... ``cuda.ballot_sync``)
runs on a machine with no GPU:

* ``syncwarp(mask=0xffffffff)``, ``activemask()``, ``lanemask_lt()``
* ``ballot_sync``, ``all_sync``, ``any_sync``, ``eq_sync``
* ``shfl_sync``, ``shfl_up_sync``, ``shfl_down_sync``, ``shfl_xor_sync``
* ``match_any_sync``, ``match_all_sync`` (the latter returns ``(mask, pred)``)

It also replaces ``popc``, ``ffs``, ``clz`` and ``brev`` with versions that
work on the argument's two's complement bits at its own width (the
simulator's own ones format the value with ``"{:032b}"``: ``popc(np.int32(-1))``
gave 1, ``brev`` of a negative int raised ``ValueError``, and 64-bit values were
counted as 32-bit: ``clz(np.int64(1))`` gave 31, ``ffs(np.int64(1 << 32))`` 0,
``brev(np.uint64(1))`` 2**31), and it puts a lock around the simulator's
``cuda.shared.array`` get-or-create, which otherwise races (see below).

Model
-----
* A warp is 32 consecutive linear thread ids of a block
  (``x + ntid.x * (y + ntid.y * z)``, the simulator's own ``thread_id``; lane =
  id % 32, which is also what the simulator's ``cuda.laneid`` returns). The
  last warp of a block whose size is not a multiple of 32 is partial: the
  lanes that do not exist count as absent.
* A collective call is a rendezvous of the lanes named in ``mask`` that exist.
  **A lane whose thread has exited the kernel counts as arrived and
  contributes nothing**, so ``if i >= n: return`` followed by a full-mask
  ballot in the remaining lanes works as on the device.
* Each rendezvous is one *generation* of a per-(warp, mask) reusable barrier:
  the lanes calling with the same mask meet in the open generation, and the
  next call after it completes opens a new one, so loops of collectives never
  mix rounds, and lanes of disjoint masks (0x55555555 called by the even lanes,
  0xaaaaaaaa by the odd ones) meet independently, as on Volta and later.
* ``activemask()`` returns the lanes that are *converged* at the call: the
  lanes that reach the same call site (same Python call stack), once every
  other live lane of the warp is parked elsewhere (waiting in another
  collective, in ``syncthreads``, or at another ``activemask``) or has exited.
  In straight-line code that is the whole warp (minus exited lanes); inside a
  branch it is the lanes that took the branch. This exercises warp-aggregated
  code (leader, rank, ``shfl_sync(activemask(), ...)``) the way a GPU does; if
  some lane never parks (it spins on another lane), the group closes after
  ``activemask_timeout`` seconds with the lanes that came (still a legal
  answer: CUDA only promises a subset that contains the caller). Set
  ``simwarp.activemask_mode = "self"`` to get just the caller's bit.

Checks the device would not do (it would hang or give undefined results):

* a lane calling with a mask that does not contain its own bit raises;
* lanes of one mask calling different intrinsics (``ballot_sync`` in some,
  ``shfl_sync`` in others) raises;
* a warp deadlock (every live lane waiting, in collectives or in
  ``syncthreads``, and no rendezvous can complete) raises a ``RuntimeError``
  that says which lanes wait where, instead of hanging the test.

Result types follow numba-cuda's typing on the device: ``ballot_sync`` and
``match_any_sync`` return ``np.int32`` (so a full ballot is -1, and
``popc``/``ffs``/stores into int32, int64 or uint32 arrays behave as on the
GPU); ``activemask``/``lanemask_lt`` return ``np.uint32``; the votes return
``bool``; shuffles return the source lane's value unchanged.

What it does not do
-------------------
* no ``width`` argument: shuffles work on the whole warp (width 32). Lane
  offsets are taken modulo 32 as PTX does (``shfl_up_sync(v, 33)`` == delta 1).
* reading a lane that is not taking part (exited, absent, outside ``mask``) is
  undefined on the device; here the caller gets its own value back.
* no timing or memory model: a collective is a plain thread rendezvous, and it
  costs several ms of wall time; no check that masks are warp-uniform beyond
  the ones above.
* ``match_*_sync`` compare integers by value and floats by bit pattern.
* Python ints passed to ``popc``/``clz``/``ffs``/``brev`` are taken as 32-bit
  when they fit in int32/uint32 (the simulator's own convention) and as 64-bit
  otherwise; numpy integers use their own width.
* ``np.int32`` ballots keep numpy's rules: ``ballot & (1 << 31)`` raises
  ``OverflowError`` in the simulator (it is fine on the device, where the
  literal is int64); write ``(ballot >> lane) & 1``.

The shared-array race
---------------------
``FakeCUDAShared.array`` identifies an allocation by the caller's file and
line and does ``get`` then ``set`` on a dict with no lock. Under a short GIL
switch interval (``sys.setswitchinterval(1e-6)``) two threads of one block can
both miss and each create its own "shared" array. :func:`install` replaces it
with the same logic under a lock (only if the method still has that shape; see
:func:`patches`).

Modules: :mod:`~gunpy.testing.simwarp.rendezvous` (warp and block state, how lanes
meet), :mod:`~gunpy.testing.simwarp.intrinsics` (the intrinsics but ``activemask``,
which sits here beside the settings it reads), and this one (the settings,
:func:`install`).

Never installed outside the simulator: :func:`install` returns False there and
this module does not import numba at import time (``NUMBA_ENABLE_CUDASIM`` is
read when numba is first imported, so importing numba here could fix the mode
too early).
"""

import sys
import threading
import time

import numpy as np

from .intrinsics import (_BIT_OPS, all_sync, any_sync, ballot_sync, eq_sync, lanemask_lt,
                         match_all_sync, match_any_sync, shfl_down_sync, shfl_sync,
                         shfl_up_sync, shfl_xor_sync, syncwarp)
from .rendezvous import (FULL, WARP_SIZE, _Block, _call_site, _me, _on_exit,  # noqa: F401
                         _progress, _Slot, _wait)

__all__ = ["install", "installed", "patches", "activemask_mode", "activemask_timeout"]


#: "converged" (lanes that reach the same call site together) or "self" (only the caller).
activemask_mode = "converged"
#: seconds an ``activemask()`` group waits for lanes that are still running.
activemask_timeout = 5.0

_install_lock = threading.Lock()
_installed = False
_patches = []          # names of what install() changed, for patches()
_shared_lock = threading.Lock()


# --------------------------------------------------------------------------- activemask
# beside the settings it reads: tests set ``simwarp.activemask_mode`` on this module
def activemask(self):
    t, warp, lane = _me()
    bit = 1 << lane
    if activemask_mode == "self":
        return np.uint32(bit)
    site = _call_site()
    with warp.cond:
        slot = warp.open_am.get(site)
        if slot is None:
            warp.gen += 1
            slot = warp.open_am[site] = _Slot("activemask", FULL, warp.gen)
            slot.site = site
            slot.deadline = time.monotonic() + activemask_timeout
        slot.arrived |= bit
        warp.waiting |= bit
        warp.slot_of[lane] = slot
        _progress(warp)
        _wait(t, warp, slot)
    return np.uint32(slot.arrived)


_INTRINSICS = {f.__name__: f for f in (
    syncwarp, activemask, lanemask_lt, ballot_sync, all_sync, any_sync, eq_sync, shfl_sync,
    shfl_up_sync, shfl_down_sync, shfl_xor_sync, match_any_sync, match_all_sync)}


# --------------------------------------------------------------------------- installation
def _locked_shared_array(kernelapi):
    """The simulator's FakeCUDAShared.array, with its get-or-create under a lock."""

    def array(self, shape, dtype, alignment=None):
        if alignment is not None:
            raise RuntimeError("Array alignment is not supported in cudasim")
        if isinstance(dtype, kernelapi.types.Type):
            dtype = kernelapi.numpy_support.as_dtype(dtype)
        if shape == 0:
            # dynamic shared memory: one buffer for every call, nothing to race on
            count = self._dynshared_size // dtype.itemsize
            return np.frombuffer(self._dynshared.data, dtype=dtype, count=count)
        # same key as the original (caller's file and line), from the frame
        # directly: traceback.extract_stack walked and formatted the whole stack
        f = sys._getframe(1)
        caller = (f.f_code.co_filename, f.f_lineno)
        with _shared_lock:
            res = self._allocations.get(caller)
            if res is None:
                res = self._allocations[caller] = np.empty(shape, dtype)
        return res

    return array


def _shared_array_races(kernelapi):
    """True if FakeCUDAShared.array is the known unlocked get-or-create."""
    import inspect
    try:
        src = inspect.getsource(kernelapi.FakeCUDAShared.array)
    except (OSError, TypeError):
        return False
    return ("_allocations.get(" in src and "_dynshared" in src and "lock" not in src.lower())


def install():
    """Add the warp intrinsics to numba's CUDA simulator (idempotent).

    Returns True when installed (now or before), False when the simulator is not
    active (then nothing is changed and ``numba.cuda`` is not imported).
    """
    global _installed
    with _install_lock:
        if _installed:
            return True
        import numba
        if not numba.config.ENABLE_CUDASIM:
            return False
        from numba.cuda.simulator import kernel as sim_kernel
        from numba.cuda.simulator import kernelapi

        # 1. the intrinsics, as methods of the fake `cuda` module kernels see
        for name, fn in {**_INTRINSICS, **_BIT_OPS}.items():
            setattr(kernelapi.FakeCUDAModule, name, fn)
        _patches.extend(f"cuda.{name}" for name in _INTRINSICS)
        _patches.extend(f"cuda.{name} (two's complement)" for name in _BIT_OPS)
        for name in ("laneid", "warpsize"):
            if not hasattr(kernelapi.FakeCUDAModule, name):  # present in numba-cuda 0.30
                raise RuntimeError(f"the simulator has no cuda.{name}; simwarp needs it")

        # 2. per-block warp state, created with the block's manager (one thread,
        #    before any simulated thread starts, so no lock is needed)
        BlockManager = sim_kernel.BlockManager
        orig_init = BlockManager.__init__

        def __init__(self, *args, **kwargs):
            orig_init(self, *args, **kwargs)
            self._simwarp = _Block(self._block_dim)

        BlockManager.__init__ = __init__

        # 3. thread exit: the thread's run() returns (also after an exception, which
        #    the simulator catches inside run) -> it counts as arrived from now on
        BlockThread = sim_kernel.BlockThread
        orig_run = BlockThread.run

        def run(self):
            try:
                orig_run(self)
            finally:
                _on_exit(self)

        BlockThread.run = run

        # 4. syncthreads: a lane at the barrier is parked, which lets an activemask
        #    group close without it and lets deadlocks be diagnosed
        orig_sync = BlockThread.syncthreads

        def syncthreads(self):
            block = getattr(self._manager, "_simwarp", None)
            if block is None:
                return orig_sync(self)
            tid = self.thread_id
            warp = block.warps[tid // WARP_SIZE]
            lane = tid % WARP_SIZE
            k = self._simwarp_bar = getattr(self, "_simwarp_bar", 0) + 1
            with warp.cond:
                warp.in_bar |= 1 << lane
                warp.bar_of[lane] = k
                _progress(warp)
            try:
                orig_sync(self)
            finally:
                with block.lock:
                    if k > block.bar_released:
                        block.bar_released = k
                with warp.cond:
                    warp.in_bar &= ~(1 << lane)

        BlockThread.syncthreads = syncthreads
        _patches.extend(["BlockManager.__init__ (warp state)", "BlockThread.run (exit)",
                         "BlockThread.syncthreads (parking)"])

        # 5. the shared-array get-or-create race, if this version still has it
        if _shared_array_races(kernelapi):
            kernelapi.FakeCUDAShared.array = _locked_shared_array(kernelapi)
            _patches.append("FakeCUDAShared.array (lock)")

        _installed = True
        return True


def installed():
    """True once :func:`install` has patched the simulator in this process."""
    return _installed


def patches():
    """What :func:`install` changed, as a list of short descriptions."""
    return list(_patches)
