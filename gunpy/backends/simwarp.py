"""Warp intrinsics for numba's CUDA simulator (testing only).

numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) runs each CUDA thread as a
Python thread but has no warp-level intrinsics, so kernels that use ballots or
shuffles cannot be tested on a machine without a GPU. :func:`install` adds them
to the simulator's fake ``cuda`` module so that unchanged kernel source runs:

``syncwarp``, ``activemask``, ``lanemask_lt``, ``ballot_sync``, ``all_sync``,
``any_sync``, ``eq_sync``, ``shfl_sync``, ``shfl_up_sync``, ``shfl_down_sync``,
``shfl_xor_sync``, ``match_any_sync``, ``match_all_sync``.

How: a warp is 32 consecutive linear thread ids of a block. A collective call
is a rendezvous of the lanes named in ``mask`` (those that exist in the warp):
each lane counts its own calls per mask, and the n-th call of every lane with
the same mask meets in one slot, so loops of collectives never mix rounds and
divergent masks (0x55555555 called by even lanes) work. **A lane whose thread
has exited counts as arrived and contributes nothing**, which is what lets
``if i >= n: return`` precede a full-mask ballot.

What it does not do:

* ``activemask()`` returns only the calling lane's bit. The simulator cannot
  know which lanes are converged at a call site, and claiming more lanes would
  make a following ``shfl_sync(activemask(), ...)`` wait for lanes that never
  come. CUDA allows a subset, so code stays correct, just less aggregated.
* shuffles take the full warp width (no ``width`` argument).

It also puts a lock around the simulator's shared-array get-or-create, which
races when the GIL switches often (different threads of one block could get
different "shared" arrays). Never installed outside the simulator.
"""

import sys
import threading
import traceback

import numpy as np

__all__ = ["install", "installed"]

_installed = False
_state_lock = threading.Lock()
FULL = 0xFFFFFFFF


class _Warp:
    """Rendezvous state of one warp of one block."""

    def __init__(self, lanes):
        self.lanes = lanes            # bitmask of lanes that exist in this warp
        self.cond = threading.Condition()
        self.exited = 0               # bitmask of lanes whose thread has finished
        self.calls = {}               # (lane, mask) -> number of calls so far
        self.slots = {}               # (mask, round) -> {"values": {lane: v}, "left": n}


def _warp_of(thread):
    mgr = thread._manager
    with _state_lock:
        warps = getattr(mgr, "_gunpy_warps", None)
        if warps is None:
            warps = mgr._gunpy_warps = {}
        w = thread.thread_id // 32
        warp = warps.get(w)
        if warp is None:
            nthreads = int(np.prod(mgr._block_dim))
            count = min(32, nthreads - w * 32)
            warp = warps[w] = _Warp((1 << count) - 1 if count < 32 else FULL)
    return warp


def _collective(mask, value, combine):
    """Meet the other lanes of ``mask``; ``combine(values, lane)`` gives this lane's result."""
    thread = threading.current_thread()
    lane = thread.thread_id % 32
    warp = _warp_of(thread)
    mask = int(mask) & FULL
    with warp.cond:
        n = warp.calls.get((lane, mask), 0)
        warp.calls[(lane, mask)] = n + 1
        key = (mask, n)
        slot = warp.slots.setdefault(key, {"values": {}, "read": 0})
        slot["values"][lane] = value
        warp.cond.notify_all()
        while True:
            needed = mask & warp.lanes & ~warp.exited
            have = 0
            for ln in slot["values"]:
                have |= 1 << ln
            if needed & ~have == 0:
                break
            if getattr(thread, "abort", False):
                raise RuntimeError("abort flag set during a warp collective")
            warp.cond.wait(0.05)
        result = combine(slot["values"], lane)
        slot["read"] += 1
        if slot["read"] == len(slot["values"]):
            del warp.slots[key]
        return result


def _on_exit(thread):
    if getattr(thread, "_manager", None) is None:
        return
    warp = _warp_of(thread)
    with warp.cond:
        warp.exited |= 1 << (thread.thread_id % 32)
        warp.cond.notify_all()


# --------------------------------------------------------------------------- the intrinsics
def _ballot_bits(values, pred=bool):
    bits = 0
    for ln, v in values.items():
        if pred(v):
            bits |= 1 << ln
    return bits


def syncwarp(self, mask=FULL):
    _collective(mask, None, lambda vals, lane: None)


def activemask(self):
    return np.uint32(1 << (threading.current_thread().thread_id % 32))


def lanemask_lt(self):
    return np.uint32((1 << (threading.current_thread().thread_id % 32)) - 1)


def ballot_sync(self, mask, predicate):
    return _collective(mask, bool(predicate), lambda vals, lane: np.uint32(_ballot_bits(vals)))


def all_sync(self, mask, predicate):
    return _collective(mask, bool(predicate), lambda vals, lane: int(all(vals.values())))


def any_sync(self, mask, predicate):
    return _collective(mask, bool(predicate), lambda vals, lane: int(any(vals.values())))


def eq_sync(self, mask, predicate):
    return _collective(mask, bool(predicate),
                       lambda vals, lane: int(len(set(vals.values())) <= 1))


def _shuffle(mask, value, pick):
    def combine(vals, lane):
        src = pick(lane)
        if src is None or src not in vals:
            return vals[lane]
        return vals[src]
    return _collective(mask, value, combine)


def shfl_sync(self, mask, value, src_lane):
    return _shuffle(mask, value, lambda lane: int(src_lane) % 32)


def shfl_up_sync(self, mask, value, delta):
    return _shuffle(mask, value, lambda lane: lane - int(delta) if lane >= int(delta) else None)


def shfl_down_sync(self, mask, value, delta):
    return _shuffle(mask, value, lambda lane: lane + int(delta) if lane + int(delta) < 32 else None)


def shfl_xor_sync(self, mask, value, lane_mask):
    return _shuffle(mask, value, lambda lane: lane ^ (int(lane_mask) & 31))


def match_any_sync(self, mask, value):
    return _collective(mask, value, lambda vals, lane: np.uint32(
        _ballot_bits(vals, lambda v: v == vals[lane])))


def match_all_sync(self, mask, value):
    def combine(vals, lane):
        same = len(set(vals.values())) <= 1
        return (np.uint32(_ballot_bits(vals, lambda v: True)) if same else np.uint32(0), same)
    return _collective(mask, value, combine)


_INTRINSICS = {f.__name__: f for f in (
    syncwarp, activemask, lanemask_lt, ballot_sync, all_sync, any_sync, eq_sync, shfl_sync,
    shfl_up_sync, shfl_down_sync, shfl_xor_sync, match_any_sync, match_all_sync)}


# --------------------------------------------------------------------------- installation
def _locked_shared_array(lock):
    from numba.core import types
    from numba.np import numpy_support

    def array(self, shape, dtype, alignment=None):
        # the simulator's own get-or-create, with a lock (it races under a short
        # GIL switch interval); allocations are keyed by the caller's file and line
        if alignment is not None:
            raise RuntimeError("Array alignment is not supported in cudasim")
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        if shape == 0:
            count = self._dynshared_size // dtype.itemsize
            return np.frombuffer(self._dynshared.data, dtype=dtype, count=count)
        caller = traceback.extract_stack(sys._getframe(1), limit=1)[-1][0:2]
        with lock:
            res = self._allocations.get(caller)
            if res is None:
                res = np.empty(shape, dtype)
                self._allocations[caller] = res
        return res

    return array


def install():
    """Add the warp intrinsics to the simulator; returns False outside simulator mode."""
    global _installed
    import numba
    if not numba.config.ENABLE_CUDASIM:
        return False
    if _installed:
        return True
    from numba.cuda.simulator import kernel as sim_kernel
    from numba.cuda.simulator import kernelapi

    for name, fn in _INTRINSICS.items():
        setattr(kernelapi.FakeCUDAModule, name, fn)

    original_run = sim_kernel.BlockThread.run

    def run(self):
        try:
            original_run(self)
        finally:
            _on_exit(self)

    sim_kernel.BlockThread.run = run
    kernelapi.FakeCUDAShared.array = _locked_shared_array(threading.Lock())
    _installed = True
    return True


def installed():
    return _installed
