"""The CUDA launch path: the cached launcher, quiet launches, counted uploads (issue 14).

Without a GPU (cpu mode) the launcher's compiled path runs against numba's own
``DeviceNDArray`` over fake pointers, a stand-in compiled kernel and a recorded
driver call (:mod:`gunpy.bench.launch`'s stand-ins): the values it hands the
driver are compared with numba-cuda's own conversion. Under the simulator (and
on a GPU) kernels run: results, launch/sync/upload counts and warnings.
"""

import ctypes
import warnings
from collections import namedtuple

import numba
import numpy as np
import pytest
from numba import cuda

import gunpy
from gunpy.backends import launcher as gl
from gunpy.testing import nasty_graphs

from _helpers import ROOT

sim = pytest.mark.sim
host = pytest.mark.skipif(bool(numba.config.ENABLE_CUDASIM), reason="no-driver path")


def _numba_values(dispatcher, args):
    """What numba-cuda's launch hands the driver for ``args`` (its ``_prepare_args``)."""
    argtypes = tuple(dispatcher.typeof_pyval(a) for a in args)
    kernel = dispatcher.overloads[argtypes]
    out = []
    for ty, v in zip(argtypes, args):
        kernel._prepare_args(ty, v, 0, [], out)
    return out


def _plain(values):
    return [(type(v).__name__, v.value) if isinstance(v, ctypes._SimpleCData) else v
            for v in values]


@pytest.fixture
def driver(monkeypatch):
    """The driver call recorded instead of made: a list of ``(config, kernel, values)``."""
    from gunpy.bench import launch as bl
    calls = []
    record = lambda stream, config, kernel, *values: calls.append((config, kernel, values))  # noqa
    import numba.cuda.dispatcher as nd
    monkeypatch.setattr(nd, "launch", record)
    monkeypatch.setattr(gl, "_driver_launch", record)
    return SimpleNS(calls=calls, fake=bl._fake_array, stand_in=bl._stand_in_kernel)


class SimpleNS:
    def __init__(self, **kw):
        self.__dict__.update(kw)


@host
@pytest.mark.parametrize("values", [10, 100, 166])
def test_packed_values_equal_numbas(values, driver):
    """The generated packing function gives the driver exactly numba-cuda's values."""

    from gunpy.bench.launch import kernel_arguments
    pyfunc, args = kernel_arguments(values, driver.fake)
    k = cuda.jit(pyfunc)
    driver.stand_in(k, args)
    pack = gl.packer(tuple(k.typeof_pyval(a) for a in args), gl.signature_key(args))
    got = pack(*args)
    assert _plain(got) == _plain(_numba_values(k, args))
    assert len(got) == values

Small = namedtuple("Small", "a b")


def _small_kernel(out, n, x, flag, data):
    pass


@host
def test_launcher_types_once_per_signature(driver, monkeypatch):
    k = cuda.jit(_small_kernel)
    args = (driver.fake(8, np.int32), 8, 0.5, True, Small(driver.fake(8, np.float64), 3))
    driver.stand_in(k, args)
    typed = []
    original = type(k).typeof_pyval
    monkeypatch.setattr(type(k), "typeof_pyval",
                        lambda self, v: typed.append(v) or original(self, v))
    la = gl.Launcher(k)
    la.launch(2, 64, args)
    first = len(typed)
    assert first > 0 and la.misses == 1 and isinstance(la.last, gl._Compiled)
    la.launch(3, 64, args)
    assert len(typed) == first, "a second launch of the same types typed its arguments"
    assert la.misses == 1 and la.hits == 1
    # the compiled path: the kept kernel handle, this launch's grid, numba's values
    config, handle, values = driver.calls[-1]
    assert handle.name == "stand_in" and config.grid == (3, 1, 1) and config.block == (64, 1, 1)
    assert _plain(values) == _plain(_numba_values(k, args))
    # new types (an int32 count, a float32 array in the tuple): a new entry, numba's values
    other = (args[0], np.int32(8), 0.5, True, Small(driver.fake(8, np.float32), 3))
    driver.stand_in(k, other)
    assert la.last.pack(*other) is None  # the kept signature refuses them
    la.launch(2, 32, other)
    la.launch(2, 32, other)
    assert la.misses == 2 and la.hits == 2 and len(la.entries) == 2
    assert _plain(driver.calls[-1][2]) == _plain(_numba_values(k, other))
    assert driver.calls[-1][2][7].__class__ is ctypes.c_int32
    la.launch(2, 32, args)  # back to the first: found by its key, not typed again
    assert la.misses == 2 and la.hits == 3


@host
def test_an_empty_tuple_packs_to_no_values(driver):
    """A functor's data can be an empty tuple (a problem with no fields): it passes nothing."""
    k = cuda.jit(_small_kernel)
    args = (driver.fake(8, np.int32), 8, 0.5, True, ())
    driver.stand_in(k, args)
    argtypes = tuple(k.typeof_pyval(a) for a in args)
    pack = gl.packer(argtypes, gl.signature_key(args))
    assert _plain(pack(*args)) == _plain(_numba_values(k, args))
    gl.check_launchable(k, args, argtypes)  # what the compile-only modes check: the same
    la = gl.Launcher(k)
    la.launch(1, 32, args)
    la.launch(1, 32, args)
    assert isinstance(la.last, gl._Compiled) and la.hits == 1


@pytest.mark.parametrize("bad, where", [(None, "argument 4 is None"),
                                        ("any", "argument 4 is 'any'"),
                                        (Small(None, 3), "argument 4.a is None"),
                                        ((1, ("x",)), r"argument 4\[1\]\[0\] is 'x'")])
def test_what_no_device_launch_can_pass_is_a_clear_error(bad, where):
    """None and strings type and run under the simulator, but numba-cuda cannot pass them to
    a kernel on a device: every mode refuses them at the launch, naming the argument."""
    k = cuda.jit(_small_kernel)
    with pytest.raises(TypeError, match=f"_small_kernel: {where}, which numba-cuda cannot"):
        gl.check_launchable(k, (np.zeros(8, np.int32), 8, 0.5, True, bad))
    gl.check_launchable(k, (np.zeros(8, np.int32), 8, 0.5, True, Small(np.zeros(2), 3)))


@host
def test_small_copies_are_the_driver_calls_at_the_arrays_pointer():
    """A few items up or down go straight to cuMemcpyHtoDAsync / cuMemcpyDtoHAsync at the
    array's pointer plus the offset, on the launch stream (a read then waits for it):
    checked with host memory standing in for the device's, the driver calls as memmoves."""
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    from gunpy.bench.launch import _FakeMemory
    mem = np.zeros(16, np.int64)
    arr = DeviceNDArray((16,), (8,), np.int64, gpu_data=_FakeMemory(mem.ctypes.data))
    calls = []

    class Driver:
        def cuMemcpyHtoDAsync(self, dst, src, size, handle):
            calls.append(("htod", dst, size, handle))
            ctypes.memmove(dst, src, size)

        def cuMemcpyDtoHAsync(self, dst, src, size, handle):
            calls.append(("dtoh", src, size, handle))
            ctypes.memmove(dst, src, size)

        def cuStreamSynchronize(self, handle):
            calls.append(("sync", handle))

    copies = object.__new__(gl.DriverCopies)
    copies.driver, copies.handle = Driver(), 77
    copies.landing = np.zeros(gl.DriverCopies.LANDING, np.uint8)
    copies.landing_ptr = copies.landing.ctypes.data
    copies.to_device(arr, 5, np.array([3, -1, 9], np.int64))
    assert mem.tolist()[4:9] == [0, 3, -1, 9, 0]
    assert calls[-1] == ("htod", mem.ctypes.data + 40, 24, 77)
    got = copies.to_host(arr, 6, 2)
    assert got.tolist() == [-1, 9] and got.dtype == np.int64
    assert calls[-2:] == [("dtoh", mem.ctypes.data + 48, 16, 77), ("sync", 77)]
    mem[6] = 5
    assert got[0] == -1  # a copy, not a view of the landing buffer


@host
def test_launches_never_warn_and_leave_users_kernels_alone(driver):
    k = cuda.jit(_small_kernel)
    args = (driver.fake(8, np.int32), 8, 0.5, True, Small(driver.fake(8, np.float64), 3))
    driver.stand_in(k, args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gl.Launcher(k).launch(1, 32, args)
        gl.Launcher(k).launch(1, 32, args)  # first launches: numba's path, quietly
    assert caught == []
    assert numba.config.CUDA_LOW_OCCUPANCY_WARNINGS  # the user's setting untouched
    user = cuda.jit(_small_kernel)
    driver.stand_in(user, args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        user[1, 32](*args)
    assert any("Grid size 1" in str(w.message) for w in caught)


@host
def test_the_launch_benchmark_measures_both_paths():
    from gunpy.bench.launch import markdown, measure
    device = "gpu" if cuda.is_available() else "stub"
    rows = measure((10, 40), reps=20, repeats=1, device=device)
    assert [v for v, _ in rows] == [10, 40]
    for _, best in rows:
        assert set(best) == {"numba", "launcher", "key", "pack"} | ({"stub"} if device == "stub" else set())
        assert all(0 < t < 1e5 for t in best.values())
        assert best["launcher"] < best["numba"]  # ~10x apart: a regression, not noise
    table = markdown(rows, device)
    assert table.count("\n") == 3 and "| 40 |" in table


# -- on the simulator (and a GPU) ------------------------------------------------------------------
def _add(arr, value, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        arr[i] += value


@pytest.fixture
def cuda_backend():
    from gunpy.backends.cuda import CudaBackend
    return CudaBackend()


@sim
def test_backend_runs_through_the_cache(cuda_backend):
    from gunpy.backends.cuda import kernel
    be = cuda_backend
    add = kernel(_add)
    arr = be.asarray(np.arange(40, dtype=np.int64))
    be.run(add, 40, arr, 2, 40)
    be.run(add, 40, arr, 3, 40)
    la = gl.launcher(add)
    assert la.misses == 1 and la.hits == 1
    assert be.to_host(arr).tolist() == [i + 5 for i in range(40)]
    floats = be.asarray(np.zeros(5, dtype=np.float32))
    be.run(add, 5, floats, np.float32(1.5), 5)  # new types: a new entry, compiled as before
    assert la.misses == 2 and be.to_host(floats).tolist() == [1.5] * 5
    assert be.launches == 3


@sim
def test_uploads_are_staged_and_counted(cuda_backend):
    from gunpy.backends.cuda import StagingRing
    be = cuda_backend
    arr = be.empty(64, np.int64)
    be.fill(arr, 0)
    start = be.counts()
    be.write(arr, 3, 7)
    be.copy_in(arr, 10, np.array([1, 2, 3], dtype=np.int64))
    c = be.counts()
    assert (c.uploads - start.uploads, c.syncs - start.syncs) == (2, 0)
    # more than half the ring: not staged, a blocking copy (a sync)
    big = np.arange(20, dtype=np.int64)
    be._ring = StagingRing(be, nbytes=128)  # halves of 64 bytes
    be.copy_in(arr, 40, big)
    c2 = be.counts()
    assert (c2.uploads - c.uploads, c2.syncs - c.syncs) == (0, 1)
    host_ = be.to_host(arr)
    assert host_[3] == 7 and host_[10:13].tolist() == [1, 2, 3]
    assert host_[40:60].tolist() == big.tolist()

@sim
def test_ring_waits_are_syncs(cuda_backend):
    from gunpy.backends.cuda import StagingRing
    be = cuda_backend
    arr = be.empty(8, np.int64)
    ring = be._ring = StagingRing(be, nbytes=64)  # halves of 32 bytes: two 8-byte values each
    syncs = be.syncs
    for i in range(8):
        be.write(arr, i % 8, i)
    # halves entered: 1 (first wrap, nothing to wait for), 0, 1, ... each later one waits
    assert ring.current == 1 and be.syncs - syncs == 2
    assert be.to_host(arr).tolist() == list(range(8))


@sim
def test_small_asarray_is_an_upload_big_one_a_sync(cuda_backend):
    be = cuda_backend
    c = be.counts()
    be.asarray(np.array([5, 0], dtype=np.int64))
    c2 = be.counts()
    assert (c2.uploads - c.uploads, c2.syncs - c.syncs, c2.allocs - c.allocs) == (1, 0, 1)
    got = be.asarray(np.arange(1 << 16, dtype=np.int64))  # 512 KiB: a graph's array
    c3 = be.counts()
    assert (c3.uploads - c2.uploads, c3.syncs - c2.syncs) == (0, 1)
    assert be.read(got, 12345) == 12345


GRAPH = nasty_graphs(small=True)["preferential_hubs"]


@sim
@pytest.mark.parametrize("run", ["bfs", "bfs pull", "sssp", "cc"])
def test_no_warnings_in_normal_use(run):
    calls = {"bfs": lambda: gunpy.bfs(GRAPH, 0, backend="cuda"),
             "bfs pull": lambda: gunpy.bfs(GRAPH, 0, direction="pull", backend="cuda"),
             "sssp": lambda: gunpy.sssp(GRAPH, 0, backend="cuda"),
             "cc": lambda: gunpy.cc(GRAPH, backend="cuda")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = calls[run]()
    assert [str(w.message) for w in caught] == []
    assert result.stats.iterations >= 1


@host
def test_gunpy_bench_launch_prints_the_table(capsys):
    from gunpy.cli import main
    assert main(["bench", "--launch", "--reps", "5", "--repeats", "1", "--values", "10,20"]) == 0
    out = capsys.readouterr().out
    assert "| parameter values |" in out and "| 10 |" in out and "| 20 |" in out


def test_the_launcher_can_be_switched_to_numbas_path():
    from gunpy.backends.launcher import numba_only
    assert numba_only({"GUNPY_LAUNCHER": "numba"}) is True
    assert numba_only({"GUNPY_LAUNCHER": "cached"}) is False
    assert numba_only({}) is False
    with pytest.raises(ValueError, match="GUNPY_LAUNCHER"):
        numba_only({"GUNPY_LAUNCHER": "fast"})
    assert numba_only({"GUNPY_LAUNCHER": "gunpy"}) is False
    assert numba_only({"GUNPY_LAUNCHER": " Numba "}) is True
    assert numba_only({"GUNPY_LAUNCHER": ""}) is False


@host
def test_both_launch_paths_hand_the_driver_the_same_launch(driver, monkeypatch):
    """GUNPY_LAUNCHER=numba: every launch is numba's own (no compiled entry), and the driver
    gets the same grid, kernel and values as through gunpy's packing."""
    k = cuda.jit(_small_kernel)
    args = (driver.fake(8, np.int32), 8, 0.5, True, Small(driver.fake(8, np.float64), 3))
    driver.stand_in(k, args)
    calls = {}
    for path in ("gunpy", "numba"):
        monkeypatch.setattr(gl, "_NUMBA_ONLY", path == "numba")
        assert gl.launch_path() == path
        la = gl.Launcher(k)
        start = len(driver.calls)
        for blocks in (2, 3, 3):
            la.launch(blocks, 64, args)
        assert la.misses == 1 and la.hits == 2
        assert all(isinstance(e, gl._NumbaPath) for e in la.entries.values()) == (path == "numba")
        calls[path] = [(c.grid, c.block, h.name, _plain(v)) for c, h, v in driver.calls[start:]]
    assert len(calls["gunpy"]) == 3 and calls["gunpy"] == calls["numba"]


def test_gunpy_launcher_is_read_at_import():
    import os
    import subprocess
    import sys
    if os.environ.get("GUNPY_LAUNCHER", "") in ("", "gunpy", "cached"):
        assert gl.launch_path() == "gunpy"
    code = "from gunpy.backends import launcher as l; print(l.launch_path())"
    env = dict(os.environ, GUNPY_LAUNCHER="numba")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "numba", p.stderr
    env = dict(os.environ, GUNPY_LAUNCHER="fast")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode != 0 and "GUNPY_LAUNCHER='fast'; valid: 'gunpy'" in p.stderr


# -- the numba-cuda versions the CUDA backend runs on ------------------------------------------
@pytest.mark.parametrize("installed, why", [
    ("0.30.1", "CUDA_CORE_GE_1_0 appeared in 0.30.2"),
    ("0.26.0", "second launch fails"),
    ("0.25.3", "fall back silently"),
    ("0.23.0", "creating the CUDA backend fails"),
    ("0.31.0", "untested"),
    ("0.31.0rc1", "untested"),
    ("not-a-version", "cannot be read"),
])
def test_an_unsupported_numba_cuda_is_named_with_the_supported_range(installed, why, monkeypatch):
    from gunpy.backends import cuda as gc
    monkeypatch.delenv("GUNPY_UNSUPPORTED_NUMBA_CUDA", raising=False)
    monkeypatch.setattr(gc, "_installed_numba_cuda", lambda: installed)
    with pytest.raises(gc.UnsupportedNumbaCuda) as info:
        gc.CudaBackend()  # refused before it touches a device (none here, or the simulator)
    msg = str(info.value)
    assert f"numba-cuda {installed}:" in msg and "numba-cuda >=0.30.2,<0.31" in msg
    assert why in msg and "bench/carry-wheels" in msg


@pytest.mark.parametrize("installed", ["0.30.2", "0.30.4", "0.30.10"])
def test_supported_numba_cuda_versions_pass(installed):
    from gunpy.backends.cuda import check_numba_cuda
    assert check_numba_cuda(installed) == installed


def test_a_numpy_without_row_stack_is_named_with_its_fix(monkeypatch):
    """NumPy 2.5 removed np.row_stack, which numba-cuda 0.30 calls as its CUDA target loads
    (the first GPU day's image had NumPy 2.5.2): refused before a kernel, with the fix."""
    from gunpy.backends import cuda as gc
    monkeypatch.delenv("GUNPY_UNSUPPORTED_NUMBA_CUDA", raising=False)
    monkeypatch.delattr(np, "row_stack", raising=False)
    with pytest.raises(gc.UnsupportedNumbaCuda, match=r"np.row_stack.*pip install 'numpy<2.5'"):
        gc.check_numba_cuda("0.30.4")


def test_the_version_check_can_be_overridden_with_a_warning(monkeypatch):
    from gunpy.backends.cuda import check_numba_cuda
    monkeypatch.setenv("GUNPY_UNSUPPORTED_NUMBA_CUDA", "1")
    with pytest.warns(RuntimeWarning, match="numba-cuda 0.31.1: this release is untested"):
        assert check_numba_cuda("0.31.1") == "0.31.1"


def test_setup_cfg_pins_the_supported_numba_cuda():
    import os
    import re
    from gunpy.backends.cuda import NUMBA_CUDA_SUPPORTED
    lo, hi = NUMBA_CUDA_SUPPORTED
    root = str(ROOT)
    with open(os.path.join(root, "setup.cfg")) as fh:
        pins = re.findall(r"^\s*numba-cuda(?:\[\w+\])?(\S+)\s*$", fh.read(), re.M)
    assert len(pins) == 3  # install_requires, cu13, cu12
    assert set(pins) == {f">={'.'.join(map(str, lo))},<{hi[0]}.{hi[1]}"}


def test_gunpy_info_reports_an_unsupported_numba_cuda(monkeypatch, capsys):
    from gunpy import cli
    from gunpy.backends import cuda as gc
    monkeypatch.delenv("GUNPY_UNSUPPORTED_NUMBA_CUDA", raising=False)
    monkeypatch.setattr(gc, "_installed_numba_cuda", lambda: "0.28.0")
    rc = cli.main(["info"])
    out = capsys.readouterr().out
    assert "unsupported: gunpy's CUDA backend supports numba-cuda >=0.30.2,<0.31" in out
    from gunpy.backends import cuda_status
    assert rc == (1 if cuda_status()[0] else 0)  # refused where a GPU (or the simulator) is
