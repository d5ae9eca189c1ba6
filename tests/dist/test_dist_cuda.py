"""gunpy.dist's CUDA paths without a GPU: two ranks under the simulator, and PTX.

Each runs in a child process (MPI is never initialised in the pytest process):
``mpiexec -n 2`` with the simulator switched on in every rank, and one
single-rank process compiling the distributed primitives' kernels for sm_90.
"""

import subprocess
import sys
import textwrap

import pytest

from test_dist import ROOT, _env, _mpiexec, _mpirun

SIM_SCRIPT = textwrap.dedent("""
    import os
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from gunpy.testing import install_simulator_shims
    install_simulator_shims(switch_interval=5e-4)
    import numpy as np
    import gunpy
    import gunpy.dist as gd
    from gunpy.testing import (check_bfs_tree, check_sssp_tree, nasty_graphs, reference_depths,
                               reference_distances)
    graphs = nasty_graphs(small=True)
    for name in ("disconnected", "random_directed", "star_hub"):
        G = graphs[name]
        DG = gd.DistGraph.from_graph(G)
        for d in ("push", "pull", "auto"):
            for s in (0, G.num_vertices - 1):
                r = gd.bfs(DG, s, direction=d, backend="cuda").gather()
                if r is not None:
                    assert np.array_equal(r.depth, reference_depths(G, s)), (name, d, s)
                    check_bfs_tree(G, s, r.depth, r.parent)
    # SSSP (integer weights: exact), PageRank and CC on one graph
    G = graphs["random_directed"]
    w = np.random.default_rng(1).integers(1, 9, G.num_edges).astype(float)
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    G = gunpy.Graph.from_edges(src, G.column_indices, w, num_vertices=G.num_vertices,
                               directed=True)
    DG = gd.DistGraph.from_graph(G)
    r = gd.sssp(DG, 0, backend="cuda").gather()
    p = gd.pagerank(DG, backend="cuda").gather()
    pp = gd.pagerank(DG, direction="push", backend="cuda").gather()
    c = gd.cc(DG, backend="cuda").gather()
    if r is not None:
        assert np.array_equal(r.distance, reference_distances(G, 0))
        check_sssp_tree(G, 0, r.distance, r.parent)
        assert np.allclose(p.rank, gunpy.pagerank(G, backend="cpu").rank, rtol=0, atol=1e-8)
        assert np.allclose(pp.rank, p.rank, rtol=0, atol=1e-8)
        assert np.array_equal(c.labels, gunpy.cc(G, backend="cpu").labels)
    from gunpy.dist import comm as dist_comm
    assert dist_comm._selected == [0], dist_comm._selected  # by node-local rank, mod 1 device
    if DG.comm.rank == 0:
        print("DIST-SIM-OK")
""")

PTX_SCRIPT = textwrap.dedent("""
    import gunpy.dist as gd
    from gunpy.testing import PtxBackend, nasty_graphs
    G = nasty_graphs(hub=40, random_n=40)["preferential_hubs"]
    DG = gd.DistGraph.from_graph(G)
    be = PtxBackend(cc=(9, 0))
    for d in ("push", "pull"):
        gd.bfs(DG, 0, direction=d, backend=be)
    names = " ".join(be.kernel_names())
    assert ("advance" in names or "expand" in names) and "pull_" in names, names
    n_bfs = len(be.kernel_names())
    gd.sssp(DG, 0, backend=be)
    gd.pagerank(DG, max_iter=2, backend=be)
    gd.pagerank(DG, max_iter=2, direction="push", backend=be)
    gd.bfs(DG, 0, direction="push", idempotent=True, backend=be)
    gd.cc(DG, backend=be)
    assert len(be.kernel_names()) > n_bfs, be.kernel_names()
    print("DIST-PTX-OK")
""")


@pytest.mark.sim
def test_two_ranks_under_the_simulator(tmp_path):
    script = tmp_path / "dist_sim.py"
    script.write_text(SIM_SCRIPT)
    p = _mpirun(2, script, timeout=300)
    assert p.returncode == 0 and "DIST-SIM-OK" in p.stdout, (p.stdout + p.stderr)[-6000:]


@pytest.mark.ptx
def test_distributed_primitives_compile_to_ptx(tmp_path):
    if _mpiexec()[0] is None:
        pytest.skip(_mpiexec()[1])
    script = tmp_path / "dist_ptx.py"
    script.write_text(PTX_SCRIPT)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300, env=_env(), cwd=ROOT)
    assert p.returncode == 0 and "DIST-PTX-OK" in p.stdout, (p.stdout + p.stderr)[-6000:]
