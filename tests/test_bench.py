"""The benchmark suite runs end to end on a tiny graph and reports what it promises."""

import json

import pytest

from gunpy import bench


def test_harmonic_mean_ignores_non_positive_rates():
    assert abs(bench.harmonic([1.0, 2.0, 0.0]) - 4 / 3) < 1e-12


def test_suite_writes_tables_json_and_plots(tmp_path):
    out = tmp_path / "r"
    assert bench.main(["--graphs", "karate", "grid8", "--roots", "4", "--peer-roots", "2",
                       "--reps", "1", "--backend", "cpu", "--out", str(out), "-q"]) == 0
    rows = json.loads((out / "results.json").read_text())["rows"]
    mine = {(r["graph"], r["primitive"]): r for r in rows if r["library"] == "gunpy"}
    for g in ("karate", "grid8"):
        for prim in ("bfs", "sssp", "cc", "pagerank", "bc"):
            assert mine[g, prim]["median_ms"] > 0
        for prim in ("bfs", "sssp"):
            r = mine[g, prim]
            assert r["validated"] and r["runs"] == 4
            assert r["hmean_teps"] > 0 and r["median_teps"] > 0 and r["max_ms"] >= r["median_ms"]
    assert mine["karate", "bfs"]["per_iteration"]  # the frontier plot's data
    peers = {r["library"] for r in rows if r["library"] != "gunpy"}
    assert "scipy" in peers  # always installed: the ratios have a reference
    md = (out / "results.md").read_text()
    assert "Graph500 MTEPS (hmean)" in md and "| karate | scipy |" in md
    assert (out / "speedup.png").stat().st_size > 0
    assert (out / "bfs_frontier.png").stat().st_size > 0


def test_strategy_table_covers_every_combination(tmp_path):
    out = tmp_path / "s"
    assert bench.main(["--strategies", "--graphs", "karate", "--roots", "2", "--backend", "cpu",
                       "--out", str(out), "-q"]) == 0
    rows = json.loads((out / "strategies.json").read_text())["rows"]
    combos = {(r["load_balance"], r["direction"], r["idempotent"]) for r in rows}
    assert len(combos) == 10 and len(rows) == 11  # the last: push+auto again (A/A control)
    assert [r["control"] for r in rows].count(True) == 1 and rows[-1]["control"]
    assert ("merge_path", "push", True) in combos and ("auto", "pull", False) in combos
    assert len({r["edges_visited"] for r in rows if r["direction"] == "push"}) == 1
    assert "vs push+auto" in (out / "strategies.md").read_text()
    base = next(r for r in rows if (r["load_balance"], r["direction"], r["idempotent"])
                == ("auto", "push", False))
    assert base["paired_speedup"] == 1.0  # push+auto against itself, root by root


def test_startup_benchmark_cold_and_warm():
    from gunpy.bench import startup
    result = startup.run(dataset="karate", primitives=("bfs",), reps=1, progress=False)
    rows = {r["kind"]: r for r in result["rows"]}
    bfs = rows["primitive"]
    assert bfs["cold"][0]["compiled"] > 0 and bfs["cold"][0]["loaded"] == 0
    assert bfs["warm"][0]["compiled"] == 0 and bfs["warm"][0]["loaded"] > 0
    md = startup.markdown(result)
    assert "| bfs |" in md and "`import gunpy`" in md and "gunpy run bfs --dataset karate" in md


def test_gpu_check_script_says_when_there_is_no_gpu(tmp_path):
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = os.path.join(root, "bench", "gpu-check")
    assert subprocess.run(["bash", "-n", script]).returncode == 0
    from gunpy.backends import cuda_status
    if cuda_status()[0] and "simulator" not in cuda_status()[1]:
        pytest.skip("a real GPU is here: gpu-check would run the whole check")
    env = dict(os.environ, PYTHON=sys.executable, NUMBA_ENABLE_CUDASIM="0")
    out = subprocess.run(["bash", script, str(tmp_path / "out")], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2 and "no usable CUDA GPU" in out.stderr
