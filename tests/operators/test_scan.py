"""The device-wide scan (``gunpy.operators.scan``): every loader against NumPy at each level's edge.

A tile is ``block_size * items`` inputs; the inputs' tile sums are scanned by one
block when they fit one tile, and are otherwise reduced again level by level.
Under the simulator (blocks of 32) the shipped ``ITEMS = 4`` makes tiles of 128,
and ``items=1`` tiles of 32, so the sizes below cross every boundary cheaply:
one tile, several, exactly one top tile of sums (``tile ** 2``) and one more
level (``tile ** 2 + 1``). The compile-only backend walks the levels of a 2**31
scan (three levels of sums) and compiles every kernel of every loader; the CPU
scan is checked at its chunk edges.
"""

import numpy as np
import pytest

from gunpy.operators import scan


def _inputs(kind, n, seed=0):
    """``(a, b, values)``: a loader's two arrays and the values it must read."""
    rng = np.random.default_rng(seed + n)
    if kind == "array":
        values = rng.integers(0, 1000, n).astype(np.int64)
        return values, values, values
    if kind == "degrees":
        offsets = np.concatenate([[0], np.cumsum(rng.integers(0, 9, 50))]).astype(np.int64)
        b = rng.integers(0, 50, n).astype(np.int32)
        return offsets, b, np.diff(offsets)[b]
    if kind == "nonzero":
        a = (rng.integers(0, 3, n) - 1).astype(np.int8)
        return a, a, (a != 0).astype(np.int64)
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    return a, a, np.array([bin(int(x)).count("1") for x in a], dtype=np.int64)


def _check(be, kind, n, items):
    a, b, values = _inputs(kind, n)
    da, db = be.asarray(a), be.asarray(b)
    out = be.full(max(n, 1), -7, np.int64)
    expect = np.concatenate([[0], np.cumsum(values)[:-1]]) if n else np.zeros(0, np.int64)
    assert scan.exclusive_scan(be, kind, n, da, db, out, items=items) == int(values.sum())
    assert np.array_equal(be.to_host(out)[:n], expect)
    assert scan.total(be, kind, n, da, db, items=items) == int(values.sum())


def _poison(be):
    """Fill every workspace the scans left with garbage: the next scan must write each
    slot it reads."""
    for name, arr in getattr(be, "_workspace", {}).items():
        if name.startswith("scan."):
            be.fill(arr, -(1 << 40))


@pytest.fixture(scope="module")
def sim():
    from gunpy.backends.cuda import CudaBackend
    be = CudaBackend(block_size=32)  # the simulator's default; a GPU's is 256
    assert be.block_size == 32
    return be


@pytest.mark.sim
@pytest.mark.parametrize("kind", scan.LOADERS)
@pytest.mark.parametrize("n", [0, 1, 31, 32, 33, 1023, 1024, 1025])
def test_one_item_tiles_cross_every_level(sim, kind, n):
    # tiles of 32: 1 tile, 2 tiles, 32 tiles (one top tile of sums), 33 (a second level)
    _poison(sim)
    _check(sim, kind, n, items=1)


@pytest.mark.sim
@pytest.mark.parametrize("kind", scan.LOADERS)
@pytest.mark.parametrize("n", [127, 128, 129, 4095, 4096, 4097])
def test_shipped_tiles(sim, kind, n):
    # tiles of 128; 4096 = tile * block
    _poison(sim)
    _check(sim, kind, n, items=scan.ITEMS)


@pytest.mark.sim
def test_shipped_tiles_second_level(sim):
    # 16,385 = 128 ** 2 + 1: 129 tile sums, more than the top's one tile
    _poison(sim)
    _check(sim, "nonzero", 128 ** 2 + 1, items=scan.ITEMS)


@pytest.mark.sim
def test_several_warps_per_block():
    from gunpy.backends.cuda import CudaBackend
    be = CudaBackend(block_size=64)
    for n in (64 * 64 + 1, 100):  # a second level, then a small scan in the grown workspaces
        _poison(be)
        _check(be, "array", n, items=1)


@pytest.mark.sim
def test_no_allocation_and_three_launches_per_scan(sim):
    n = 1025  # two levels at items=1
    a = np.arange(n, dtype=np.int64)
    da, out = sim.asarray(a), sim.empty(n, np.int64)
    scan.exclusive_scan(sim, "array", n, da, da, out, items=1)
    for m, launches, total_launches in ((n, 5, 3), (1024, 3, 2), (7, 3, 2)):
        before = sim.counts()
        assert scan.exclusive_scan(sim, "array", m, da, da, out, items=1) == m * (m - 1) // 2
        mid = sim.counts()
        assert scan.total(sim, "array", m, da, da, items=1) == m * (m - 1) // 2
        after = sim.counts()
        assert mid.allocs == before.allocs and after.allocs == mid.allocs
        assert (mid.launches - before.launches, mid.syncs - before.syncs) == (launches, 1)
        assert (after.launches - mid.launches, after.syncs - mid.syncs) == (total_launches, 1)


# ----------------------------------------------------------------------------- compile only
def _recording_backend(block_size=256):
    from gunpy.testing import PtxBackend

    be = PtxBackend(cc=(9, 0), block_size=block_size)
    launched = []
    run = be.run

    def recording_run(kernel, items, *args, **kw):
        launched.append((kernel.py_func.__name__, kw.get("blocks")))
        return run(kernel, items, *args, **kw)

    be.run = recording_run
    return be, launched


@pytest.mark.ptx
@pytest.mark.parametrize("kind", scan.LOADERS)
def test_every_level_kernel_compiles(kind):
    # nothing runs: arrays of one item stand for a 2**31-item input (levels of 2 M,
    # 2 K and 2 sums)
    be, launched = _recording_backend()
    a, b, _ = _inputs(kind, 1)
    out = np.zeros(1, np.int64)
    scan.exclusive_scan(be, kind, 1 << 31, a, b, out)
    assert launched == [("tile_sums", None), ("tile_sums", None), ("tile_sums", None),
                        ("scan_sums", 1), ("spread_sums", None), ("spread_sums", None),
                        ("tile_scan", None)]
    sizes = sorted(arr.shape[0] for name, arr in be._workspace.items() if name.startswith("scan"))
    assert sizes == [3, 2049, 2097153]
    launched.clear()
    scan.total(be, kind, 1 << 31, a, b)
    assert [name for name, _ in launched] == ["tile_sums"] * 3 + ["scan_sums"]
    names = {name.rsplit(".", 1)[-1] for name in be.kernel_names()}
    assert names >= {"tile_sums", "tile_scan", "scan_sums", "spread_sums"}
    for ptx in be.compiled.values():
        assert ".target sm_90" in ptx


# ----------------------------------------------------------------------------- CPU
@pytest.mark.parametrize("n,nchunks", [(0, 1), (1, 4), (5, 4), (8, 4), (9, 4), (1000, 7)])
def test_cpu_scan_matches_numpy(n, nchunks):
    values = np.random.default_rng(n).integers(0, 50, n).astype(np.int64)
    out = np.full(n, -7, np.int64)
    assert scan.cpu_exclusive_scan(values, n, out, nchunks) == int(values.sum())
    assert np.array_equal(out, np.concatenate([[0], np.cumsum(values)[:-1]])[:n])
