"""The persistent kernel cache: reused across processes, never stale, safe to share.

Each test runs fresh Python processes against a private cache folder
(``GUNPY_CACHE_DIR``), because what matters is what a *new* process finds.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

ENV_KEYS = ("GUNPY_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "GUNPY_KERNEL_CACHE")

# a functor in a user module, run through BFS's machinery; prints the result and counters
FUNCTOR_MODULE = """
import numba
from gunpy import Functor, atomics

@numba.njit
def step(x):
    return x + {step}

class Hops(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return atomics.cas(data.hops, dst, -1, step(data.hops[src])) == -1
"""

DRIVER = """
import json, sys
from collections import namedtuple
import numpy as np
import gunpy
from gunpy import Enactor, Problem, _jitcache
sys.path.insert(0, {folder!r})
from userfunctor import Hops

HopsData = namedtuple("HopsData", "hops")

class HopsProblem(Problem):
    Data = HopsData
    def init(self):
        self.hops = self.vertex_array(np.int64, fill=-1)

class HopsEnactor(Enactor):
    def prepare_frontier(self, frontier):
        self.problem.backend.write(self.problem.hops, 0, 0)
        frontier.push(0)
    def loop(self, frontier):
        return self.advance(frontier, Hops)

G = gunpy.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 4], directed=True)
p = HopsProblem(G, backend="cpu")
HopsEnactor(p).enact()
print(json.dumps({{"hops": p.hops.tolist(), "counters": _jitcache.counters,
                  "compiled": _jitcache.compiled}}))
"""


def _env(cache, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    env["GUNPY_CACHE_DIR"] = str(cache)
    env.update(extra)
    return env


def _run(code, env, cwd=None):
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


BFS = """
import json, gunpy
from gunpy import _jitcache
G = gunpy.generators.rmat(8, seed=3)
r = gunpy.bfs(G, 1, backend="cpu")
print(json.dumps({"depth": r.depth.tolist(), "counters": _jitcache.counters,
                  "compiled": _jitcache.compiled}))
"""

# intersect's and neighbor_mode's CPU kernels keep a scratch per thread: indexed by the
# prange's own slots, not numba's thread id (which bakes in a process address)
LDBC = """
import json, gunpy
from gunpy import _jitcache
G = gunpy.generators.rmat(8, seed=3)
lcc = gunpy.lcc(G, backend="cpu").lcc
labels = gunpy.cdlp(G, backend="cpu").labels
print(json.dumps({"lcc": lcc.tolist(), "labels": labels.tolist(),
                  "counters": _jitcache.counters, "compiled": _jitcache.compiled}))
"""


def test_second_process_loads_every_kernel(tmp_path):
    cache = tmp_path / "kernels"
    first = _run(BFS, _env(cache))
    second = _run(BFS, _env(cache))
    assert first["counters"]["misses"] > 0 and first["counters"]["hits"] == 0
    assert first["counters"]["saved"] == first["counters"]["misses"]
    assert second["counters"] == {"hits": first["counters"]["misses"], "misses": 0, "saved": 0,
                                  "errors": 0, "uncacheable": 0}
    assert second["depth"] == first["depth"]


def test_lcc_and_cdlp_kernels_are_cached_too(tmp_path):
    cache = tmp_path / "kernels"
    first, second = _run(LDBC, _env(cache)), _run(LDBC, _env(cache))
    assert first["counters"]["uncacheable"] == 0 and first["counters"]["misses"] > 0
    assert second["counters"]["misses"] == 0, second["compiled"]
    assert second["lcc"] == first["lcc"] and second["labels"] == first["labels"]


def _user_folder(tmp_path, step):
    folder = tmp_path / "user"
    folder.mkdir(exist_ok=True)
    (folder / "userfunctor.py").write_text(FUNCTOR_MODULE.format(step=step))
    return folder


def test_editing_a_functor_helper_is_never_stale(tmp_path):
    cache = tmp_path / "kernels"
    folder = _user_folder(tmp_path, 1)
    code = DRIVER.format(folder=str(folder))
    a = _run(code, _env(cache))
    assert a["hops"] == [0, 1, 2, 3, 4]
    b = _run(code, _env(cache))
    assert b["hops"] == a["hops"] and b["counters"]["misses"] == 0
    # same file length and line numbers, new constant in a helper the hook calls
    _user_folder(tmp_path, 2)
    c = _run(code, _env(cache))
    assert c["hops"] == [0, 2, 4, 6, 8]
    assert "gunpy.operators.advance.thread_mapped.cpu_source.advance" in c["compiled"]
    # and back: the first build is still there
    _user_folder(tmp_path, 1)
    d = _run(code, _env(cache))
    assert d["hops"] == [0, 1, 2, 3, 4] and d["counters"]["misses"] == 0


def test_functors_defined_in_main_are_cached(tmp_path):
    """A functor with no source file (``python -c``, a notebook cell) is keyed by its code."""
    cache = tmp_path / "kernels"
    code = FUNCTOR_MODULE.format(step=1) + DRIVER.replace("from userfunctor import Hops", "")
    code = code.format(folder=str(tmp_path))
    a = _run(code, _env(cache))
    b = _run(code, _env(cache))
    assert a["hops"] == b["hops"] == [0, 1, 2, 3, 4]
    assert b["counters"]["misses"] == 0 and b["counters"]["hits"] == a["counters"]["misses"]
    c = _run(code.replace("return x + 1", "return x + 3"), _env(cache))
    assert c["hops"] == [0, 3, 6, 9, 12] and c["counters"]["misses"] > 0


def test_parallel_and_serial_builds_do_not_collide(tmp_path, monkeypatch):
    monkeypatch.setenv("GUNPY_CACHE_DIR", str(tmp_path))
    import numpy as np
    from numba import prange

    from gunpy.backends.cpu import kernel_pair

    def count(a, n):
        s = 0
        for i in prange(n):
            s += a[i]
        return s

    parallel, serial = kernel_pair(count)
    a = np.arange(10, dtype=np.int64)
    assert parallel(a, 10) == serial(a, 10) == 45
    files = [f for _, _, fs in os.walk(tmp_path) for f in fs]
    assert len(files) == 2
    assert parallel.parallel_diagnostics is not None  # the parallel build really is one


def test_corrupt_entries_are_recompiled(tmp_path):
    cache = tmp_path / "kernels"
    first = _run(BFS, _env(cache))
    for dirpath, _, files in os.walk(cache):
        for f in files:
            with open(os.path.join(dirpath, f), "r+b") as fh:
                fh.truncate(40)
    second = _run(BFS, _env(cache))
    assert second["depth"] == first["depth"]
    assert second["counters"]["errors"] == first["counters"]["misses"]
    third = _run(BFS, _env(cache))
    assert third["counters"]["misses"] == 0 and third["counters"]["errors"] == 0


def test_concurrent_processes_share_one_cache(tmp_path):
    cache = tmp_path / "kernels"
    procs = [subprocess.Popen([sys.executable, "-c", BFS], env=_env(cache), text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert all(r["depth"] == results[0]["depth"] for r in results)
    after = _run(BFS, _env(cache))
    assert after["counters"]["misses"] == 0 and after["depth"] == results[0]["depth"]


def test_cache_location_order(tmp_path, monkeypatch):
    from gunpy import _jitcache
    for k in ENV_KEYS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _jitcache.cache_dir() == str(tmp_path / "xdg" / "gunpy" / "kernels")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert _jitcache.cache_dir() == str(tmp_path / "numba" / "gunpy")
    monkeypatch.setenv("GUNPY_CACHE_DIR", str(tmp_path / "mine"))
    assert _jitcache.cache_dir() == str(tmp_path / "mine")
    import gunpy
    assert not _jitcache.cache_dir().startswith(os.path.dirname(gunpy.__file__))


def test_switched_off(tmp_path):
    cache = tmp_path / "kernels"
    r = _run(BFS, _env(cache, GUNPY_KERNEL_CACHE="0"))
    assert r["counters"] == {"hits": 0, "misses": 0, "saved": 0, "errors": 0, "uncacheable": 0}
    assert not cache.exists()


def test_uncacheable_objects_compile_but_are_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("GUNPY_CACHE_DIR", str(tmp_path))
    from gunpy import _jitcache

    import enum

    class Step(enum.Enum):  # numba compiles it; the fingerprint does not describe enums
        ONE = 1

    one = Step.ONE

    def f(x):
        return x + one.value

    with pytest.raises(_jitcache.Uncacheable):
        _jitcache.fingerprint(f)

    before = _jitcache.counters["uncacheable"]
    k = _jitcache.cpu_jit(f)
    assert k(3) == 4  # compiled and run as usual
    assert _jitcache.counters["uncacheable"] == before + 1
    assert not any(files for _, _, files in os.walk(tmp_path))


def test_fingerprint_follows_closures_and_globals():
    from gunpy import _jitcache

    def make(c):
        def f(x):
            return x + c
        return f

    assert _jitcache.fingerprint(make(1)) == _jitcache.fingerprint(make(1))
    assert _jitcache.fingerprint(make(1)) != _jitcache.fingerprint(make(2))
    assert _jitcache.fingerprint(make(1)) != _jitcache.fingerprint(make(1.0))
    ns1, ns2 = {"K": 1}, {"K": 2}
    src = "def h(x):\n    return x + K\n"
    exec(src, ns1)
    exec(src, ns2)
    assert _jitcache.fingerprint(ns1["h"]) != _jitcache.fingerprint(ns2["h"])


def test_cli_cache_info_and_clear(tmp_path):
    cache = tmp_path / "kernels"
    _run(BFS, _env(cache))
    gunpy_cli = [sys.executable, "-m", "gunpy.cli"]
    info = subprocess.run(gunpy_cli + ["cache", "info", "-v"], env=_env(cache),
                          capture_output=True, text=True, timeout=120)
    assert info.returncode == 0, info.stderr
    assert str(cache) in info.stdout and "thread_mapped" in info.stdout
    clear = subprocess.run(gunpy_cli + ["cache", "clear"], env=_env(cache), capture_output=True,
                           text=True, timeout=120)
    assert clear.returncode == 0 and "removed" in clear.stdout
    again = subprocess.run(gunpy_cli + ["cache", "info"], env=_env(cache), capture_output=True,
                           text=True, timeout=120)
    assert "0 compiled kernels" in again.stdout


def test_warmup_fills_the_cache_for_default_calls(tmp_path):
    cache = tmp_path / "kernels"
    out = subprocess.run([sys.executable, "-m", "gunpy.cli", "warmup", "--backend", "cpu",
                          "--primitives", "bfs", "cc"], env=_env(cache), capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    code = textwrap.dedent("""
        import json, gunpy
        from gunpy import _jitcache
        G = gunpy.datasets.load("email-Eu-core", progress=False)
        gunpy.bfs(G, 0, backend="cpu"); gunpy.cc(G, backend="cpu")
        print(json.dumps({"counters": _jitcache.counters, "compiled": _jitcache.compiled}))
    """)
    r = _run(code, _env(cache))
    assert r["counters"]["misses"] == 0, r["compiled"]
    assert r["counters"]["hits"] > 0


def test_editing_gunpy_itself_is_never_stale(tmp_path):
    """A copy of gunpy on the path: a change to any of its source files changes every key."""
    import shutil

    import gunpy
    import gunpy.primitives
    pkg = tmp_path / "site" / "gunpy"
    shutil.copytree(os.path.dirname(gunpy.__file__), pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.rmtree(pkg / "primitives", ignore_errors=True)
    shutil.copytree(os.path.dirname(gunpy.primitives.__file__), pkg / "primitives",
                    ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "kernels"
    env = _env(cache, PYTHONPATH=str(tmp_path / "site"))
    # the copy, not this checkout (an editable install maps gunpy here ahead of PYTHONPATH)
    prefix = ("import sys\nsys.meta_path = [f for f in sys.meta_path\n"
              "                 if not getattr(f, '__module__', '').startswith('__editable__')]\n")
    code = prefix + BFS.replace("import json, gunpy", "import json, gunpy\nassert gunpy.__file__"
                                ".startswith(" + repr(str(tmp_path)) + ")")
    a = _run(code, env, cwd=tmp_path)
    assert a["counters"]["misses"] > 0
    assert _run(code, env, cwd=tmp_path)["counters"]["misses"] == 0
    target = pkg / "operators" / "advance" / "thread_mapped.py"
    target.write_text(target.read_text() + "\n# an edit\n")
    c = _run(code, env, cwd=tmp_path)
    assert c["counters"]["hits"] == 0 and c["counters"]["misses"] == a["counters"]["misses"]
    assert c["depth"] == a["depth"]


def test_clear_stale_keeps_this_environments_kernels(tmp_path):
    cache = tmp_path / "kernels"
    _run(BFS, _env(cache))
    stale = cache / "env-0000000000000000" / "old.kernel"
    stale.mkdir(parents=True)
    (stale / "abc.gpk").write_bytes(b"from an older gunpy")
    gunpy_cli = [sys.executable, "-m", "gunpy.cli", "cache"]
    info = subprocess.run(gunpy_cli + ["info"], env=_env(cache), capture_output=True, text=True,
                          timeout=120)
    assert "1 kernels of other gunpy" in info.stdout, info.stdout
    out = subprocess.run(gunpy_cli + ["clear", "--stale"], env=_env(cache), capture_output=True,
                         text=True, timeout=120)
    assert "removed 1 kernels of other environments" in out.stdout, out.stdout + out.stderr
    assert not stale.exists()
    again = _run(BFS, _env(cache))
    assert again["counters"]["misses"] == 0 and again["counters"]["hits"] > 0


def test_source_hash_covers_kernel_modules_not_tooling(tmp_path):
    """Editing a kernel module changes every key (a miss); editing the CLI, the bench or the
    registry keeps them (a hit)."""
    import os
    import shutil

    import gunpy
    import gunpy.primitives
    from gunpy import _jitcache
    pkg, prims = tmp_path / "gunpy", tmp_path / "primitives"
    shutil.copytree(os.path.dirname(gunpy.__file__), pkg,
                    ignore=shutil.ignore_patterns("__pycache__", "primitives"))
    shutil.copytree(os.path.dirname(gunpy.primitives.__file__), prims,
                    ignore=shutil.ignore_patterns("__pycache__"))
    roots = [(str(pkg), True), (str(prims), False)]
    before = _jitcache._source_hash(roots)
    assert before == _jitcache._source_hash(roots)
    for tooling in ("cli.py", "bench/suite.py", "registry.py", "bench/dist.py"):
        with open(pkg / tooling, "a") as f:
            f.write("\n# edited\n")
        assert _jitcache._source_hash(roots) == before, tooling
    for kernel_module in ("operators/scan.py", "atomics.py"):
        with open(pkg / kernel_module, "a") as f:
            f.write("\n# edited\n")
        assert _jitcache._source_hash(roots) != before, kernel_module
        before = _jitcache._source_hash(roots)
    with open(prims / "bfs.py", "a") as f:
        f.write("\n# edited\n")
    assert _jitcache._source_hash(roots) != before
