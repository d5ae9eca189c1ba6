"""The simulator's warp-intrinsic shim (gunpy.backends.simwarp) against expected values.

Runs only under the simulator (``--cuda-mode=sim``); on a GPU the same kernels
check the hardware.
"""

import numpy as np
import pytest
from numba import cuda  # a module global: the simulator swaps it for its fake module

pytestmark = pytest.mark.sim

FULL = 0xFFFFFFFF


def launch(kernel, nthreads, blocks, *arrays):
    dev = [cuda.to_device(a) for a in arrays]
    kernel[blocks, nthreads](*dev)
    return [d.copy_to_host() for d in dev]


@pytest.mark.parametrize("block", [32, 48, 64])
def test_ballot_scan_reductions_broadcast(block):
    @cuda.jit
    def k(ballot, scan, red_down, red_xor, bcast, anyall):
        i = cuda.grid(1)
        lane = cuda.laneid
        ballot[i] = cuda.ballot_sync(FULL, lane % 3 == 0)
        x = lane + 1
        off = 1
        while off < 32:
            y = cuda.shfl_up_sync(FULL, x, off)
            if lane >= off:
                x += y
            off *= 2
        scan[i] = x
        s = lane
        off = 16
        while off > 0:
            s += cuda.shfl_down_sync(FULL, s, off)
            off //= 2
        red_down[i] = s
        t = lane
        off = 16
        while off > 0:
            t += cuda.shfl_xor_sync(FULL, t, off)
            off //= 2
        red_xor[i] = t
        bcast[i] = cuda.shfl_sync(FULL, lane * 10, 5)
        anyall[i] = cuda.any_sync(FULL, lane == 7) * 2 + cuda.all_sync(FULL, lane < 100)

    n = block * 2
    out = launch(k, block, 2, *[np.zeros(n, np.int64) for _ in range(6)])
    ballot, scan, red_down, red_xor, bcast, anyall = out
    for i in range(n):
        t = i % block
        warp_start = t - t % 32
        size = min(32, block - warp_start)
        lane = t % 32
        lanes = range(size)
        assert ballot[i] == sum(1 << ln for ln in lanes if ln % 3 == 0)
        assert scan[i] == sum(ln + 1 for ln in lanes if ln <= lane)
        if size == 32:  # shuffling from lanes that do not exist is undefined
            assert red_xor[i] == sum(lanes)  # butterfly: every lane ends with the total
            if lane == 0:
                assert red_down[i] == sum(lanes)
        assert bcast[i] == (50 if size > 5 else lane * 10)
        assert anyall[i] == (2 if size > 7 else 0) + 1


def test_divergent_mask_and_exited_lanes():
    @cuda.jit
    def k(out, n):
        i = cuda.grid(1)
        if i >= n[0]:
            return  # lanes past n exit; they count as arrived
        lane = cuda.laneid
        b = cuda.ballot_sync(FULL, True)
        e = 0
        if lane % 2 == 0:
            e = cuda.ballot_sync(0x55555555, lane % 4 == 0)
        out[i, 0] = b
        out[i, 1] = e

    n = 27
    out = launch(k, 32, 1, np.zeros((32, 2), np.int64), np.array([n]))[0]
    for i in range(n):
        assert out[i, 0] == (1 << n) - 1
        if i % 2 == 0:
            assert out[i, 1] == sum(1 << ln for ln in range(0, n, 4))


def test_generations_loop_and_syncthreads_mix():
    @cuda.jit
    def k(out):
        sh = cuda.shared.array(64, np.int64)
        i = cuda.threadIdx.x
        lane = cuda.laneid
        total = 0
        for r in range(10):
            total += cuda.popc(cuda.ballot_sync(FULL, (lane + r) % 4 == 0))
            sh[i] = total
            cuda.syncthreads()
            total += sh[(i + 1) % 64] - sh[i]
            cuda.syncthreads()
        out[i] = total

    (out,) = launch(k, 64, 1, np.zeros(64, np.int64))
    assert (out == 80).all()


def test_activemask_lanemask_match():
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        lane = cuda.laneid
        m = cuda.activemask()
        out[i, 0] = m & (1 << lane) != 0
        out[i, 1] = cuda.lanemask_lt()
        out[i, 2] = cuda.match_any_sync(FULL, lane // 8)
        out[i, 3] = cuda.ffs(cuda.ballot_sync(FULL, lane >= 20))

    (out,) = launch(k, 32, 1, np.zeros((32, 4), np.int64))
    for ln in range(32):
        assert out[ln, 0] == 1
        assert out[ln, 1] == (1 << ln) - 1
        assert out[ln, 2] == 0xFF << (8 * (ln // 8))
        assert out[ln, 3] == 21


def test_shared_array_is_one_array_per_block_under_fast_switching():
    import sys

    @cuda.jit
    def k(out):
        sh = cuda.shared.array(32, np.int64)
        sh[cuda.threadIdx.x] = cuda.threadIdx.x
        cuda.syncthreads()
        out[cuda.threadIdx.x] = sh[(cuda.threadIdx.x + 1) % 32]

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(5):
            (out,) = launch(k, 32, 1, np.zeros(32, np.int64))
            assert out.tolist() == [(t + 1) % 32 for t in range(32)]
    finally:
        sys.setswitchinterval(old)
