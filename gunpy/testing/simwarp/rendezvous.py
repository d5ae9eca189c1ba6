"""simwarp's rendezvous: per-block and per-warp state, and how lanes meet in a collective.

A collective is one generation of a per-(warp, mask) reusable barrier; a lane that
has exited counts as arrived. See :mod:`gunpy.testing.simwarp` for the model.
"""

import sys
import threading
import time

FULL = 0xFFFFFFFF
WARP_SIZE = 32

# A waiting lane wakes up this often to see whether the simulator has aborted the
# block (another thread raised) or an activemask group has timed out.
_POLL = 0.05


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
