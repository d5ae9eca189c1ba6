"""simwarp's intrinsics (``activemask`` aside: it sits beside its settings in the package).

These become methods of the simulator's FakeCUDAModule, hence ``self``.
"""

import threading

import numpy as np

from .rendezvous import FULL, WARP_SIZE, _collective


def _i32(bits):
    """A 32-bit lane mask as numba types ballot_sync on the device: int32."""
    return np.int32(bits - (1 << 32) if bits & 0x80000000 else bits)


def syncwarp(self, mask=FULL):
    _collective("syncwarp", mask, None)


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


#: what install() replaces in the simulator (its versions miscount negative and 64-bit values)
_BIT_OPS = {f.__name__: f for f in (popc, ffs, clz, brev)}
