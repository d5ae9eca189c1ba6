"""Python threads calling gunpy at once, on each of numba's threading layers.

numba's ``workqueue`` layer aborts the process when two parallel regions overlap;
gunpy's CPU operators and graph builders take turns there
(gunpy.backends.threads.region). Each case
runs in a child process: the layer is chosen once per process, and a failure is a
SIGABRT, which must not take pytest down.
"""

import os
import subprocess
import sys
import textwrap

import pytest
import _helpers

ROOT = str(_helpers.ROOT)

CHILD = textwrap.dedent("""
    import os, sys, threading
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path
    import numba
    import gunpy
    from gunpy.backends import threads
    from gunpy.backends.cpu import CpuBackend

    # tiny graphs through the chunked parallel kernels: every level is a parallel region,
    # and so is building a graph (the numba CSR builders, past NumPy's range in real use)
    CpuBackend.serial_below, CpuBackend.force_min_chunk = 0, 1
    from gunpy import _csr
    _csr.NUMPY_MAX_EDGES = _csr.NUMPY_MAX_WEIGHTED_EDGES = _csr.NUMPY_MAX_LEXSORT_EDGES = 0
    rng = np.random.default_rng(7)
    n = 300
    src, dst = rng.integers(0, n, 1500), rng.integers(0, n, 1500)
    G = gunpy.Graph.from_edges(src, dst, num_vertices=n, directed=False)
    # the oracle from the raw edges
    A = sp.coo_matrix((np.ones(src.size), (src, dst)), shape=(n, n)).tocsr()
    ref = shortest_path(A, unweighted=True, directed=False, indices=[0, 1, 2])
    ref = np.where(np.isinf(ref), -1, ref).astype(np.int64)
    gunpy.bfs(G, 0, backend="cpu")  # kernels loaded before the threads race
    gunpy.cc(G, backend="cpu")
    layer = numba.threading_layer()
    bad, errors = [], []
    start = threading.Barrier(4)

    def work(k):
        try:
            start.wait()
            for i in range(6):
                s = (k + i) % 3
                if not np.array_equal(gunpy.bfs(G, s, backend="cpu").depth, ref[s]):
                    bad.append((k, i))
                gunpy.cc(G, backend="cpu")
                H = gunpy.Graph.from_edges(src, dst, num_vertices=n, directed=False)
                if not np.array_equal(H.column_indices, G.column_indices):
                    bad.append((k, i, "graph"))
        except Exception as exc:
            errors.append(repr(exc))

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad and not errors, (bad, errors)
    if sys.argv[1:] == ["fork"]:
        # a child forked while another thread holds the region lock gets a fresh one
        held, go = threading.Event(), threading.Event()

        def hold():
            with threads.region():
                held.set()
                go.wait()

        t = threading.Thread(target=hold)
        t.start()
        held.wait()
        pid = os.fork()
        if pid == 0:
            ok = np.array_equal(gunpy.bfs(G, 1, backend="cpu").depth, ref[1])
            os._exit(0 if ok else 3)
        go.set()
        t.join()
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
    print("THREADS-OK", layer, threads.threadsafe())
""")


def _child(layer, *args):
    env = dict(os.environ, NUMBA_THREADING_LAYER=layer, NUMBA_NUM_THREADS="2",
               PYTHONPATH=ROOT)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=ROOT)


@pytest.fixture(autouse=True)
def _cpu_mode_only(mode):
    if mode != "cpu":
        pytest.skip("the CPU backend's threading layers (cpu test mode only)")


def test_threads_take_turns_under_workqueue_instead_of_aborting():
    # without the turns numba kills the process (SIGABRT: "Concurrent access has been
    # detected"); with them the four threads' BFS depths equal scipy's and their graphs
    # are the same
    p = _child("workqueue", "fork" if hasattr(os, "fork") else "")
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "THREADS-OK workqueue False" in p.stdout, out[-3000:]


def test_threadsafe_layers_take_no_turns():
    # this process's layer (tbb or omp where they load): the operators are the plain ones
    import numba

    from gunpy.backends import get_backend, threads
    from gunpy.operators.operator import operator
    be = get_backend("cpu")  # starts numba's threads
    if numba.threading_layer() == "workqueue":
        pytest.skip("this process runs numba's workqueue layer")
    assert threads.threadsafe() is True
    for name in ("compute", "filter.cull", "reduce"):
        op = operator(name)
        assert op.on(be) is op._resolve(type(be))
        assert not hasattr(op.on(be), "__wrapped__")  # no serialising wrapper
