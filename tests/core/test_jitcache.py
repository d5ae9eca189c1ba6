"""The persistent kernel cache: reused across processes, never stale, safe to share.

Each test runs fresh Python processes against a private cache folder
(``GUNPY_CACHE_DIR``), because what matters is what a *new* process finds.
"""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

ENV_KEYS = ("GUNPY_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "GUNPY_KERNEL_CACHE",
            "GUNPY_CACHE_KEY_FILE", "XDG_CONFIG_HOME")
ZERO = {"hits": 0, "misses": 0, "saved": 0, "errors": 0, "uncacheable": 0, "rejected": 0,
        "unsaved": 0}

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
    """A private cache folder, and a private key beside it (never the user's own)."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    env["GUNPY_CACHE_DIR"] = str(cache)
    env["GUNPY_CACHE_KEY_FILE"] = os.path.join(os.path.dirname(str(cache)), "secret", "cache.key")
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
    # a kernel compiled only as another's callee (a helper dispatcher) is not looked up when
    # its caller loads: at most as many hits as the first process compiled
    hits = second["counters"]["hits"]
    assert 0 < hits <= first["counters"]["misses"]
    assert second["counters"] == {**ZERO, "hits": hits}
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


@pytest.fixture(autouse=True)
def _private_key(tmp_path_factory, monkeypatch):
    """In-process tests sign with a key of their own, outside the folders they count."""
    monkeypatch.setenv("GUNPY_CACHE_KEY_FILE",
                       str(tmp_path_factory.mktemp("key") / "cache.key"))


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
    # each kernel compiled by one process only: the others waited for its entry and loaded it
    entries = [f for _, _, fs in os.walk(cache) for f in fs if f.endswith(".gpk")]
    assert sum(r["counters"]["misses"] for r in results) == len(entries) > 0
    assert sum(r["counters"]["hits"] for r in results) == 3 * len(entries)
    assert not [f for _, _, fs in os.walk(cache) for f in fs if f.endswith(".lock")]
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
    assert r["counters"] == ZERO
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


def test_a_claimed_compile_makes_others_wait_then_compile_after_the_limit(tmp_path, monkeypatch):
    from gunpy import _jitcache
    path = str(tmp_path / "k" / "entry.gpk")
    monkeypatch.setattr(_jitcache, "_held", set())
    fd, written = _jitcache._claim(path)
    assert fd is not None and not written and os.path.exists(path + ".lock")
    monkeypatch.setattr(_jitcache, "CLAIM_WAIT", 0.3)
    _jitcache._held.clear()                         # as if another process held it
    t0 = time.monotonic()
    assert _jitcache._claim(path) == (None, False)  # held elsewhere: waited, then compile
    assert time.monotonic() - t0 >= 0.3
    open(path, "wb").close()                        # the holder wrote the entry
    assert _jitcache._claim(path) == (None, True)   # a waiter loads it at once
    _jitcache._release(fd, path + ".lock")
    assert not os.path.exists(path + ".lock")
    os.unlink(path)
    fd, _ = _jitcache._claim(path)                  # this process never waits for itself
    t0 = time.monotonic()
    assert _jitcache._claim(path) == (None, False) and time.monotonic() - t0 < 0.3
    _jitcache._release(fd, path + ".lock")


def test_a_failed_compile_drops_its_claim(tmp_path, monkeypatch):
    monkeypatch.setenv("GUNPY_CACHE_DIR", str(tmp_path))
    import numba
    from gunpy import _jitcache

    def f(x):
        return x.no_such_attribute

    k = _jitcache.cpu_jit(f)
    with pytest.raises(numba.TypingError):
        k(3)
    assert _jitcache.counters["misses"] > 0
    assert not [f for _, _, fs in os.walk(tmp_path) for f in fs if f.endswith(".lock")]


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
    assert str(cache) in info.stdout and "  gunpy.operators." in info.stdout
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


# ----------------------------------------------------------------------------- integrity
# BFS and CC, every entry the process looks up recorded (the ones a later process reads)
TRACED = """
import json, gunpy
from gunpy import _jitcache
looked_up = []
_load = _jitcache._KernelCache._load
def _traced(self, sig, tc):
    looked_up.append(self._path(self._key(sig, tc.codegen())))
    return _load(self, sig, tc)
_jitcache._KernelCache._load = _traced
G = gunpy.generators.rmat(8, seed=3)
depth = gunpy.bfs(G, 1, backend="cpu").depth.tolist()
labels = gunpy.cc(G, backend="cpu").labels.tolist()
print(json.dumps({"depth": depth, "labels": labels, "counters": _jitcache.counters,
                  "compiled": _jitcache.compiled, "looked_up": looked_up}))
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A BFS cache filled once: ``(folder holding kernels/ and secret/, the first run, the
    entries a process looks up)``; tests copy it."""
    root = tmp_path_factory.mktemp("built")
    first = _run(TRACED, _env(root / "kernels"))
    again = _run(TRACED, _env(root / "kernels"))
    assert again["counters"]["misses"] == 0 and again["counters"]["hits"] >= 7
    return root, first, sorted(set(again["looked_up"]))


def _copy(built, tmp_path):
    import shutil
    root, first, looked_up = built
    shutil.copytree(root, tmp_path / "c")
    return tmp_path / "c" / "kernels", first, [p.replace(str(root), str(tmp_path / "c"))
                                               for p in looked_up]


class _Marker:
    """Unpickling it creates a file: proof that the bytes reached ``pickle.loads``."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_tampered_entries_are_rejected_never_loaded_and_recompiled(built, tmp_path,
                                                                   monkeypatch):
    import pickle
    import random

    from gunpy import _jitcache
    cache, first, paths = _copy(built, tmp_path)
    marker = tmp_path / "MARKER"
    rng = random.Random(7)
    # 1-2: random bits flipped in the payload (machine code, IR, anything: key and file intact)
    for p in paths[:2]:
        data = bytearray(open(p, "rb").read())
        for _ in range(3):
            i = rng.randrange(_jitcache._HEAD, len(data))
            data[i] ^= 1 << rng.randrange(8)
        open(p, "wb").write(bytes(data))
    # 3: truncated
    with open(paths[2], "r+b") as f:
        f.truncate(os.path.getsize(paths[2]) // 2)
    # 4-5: two valid entries swapped (each is another key's)
    a, b = open(paths[3], "rb").read(), open(paths[4], "rb").read()
    open(paths[3], "wb").write(b)
    open(paths[4], "wb").write(a)
    # 6: a bare pickle whose loading runs code (an entry of an older gunpy's format)
    open(paths[5], "wb").write(pickle.dumps(("key", _Marker(str(marker)))))
    # 7: the same in this format, under this entry's own key, with a made-up MAC
    key = _jitcache.entry_key(open(paths[6], "rb").read())[0]
    open(paths[6], "wb").write(_jitcache.pack_entry(b"not the key" * 3, key,
                                                     pickle.dumps(_Marker(str(marker)))))
    env = _env(cache)
    for k in ENV_KEYS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("GUNPY_CACHE_DIR", env["GUNPY_CACHE_DIR"])
    monkeypatch.setenv("GUNPY_CACHE_KEY_FILE", env["GUNPY_CACHE_KEY_FILE"])
    assert _jitcache.info()["unverified"] == 7  # gunpy cache info sees them before any use

    second = _run(TRACED, env)
    assert not marker.exists()  # nothing of a failing entry was unpickled
    assert second["depth"] == first["depth"] and second["labels"] == first["labels"]
    c = second["counters"]
    assert c["rejected"] == 7 and c["misses"] == 7 and c["saved"] == 7, c
    # (a recompiled kernel may look up its callees too: they hit)
    assert c["hits"] >= len(paths) - 7 and c["errors"] == 0
    st = _jitcache.info()
    assert st["unverified"] == 0 and st["rejected"] == 7  # rewritten; the log says what happened
    third = _run(TRACED, env)
    assert third["counters"]["hits"] == len(paths) and third["counters"]["rejected"] == 0

    # another key (a new user, a lost key file): every entry fails and is compiled again
    other = _run(TRACED, _env(cache, GUNPY_CACHE_KEY_FILE=str(tmp_path / "other.key")))
    assert other["counters"]["rejected"] >= len(paths) and other["counters"]["hits"] == 0
    assert other["depth"] == first["depth"] and other["labels"] == first["labels"]
    assert not marker.exists()


# the module of the key on its own (no gunpy import): fast enough to race
KEY_RACE = """
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("jc", {path!r})
jc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(jc)
while time.time() < {start}:
    pass
print(jc.secret().hex())
"""


def test_the_key_is_made_where_hard_links_are_not_supported(tmp_path, monkeypatch):
    import stat

    from gunpy import _cachesign

    def no_links(src, dst):
        raise OSError("no hard links here")

    monkeypatch.setattr(_cachesign.os, "link", no_links)
    path = str(tmp_path / "secret" / "cache.key")
    _cachesign._create_key(path)
    first = open(path, "rb").read()
    assert len(first.strip()) == 64 and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    _cachesign._create_key(path)  # one is there: kept
    assert open(path, "rb").read() == first
    assert os.listdir(tmp_path / "secret") == ["cache.key"]  # no temporary file left


def test_processes_creating_the_key_at_once_agree(tmp_path):
    import stat
    import time

    from gunpy import _cachesign
    env = _env(tmp_path / "kernels")
    code = KEY_RACE.format(path=_cachesign.__file__, start=time.time() + 1.5)
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(6)]
    keys = set()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        keys.add(out.strip())
    key_file = env["GUNPY_CACHE_KEY_FILE"]
    assert len(keys) == 1 and len(keys.pop()) == 64
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(key_file)).st_mode) == 0o700
    assert os.listdir(os.path.dirname(key_file)) == ["cache.key"]  # no temporary left


def test_a_key_others_can_read_is_refused(tmp_path, monkeypatch):
    from gunpy import _jitcache
    key = tmp_path / "cache.key"
    monkeypatch.setenv("GUNPY_CACHE_KEY_FILE", str(key))
    monkeypatch.setenv("GUNPY_CACHE_DIR", str(tmp_path / "kernels"))
    assert len(_jitcache.secret()) == 32
    _jitcache._secrets.clear()
    os.chmod(key, 0o644)
    with pytest.raises(_jitcache.CacheError, match="chmod 600"):
        _jitcache.secret()
    assert "chmod 600" in _jitcache.problem()
    key.write_text("not a key\n")
    os.chmod(key, 0o600)
    with pytest.raises(_jitcache.CacheError, match="64 hex digits"):
        _jitcache.secret()
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # root can give it away
        key.write_text("ab" * 32 + "\n")
        os.chown(key, 65534, -1)
        with pytest.raises(_jitcache.CacheError, match="another user"):
            _jitcache.secret()


def _tiny_kernel():
    from gunpy import _jitcache

    def add_seven(x):
        return x + 7

    return _jitcache.cpu_jit(add_seven)


def test_unwritable_cache_compiles_warns_and_counts(tmp_path, monkeypatch):
    """The environment's folder cannot be made (a file is in its place): the kernel runs, the
    failure is counted and said once."""
    from gunpy import _jitcache
    cache = tmp_path / "kernels"
    monkeypatch.setenv("GUNPY_CACHE_DIR", str(cache))
    monkeypatch.setenv("GUNPY_CACHE_KEY_FILE", str(tmp_path / "cache.key"))
    cache.mkdir()
    (cache / _jitcache.environment_folder()).write_text("in the way")
    _jitcache.reset_counters()
    with pytest.warns(RuntimeWarning, match="without the cache"):
        assert _tiny_kernel()(1) == 8
    assert _jitcache.counters["unsaved"] == 1 and _jitcache.counters["saved"] == 0
    assert _jitcache.last_problem


def _cli(argv, capsys):
    from gunpy import cli
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cache_commands_say_when_the_folder_is_a_file(tmp_path, monkeypatch, capsys):
    not_a_folder = tmp_path / "kernels"
    not_a_folder.write_text("a file")
    monkeypatch.setenv("GUNPY_CACHE_DIR", str(not_a_folder))
    monkeypatch.setenv("GUNPY_CACHE_KEY_FILE", str(tmp_path / "cache.key"))
    code, out, err = _cli(["warmup", "--backend", "cpu", "--primitives", "bfs"], capsys)
    assert code == 1 and "is a file" in err and "nothing compiled" in err
    code, out, err = _cli(["cache", "clear"], capsys)
    assert code == 1 and "is a file" in err and "removed" not in out
    code, out, err = _cli(["cache", "info"], capsys)
    assert code == 0 and f"usable: no: {not_a_folder} is a file" in out
    assert not_a_folder.read_text() == "a file"


def test_warmup_says_when_nothing_was_saved(tmp_path, monkeypatch, capsys):
    from gunpy import _jitcache
    cache = tmp_path / "kernels"
    cache.mkdir()
    (cache / _jitcache.environment_folder()).write_text("in the way")
    monkeypatch.setenv("GUNPY_CACHE_DIR", str(cache))
    monkeypatch.setenv("GUNPY_CACHE_KEY_FILE", str(tmp_path / "cache.key"))
    import gunpy.warmup
    monkeypatch.setattr(gunpy.warmup, "warmup", lambda *a, **k: _tiny_kernel()(1))
    _jitcache.reset_counters()
    with pytest.warns(RuntimeWarning):
        code, out, err = _cli(["warmup", "--backend", "cpu"], capsys)
    assert code == 1 and "1 compiled kernels were not saved" in err
    monkeypatch.setenv("GUNPY_KERNEL_CACHE", "0")
    code, out, err = _cli(["warmup", "--backend", "cpu"], capsys)
    assert code == 1 and "switched off" in err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes through permission bits: the file case covers it")
def test_cache_commands_say_when_the_folder_is_read_only(tmp_path, monkeypatch, capsys):
    from gunpy import _jitcache
    cache = tmp_path / "kernels"
    sub = cache / _jitcache.environment_folder() / "gunpy.k"
    sub.mkdir(parents=True)
    (sub / ("0" * 32 + ".gpk")).write_bytes(b"x")
    monkeypatch.setenv("GUNPY_CACHE_DIR", str(cache))
    monkeypatch.setenv("GUNPY_CACHE_KEY_FILE", str(tmp_path / "cache.key"))
    os.chmod(sub, 0o555)
    os.chmod(cache, 0o555)
    try:
        code, out, err = _cli(["cache", "clear"], capsys)
        assert code == 1 and "could not be removed" in err and "removed 0" in out
        code, out, err = _cli(["warmup", "--backend", "cpu"], capsys)
        assert code == 1 and "not writable" in err
        code, out, err = _cli(["cache", "info"], capsys)
        assert "usable: no" in out and "not writable" in out
    finally:
        os.chmod(cache, 0o755)
        os.chmod(sub, 0o755)
