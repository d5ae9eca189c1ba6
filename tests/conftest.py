"""Test modes: the same tests run on the CPU backend, the CUDA simulator, a GPU, or as PTX.

    pytest                     # cpu: CPU backend (default)
    pytest --cuda-mode=sim     # CUDA kernels under numba's simulator, tiny graphs
    pytest --cuda-mode=ptx     # every kernel x functor compiled to PTX for sm_90
    pytest --cuda-mode=cubin   # the PTX tests, each kernel also linked to an sm_90 cubin
                               # (nvJitLink, as a launch does) and assembled by the oldest
                               # CUDA 13 ptxas; a per-kernel resource table at the end
    pytest --cuda-mode=gpu     # CUDA kernels on a real GPU (plus the CPU tests)

(``GUNPY_TEST_MODE`` does the same as ``--cuda-mode``.) The simulator must be
switched on before numba is first imported, so nothing here imports numba or
gunpy at module level.

Fixtures and markers:

* ``backend``: the backend name the mode tests ("cpu", or "cuda" in sim/gpu).
* ``@pytest.mark.sim``: a test that only makes sense on the CUDA target (runs in sim and gpu).
* ``@pytest.mark.ptx``: a test that compiles PTX (runs only in ptx and cubin modes).
* ``@pytest.mark.gpu``: needs a real GPU.
* ``@pytest.mark.large``: too big for the simulator (runs in cpu and gpu modes).
* unmarked tests run in cpu and gpu mode; with the ``backend`` fixture they also
  run in sim mode unless marked ``large``.
"""

import os

import pytest

MODES = ("cpu", "sim", "ptx", "cubin", "gpu")
#: modes that compile kernels without running them
COMPILE_ONLY = ("ptx", "cubin")


def pytest_addoption(parser):
    parser.addoption("--cuda-mode", choices=MODES, default=None,
                     help="which target the tests exercise (default: cpu)")
    parser.addoption("--fuzz", action="store_true",
                     help="long hypothesis profile for the differential fuzz tests, and "
                          "the extended runs CI leaves out (every blas semiring, gunpy.dist "
                          "on 4 ranks) (also GUNPY_FUZZ=1)")


def _mode(config):
    return config.getoption("--cuda-mode") or os.environ.get("GUNPY_TEST_MODE", "cpu")


def pytest_configure(config):
    mode = _mode(config)
    if mode not in MODES:
        raise pytest.UsageError(f"unknown test mode {mode!r}; choose from {MODES}")
    if mode == "sim":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    import numba  # first import: the simulator switch takes effect here
    if bool(numba.config.ENABLE_CUDASIM) != (mode == "sim"):
        raise pytest.UsageError("numba was imported before conftest could set "
                                "NUMBA_ENABLE_CUDASIM; run the modes in separate processes")
    if mode == "sim":
        # the simulator's missing warp intrinsics, and a short GIL switch interval
        # (every simulated thread is a Python thread, every barrier a GIL hand-off:
        # ~4x faster barriers, more interleavings). Test machinery only: gunpy
        # itself installs neither.
        from gunpy.testing import install_simulator_shims
        install_simulator_shims(switch_interval=5e-4)
    if mode == "gpu":
        from numba import cuda
        if not cuda.is_available():
            raise pytest.UsageError("--cuda-mode=gpu needs a CUDA GPU and driver")
    if mode == "cubin":
        _configure_cubin()
    config._gunpy_mode = mode
    env = os.environ.get("GUNPY_FUZZ", "")
    fuzz = config.getoption("--fuzz") or bool(env)
    _hypothesis_profiles(mode, fuzz, int(env) if env.isdigit() and int(env) > 1 else 5000)


def _hypothesis_profiles(mode, fuzz, fuzz_examples=5000):
    """``ci``: a fixed, fast profile (fewer, smaller examples in the simulator); ``fuzz``:
    ``fuzz_examples`` per test (``GUNPY_FUZZ=200000`` runs for hours)."""
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return
    settings.register_profile("ci", max_examples=3 if mode == "sim" else 30, derandomize=True,
                              deadline=None, print_blob=True)
    settings.register_profile("fuzz", max_examples=fuzz_examples, deadline=None, print_blob=True,
                              suppress_health_check=list(HealthCheck))
    settings.load_profile("fuzz" if fuzz else "ci")


def pytest_report_header(config):
    return f"gunpy test mode: {config._gunpy_mode}"


def pytest_collection_modifyitems(config, items):
    mode = config._gunpy_mode
    skip = {
        "sim": pytest.mark.skip(reason="CUDA-target test (run with --cuda-mode=sim or gpu)"),
        "ptx": pytest.mark.skip(reason="PTX test (run with --cuda-mode=ptx)"),
        "gpu": pytest.mark.skip(reason="needs a real GPU (--cuda-mode=gpu)"),
        "large": pytest.mark.skip(reason="too large for the CUDA simulator"),
        "host": pytest.mark.skip(reason="backend-independent test (runs in cpu mode)"),
    }
    for item in items:
        marks = {m.name for m in item.iter_markers()}
        uses_backend = "backend" in getattr(item, "fixturenames", ())
        if mode in COMPILE_ONLY:
            if "ptx" not in marks:
                item.add_marker(skip["host"] if not marks & {"sim", "gpu"} else skip["sim"])
            continue
        if "ptx" in marks:
            item.add_marker(skip["ptx"])
        elif "gpu" in marks and mode != "gpu":
            item.add_marker(skip["gpu"])
        elif mode == "sim":
            if "large" in marks:
                item.add_marker(skip["large"])
            elif not ("sim" in marks or uses_backend):
                item.add_marker(skip["host"])
        elif mode == "cpu" and "sim" in marks:
            item.add_marker(skip["sim"])


@pytest.fixture(scope="session")
def mode(request):
    return request.config._gunpy_mode


@pytest.fixture(scope="session")
def backend(mode):
    """The backend the current mode tests."""
    return {"cpu": "cpu", "sim": "cuda", "gpu": "cuda", "ptx": "cuda", "cubin": "cuda"}[mode]


@pytest.fixture(params=["serial", "chunked"])
def cpu_split(request, backend, monkeypatch):
    """CPU work as shipped (thin frontiers serial), or cut into as many chunks as possible.

    ``chunked`` runs the parallel multi-chunk kernels (private output slices,
    compaction, atomic visited marks) on graphs far too small to reach them
    otherwise, with no fused near/far steps or BFS levels; it is skipped on the CUDA backend, which has no chunks.
    """
    if request.param == "chunked":
        if backend != "cpu":
            pytest.skip("CPU work splitting only")
        from gunpy.backends.cpu import CpuBackend
        monkeypatch.setattr(CpuBackend, "serial_below", 0)
        monkeypatch.setattr(CpuBackend, "force_min_chunk", 1)
        monkeypatch.setattr(CpuBackend, "fuse_below", 0)  # no fused steps or levels either
    return request.param


@pytest.fixture(scope="session")
def ptx_backend(mode):
    if mode not in COMPILE_ONLY:
        pytest.skip("PTX backend only in --cuda-mode=ptx / cubin")
    from gunpy.testing import PtxBackend
    return PtxBackend(cc=(9, 0))


@pytest.fixture(scope="session")
def small(mode):
    """True when graphs must stay tiny (the simulator)."""
    return mode == "sim"


# ----------------------------------------------------------------------------- cubin mode
def _configure_cubin():
    """Every PtxBackend links its kernels (nvJitLink) and assembles them with the oldest
    CUDA 13 ptxas (fetched once from PyPI; ``GUNPY_PTXAS`` names another)."""
    from gunpy.testing import PtxBackend, oldest_ptxas
    ptxas = oldest_ptxas()
    if ptxas is None:
        msg = ("--cuda-mode=cubin: no ptxas of CUDA 13.0 (pip could not fetch nvidia-cuda-nvcc; "
               "set GUNPY_PTXAS=/path/to/ptxas)")
        if os.environ.get("CI"):
            raise pytest.UsageError(msg)
        import warnings
        warnings.warn(msg + ": linking with nvJitLink only")
    PtxBackend.defaults.update(link=True, ptxas=ptxas)


def _cubin_records(config):
    # this process's linked kernels, and those pytest-xdist workers handed back
    from gunpy.testing import machine_code_records
    records = dict(getattr(config, "_gunpy_worker_records", {}))
    records.update(machine_code_records())
    return records


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    # pytest-xdist: a worker's cubin records (its pytest_sessionfinish put them there)
    out = getattr(node, "workeroutput", {}).get("gunpy_cubin")
    if out:
        import json
        cfg = node.config
        cfg._gunpy_worker_records = {**getattr(cfg, "_gunpy_worker_records", {}),
                                     **json.loads(out)}


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if getattr(config, "_gunpy_mode", None) != "cubin":
        return
    from gunpy.testing import PtxBackend, machine_code_table, ptxas_version
    rows, seconds = machine_code_table(_cubin_records(config))
    ptxas = PtxBackend.defaults["ptxas"]
    variants = sum(r[1] for r in rows)
    head = (f"sm_90 machine code: {len(rows)} kernels, {variants} variants linked by nvJitLink"
            + (f", assembled by ptxas {'.'.join(map(str, ptxas_version(ptxas)))} (PTX capped to "
               f"its ISA)" if ptxas else "") + f", {seconds:.1f} s")
    lines = ["| kernel | variants | registers | spills (B) | local (B) | static shared (B) "
             "| largest block | block used | ptxas registers |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    terminalreporter.write_sep("-", head)
    for line in lines:
        terminalreporter.write_line(line)
    out = os.environ.get("GUNPY_CUBIN_REPORT")
    if out:
        with open(out, "w") as f:
            f.write(f"# {head}\n\n" + "\n".join(lines) + "\n")


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if getattr(config, "_gunpy_mode", None) != "cubin":
        return
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: hand the records over
        import json
        from gunpy.testing import machine_code_records
        config.workeroutput["gunpy_cubin"] = json.dumps(machine_code_records())
        return
    # a cubin run that linked nothing proved nothing
    if exitstatus == 0 and session.testscollected and not _cubin_records(config):
        session.exitstatus = 1
