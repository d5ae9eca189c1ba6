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

Never installed outside the simulator: :func:`install` returns False there and
this module does not import numba at import time (``NUMBA_ENABLE_CUDASIM`` is
read when numba is first imported, so importing numba here could fix the mode
too early).
"""

import sys
import threading
import time

import numpy as np

__all__ = ["install", "installed", "patches", "activemask_mode", "activemask_timeout"]

FULL = 0xFFFFFFFF
WARP_SIZE = 32

#: "converged" (lanes that reach the same call site together) or "self" (only the caller).
activemask_mode = "converged"
#: seconds an ``activemask()`` group waits for lanes that are still running.
activemask_timeout = 5.0
# A waiting lane wakes up this often to see whether the simulator has aborted the
# block (another thread raised) or an activemask group has timed out.
_POLL = 0.05

_install_lock = threading.Lock()
_installed = False
_patches = []          # names of what install() changed, for patches()
_shared_lock = threading.Lock()


# --------------------------------------------------------------------------- state
class _Slot:
    """One generation of one rendezvous: the lanes of one mask meeting at one call.

    ``values`` is written by each arriving lane and never changes after ``done``
    is set, so the lanes can read their results after leaving the lock.
    """

    __slots__ = ("kind", "mask", "gen", "values", "arrived", "done", "site", "deadline",
                 "cache")

    def __init__(self, kind, mask, gen):
        self.kind = kind
        self.mask = mask
        self.gen = gen
        self.values = {}       # lane -> value it contributed
        self.arrived = 0       # bitmask of lanes that have called
        self.done = False
        self.site = None       # activemask only: the call stack that identifies the group
        self.deadline = None   # activemask only: when to stop waiting for running lanes
        self.cache = None      # a result that is the same for every lane, computed once


class _Warp:
    """Rendezvous state of one warp of one block; everything is guarded by ``cond``."""

    def __init__(self, block, index, lanes):
        self.block = block
        self.index = index
        self.lanes = lanes                 # bitmask of the lanes that exist
        self.cond = threading.Condition(threading.Lock())
        self.gen = 0                       # generation counter (one per rendezvous opened)
        self.open = {}                     # mask -> the open collective generation
        self.open_am = {}                  # call site -> the open activemask group
        self.exited = 0                    # lanes whose thread has finished
        self.waiting = 0                   # lanes waiting in a generation that is not done
        self.slot_of = [None] * WARP_SIZE  # where each waiting lane waits (for messages)
        self.in_bar = 0                    # lanes inside syncthreads()
        self.bar_of = [0] * WARP_SIZE      # which syncthreads (1st, 2nd, ...) each is in
        self.deadlock = None               # message, once a deadlock has been seen


class _Block:
    """Per-block state, attached to the simulator's BlockManager."""

    def __init__(self, block_dim):
        n = 1
        for d in block_dim:
            n *= int(d)
        self.lock = threading.Lock()
        # Highest syncthreads number (1st, 2nd, ...) that some thread has returned
        # from. Every live thread must reach a barrier before it opens, so a
        # thread still inside barrier k <= bar_released is about to leave it.
        self.bar_released = 0
        self.warps = []
        for w in range((n + WARP_SIZE - 1) // WARP_SIZE):
            count = min(WARP_SIZE, n - w * WARP_SIZE)
            self.warps.append(_Warp(self, w, (1 << count) - 1))


def _me():
    """(thread, warp, lane) of the calling simulated CUDA thread."""
    t = threading.current_thread()
    block = getattr(getattr(t, "_manager", None), "_simwarp", None)
    if block is None:
        raise RuntimeError("warp intrinsics work only inside a kernel launched after "
                           "gunpy.testing.install_simulator_shims()")
    tid = t.thread_id
    return t, block.warps[tid // WARP_SIZE], tid % WARP_SIZE


def _bits(mask):
    lane = 0
    while mask:
        if mask & 1:
            yield lane
        mask >>= 1
        lane += 1


def _fmt(mask):
    """Lanes of a bitmask as '0-15,17'."""
    out, run = [], []
    for lane in _bits(mask):
        if run and lane == run[-1] + 1:
            run.append(lane)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [lane]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out) or "none"


# --------------------------------------------------------------------------- rendezvous
def _parked(warp):
    """Lanes that cannot move until some other lane of the warp does.

    That is lanes waiting in a generation that is not complete, and lanes inside
    a syncthreads() that no thread has left yet (a barrier some thread has left
    is open; its stragglers are running).
    """
    parked = warp.waiting
    bar = warp.in_bar & ~parked
    if bar:
        released = warp.block.bar_released
        for lane in _bits(bar):
            if warp.bar_of[lane] > released:
                parked |= 1 << lane
    return parked


def _finish(warp, slot):
    slot.done = True
    warp.waiting &= ~slot.arrived


def _progress(warp):
    """Complete, close or diagnose what the last change allows (``warp.cond`` held).

    Called after every arrival, exit and syncthreads entry: those are the only
    events that can let a rendezvous finish.
    """
    changed = False
    live = warp.lanes & ~warp.exited
    # 1. a collective generation is complete when every named lane that exists and
    #    has not exited has arrived (exited lanes count as arrived)
    for mask, slot in list(warp.open.items()):
        if mask & live & ~slot.arrived == 0:
            _finish(warp, slot)
            del warp.open[mask]
            changed = True
    if warp.open_am:
        # 2. an activemask group closes once every other live lane is parked
        #    somewhere else: those lanes have diverged from this call site. All
        #    groups are judged on one snapshot, so two branches that each call
        #    activemask() get their own lanes, whatever the thread order.
        parked = _parked(warp)
        ready = [s for s in warp.open_am.values() if live & ~s.arrived & ~parked == 0]
        for slot in ready:
            _finish(warp, slot)
            del warp.open_am[slot.site]
            changed = True
    elif warp.open and warp.deadlock is None:
        # 3. every live lane is parked and none of the open generations can
        #    complete: nothing in this warp can move again. (A lane inside
        #    syncthreads cannot be let out either: the lanes waiting here are
        #    live and not at the barrier.) The device would hang; say why.
        if live & ~_parked(warp) == 0:
            warp.deadlock = _describe_deadlock(warp, live)
            changed = True
    if changed:
        warp.cond.notify_all()


def _describe_deadlock(warp, live):
    parts = []
    for slot in warp.open.values():
        parts.append(f"lanes {_fmt(slot.arrived)} wait in {slot.kind}(mask={slot.mask:#010x}) "
                     f"for lanes {_fmt(slot.mask & live & ~slot.arrived)}")
    bar = warp.in_bar & ~warp.waiting
    if bar:
        parts.append(f"lanes {_fmt(bar)} wait in syncthreads()")
    return (f"warp collective deadlock in warp {warp.index} (exited lanes: "
            f"{_fmt(warp.exited)}): " + "; ".join(parts))


def _wait(t, warp, slot):
    """Wait (``warp.cond`` held) until ``slot`` is done."""
    while not slot.done:
        if warp.deadlock is not None:
            raise RuntimeError(warp.deadlock)
        if getattr(t, "abort", False):
            # another simulated thread raised: the simulator has given up on the block
            raise RuntimeError("abort flag set during a warp collective")
        timeout = _POLL
        if slot.deadline is not None:
            left = slot.deadline - time.monotonic()
            if left <= 0:
                # some lane never parked (spinning on another lane?): close the group
                # with the lanes that came, a legal activemask() result
                _finish(warp, slot)
                if warp.open_am.get(slot.site) is slot:
                    del warp.open_am[slot.site]
                warp.cond.notify_all()
                break
            timeout = min(timeout, left)
        warp.cond.wait(timeout)


def _collective(kind, mask, value):
    """Meet the other lanes of ``mask``; returns (slot, lane) once all have come."""
    t, warp, lane = _me()
    bit = 1 << lane
    mask = int(mask) & FULL
    if not mask & bit:
        raise RuntimeError(f"{kind}: lane {lane} called with mask {mask:#010x}, which does not "
                           "contain its own lane (undefined behaviour in CUDA)")
    with warp.cond:
        slot = warp.open.get(mask)
        if slot is None:
            # 1. first lane of a new generation for this mask
            warp.gen += 1
            slot = warp.open[mask] = _Slot(kind, mask, warp.gen)
        elif slot.kind != kind:
            raise RuntimeError(f"{kind}: lane {lane} called with mask {mask:#010x} while lanes "
                               f"{_fmt(slot.arrived)} of that mask are in {slot.kind} "
                               "(undefined behaviour in CUDA)")
        # 2. contribute, then 3. complete it (if last) or wait for the others
        slot.values[lane] = value
        slot.arrived |= bit
        warp.waiting |= bit
        warp.slot_of[lane] = slot
        _progress(warp)
        _wait(t, warp, slot)
    return slot, lane


def _call_site():
    """The whole Python call stack of the caller of activemask(), as a hashable key.

    Lanes are converged when they execute the same instruction; in the simulator
    the nearest thing is the same stack of (code, bytecode offset). The whole
    stack is used so that an inline device function called from two places in a
    kernel gives two sites.
    """
    f = sys._getframe(2)
    key = []
    while f is not None:
        key.append((f.f_code, f.f_lasti))
        f = f.f_back
    return tuple(key)


def _on_exit(thread):
    """The thread has left the kernel: from now on it counts as arrived everywhere."""
    block = getattr(getattr(thread, "_manager", None), "_simwarp", None)
    if block is None:
        return
    tid = thread.thread_id
    warp = block.warps[tid // WARP_SIZE]
    bit = 1 << (tid % WARP_SIZE)
    with warp.cond:
        warp.exited |= bit
        warp.waiting &= ~bit
        warp.in_bar &= ~bit
        _progress(warp)


# --------------------------------------------------------------------------- the intrinsics
# These become methods of the simulator's FakeCUDAModule, hence ``self``.
def _i32(bits):
    """A 32-bit lane mask as numba types ballot_sync on the device: int32."""
    return np.int32(bits - (1 << 32) if bits & 0x80000000 else bits)


def syncwarp(self, mask=FULL):
    _collective("syncwarp", mask, None)


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


def lanemask_lt(self):
    return np.uint32((1 << (threading.current_thread().thread_id % WARP_SIZE)) - 1)


def ballot_sync(self, mask, predicate):
    slot, _ = _collective("ballot_sync", mask, bool(predicate))
    if slot.cache is None:
        bits = 0
        for ln, v in slot.values.items():
            if v:
                bits |= 1 << ln
        slot.cache = _i32(bits)
    return slot.cache


def all_sync(self, mask, predicate):
    slot, _ = _collective("all_sync", mask, bool(predicate))
    return all(slot.values.values())


def any_sync(self, mask, predicate):
    slot, _ = _collective("any_sync", mask, bool(predicate))
    return any(slot.values.values())


def eq_sync(self, mask, predicate):
    slot, _ = _collective("eq_sync", mask, bool(predicate))
    return len(set(slot.values.values())) <= 1


def _shuffle(kind, mask, value, source):
    slot, lane = _collective(kind, mask, value)
    src = source(lane)
    if src is None or src not in slot.values:
        # out of range: own value (as PTX); not taking part: undefined on the device
        return value
    return slot.values[src]


def shfl_sync(self, mask, value, src_lane):
    idx = int(src_lane) & (WARP_SIZE - 1)
    return _shuffle("shfl_sync", mask, value, lambda lane: idx)


def shfl_up_sync(self, mask, value, delta):
    d = int(delta) & (WARP_SIZE - 1)
    return _shuffle("shfl_up_sync", mask, value, lambda lane: lane - d if lane >= d else None)


def shfl_down_sync(self, mask, value, delta):
    d = int(delta) & (WARP_SIZE - 1)
    return _shuffle("shfl_down_sync", mask, value,
                    lambda lane: lane + d if lane + d < WARP_SIZE else None)


def shfl_xor_sync(self, mask, value, lane_mask):
    m = int(lane_mask) & (WARP_SIZE - 1)
    return _shuffle("shfl_xor_sync", mask, value, lambda lane: lane ^ m)


def _match_key(v):
    # the device compares bit patterns: 0.0 and -0.0 differ, equal NaNs match
    if isinstance(v, (float, np.floating)):
        return np.asarray(v).tobytes()
    return int(v)


def match_any_sync(self, mask, value):
    slot, lane = _collective("match_any_sync", mask, _match_key(value))
    mine = slot.values[lane]
    bits = 0
    for ln, v in slot.values.items():
        if v == mine:
            bits |= 1 << ln
    return _i32(bits)


def match_all_sync(self, mask, value):
    slot, _ = _collective("match_all_sync", mask, _match_key(value))
    same = len(set(slot.values.values())) <= 1
    return (_i32(slot.arrived) if same else np.int32(0)), same


# Bit counting with the device's two's complement semantics.
def _width_and_bits(val):
    """(bit width, the value's bits as a non-negative int)."""
    if isinstance(val, np.integer):
        w = val.dtype.itemsize * 8
    else:
        v = int(val)
        w = 32 if -(1 << 31) <= v < (1 << 32) else 64
    return w, int(val) & ((1 << w) - 1)


def popc(self, val):
    return bin(_width_and_bits(val)[1]).count("1")


def ffs(self, val):
    # 1-based index of the least significant set bit; 0 when there is none
    _, v = _width_and_bits(val)
    return (v & -v).bit_length()


def clz(self, val):
    w, v = _width_and_bits(val)
    return w - v.bit_length()


def brev(self, val):
    w, v = _width_and_bits(val)
    w = 32 if w <= 32 else 64
    r = int(format(v, f"0{w}b")[::-1], 2)
    return np.uint32(r) if w == 32 else np.uint64(r)


_INTRINSICS = {f.__name__: f for f in (
    syncwarp, activemask, lanemask_lt, ballot_sync, all_sync, any_sync, eq_sync, shfl_sync,
    shfl_up_sync, shfl_down_sync, shfl_xor_sync, match_any_sync, match_all_sync)}
_BIT_OPS = {f.__name__: f for f in (popc, ffs, clz, brev)}


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
