"""bench/gpu-day without a GPU: its dry run proves the phases, the limits, the budget and the bundle.

``--dry-run cpu`` runs every phase of the GPU day on the CPU backend with tiny graphs
(``--dry-run sim``: the CUDA backend under numba's simulator); a stand-in
compute-sanitizer prints racecheck hazards in compute-sanitizer's format, so the
sanitizer phase and its filter run too. What only a GPU can prove (the kernels, the
launch paths, the timings, the real sanitizer) is not proven here. The racecheck filter
and the bundle's limits are also tested in-process.
"""

import importlib.machinery
import importlib.util
import os
import re
import signal
import subprocess
import sys
import tarfile
import time

import pytest

import _helpers

ROOT = str(_helpers.ROOT)
SCRIPT = os.path.join(ROOT, "bench", "gpu-day")


@pytest.fixture(scope="module")
def day():
    loader = importlib.machinery.SourceFileLoader("gpu_day", SCRIPT)
    spec = importlib.util.spec_from_loader("gpu_day", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


#: a compute-sanitizer stand-in: --version; racecheck prints two of the intended hazards
#: (found by their statements in the checkout) in compute-sanitizer's "Race reported" form
FAKE_SANITIZER = r'''#!/usr/bin/env python3
import os, sys
root = os.environ["FAKE_SANITIZER_ROOT"]
if "--version" in sys.argv:
    print("NVIDIA (R) Compute Sanitizer\nCopyright (c) 2020-2025 NVIDIA Corporation\n"
          "Version 2025.3.1.0 (stand-in)")
    sys.exit(0)
tool = sys.argv[sys.argv.index("--tool") + 1]
def line_of(rel, stmt):
    with open(os.path.join(root, rel)) as fh:
        return next(i for i, t in enumerate(fh, 1) if t.strip() == stmt)
print("========= COMPUTE-SANITIZER")
if tool == "racecheck":
    twc = "gunpy/operators/advance/twc.py"
    n = line_of(twc, "cta_owner[0] = tid")
    k = "cudapy::gunpy::operators::advance::twc::cuda_kernel::$3clocals$3e::advance(...)"
    print(f"========= Error: Race reported between Write access at {k}+0x1a0 in {root}/{twc}:{n}")
    print(f"=========     and Write access at {k}+0x1a0 in {root}/{twc}:{n} [62 hazards]")
    print("=========")
    cull = "gunpy/operators/filter/cull.py"
    w, r = line_of(cull, "history[slot] = v"), line_of(cull, "if history[slot] == v:")
    k = "cudapy::gunpy::operators::filter::cull::cuda_kernel::$3clocals$3e::cull(...)"
    print(f"========= Warning: Race reported between Read access at {k}+0x90 in {root}/{cull}:{r}")
    print(f"=========     and Write access at {k}+0xb0 in {root}/{cull}:{w} [3 hazards]")
    print("=========")
    print("========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)")
else:
    print("========= ERROR SUMMARY: 0 errors")
'''


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_ENABLE_CUDASIM", "GUNPY_LAUNCHER", "GPU_DAY_SANITIZER")}
    fake = tmp_path / "compute-sanitizer"
    fake.write_text(FAKE_SANITIZER)
    fake.chmod(0o755)
    env.update(GPU_DAY_SANITIZER=str(fake), FAKE_SANITIZER_ROOT=ROOT, **extra)
    return env


def _day(tmp_path, *args, timeout=240, **env):
    out, work = tmp_path / "out", tmp_path / "work"
    cmd = [sys.executable, SCRIPT, "--out", str(out), "--work", str(work), *args]
    t = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                       env=_env(tmp_path, **env))
    return p, time.monotonic() - t, out


def _phases(report):
    """``{phase title: (status, seconds, limit)}`` from the report's phase table."""
    rows = {}
    for line in report.split("## Phases", 1)[1].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.match(r"(\d|\()", cells[0]):
            rows[cells[0]] = tuple(cells[1:4])
    return rows


def _bundle_ok(out, day):
    """OUT holds the report, the live log and the logs' tarball: at most 8 files of 16 MiB."""
    names = sorted(os.listdir(out))
    assert names == sorted([day.BUNDLE_NAME, day.LOG_NAME, day.REPORT_NAME]), names
    assert len(names) <= day.MAX_FILES
    for n in names:
        assert 0 < os.path.getsize(out / n) <= day.MAX_BYTES
    with tarfile.open(out / day.BUNDLE_NAME) as tar:
        return tar.getnames()


def test_dry_run_on_the_cpu_backend_runs_every_phase(tmp_path, day, capsys):
    # the budget leaves room for a cold kernel cache on a loaded machine (a phase's limit is
    # tripled in a dry run); limits and budget are tested in test_a_phase_limit_and_the_budget_cap
    p, took, out = _day(tmp_path, "--dry-run", "cpu", "--budget", "600", timeout=700)
    with capsys.disabled():
        print(f"\n[gpu-day --dry-run cpu: {took:.1f} s]", end=" ")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    report = (out / day.REPORT_NAME).read_text()
    phases = _phases(report)
    assert [t for t in phases] == [ph.title for ph in day.PHASES]
    status = {t: s for t, (s, _, _) in phases.items()}
    for title in ("1. census", "2a. smoke: gunpy's launcher", "2b. smoke: numba's launch path",
                  "3. differential run", "4. GTEPS and wall per call", "6. compute-sanitizer",
                  "7. zero-copy: CuPy, PyTorch, numba", "8. GPU tests"):
        assert status[title] == "ok", (title, report)
    assert status["5. micro-timings"] == "unavailable"  # gpu_micro exits 2 without a GPU
    # each phase within its own limit, all within the budget
    for title, (_, secs, limit) in phases.items():
        if secs:
            assert float(secs) <= float(limit) + 3, (title, secs, limit)
    assert took < 600 + 15
    # the report's header and each phase's summary
    for key in ("| date |", "| commit |", "| device |", "| driver |", "| numba-cuda |",
                "| cuda-core |", "| kernel cache |", "| RMAT-10 | 1,024 vertices"):
        assert key in report, key
    assert "hits" in report and "misses" in report
    assert "| rmat10 | default | ok |" in report and "launch path: numba" in report
    assert re.search(r"\| luxembourg_osm \| bfs push \| [\d.]+ \| [\d.]+ \| [\d.]+ \|", report)
    assert re.search(r"gpu_diff: 4 ok, 0 FAIL, 0 skipped", report)
    assert "| `cta_owner[0] = tid` (TWC CTA-phase bid) | gunpy/operators/advance/twc.py:" in report
    assert re.search(r"`if history\[slot\] == v:`.*\| 1 \| 3 \|", report)
    assert "2 intended records filtered, 0 other records" in report
    assert re.search(r"2 tests ended (of 2 collected)?: 2 passed", report)
    members = _bundle_ok(out, day)
    assert "logs/01-census.log" in members and "logs/rmat.log" in members
    assert "logs/tests-results.tsv" in members and "logs/sanitize-racecheck.log" in members
    log = (out / day.LOG_NAME).read_text()
    assert "[smoke] " in log and "[diff] " in log and "[rmat] " in log


def test_sigterm_mid_run_stops_bundles_and_reports(tmp_path, day):
    out, work = tmp_path / "out", tmp_path / "work"
    cmd = [sys.executable, SCRIPT, "--dry-run", "cpu", "--out", str(out), "--work", str(work),
           "--only", "smoke,tests", "--budget", "100"]
    # an empty kernel cache keeps the smoke busy compiling when the signal comes (with a
    # warm one it could end within the 1.5 s)
    env = _env(tmp_path, GUNPY_CACHE_DIR=str(tmp_path / "cold"))
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:  # the smoke phase has started: stop the day
        if "2a. smoke: gunpy's launcher (limit" in line:
            break
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    stopped = time.monotonic()
    rest = proc.stdout.read()
    rc = proc.wait(30)
    assert rc == 128 + signal.SIGTERM, rest
    assert time.monotonic() - stopped < 20, "stopping took too long"
    report = (out / day.REPORT_NAME).read_text()
    assert "stopped by SIGTERM" in report
    phases = _phases(report)
    assert phases["1. census"][0] == "not selected"
    assert phases["2a. smoke: gunpy's launcher"][0] == "stopped"
    assert phases["8. GPU tests"][0] == "not reached"
    members = _bundle_ok(out, day)
    assert "logs/02-smoke.log" in members


def test_a_phase_limit_and_the_budget_cap(tmp_path, day):
    # an empty kernel cache: the smoke must compile its kernels, which takes longer than
    # its 3 s limit (with a warm shared cache it can end in time: no timeout to test)
    p, took, out = _day(tmp_path, "--dry-run", "cpu", "--only", "smoke,diff,tests",
                        "--limit", "smoke=3", "--budget", "20",
                        GUNPY_CACHE_DIR=str(tmp_path / "cold-cache"))
    report = (out / day.REPORT_NAME).read_text()
    phases = _phases(report)
    status, secs, limit = phases["2a. smoke: gunpy's launcher"]
    assert (status, limit) == ("timeout", "3") and float(secs) < 3 + 3, report
    # the differential run (its own limit 90 s) got what was left of the budget, less the
    # bundle's reserve; the tests, nothing (or what little was left)
    status, secs, limit = phases["3. differential run"]
    assert status in ("ok", "timeout") and float(limit) < 20 and float(secs) <= float(limit) + 3
    # the tests: what little was left (a warm CPU kernel cache can leave them a few
    # seconds, enough for the dry run's tiny selection to end)
    status, secs, limit = phases["8. GPU tests"]
    assert status in ("skipped", "stopped at the budget") or \
        (status == "ok" and float(limit) < 20 - float(phases["3. differential run"][1])), report
    assert phases["1. census"][0] == "not selected"
    assert p.returncode == 1  # a phase timed out
    assert took < 20 + 8
    _bundle_ok(out, day)


def test_without_a_gpu_only_the_census_runs_and_the_day_exits_2(tmp_path, day):
    from gunpy.backends import cuda_status
    if cuda_status()[0]:
        pytest.skip("a GPU (or the simulator) is here")
    carry = tmp_path / "carry"  # a carried kernel cache that is no cache: reported, tolerated
    carry.mkdir()
    (carry / "kernels-test.tar.xz").write_bytes(b"not a tarball")
    p, took, out = _day(tmp_path, "--only", "census,smoke,tests", "--budget", "60",
                        GPU_DAY_CARRY=str(carry))
    assert p.returncode == 2, p.stdout
    assert p.stderr.startswith("gpu-day: no usable GPU (") and p.stderr.count("\n") == 1
    phases = _phases((out / day.REPORT_NAME).read_text())
    assert phases["1. census"][0] == "ok"
    assert phases["2a. smoke: gunpy's launcher"][0] == "skipped"
    assert phases["8. GPU tests"][0] == "skipped"
    report = (out / day.REPORT_NAME).read_text()
    assert "no usable GPU" in report
    assert re.search(r"\| kernel cache \| .*(importing kernels-test.tar.xz failed \(exit \d+\)|"
                     r"kernels-test.tar.xz carried, but this gunpy has no 'cache import')", report)
    assert "for this environment" in report.split("## Kernel cache at the end")[1]  # gunpy cache info
    assert "logs/rmat.log" not in _bundle_ok(out, day)  # no graph made for a day without GPU


@pytest.mark.sim
def test_dry_run_under_the_simulator(tmp_path, day, capsys):
    if not os.environ.get("NUMBA_ENABLE_CUDASIM"):
        pytest.skip("the simulator's dry run runs in --cuda-mode=sim")
    p, took, out = _day(tmp_path, "--dry-run", "sim", "--only", "census,smoke-numba,gteps",
                        "--budget", "200")
    with capsys.disabled():
        print(f"\n[gpu-day --dry-run sim: {took:.1f} s]", end=" ")
    report = (out / day.REPORT_NAME).read_text()
    phases = _phases(report)
    assert p.returncode == 0, report
    assert phases["2b. smoke: numba's launch path"][0] == "ok"
    assert "plain numba-cuda kernel (axpy, 64 elements): ok" in report
    assert "launch path: numba (GUNPY_LAUNCHER='numba')" in report
    assert "backend cuda: blocks of 32" in report
    assert re.search(r"\| grid8x8 \| bfs push \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| \d+ \| \d+ \|",
                     report)
    _bundle_ok(out, day)


# -- in-process: the racecheck filter, the bundle's limits, the phase list -------------------
def _intended(day):
    import gunpy
    return day.intended_lines(os.path.dirname(gunpy.__file__))


def test_every_intended_race_is_found_in_the_source(day):
    lines_of = _intended(day)
    assert len(lines_of) == len(day.INTENDED_RACES)
    for (rel, stmt, kernel, why), lines in lines_of:
        assert lines, f"{stmt!r} is no longer in {rel}: update INTENDED_RACES"
        assert re.compile(kernel) and why


def test_racecheck_filter_keeps_what_is_not_intended(day):
    lines_of = _intended(day)
    (twc_entry, twc_lines), = [x for x in lines_of if x[0][1] == "cta_owner[0] = tid"]
    (hub_entry, hub_lines), = [x for x in lines_of if x[0][1] == "hub[0] = tid"]
    (cull_entry, cull_lines), = [x for x in lines_of if x[0][1] == "lane_hash[h] = lane"]
    n, h, c = min(twc_lines), min(hub_lines), min(cull_lines)
    cull = ("gunpy::operators::filter::cull::cuda_kernel::_3clocals_3e::cull[abi:v69,cw51]"
            "(Array<int, (int)1, C, mutable, aligned>, long long)")
    twc = "cudapy::gunpy::operators::advance::twc::cuda_kernel::$3clocals$3e::advance(...)"
    lev = "cudapy::gunpy::operators::levels::cuda_levels::$3clocals$3e::levels(...)"
    text = "\n".join([
        "========= COMPUTE-SANITIZER",
        # intended: the TWC bid, in the TWC kernel (mangled name, old "at 0x.. in f:l:fn" form)
        f"========= Error: Race reported between Write access at 0x1a0 in /x/gunpy/operators/"
        f"advance/twc.py:{n}:{twc}",
        f"=========     and Write access at 0x1a0 in /x/gunpy/operators/advance/twc.py:{n}:{twc}"
        " [31 hazards]",
        "=========",
        # intended: the hub bid, inlined in the fused levels kernel
        f"========= Warning: Race reported between Write access at {lev}+0x10 in "
        f"/s/gunpy/operators/advance/common.py:{h}",
        f"=========     and Write access at {lev}+0x10 in /s/gunpy/operators/advance/common.py:{h}",
        "=========",
        # intended: warp culling's lane bid, as compute-sanitizer 2025.3 on an H200 printed
        # it (the file's name alone, the kernel's demangled name)
        f"========= Error: Race reported between Write access at {cull}+0x1240 in cull.py:{c}",
        f"=========     and Write access at {cull}+0x1240 in cull.py:{c} [12 hazards]",
        "=========",
        # not intended: the right line in a kernel the table does not name
        f"========= Error: Race reported between Write access at cudapy::gunpy::operators::scan"
        f"::k(...)+0x8 in /x/gunpy/operators/advance/twc.py:{n}",
        f"=========     and Write access at cudapy::gunpy::operators::scan::k(...)+0x8 in "
        f"/x/gunpy/operators/advance/twc.py:{n} [2 hazards]",
        "=========",
        # not intended: an intended line racing another line
        f"========= Error: Race reported between Write access at {twc}+0x8 in "
        f"/x/gunpy/operators/advance/twc.py:{n}",
        f"=========     and Read access at {twc}+0x18 in /x/gunpy/operators/advance/twc.py:{n + 1}",
        "=========",
        # not intended: no source line (kernels without line information)
        "========= Error: Potential WAW hazard detected at __shared__ 0x0 in block (0,0,0) :",
        "=========     Write Thread (31,0,0) at 0x00000090 in cull",
        "=========     Write Thread (0,0,0) at 0x00000090 in cull",
        "=========",
        "========= RACECHECK SUMMARY: 5 hazards displayed (4 errors, 1 warning)",
    ])
    intended, others = day.classify_races(text, lines_of)
    k_twc = [x[0] for x in lines_of].index(twc_entry)
    k_hub = [x[0] for x in lines_of].index(hub_entry)
    k_cull = [x[0] for x in lines_of].index(cull_entry)
    assert intended == {k_twc: [1, 31], k_hub: [1, 1], k_cull: [1, 12]}
    assert len(others) == 3
    assert "operators::scan" in others[0] and f"twc.py:{n + 1}" in others[1]
    assert "Potential WAW hazard" in others[2]
    lines, count = day.racecheck_report(text, lines_of)
    assert count == 3 and "3 intended records filtered, 3 other records" in "\n".join(lines)


def test_the_bundle_stays_within_the_device_tools_limits(tmp_path, day, monkeypatch):
    """A log over the cap goes into the tarball as its head and tail; a file in OUT over
    16 MiB is cut; the tarball shrinks its members until it fits."""
    monkeypatch.setattr(day, "MAX_BYTES", 64 * 1024)
    monkeypatch.setattr(day, "TAR_MEMBER_CAP", 256 * 1024)
    args = day.build_parser().parse_args(["--dry-run", "cpu", "--out", str(tmp_path / "out"),
                                          "--work", str(tmp_path / "work")])
    args.limits, args.budget = {}, 10
    d = day.Day(args)
    os.makedirs(d.out)
    os.makedirs(d.logs)
    rng = __import__("numpy").random.default_rng(0)
    for i in range(3):  # incompressible logs: 3 x 400 KiB
        (tmp_path / "work" / "logs" / f"0{i}-x.log").write_bytes(
            rng.integers(32, 127, 400 * 1024, dtype="uint8").tobytes())
    (tmp_path / "out" / day.LOG_NAME).write_bytes(b"x" * (200 * 1024))
    d.bundle()
    assert os.path.getsize(tmp_path / "out" / day.BUNDLE_NAME) <= 64 * 1024
    assert os.path.getsize(tmp_path / "out" / day.LOG_NAME) <= 64 * 1024
    with tarfile.open(tmp_path / "out" / day.BUNDLE_NAME) as tar:
        data = tar.extractfile("logs/00-x.log").read()
    assert b"bytes left out]" in data
    for i in range(9):
        (tmp_path / "out" / f"extra{i}").write_text("x")
    d.enforce_limits()
    assert "more than the 8 that come back" in d.bundle_note


def test_phase_list_and_arguments(day):
    assert [p.name for p in day.PHASES][:2] == ["census", "smoke"]
    assert day.PHASES[-1].name == "tests" and day.PHASES[-1].limit is None
    assert sum(p.limit or 0 for p in day.PHASES) <= 420  # the fixed limits fit the default budget
    files = day.test_files(os.path.join(ROOT, "tests"))
    assert files[0] == os.path.join("tests", "backends", "test_launcher.py")
    assert not [f for f in files if f.endswith("test_gpu_day.py")]
    assert len(files) == len(set(files)) > 70 and all(os.path.exists(os.path.join(ROOT, f))
                                                      for f in files)
    assert day.test_path("test_bfs.py::test_x", os.path.join(ROOT, "tests")) == os.path.join(
        "tests", "primitives", "test_bfs.py") + "::test_x"
    assert day.test_path("tests/x/test_y.py", os.path.join(ROOT, "tests")) == "tests/x/test_y.py"
    with pytest.raises(SystemExit, match="unknown phase 'smok'"):
        day.main(["--only", "smok", "--dry-run", "cpu"])


def test_the_readme_lists_the_phases_and_limits(day):
    with open(os.path.join(ROOT, "bench", "README.md")) as fh:
        text = fh.read()
    for p in day.PHASES:
        limit = "rest" if p.limit is None else str(p.limit)
        assert re.search(rf"\| `{re.escape(p.name)}` \| {limit} \|", text), p.name


def test_the_report_names_the_commit_of_the_gunpy_under_test(day, tmp_path, monkeypatch):
    # imported from the checkout (this editable install): the checkout's commit
    assert re.fullmatch(r"[0-9a-f]{7,}( \(with uncommitted changes\))?", day._commit())
    # a wheel installed beside a newer checkout (the device): the wheel's own commit
    (tmp_path / ".whl").mkdir()
    (tmp_path / ".whl" / "COMMIT").write_text("abc1234\n")
    monkeypatch.setattr(day, "ROOT", str(tmp_path))
    assert day._commit() == "abc1234 (the installed wheel, .whl/COMMIT)"
