"""Test machinery stays out of the runtime (issue 8).

Importing gunpy, even ``gunpy.backends.cuda`` under numba's CUDA simulator,
must not patch numba or change the process's GIL switch interval; the warp
intrinsic shim comes only from an explicit
``gunpy.testing.install_simulator_shims()``, and gunpy's CUDA backend says so
clearly when it is missing.

``NUMBA_ENABLE_CUDASIM`` is read when numba is first imported, so every check
runs in a fresh ``python -c`` subprocess. This module imports neither numba nor
gunpy, and its tests are unmarked and do not use the ``backend`` fixture, so
they run in the default cpu mode (and in gpu mode).
"""

import textwrap

from test_simwarp import run_sim  # the fresh-interpreter runner both files use

TIMEOUT = 300  # seconds per script

# An interval nothing would pick, set before gunpy is imported: any change shows.
ODD_INTERVAL = 0.0123

# What simwarp adds or replaces in the simulator; none of it may be there after a
# plain import.
CHECK_CLEAN = '''
from numba.cuda.simulator import kernel as sim_kernel, kernelapi
fake = kernelapi.FakeCUDAModule
for name in ("shfl_sync", "ballot_sync", "activemask", "syncwarp", "any_sync"):
    assert not hasattr(fake, name), f"cuda.{name} was added to the simulator"
assert fake.popc.__module__ == kernelapi.__name__, fake.popc.__module__
assert kernelapi.FakeCUDAShared.array.__module__ == kernelapi.__name__
assert sim_kernel.BlockManager.__init__.__module__ == sim_kernel.__name__
assert sim_kernel.BlockThread.run.__module__ == sim_kernel.__name__
assert sim_kernel.BlockThread.syncthreads.__module__ == sim_kernel.__name__
assert "gunpy.testing.simwarp" not in sys.modules, "simwarp was imported"
assert sys.getswitchinterval() == ODD, sys.getswitchinterval()
'''


def run_script(*parts, sim=True, timeout=TIMEOUT):
    """Run the (dedented) parts in a fresh interpreter (simulator on or off), after setting
    an odd GIL switch interval that nothing may change; fail unless it prints OK."""
    code = (f"import sys\nODD = {ODD_INTERVAL!r}\nsys.setswitchinterval(ODD)\n"
            + "".join(textwrap.dedent(p) for p in parts))
    return run_sim(code, sim=sim, prelude=False, timeout=timeout)


def test_importing_gunpy_under_the_simulator_changes_nothing():
    run_script('''
        import numba
        assert numba.config.ENABLE_CUDASIM
        import gunpy
        import gunpy.backends.cuda
        import gunpy.testing            # importing the test helpers installs nothing either
        from gunpy.operators.advance import common  # noqa: F401 - a module with warp code
    ''', CHECK_CLEAN, '''
        print("OK")
    ''')


def test_cuda_backend_without_shims_raises_a_clear_error():
    run_script('''
        import numpy as np
        import gunpy
        from gunpy.backends import get_backend
        from gunpy.backends.cuda import CudaBackend

        def expect_clear_error(call):
            try:
                call()
            except RuntimeError as e:
                msg = str(e)
                assert "gunpy.testing.install_simulator_shims()" in msg, msg
                assert "shfl_sync" in msg, msg
                return
            raise AssertionError(f"{call} did not raise")

        expect_clear_error(CudaBackend)
        expect_clear_error(lambda: get_backend("cuda"))
        G = gunpy.Graph.from_edges(np.array([0, 1]), np.array([1, 2]), num_vertices=3)
        expect_clear_error(lambda: gunpy.bfs(G, 0, backend="cuda"))
    ''', CHECK_CLEAN, '''
        print("OK")
    ''')


def test_install_simulator_shims_then_bfs_on_the_simulator():
    run_script('''
        import numpy as np
        import gunpy
        import gunpy.backends.cuda
        from gunpy.testing import install_simulator_shims, reference_depths, check_bfs_tree
        from numba.cuda.simulator import kernelapi

        assert install_simulator_shims() is True
        assert sys.getswitchinterval() == ODD, "switch interval changed without being asked"
        assert hasattr(kernelapi.FakeCUDAModule, "shfl_sync")
        assert install_simulator_shims(switch_interval=5e-4) is True      # idempotent
        assert sys.getswitchinterval() == 5e-4

        # 0 -> 1 -> 2 -> 3, 0 -> 4 -> 3, 5 isolated; 6 -> 0 (not reachable from 0)
        src = np.array([0, 1, 2, 0, 4, 6])
        dst = np.array([1, 2, 3, 4, 3, 0])
        G = gunpy.Graph.from_edges(src, dst, num_vertices=7)
        for direction in ("push", "auto"):
            r = gunpy.bfs(G, 0, backend="cuda", direction=direction)
            assert r.stats.backend == "cuda"
            depth = r.depth.tolist()
            assert depth[:5] == [0, 1, 2, 2, 1], depth
            assert depth[5] < 0 and depth[6] < 0, depth
            check_bfs_tree(G, 0, r.depth, r.parent, reference=reference_depths(G, 0))
        print("OK")
    ''')


def test_install_simulator_shims_is_a_noop_without_the_simulator():
    run_script('''
        from gunpy.testing import install_simulator_shims
        assert install_simulator_shims(switch_interval=5e-4) is False
        assert sys.getswitchinterval() == ODD
        assert "gunpy.testing.simwarp" in sys.modules     # imported, but it did nothing
        from gunpy.testing import simwarp
        assert not simwarp.installed() and simwarp.patches() == []
        assert "numba.cuda.simulator.kernelapi" not in sys.modules or not hasattr(
            sys.modules["numba.cuda.simulator.kernelapi"].FakeCUDAModule, "shfl_sync")
        print("OK")
    ''', sim=False)


def test_importing_gunpy_loads_nothing_heavy_and_writes_nothing():
    # ``import gunpy`` is a table of names: no numba, no numba.cuda, no scipy, no
    # primitive, no environment variable written; ``gunpy.bfs`` then loads BFS alone
    run_script('''
        import os
        env = dict(os.environ)
        import gunpy
        heavy = [m for m in ("numba", "numba.cuda", "scipy", "gunpy.graph", "gunpy.primitives.bfs")
                 if m in sys.modules]
        assert not heavy, heavy
        assert dict(os.environ) == env, set(os.environ.items()) ^ set(env.items())
        assert "bfs" in dir(gunpy) and "Graph" in gunpy.__all__
        G = gunpy.generators.path(4)
        assert gunpy.bfs(G, 0, backend="cpu").depth.tolist() == [0, 1, 2, 3]
        assert "gunpy.primitives.bfs" in sys.modules
        assert "gunpy.primitives.louvain" not in sys.modules
        # a primitive's module is an attribute of the package, imported on first use
        import gunpy.primitives
        assert gunpy.primitives.geo.random_locations and "gunpy.primitives.geo" in sys.modules
        try:
            gunpy.primitives.nope
        except AttributeError as e:
            assert "has no attribute 'nope'" in str(e)
        else:
            raise AssertionError("gunpy.primitives.nope")
        # CPU work never needs the CUDA backend's module
        assert "gunpy.backends.cuda" not in sys.modules, "the CUDA backend was made"
        from gunpy import registry
        assert [p.name for p in registry.primitives()][:len(registry.BUILTIN)] == \\
            list(registry.BUILTIN)
        print("OK")
    ''', sim=False)


def test_cpu_runs_never_import_numba_cuda():
    # numba.cuda costs about 0.4 s to import, and a CPU run (a machine with no GPU) never
    # needs it: the operator modules bind it on first CUDA use (gunpy.backends.cuda.bind)
    run_script('''
        import gunpy
        G = gunpy.generators.path(10)
        assert gunpy.bfs(G, 0, backend="cpu").depth.tolist() == list(range(10))
        gunpy.sssp(G, 0, backend="cpu")
        gunpy.cc(G, backend="cpu")
        gunpy.pagerank(G, backend="cpu")
        gunpy.bc(G, [0], backend="cpu")
        import gunpy.operators, gunpy.operators.advance, gunpy.operators.near_far  # noqa: E401
        assert "numba" in sys.modules
        assert "numba.cuda" not in sys.modules, "a CPU run imported numba.cuda"
        print("OK")
    ''', sim=False)


def test_the_default_backend_on_a_machine_without_a_driver_never_imports_numba_cuda():
    # backend="auto" asks cuda_status(), which first tries to load the driver library where
    # numba-cuda looks for it: where none loads, numba.cuda is not imported to learn that
    run_script('''
        import ctypes
        real = ctypes.CDLL
        def no_driver(path, *args, **kwargs):  # as on a machine with no NVIDIA driver
            if "libcuda" in str(path):
                raise OSError(f"{path}: cannot open shared object file")
            return real(path, *args, **kwargs)
        ctypes.CDLL = no_driver
        import gunpy
        from gunpy.backends import cuda_status
        assert gunpy.bfs(gunpy.generators.path(5), 0).stats.backend == "cpu"
        ok, why = cuda_status()
        assert not ok and "no CUDA driver" in why, why
        assert "numba.cuda" not in sys.modules, "backend='auto' imported numba.cuda"
        print("OK")
    ''', sim=False)
