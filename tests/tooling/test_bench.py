"""The benchmark suite runs end to end on a tiny graph and reports what it promises."""

import importlib.util
import json
import pathlib
import re
import sys

import numpy as np
import pytest

import gunpy
from gunpy import bench

BENCH = pathlib.Path(__file__).parents[2] / "bench"


def _script(name, monkeypatch):
    """bench/NAME.py as a module, run as ``python bench/NAME.py`` runs it: bench/ (no
    package) first on ``sys.path``, where it finds bench/interleaved.py."""
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_harmonic_mean_ignores_non_positive_rates():
    assert abs(bench.harmonic([1.0, 2.0, 0.0]) - 4 / 3) < 1e-12


def test_suite_writes_tables_json_and_plots(tmp_path):
    out = tmp_path / "r"
    assert bench.main(["--graphs", "karate", "grid8", "--roots", "4", "--peer-roots", "2",
                       "--reps", "2", "--backend", "cpu", "--skip-peers", "networkx",
                       "gunpy.blas", "--out", str(out), "-q"]) == 0
    rows = json.loads((out / "results.json").read_text())["rows"]
    mine = {(r["graph"], r["primitive"], r["mode"]): r for r in rows if r["library"] == "gunpy"}
    for g in ("karate", "grid8"):
        for prim in ("bfs", "sssp", "cc", "pagerank", "bc", "tc"):
            for mode in ("alone", "interleaved"):  # both modes, wall time per call
                assert mine[g, prim, mode]["median_ms"] > 0
        for prim in ("bfs", "sssp"):
            r = mine[g, prim, "alone"]
            assert r["validated"] and r["runs"] == 4 and r["roots"] == mine[g, "bfs", "alone"]["roots"]
            assert r["hmean_teps"] > 0 and r["median_teps"] > 0 and r["max_ms"] >= r["median_ms"]
            assert mine[g, prim, "interleaved"]["roots"] == r["roots"][:2]
    assert mine["karate", "bfs", "alone"]["per_iteration"]  # the frontier plot's data
    peers = {r["library"] for r in rows if r["library"] != "gunpy"}
    assert "scipy" in peers  # always installed: the ratios have a reference
    md = (out / "results.md").read_text()
    assert "Graph500 MTEPS (hmean)" in md and "| karate | scipy | interleaved |" in md
    assert "| karate | gunpy | alone |" in md and "own timer ms (share)" in md
    assert (out / "speedup.png").stat().st_size > 0
    assert (out / "bfs_frontier.png").stat().st_size > 0


def test_every_library_is_timed_by_wall_time_over_gunpys_roots(tmp_path):
    """No flattering: gunpy and every peer run the same roots, interleaved, and each ratio is
    the median of per-root ratios of wall times; gunpy's own timer is only reported beside."""
    import statistics
    rows = bench.run_suite(bench.build_parser().parse_args(
        ["--graphs", "grid8", "--roots", "5", "--peer-roots", "3", "--reps", "2",
         "--primitives", "bfs", "sssp", "cc", "--backend", "cpu",
         "--skip-peers", "networkx", "gunpy.blas", "-q"]))
    for prim in ("bfs", "sssp", "cc"):
        sel = [r for r in rows if r["primitive"] == prim and r["mode"] == "interleaved"]
        gunpy = next(r for r in sel if r["library"] == "gunpy")
        assert len(sel) >= 2  # gunpy and scipy at least
        for r in sel:
            assert r["runs"] == gunpy["runs"] == (3 if prim != "cc" else 2)
            assert r.get("roots") == gunpy.get("roots")
            assert r["median_ms"] == statistics.median(r["wall_ms"])
            if r is not gunpy:
                per_call = [p / m for p, m in zip(r["wall_ms"], gunpy["wall_ms"])]
                assert r["vs_gunpy"] == pytest.approx(statistics.median(per_call))
        for r in (x for x in rows if x["primitive"] == prim and x["library"] == "gunpy"):
            # the own timer covers part of the call: never more than its wall time
            assert 0 < r["own_ms"] <= r["median_ms"] and 0 < r["own_share"] <= 1
            assert r["outside_ms"] >= 0
        alone = next(r for r in rows if r["primitive"] == prim and r["mode"] == "alone")
        assert gunpy["vs_alone"] > 0 and alone["runs"] == (5 if prim != "cc" else 2)


def test_interleaving_rotates_the_order_and_pairs_the_ratios():
    from gunpy.bench.timing import alone, interleave, paired, summary
    order = []
    times = interleave([(lib, lambda k, lib=lib: order.append(lib)) for lib in "abc"], range(4))
    assert order == list("abc" "bca" "cab" "abc")
    assert [k for k, _, _ in times["c"]] == [0, 1, 2, 3]
    assert [k for k, _, _ in alone(lambda k: k, [7, 8])] == [7, 8]
    assert paired({1: 10.0, 2: 30.0, 3: 1.0}, {1: 5.0, 2: 10.0}) == 2.5
    row = summary([4.0, 2.0, 10.0], [1.0, 1.0, 9.0])
    assert row["median_ms"] == 4.0 and row["own_ms"] == 1.0 and row["outside_ms"] == 1.0
    assert row["own_share"] == pytest.approx(0.5)


def test_threading_decision_respects_the_environment():
    from gunpy.backends import threads
    env = {}
    choice = threads.configure(env)
    assert env == {"OMP_WAIT_POLICY": "PASSIVE"} and choice["wait_policy"]["by"] == "gunpy"
    assert choice["threading_layer"] == {"value": "default", "by": "numba"}
    for var, value in (("OMP_WAIT_POLICY", "ACTIVE"), ("GOMP_SPINCOUNT", "10000"),
                       ("KMP_BLOCKTIME", "0")):
        env = {var: value, "NUMBA_THREADING_LAYER": "workqueue"}
        choice = threads.configure(env)
        assert env == {var: value, "NUMBA_THREADING_LAYER": "workqueue"}  # nothing written
        assert choice["wait_policy"]["by"] == "environment" and value in \
            choice["wait_policy"]["value"]
        assert choice["threading_layer"] == {"value": "workqueue", "by": "environment"}
    info = threads.describe()
    assert info["numba_threads"] >= 1 and "threading_layer" in info


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
    root = str(BENCH.parent)
    script = os.path.join(root, "bench", "gpu-check")
    assert subprocess.run(["bash", "-n", script]).returncode == 0
    from gunpy.backends import cuda_status
    if cuda_status()[0] and "simulator" not in cuda_status()[1]:
        pytest.skip("a real GPU is here: gpu-check would run the whole check")
    env = dict(os.environ, PYTHON=sys.executable, NUMBA_ENABLE_CUDASIM="0")
    out = subprocess.run(["bash", script, str(tmp_path / "out")], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2 and "no usable CUDA GPU" in out.stderr


@pytest.mark.parametrize("name", ["gunpy.bench.timing", "gunpy.backends.threads"])
def test_docstring_examples_run(name):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0


def test_weight_summary_is_computed_once_per_weights_array():
    """SSSP's per-call weight checks (outside its timer) can read this instead of three
    passes over every edge; new weights give a new summary."""
    import numpy as np

    import gunpy
    from gunpy import problem
    G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], [0.25, 0.5, 1.0], num_vertices=3)
    s = problem.weight_summary(G)
    assert s.valid and s.first_bad == -1 and s.min == 0.25 and s.mean == pytest.approx(7 / 12)
    assert problem.weight_summary(G) is s  # kept
    G.values = [1.0, -2.0, np.inf]
    s = problem.weight_summary(G)
    assert not s.valid and s.first_bad == 1 and s.min == -2.0
    G.values = None
    assert problem.weight_summary(G) is None


def test_neighbours_times_gunpy_alone_and_after_each_peer(tmp_path):
    out = tmp_path / "n"
    assert bench.main(["--neighbours", "--graphs", "karate", "--roots", "2", "--backend", "cpu",
                       "--primitives", "bfs", "pagerank", "--skip-peers", "networkx",
                       "gunpy.blas", "--out", str(out), "-q"]) == 0
    data = json.loads((out / "neighbours.json").read_text())
    rows = data["rows"]
    for prim in ("bfs", "pagerank"):
        befores = {r["before"]: r for r in rows if r["primitive"] == prim}
        assert {"alone", "scipy"} <= set(befores) and befores["alone"]["runs"] == 2
        assert all(r["median_ms"] > 0 for r in befores.values())
    assert "threads: threading_layer" in data["machine"]  # the setting is printed beside
    assert "| karate | bfs | scipy |" in (out / "neighbours.md").read_text()


def test_progress_bars_on_a_terminal_only_and_never_with_quiet(monkeypatch):
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    from gunpy.bench.suite import build_parser, run_suite
    argv = ["--graphs", "karate", "--primitives", "bfs", "--roots", "2", "--peer-roots", "1",
            "--reps", "1", "--backend", "cpu", "--skip-peers", "networkx", "gunpy.blas",
            "graphblas", "igraph", "networkit"]
    shown = {}
    for name, stream, extra in (("pipe", io.StringIO(), []), ("terminal", Terminal(), []),
                                ("quiet terminal", Terminal(), ["-q"])):
        monkeypatch.setattr(sys, "stderr", stream)
        assert run_suite(build_parser().parse_args([*argv, *extra]))
        shown[name] = stream.getvalue()
    monkeypatch.undo()
    assert "graphs" not in shown["pipe"] and "karate" not in shown["pipe"], shown["pipe"]
    assert "graphs: 100%" in shown["terminal"] and "1/1" in shown["terminal"], shown["terminal"]
    assert "graphs" not in shown["quiet terminal"], shown["quiet terminal"]


def test_level_path_reports_time_floor_and_the_files_a_level_crosses(capsys, monkeypatch):
    level_path = _script("level_path", monkeypatch)
    level_path.main(["--vertices", "40", "--runs", "1"])
    out = capsys.readouterr().out
    assert "host time per level" in out and "(40 levels" in out
    assert "kernel floor" in out
    # the path starts in the primitive's loop and reaches the advance operator
    assert "primitives/bfs.py" in out and "gunpy/operators/advance/__init__.py" in out


def test_first_call_reports_fresh_and_warm_per_graph_and_primitive(capsys, monkeypatch):
    first_call = _script("first_call", monkeypatch)
    first_call.main(["--scale", "6", "--fresh", "1", "--warm", "1", "--only", "BFS"])
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| ")]
    assert rows[0].startswith("| graph | primitive | fresh | warm")
    assert [r.split(" | ")[:2] for r in rows[1:]] == [["| undirected", "BFS"],
                                                      ["| directed", "BFS"]]
    assert all(r.endswith("x |") for r in rows[1:])


def test_graph500_generates_searches_and_validates_every_tree(capsys, monkeypatch):
    graph500 = _script("graph500", monkeypatch)
    assert graph500.main(["--scale", "8", "--roots", "4"]) == 0
    out = capsys.readouterr().out
    assert "kernel 0: rmat(8)" in out and "(4 trees validated)" in out
    assert "scale 10 by arithmetic" in out
    G = gunpy.generators.rmat(8, seed=1)
    roots = graph500.graph500_roots(G, 4, 1)
    assert len(set(roots)) == 4 and all(np.diff(G.row_offsets)[roots] > 0)


def test_nx_script_crossover_times_networkx_and_gunpy_per_family(capsys, monkeypatch):
    """bench/nx_script.py --crossover: a row per family and size, networkx's and gunpy's
    (converting, and with the conversion cached) times; lowest_common_ancestor on a DAG."""
    script = _script("nx_script", monkeypatch)
    script.main(["--crossover", "--families", "truss,lca,cores", "--sizes", "64"])
    rows = [ln.split(" | ") for ln in capsys.readouterr().out.splitlines()
            if ln.startswith("| ") and "64 |" in ln]
    assert [r[0] for r in rows] == ["| truss", "| lca", "| cores"]
    assert all(float(x.strip(" |")) > 0 for r in rows for x in r[3:])


def test_interleaved_rounds_call_every_library_in_turn(monkeypatch):
    interleaved = _script("interleaved", monkeypatch)
    seen, outputs = [], []
    calls = {"a": lambda k: seen.append(("a", k)) or k, "b": lambda k: seen.append(("b", k))}
    times = interleaved.rounds(calls, [(1,), (2,)], lambda key, out: outputs.append((key, out)))
    assert seen == [("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert outputs == [("a", 1), ("b", None), ("a", 2), ("b", None)]
    assert {key: len(ms) for key, ms in times.items()} == {"a": 2, "b": 2}


def test_road_times_gunpy_and_a_peer_and_reports_the_ratio(capsys, monkeypatch):
    """bench/road.py (options, rounds and table from bench/interleaved.py): a row per
    primitive with each library's median [min-max] and gunpy's over the fastest peer's."""
    road = _script("road", monkeypatch)
    road.main(["--graphs", "karate", "--primitives", "cc", "--reps", "2", "--roots", "1",
               "--peers", "scipy", "--keep-wait-policy"])
    out = capsys.readouterr().out
    assert "\nkarate: 34 vertices, 156 edges (ms per call: median [min-max])\n" in out
    ms = r"\d+\.\d\d \[\d+\.\d\d-\d+\.\d\d\]"
    assert re.search(rf"^  cc        gunpy {ms}  scipy {ms}  gunpy x\d+\.\d\d of scipy$", out,
                     re.M), out
