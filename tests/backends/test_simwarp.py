"""gunpy.testing.simwarp: warp intrinsics for numba's CUDA simulator.

``NUMBA_ENABLE_CUDASIM`` is read when numba is first imported, and this pytest
process may already have imported numba without it, so every check runs in a
fresh ``python -c`` subprocess with the variable set. Each script launches
small kernels (grids of 1-2 blocks of 32, 48 (a partial warp) or 64 threads),
computes the expected values in plain Python and asserts; the test only looks
at the exit status. This module imports neither numba nor gunpy, so it runs in
every test mode.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 240  # seconds per script; they take 1-10 s, but the simulator's timing is noisy

# Shared by every script: imports, install, and a Python model of a warp.
PRELUDE = '''
import sys, time
import numpy as np
from numba import cuda                       # a module global: the simulator swaps it
from gunpy.testing import simwarp
assert simwarp.install() is True
FULL = 0xFFFFFFFF

def warp_of(t, block):
    """(lane, number of lanes in the warp) of thread t of a block"""
    start = t - t % 32
    return t % 32, min(32, block - start)

def bits(lanes):
    return sum(1 << ln for ln in lanes)

def i32(b):
    return b - (1 << 32) if b & 0x80000000 else b

def shuffle(vals, src):
    """one shuffle step over a warp's values; src(lane) -> source lane or None"""
    out = []
    for ln, v in enumerate(vals):
        s = src(ln)
        out.append(vals[s] if s is not None and 0 <= s < len(vals) else v)
    return out
'''


def run_sim(body, *, sim=True, prelude=True, timeout=TIMEOUT):
    """Run [PRELUDE +] body in a fresh interpreter; fail with its output unless it prints OK.

    ``sim``: set NUMBA_ENABLE_CUDASIM=1 (else remove it); ``prelude``: start with
    PRELUDE (imports numba.cuda and installs simwarp; only with ``sim``).
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    code = textwrap.dedent(body)
    if sim:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
        if prelude:
            code = PRELUDE + code
    else:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0 or "OK" not in proc.stdout.split():
        pytest.fail(f"script failed (rc={proc.returncode})\n--- stdout\n{proc.stdout[-4000:]}"
                    f"\n--- stderr\n{proc.stderr[-6000:]}")
    return proc.stdout


def test_outside_the_simulator_install_is_a_noop():
    # loaded from its folder, so that gunpy/__init__ (which imports numba.cuda) stays out
    run_sim(f'''
        import importlib.util, sys
        package = {str(ROOT / "gunpy" / "testing" / "simwarp")!r}
        spec = importlib.util.spec_from_file_location(
            "simwarp", package + "/__init__.py", submodule_search_locations=[package])
        simwarp = sys.modules["simwarp"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(simwarp)
        assert "numba" not in sys.modules, "importing simwarp imported numba"
        assert simwarp.install() is False and simwarp.installed() is False
        assert "numba.cuda" not in sys.modules, "install() imported numba.cuda"
        assert simwarp.patches() == []
        print("OK")
    ''', sim=False)


def test_install_is_idempotent_and_patches_the_simulator():
    run_sim('''
        assert simwarp.install() is True and simwarp.installed()
        from numba.cuda.simulator import kernelapi
        fake = kernelapi.FakeCUDAModule
        for name in ("syncwarp", "activemask", "lanemask_lt", "ballot_sync", "all_sync",
                     "any_sync", "eq_sync", "shfl_sync", "shfl_up_sync", "shfl_down_sync",
                     "shfl_xor_sync", "match_any_sync", "match_all_sync", "laneid", "warpsize"):
            assert hasattr(fake, name), name
        p = simwarp.patches()
        from importlib.metadata import version
        if version("numba-cuda") == "0.30.4":             # this version has the race
            assert "FakeCUDAShared.array (lock)" in p, p
        assert len(p) == len(set(p)), "install() patched twice"
        print("OK")
    ''')


def test_votes_shuffles_and_scans():
    # 32: one full warp; 48: a full and a 16-lane partial warp; 64: two full warps
    run_sim('''
        @cuda.jit
        def k(out, fout):
            i = cuda.grid(1)
            lane = cuda.laneid
            out[i, 0] = cuda.ballot_sync(FULL, lane % 3 == 0)
            x = lane + 1                        # 1. inclusive scan, log-step shfl_up
            off = 1
            while off < 32:
                y = cuda.shfl_up_sync(FULL, x, off)
                if lane >= off:
                    x += y
                off *= 2
            out[i, 1] = x
            s = lane + 1                        # 2. shfl_down reduction (lane 0 has the sum)
            off = 16
            while off > 0:
                s += cuda.shfl_down_sync(FULL, s, off)
                off //= 2
            out[i, 2] = s
            t = lane + 1                        # 3. butterfly: every lane gets the sum
            off = 16
            while off > 0:
                t += cuda.shfl_xor_sync(FULL, t, off)
                off //= 2
            out[i, 3] = t
            out[i, 4] = cuda.shfl_sync(FULL, lane * 10 + 1, 5)
            out[i, 5] = cuda.any_sync(FULL, lane == 7)
            out[i, 6] = cuda.all_sync(FULL, lane < 40)
            out[i, 7] = cuda.all_sync(FULL, lane != 3)
            out[i, 8] = cuda.eq_sync(FULL, lane < 40)
            out[i, 9] = cuda.eq_sync(FULL, lane < 4)
            out[i, 10] = cuda.lanemask_lt()
            out[i, 11] = cuda.match_any_sync(FULL, lane // 8)
            m, p = cuda.match_all_sync(FULL, 42)
            out[i, 12] = m
            out[i, 13] = p
            full = cuda.ballot_sync(FULL, True)
            out[i, 14] = full                  # int32 on the device: -1 for a full warp
            out[i, 15] = cuda.popc(full)
            out[i, 16] = cuda.ffs(cuda.ballot_sync(FULL, lane >= 10))
            out[i, 17] = cuda.popc(full & cuda.lanemask_lt())   # rank among the lanes
            out[i, 18] = cuda.shfl_up_sync(FULL, lane, 33)      # offsets are taken mod 32
            fout[i] = cuda.shfl_sync(FULL, lane + 0.5, 37)      # float; 37 % 32 == 5
            cuda.syncwarp()
            cuda.syncwarp(FULL)

        for block in (32, 48, 64):
            grid = 2
            n = grid * block
            out = np.zeros((n, 19), np.int64)
            fout = np.zeros(n)
            t0 = time.perf_counter()
            k[grid, block](out, fout)
            print(f"block {block}: {time.perf_counter() - t0:.2f} s")
            for i in range(n):
                lane, size = warp_of(i % block, block)
                L = range(size)
                scan = list(range(1, size + 1))
                off = 1
                while off < 32:
                    y = shuffle(scan, lambda ln: ln - off if ln >= off else None)
                    scan = [v + y[ln] if ln >= off else v for ln, v in enumerate(scan)]
                    off *= 2
                down = list(range(1, size + 1))
                bfly = list(range(1, size + 1))
                off = 16
                while off > 0:
                    y = shuffle(down, lambda ln: ln + off if ln + off < 32 else None)
                    down = [v + y[ln] for ln, v in enumerate(down)]
                    y = shuffle(bfly, lambda ln: ln ^ off)
                    bfly = [v + y[ln] for ln, v in enumerate(bfly)]
                    off //= 2
                exp = [
                    i32(bits(ln for ln in L if ln % 3 == 0)),
                    scan[lane], down[lane], bfly[lane],
                    51 if size > 5 else lane * 10 + 1,
                    int(size > 7), 1, int(size <= 3), 1, int(size <= 4),
                    (1 << lane) - 1,
                    i32(bits(ln for ln in L if ln // 8 == lane // 8)),
                    i32(bits(L)), 1,
                    i32(bits(L)), size,
                    11 if size > 10 else 0,
                    lane,
                    lane - 1 if lane >= 1 else lane,
                ]
                assert out[i].tolist() == exp, (block, i, out[i].tolist(), exp)
                assert fout[i] == (5.5 if size > 5 else lane + 0.5)
                if size == 32:   # the textbook results, where no lane is missing
                    assert scan[lane] == (lane + 1) * (lane + 2) // 2
                    assert bfly[lane] == 528 and down[0] == 528
            assert out[0, 14] == -1 and out[0, 15] == 32

        # 2-D block: warps are 32 consecutive linear ids (x + 16 * y)
        @cuda.jit
        def k2(out):
            t = cuda.threadIdx.x + 16 * cuda.threadIdx.y
            out[t, 0] = cuda.laneid
            out[t, 1] = cuda.shfl_sync(FULL, t, 0)
            out[t, 2] = cuda.ballot_sync(FULL, cuda.threadIdx.y % 2 == 0)
            out[t, 3] = cuda.warpsize
        out = np.zeros((64, 4), np.int64)
        k2[1, (16, 4)](out)
        for t in range(64):
            assert out[t].tolist() == [t % 32, t - t % 32, 0xFFFF, 32], (t, out[t])
        print("OK")
    ''')


def test_divergent_masks_and_exited_lanes():
    run_sim('''
        @cuda.jit
        def k(out, n):
            i = cuda.grid(1)
            if i >= n:
                return              # these lanes count as arrived in every later collective
            lane = cuda.laneid
            out[i, 0] = cuda.ballot_sync(FULL, True)
            if lane % 2 == 0:       # two disjoint masks at the same time
                out[i, 1] = cuda.ballot_sync(0x55555555, lane % 4 == 0)
            else:
                out[i, 1] = cuda.ballot_sync(0xAAAAAAAA, lane % 3 == 0)
            out[i, 2] = cuda.any_sync(FULL, i == n - 1)
            cuda.syncwarp()
            out[i, 3] = cuda.activemask()
            out[i, 4] = cuda.shfl_sync(FULL, i, 0)

        for block, grid, n in ((32, 1, 27), (48, 2, 75), (64, 2, 70)):
            out = np.full((grid * block, 5), -7, np.int64)
            k[grid, block](out, n)
            for i in range(grid * block):
                if i >= n:
                    assert (out[i] == -7).all()
                    continue
                t = i % block
                lane, size = warp_of(t, block)
                first = i - lane
                live = [ln for ln in range(size) if first + ln < n]
                par = [ln for ln in live if ln % 2 == lane % 2]
                exp = [i32(bits(live)),
                       i32(bits(ln for ln in par if (ln % 4 == 0 if lane % 2 == 0 else ln % 3 == 0))),
                       int(n - 1 - first in live), bits(live), first]
                assert out[i].tolist() == exp, (block, n, i, out[i].tolist(), exp)
        print("OK")
    ''')


def test_generations_loops_and_syncthreads_under_fast_switching():
    # a GIL switch every microsecond exposes races between the simulated threads
    run_sim('''
        sys.setswitchinterval(1e-6)

        @cuda.jit
        def loops(b_out, s_out, d_out):
            i = cuda.grid(1)
            lane = cuda.laneid
            for r in range(10):                 # 10 generations of the same two masks
                b_out[i, r] = cuda.ballot_sync(FULL, (lane + r) % 4 == 0)
                s_out[i, r] = cuda.shfl_sync(FULL, lane * 100 + r, (r * 7) % 32)
            # even lanes run 6 rounds on their mask, odd lanes 3 on theirs
            acc = 0
            if lane % 2 == 0:
                for r in range(6):
                    acc += cuda.shfl_xor_sync(0x55555555, lane + r, 2)
            else:
                for r in range(3):
                    acc += cuda.shfl_xor_sync(0xAAAAAAAA, lane * r, 2)
            d_out[i] = acc

        block = 64
        b_out = np.zeros((block, 10), np.int64)
        s_out = np.zeros((block, 10), np.int64)
        d_out = np.zeros(block, np.int64)
        t0 = time.perf_counter()
        loops[1, block](b_out, s_out, d_out)
        print(f"loops: {time.perf_counter() - t0:.2f} s")
        for i in range(block):
            lane = i % 32
            for r in range(10):
                assert b_out[i, r] == i32(bits(ln for ln in range(32) if (ln + r) % 4 == 0))
                assert s_out[i, r] == ((r * 7) % 32) * 100 + r
            p = lane ^ 2
            exp = sum(p + r for r in range(6)) if lane % 2 == 0 else sum(p * r for r in range(3))
            assert d_out[i] == exp, (i, d_out[i], exp)

        @cuda.jit
        def mixed(out, counts):
            sh = cuda.shared.array(64, np.int64)
            tid = cuda.threadIdx.x
            lane = cuda.laneid
            total = 0
            for r in range(5):
                total += cuda.popc(cuda.ballot_sync(FULL, (lane + r) % 4 == 0))
                sh[tid] = total
                cuda.syncthreads()
                total += sh[(tid + 32) % 64] - sh[tid]     # read the other warp's value
                cuda.syncthreads()
                if tid < 32:        # warp 0 shuffles while warp 1 waits at the barrier
                    total += cuda.shfl_down_sync(FULL, 1, 1) - 1
                    cuda.syncwarp()
                cuda.syncthreads()
            counts[tid] = cuda.syncthreads_count(cuda.any_sync(FULL, lane == 31))
            out[tid] = total

        out = np.zeros(64, np.int64)
        counts = np.zeros(64, np.int64)
        t0 = time.perf_counter()
        mixed[1, 64](out, counts)
        print(f"mixed: {time.perf_counter() - t0:.2f} s")
        assert (out == 40).all(), out
        assert (counts == 64).all(), counts
        print("OK")
    ''')


def test_activemask_converged_groups_and_warp_aggregation():
    run_sim('''
        @cuda.jit
        def groups(out, n):
            i = cuda.grid(1)
            if i >= n:
                return
            lane = cuda.laneid
            out[i, 0] = cuda.activemask()       # straight-line code: every live lane
            if lane < 5:                        # two branches: each gets its own lanes
                out[i, 1] = cuda.activemask()
            else:
                out[i, 1] = cuda.activemask()
            if lane % 4 == 1:                   # one branch; the rest go on to a ballot
                out[i, 2] = cuda.activemask()
            out[i, 3] = cuda.ballot_sync(FULL, True)

        for block, n in ((32, 32), (48, 48), (64, 45)):
            out = np.zeros((block, 4), np.int64)
            groups[1, block](out, n)
            for i in range(n):
                lane, size = warp_of(i, block)
                live = [ln for ln in range(size) if i - lane + ln < n]
                side = [ln for ln in live if (ln < 5) == (lane < 5)]
                exp = [bits(live), bits(side),
                       bits(ln for ln in live if ln % 4 == 1) if lane % 4 == 1 else 0,
                       i32(bits(live))]
                assert out[i].tolist() == exp, (block, i, out[i].tolist(), exp)

        # gunpy's warp-aggregated append: one atomic per converged group
        @cuda.jit
        def append(queue, length, leaders, trips):
            i = cuda.grid(1)
            for r in range(trips[i]):           # lanes loop different numbers of times
                item = i * 10 + r
                mask = cuda.activemask()
                leader = cuda.ffs(mask) - 1
                rank = cuda.popc(mask & cuda.lanemask_lt())
                base = 0
                if cuda.laneid == leader:
                    base = cuda.atomic.add(length, 0, cuda.popc(mask))
                    cuda.atomic.add(leaders, 0, 1)
                base = cuda.shfl_sync(mask, base, leader)
                queue[base + rank] = item

        block, grid = 48, 2
        trips = np.array([(i % 3 == 0) + (i % 7 == 0) for i in range(grid * block)])
        queue = np.full(200, -1, np.int64)
        length = np.zeros(1, np.int64)
        leaders = np.zeros(1, np.int64)
        append[grid, block](queue, length, leaders, trips)
        expect = sorted(i * 10 + r for i in range(grid * block) for r in range(trips[i]))
        assert sorted(queue[:length[0]].tolist()) == expect
        # far fewer atomics than items (4 warps; how lanes group depends on the schedule)
        print("items", len(expect), "atomics", leaders[0])
        assert leaders[0] < len(expect) // 2, leaders[0]

        simwarp.activemask_mode = "self"        # the conservative answer: the caller only
        out = np.zeros((32, 4), np.int64)
        groups[1, 32](out, 32)
        assert out[:, 0].tolist() == [1 << ln for ln in range(32)]
        simwarp.activemask_mode = "converged"
        print("OK")
    ''')


def test_misuse_raises_instead_of_hanging():
    run_sim('''
        def expect_error(kernel, grid, block, exc, text):
            try:  # a kernel that hangs instead fails by run_sim's timeout
                kernel[grid, block](np.zeros(grid * block, np.int64))
            except exc as e:
                assert text in str(e), str(e)
                return str(e)
            raise AssertionError(f"{kernel} did not raise")

        @cuda.jit
        def half_at_barrier(out):
            if cuda.laneid < 16:
                out[cuda.threadIdx.x] = cuda.ballot_sync(FULL, True)
            cuda.syncthreads()

        @cuda.jit
        def crossed_masks(out):
            if cuda.laneid < 16:
                out[cuda.threadIdx.x] = cuda.ballot_sync(FULL, True)
            else:
                out[cuda.threadIdx.x] = cuda.ballot_sync(0xFFFF0001, True)

        @cuda.jit
        def not_in_mask(out):
            out[cuda.threadIdx.x] = cuda.ballot_sync(1, True)

        @cuda.jit
        def mixed_intrinsics(out):
            if cuda.laneid % 2 == 0:
                out[cuda.threadIdx.x] = cuda.ballot_sync(FULL, True)
            else:
                out[cuda.threadIdx.x] = cuda.shfl_sync(FULL, 1, 0)

        @cuda.jit
        def lane_raises(out):
            if cuda.laneid == 7:
                raise ValueError("lane 7 failed")
            out[cuda.threadIdx.x] = cuda.ballot_sync(FULL, True)
            cuda.syncthreads()

        msg = expect_error(half_at_barrier, 1, 64, RuntimeError, "deadlock")
        assert "lanes 16-31 wait in syncthreads()" in msg, msg
        expect_error(crossed_masks, 1, 32, RuntimeError, "deadlock")
        expect_error(not_in_mask, 1, 32, RuntimeError, "does not contain its own lane")
        expect_error(mixed_intrinsics, 1, 32, RuntimeError, "undefined behaviour")
        expect_error(lane_raises, 1, 64, ValueError, "lane 7 failed")
        print("OK")
    ''')


def test_bit_intrinsics_match_the_device():
    run_sim('''
        @cuda.jit
        def k(a, out):
            i = cuda.threadIdx.x
            out[i, 0] = cuda.popc(a[i])
            out[i, 1] = cuda.ffs(a[i])
            out[i, 2] = cuda.clz(a[i])
            out[i, 3] = cuda.brev(a[i])

        vals = [0, 1, 2, 3, 6, 0x10, 12345678, 2**31 - 1, -1, -2, -2**31, -12345678]
        for dtype, width in ((np.int32, 32), (np.uint32, 32), (np.int64, 64), (np.uint64, 64)):
            a = np.array(vals).astype(dtype)
            out = np.zeros((len(vals), 4), np.uint64)
            k[1, len(vals)](a, out)
            for j, v in enumerate(vals):
                u = v & ((1 << width) - 1)                  # two's complement bits
                exp = [bin(u).count("1"), (u & -u).bit_length(), width - u.bit_length(),
                       int(format(u, f"0{width}b")[::-1], 2)]
                assert out[j].tolist() == exp, (dtype, v, out[j].tolist(), exp)
        print("OK")
    ''')


def test_shared_array_is_one_array_per_block_under_fast_switching():
    run_sim('''
        import sys, threading, time
        import numpy as np
        from importlib.metadata import version
        from numba import cuda
        from numba.cuda.simulator.kernelapi import FakeCUDAShared
        original = FakeCUDAShared.array
        sys.setswitchinterval(1e-6)

        class SlowDict(dict):
            """widens the window between the miss and the store, so a race is near certain"""
            def get(self, key, default=None):
                value = dict.get(self, key, default)
                time.sleep(0.002)
                return value

        def distinct_arrays(rounds, nthreads, slow):
            """most distinct arrays that nthreads threads got from one line in one block"""
            worst = 1
            for _ in range(rounds):
                shared = FakeCUDAShared(0)
                if slow:
                    shared._allocations = SlowDict()
                got = [None] * nthreads
                start = threading.Barrier(nthreads)
                def worker(t):
                    start.wait()
                    got[t] = shared.array(16, np.int64)
                ts = [threading.Thread(target=worker, args=(t,)) for t in range(nthreads)]
                for th in ts:
                    th.start()
                for th in ts:
                    th.join()
                worst = max(worst, len({id(g) for g in got}))
            return worst

        # 1. the simulator's own get-or-create races (the reason for the patch)
        unpatched = distinct_arrays(2, 8, slow=True)
        print("unpatched: up to", unpatched, "arrays for one shared array")
        if version("numba-cuda") == "0.30.4":
            assert unpatched > 1

        # 2. after install() every thread gets the same array, slow dict or not
        from gunpy.testing import simwarp
        assert simwarp.install()
        assert FakeCUDAShared.array is not original
        assert distinct_arrays(3, 16, slow=True) == 1
        assert distinct_arrays(30, 32, slow=False) == 1

        # 3. through a kernel: one shared array per block, one per source line
        @cuda.jit
        def k(out):
            sh = cuda.shared.array(32, np.int64)
            other = cuda.shared.array(32, np.int64)
            tid = cuda.threadIdx.x
            sh[tid] = tid + 100 * cuda.blockIdx.x
            other[tid] = -1
            cuda.syncthreads()
            out[cuda.grid(1)] = sh[(tid + 1) % 32]

        for rnd in range(8):
            out = np.zeros(64, np.int64)
            k[2, 32](out)
            assert out.tolist() == [(t + 1) % 32 + 100 * b for b in range(2) for t in range(32)]
        print("OK")
    ''', prelude=False)
