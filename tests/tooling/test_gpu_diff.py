"""bench/gpu_diff.py, bench/gpu_micro.py and bench/gpu-check without a GPU.

The differential run's machinery (graphs, configurations, comparisons, table,
exit status) runs in-process on the CUDA simulator (``--cuda-mode=sim``: a
subset of configurations on the ``--quick`` graphs) and, on a real GPU, at the
real launch shape; the failure paths and the no-GPU exits run everywhere.
"""

import importlib.util
import os
import subprocess
import sys

import pytest
import _helpers

ROOT = str(_helpers.ROOT)
BENCH = os.path.join(ROOT, "bench")


@pytest.fixture(scope="module")
def gpu_diff():
    spec = importlib.util.spec_from_file_location("gpu_diff", os.path.join(BENCH, "gpu_diff.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _has_gpu():
    from gunpy.backends import cuda_status
    from gunpy.testing import ON_CUDASIM
    return cuda_status()[0] and not ON_CUDASIM


@pytest.mark.sim
def test_cuda_against_cpu_on_tiny_graphs(gpu_diff, capsys):
    # a hub of 40 leaves (more than the simulator's 32-thread block): BFS push through TWC,
    # pull, CC, triangles, then fused SSSP on the directed weighted hub (the grid is left to
    # the CPU modes' runs of gpu_diff and to test_fuzz, for time; unfused SSSP (~13 s here)
    # and idempotent BFS run against networkx under the simulator in test_sssp,
    # test_launch_shapes and test_advance)
    rc = gpu_diff.main(["--backend", "cuda", "--quick", "--graphs", "hub40",
                        "--only", "bfs-push-twc,bfs-pull-auto,cc,triangles"])
    rc2 = gpu_diff.main(["--backend", "cuda", "--quick", "--graphs", "hub40-directed",
                         "--only", "sssp-fused"])
    out = capsys.readouterr().out
    assert rc == 0 and rc2 == 0, out
    assert "gpu_diff: 4 ok, 0 FAIL, 0 skipped" in out, out
    assert "gpu_diff: 1 ok, 0 FAIL, 0 skipped" in out, out
    assert "| bfs-push-twc " in out and "| hub40 " in out


def test_configurations_cover_the_brief(gpu_diff):
    names = {c.name for c in gpu_diff.configurations()}
    from gunpy.operators.advance import load_balance_options
    for d in ("push", "pull", "auto"):
        for lb in load_balance_options():
            assert f"bfs-{d}-{lb}" in names and f"bfs-{d}-{lb}-idem" in names
    assert {"sssp-fused", "sssp-unfused", "sssp-bellman_ford", "cc", "pagerank-push",
            "pagerank-pull", "bc", "triangles", "blas-bfs-auto",
            "dist-bfs-1rank-auto"} <= names
    graphs = gpu_diff.make_graphs(quick=True)
    assert graphs["hub40"].G.out_degrees().max() >= 40
    assert graphs["hub40-directed"].G.directed


def test_hub_graph_hub_sizes(gpu_diff):
    for deg in (300, 3000):
        G = gpu_diff.hub_graph(deg * 3, deg, seed=1)
        assert deg <= int(G.out_degrees().max()) <= deg + 40


def _fake(gpu_diff, monkeypatch, run):
    cfg = gpu_diff.Config("fake-cc", run, gpu_diff.same_cc, sourced=False)
    monkeypatch.setattr(gpu_diff, "configurations", lambda: [cfg])


def test_a_mismatch_fails_the_row_and_the_run(gpu_diff, monkeypatch, capsys):
    import argparse

    import numpy as np

    calls = []

    def run(G, s, be):  # the reference (first call): one component; then every vertex alone
        calls.append(be)
        n = G.num_vertices
        return argparse.Namespace(labels=np.zeros(n, np.int32) if len(calls) == 1
                                  else np.arange(n, dtype=np.int32))

    _fake(gpu_diff, monkeypatch, run)
    rc = gpu_diff.main(["--backend", "cpu", "--quick", "--graphs", "hub40"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "| FAIL " in out and "fake-cc on hub40: partition: 63 differ, first at 1: 1 vs 0" in out, out


def test_a_crash_fails_the_row_not_the_run(gpu_diff, monkeypatch, capsys):
    def run(G, s, be):
        raise RuntimeError("kernel did not link")

    _fake(gpu_diff, monkeypatch, run)
    rc = gpu_diff.main(["--backend", "cpu", "--quick", "--graphs", "hub40,grid6x6"])
    out = capsys.readouterr().out
    assert rc == 1 and out.count("| FAIL ") == 2
    assert "cpu raised RuntimeError: kernel did not link" in out


def test_bad_selection_exits_2(gpu_diff, capsys):
    assert gpu_diff.main(["--backend", "cpu", "--quick", "--only", "nothing-*"]) == 2
    assert "no configuration matches" in capsys.readouterr().err


def test_no_gpu_exits_2_with_one_line(gpu_diff, capsys):
    if _has_gpu():
        pytest.skip("a GPU is here")
    from gunpy.testing import ON_CUDASIM
    if ON_CUDASIM:
        pytest.skip("the simulator counts as a device for gpu_diff")
    assert gpu_diff.main(["--backend", "cuda", "--quick"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu_diff: no usable CUDA GPU") and err.count("\n") == 1


@pytest.mark.parametrize("cmd", [[sys.executable, os.path.join(BENCH, "gpu_micro.py")],
                                 ["bash", os.path.join(BENCH, "gpu-check"), "OUT"]])
def test_gpu_scripts_without_a_gpu_exit_2_with_one_line(cmd, tmp_path):
    if _has_gpu():
        pytest.skip("a GPU is here")
    cmd = [str(tmp_path / "out") if c == "OUT" else c for c in cmd]
    env = dict(os.environ, PYTHON=sys.executable)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stdout == "" and p.stderr.count("\n") == 1, p.stderr
    assert "GPU" in p.stderr or "simulator" in p.stderr


def test_gpu_check_parses():
    p = subprocess.run(["bash", "-n", os.path.join(BENCH, "gpu-check")], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
