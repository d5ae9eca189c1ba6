"""gunpy dist bench: the weak-scaling benchmark of gunpy.dist.

One end-to-end run of the command line (``gunpy dist bench`` launching
``mpiexec -n 1`` and ``-n 2`` on a tiny graph, CPU backend), and the table and
efficiency arithmetic on hand-made results. No timing is asserted: the
numbers depend on the machine. MPI is never initialised in the pytest process
(the arithmetic imports gunpy.dist with ``mpi4py.rc.initialize = False``).
"""

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
import _helpers

ROOT = str(_helpers.ROOT)


@pytest.fixture(autouse=True)
def _cpu_mode_only(request, mode):
    if mode != "cpu" and request.node.get_closest_marker("sim") is None:
        pytest.skip("gunpy.dist runs on the CPU backend here (cpu test mode only)")


def _needs_mpi():
    if importlib.util.find_spec("mpi4py") is None:
        pytest.skip("mpi4py is not installed (pip install gunpy[mpi])")
    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not (os.path.exists(exe) or shutil.which("mpiexec")):
        pytest.skip("no mpiexec next to the interpreter or on PATH (pip install mpich)")


@pytest.fixture
def bench():
    _needs_mpi()
    import mpi4py
    if "mpi4py.MPI" not in sys.modules:
        mpi4py.rc.initialize = False  # import gunpy.dist without this process joining MPI
    from gunpy.bench import dist as bench
    return bench


def test_cli_launches_one_job_per_rank_count(tmp_path):
    _needs_mpi()
    env = dict(os.environ, NUMBA_NUM_THREADS="1", PYTHONPATH=ROOT)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    report = tmp_path / "weak.json"
    p = subprocess.run([sys.executable, "-m", "gunpy.cli", "dist", "bench", "--scale-per-rank",
                        "8", "--roots", "4", "--ranks", "1,2", "--json", str(report), "-q"],
                       capture_output=True, text=True, timeout=170, env=env, cwd=ROOT)
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    rows = [line for line in p.stdout.splitlines() if line.startswith("| ")]
    assert any(r.startswith("| 1 | 8 | 256 |") for r in rows), p.stdout
    assert any(r.startswith("| 2 | 9 | 512 |") for r in rows), p.stdout
    assert "efficiency (hmean)" in p.stdout and "GTEPS per GPU" in p.stdout
    runs = json.loads(report.read_text())["runs"]
    assert [r["ranks"] for r in runs] == [1, 2]
    for r in runs:
        assert r["scale"] == 8 + r["ranks"].bit_length() - 1
        assert len(r["teps"]) == 4 and all(t > 0 for t in r["teps"])
        assert r["hmean_teps"] > 0 and r["median_teps"] > 0
        assert math.isfinite(r["efficiency"]) and math.isfinite(r["efficiency_median"])
        assert r["validated"] == 4 and r["threads_per_rank"] == 1
        assert 0 <= r["comm_share"] <= 1
        levels = r["levels"]
        assert levels and levels[0]["frontier"] == 1 and levels[0]["direction"] in ("push", "pull")
        assert all(lv["compute_ms"] >= 0 and lv["comm_ms"] >= 0 for lv in levels)
        assert sum(lv["edges"] for lv in levels) > 0
    assert runs[0]["efficiency"] == 1.0


def test_cli_rejects_a_rank_count_rmat_cannot_split():
    _needs_mpi()
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "gunpy.cli", "dist", "bench", "--ranks", "1,3"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert p.returncode == 2 and "powers of two" in p.stderr, p.stdout + p.stderr


def _run(ranks, hmean, median):
    return {"ranks": ranks, "scale": 16 + ranks.bit_length() - 1, "scale_per_rank": 16,
            "edgefactor": 16, "direction": "auto", "backend": "cpu", "threads_per_rank": 1,
            "vertices": 65536 * ranks, "edges": 900_000 * ranks, "roots": [5, 7, 9],
            "component_edges": [900_000 * ranks] * 2 + [1], "median_ms": 3.0 * ranks,
            "hmean_teps": hmean, "median_teps": median, "comm_share": 0.25, "validated": 3,
            "kernel_loads_timed": 0, "machine": {"cores": 2, "commit": "abc1234"},
            "levels": [{"level": 0, "direction": "push", "frontier": 1, "ms": 0.5,
                        "edges": 12, "compute_ms": 0.25, "compute_max_ms": 0.3,
                        "comm_ms": 0.25, "bytes": 64}]}


def test_efficiency_and_table(bench):
    runs = bench.add_efficiency([_run(1, 100e6, 120e6), _run(2, 150e6, 200e6),
                                 _run(4, 200e6, 240e6)])
    one, two, four = runs
    assert one["efficiency"] == 1.0 and one["efficiency_median"] == 1.0
    assert two["teps_per_rank"] == 75e6 and two["efficiency"] == pytest.approx(0.75)
    assert two["efficiency_median"] == pytest.approx(200 / 240)
    assert four["efficiency"] == pytest.approx(0.5) and four["median_teps_per_rank"] == 60e6
    md = bench.markdown(runs)
    assert "| 2 | 17 | 131,072 | 1,800,000 | 1 | 6.0 | 150.0 | 200.0 | 75.0 | 0.75 | 0.83 | " \
           "25 % | 3 of 3 roots |" in md
    assert "| 0 | push | 1 | 12 | 0.50 | 0.25 | 0.30 | 0.25 | 64 |" in md  # largest job
    assert "0.115 GTEPS per GPU" in md and "0.05 GTEPS per rank by the harmonic mean" in md
    assert "0.06 by the median" in md
    assert "1 of 3 roots lay outside the giant component" in md
    assert "4 ranks x 1 thread share 2 cores" in md and "2 ranks x" not in md


def test_efficiency_needs_a_one_rank_run(bench):
    (two,) = bench.add_efficiency([_run(2, 150e6, 200e6)])
    assert math.isnan(two["efficiency"]) and two["teps_per_rank"] == 75e6
    assert "| nan" not in bench.markdown([two]).lower()


def test_threads_per_rank_and_rank_counts(bench):
    assert bench.threads_per_rank([1, 2, 4], cores=2) == 1
    assert bench.threads_per_rank([1, 2], cores=16) == 8  # the same for every size
    with pytest.raises(ValueError, match="powers of two"):
        bench.weak_scaling([1, 3])


CUDA_SCRIPT = textwrap.dedent("""
    import os, sys
    if sys.argv[1] == "sim":
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        from gunpy.testing import install_simulator_shims
        install_simulator_shims(switch_interval=5e-4)
    from gunpy.bench import dist as bench
    res = bench.run_rank(4, 2, backend="cuda", validate=2)
    if res is not None:
        assert res["backend"] == "cuda" and res["validated"] == 2, res
        assert all(t > 0 for t in res["teps"]) and res["levels"], res
        print("BENCH-CUDA-OK devices", res["devices"])
""")


@pytest.mark.sim
def test_cuda_backend_gives_each_rank_a_device(tmp_path, mode):
    """Two ranks, backend="cuda": select_device by node-local rank, then the SPMD side
    (under the simulator in sim mode, on the GPU in gpu mode)."""
    _needs_mpi()
    script = tmp_path / "bench_cuda.py"
    script.write_text(CUDA_SCRIPT)
    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    exe = exe if os.path.exists(exe) else shutil.which("mpiexec")
    env = dict(os.environ, NUMBA_NUM_THREADS="1", PYTHONPATH=ROOT)
    env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    p = subprocess.run([exe, "-n", "2", sys.executable, "-m", "mpi4py", str(script), mode],
                       capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "BENCH-CUDA-OK" in p.stdout, out[-4000:]
    from numba import cuda
    count = 1 if mode == "sim" else len(cuda.gpus)
    assert f"devices [0, {1 % count}]" in p.stdout, p.stdout
