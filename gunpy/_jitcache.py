"""The persistent kernel cache: every kernel gunpy builds is compiled once per machine.

numba's own ``cache=True`` misses on every new process for gunpy's kernels:
they are closures made by factories, and numba keys a closure by a pickle of
its captured objects, which for a captured dispatcher holds a random uuid
(numba issues #2065, #6264); and the parallel and serial builds of one source
share a key (#6845). So gunpy keys each compiled kernel by a **fingerprint**
of what it is made of, computed without pickling (:mod:`gunpy._fingerprint`):
the kernel's code and everything it reaches, the jit options, the argument
types, gunpy's source and the versions of what compiles it, and the target.
Editing a functor, a helper it calls, or gunpy itself therefore never reuses a
stale kernel; a kernel whose fingerprint cannot be taken is compiled as
before, never cached.

**Integrity.** Every entry is signed with a per-user secret key and checked
before anything in it is unpickled (:mod:`gunpy._cachesign`). An entry that
fails (a flipped bit, a truncated file, another key's entry under this key's
name, a file someone else wrote) is deleted, logged (``rejected.log`` in the
cache folder), counted (``counters["rejected"]``) and compiled again: neither
corrupt machine code nor a crafted pickle ever reaches numba's loader.

Where it lives: ``$GUNPY_CACHE_DIR``, else ``$NUMBA_CACHE_DIR/gunpy``, else
``~/.cache/gunpy/kernels`` (``$XDG_CACHE_HOME`` respected), in a sub-folder
per environment (:func:`environment_folder`). One file per compiled kernel,
named by a hash of its key and written to a temporary name then renamed, so
processes running at once (pytest-xdist workers, MPI ranks) share it safely:
two writers of one key write equivalent files, and a reader sees a whole file
or none. A process about to compile a kernel first claims it (an advisory lock
beside its entry, :func:`_claim`): another process missing the same kernel
meanwhile waits for the entry and loads it instead of compiling it too (MPI
ranks starting together compile each kernel once), and compiles it itself
after :data:`CLAIM_WAIT` seconds or where file locks do not work. A file that
cannot be read is a miss (compiled again, rewritten); a
cache that cannot be written (a read-only folder, ``GUNPY_CACHE_DIR`` naming a
file, no usable key) warns once and compiles as if there were none
(:func:`problem` says why). ``GUNPY_KERNEL_CACHE=0`` switches the cache off.

Use :func:`cpu_jit` and :func:`cuda_jit` instead of ``numba.njit`` /
``cuda.jit``; ``gunpy cache info`` and ``gunpy cache clear`` show and empty
the cache (:func:`info`, :func:`clear`); ``gunpy cache export`` / ``import``
carry it to another machine (:mod:`gunpy.warmup`).
"""


import json
import os
import pickle
import tempfile
import threading
import time
import warnings
from collections import namedtuple

# the signed entries and the fingerprint, importable from here as before
from gunpy._cachesign import (_HEAD, _MAC, _MAGIC, _SUFFIX, CacheError,  # noqa: F401
                              _PartialKey, _read_key, _secrets, entry_key, entry_name,
                              key_file, pack_entry, secret, verify_entry, write_entry)
from gunpy._fingerprint import (TOOLING, Uncacheable, _cuda_target, _source_hash,  # noqa: F401
                                _type_key, environment, environment_folder, environment_key,
                                fingerprint)

__all__ = ["cpu_jit", "cuda_jit", "cache_dir", "key_file", "environment", "environment_folder",
           "enabled", "fingerprint", "problem", "info", "clear", "CacheError", "counters",
           "reset_counters"]

_lock = threading.Lock()

#: per-process counts: ``hits`` (loaded from disk), ``misses`` (compiled), ``saved``,
#: ``errors`` (entries that authenticated but could not be read back, or could not be read
#: at all), ``uncacheable`` (kernels whose fingerprint could not be taken), ``rejected``
#: (entries that failed authentication: deleted and compiled again), ``unsaved`` (compiled
#: kernels that could not be written: a read-only or unusable cache)
counters = {"hits": 0, "misses": 0, "saved": 0, "errors": 0, "uncacheable": 0, "rejected": 0,
            "unsaved": 0}


#: the kernel sources compiled (not loaded) in this process, in order
compiled = []


def reset_counters():
    for k in counters:
        counters[k] = 0
    compiled.clear()


def _count(name, n=1):
    with _lock:
        counters[name] += n


def enabled():
    """False when ``GUNPY_KERNEL_CACHE`` is ``0`` / ``off`` / ``false`` / ``no``."""
    return os.environ.get("GUNPY_KERNEL_CACHE", "1").strip().lower() not in ("0", "off", "false",
                                                                             "no")


def cache_dir():
    """The kernel cache's folder (see the module docstring for the order of choice)."""
    d = os.environ.get("GUNPY_CACHE_DIR")
    if d:
        return os.path.abspath(os.path.expanduser(d))
    d = os.environ.get("NUMBA_CACHE_DIR")
    if d:
        return os.path.join(os.path.abspath(os.path.expanduser(d)), "gunpy")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gunpy", "kernels")


# ----------------------------------------------------------------------------- claims
#: how long a process waits for another one compiling the same kernel before compiling it too
CLAIM_WAIT = 120.0
_LOCK_SUFFIX = ".lock"
_held = set()  # the lock files this process holds (it never waits for itself)


def _claim(path):
    """Claim the compilation of the kernel whose entry is ``path``.

    Returns ``(file descriptor or None, written)``: ``written`` when another process
    wrote the entry while this one waited (load it); otherwise the descriptor holds an
    exclusive lock until :func:`_release` (None where locks cannot be taken: compile
    unclaimed, as without this).
    """
    try:
        import fcntl
    except ImportError:  # no advisory locks here (Windows)
        return None, False
    lock = path + _LOCK_SUFFIX
    if lock in _held:  # this process is compiling it already (a nested or repeated compile)
        return None, False
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None, False
    deadline = time.monotonic() + CLAIM_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:  # another process is compiling it
            if os.path.exists(path) or time.monotonic() > deadline:
                os.close(fd)
                return None, os.path.exists(path)
            time.sleep(0.02)
        except OSError:  # a file system without locks
            os.close(fd)
            return None, False
    _held.add(lock)
    if os.path.exists(path):  # written between this process's miss and its lock
        _release(fd, lock)
        return None, True
    return fd, False


def _release(fd, lock):
    """Drop a claim: the lock file goes (a waiter then finds the entry), then the lock."""
    try:
        os.unlink(lock)
    except OSError:
        pass
    _held.discard(lock)
    os.close(fd)


# ----------------------------------------------------------------------------- rejects, problems
_LOG = "rejected.log"
_LOG_LIMIT = 1 << 20
_warned = set()      # problems already warned about in this process


def _reject(path, st, reason):
    """An entry failed authentication: count it, delete it (unless it was replaced since it
    was read), log it, and warn once."""
    _count("rejected")
    try:
        now = os.stat(path)
        if (now.st_ino, now.st_mtime_ns, now.st_size) == (st.st_ino, st.st_mtime_ns, st.st_size):
            os.unlink(path)
    except OSError:
        pass
    try:
        log = os.path.join(cache_dir(), _LOG)
        if _size(log) < _LOG_LIMIT:
            rel = os.path.relpath(path, cache_dir())
            with open(log, "a") as f:
                f.write(json.dumps({"time": time.strftime("%Y-%m-%d %H:%M:%S"), "pid": os.getpid(),
                                    "entry": rel, "reason": reason}) + "\n")
    except OSError:
        pass
    _warn_once("rejected", "gunpy: a kernel cache entry failed authentication (corrupt, altered, "
                           "or signed with another key): deleted and compiled again "
                           "(gunpy cache info)")


def _warn_once(what, message):
    if what not in _warned:
        _warned.add(what)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


#: why the cache could not be used in this process (a sentence), or None
last_problem = None


def _note_problem(reason):
    global last_problem
    last_problem = reason
    _warn_once(reason, f"gunpy: kernels are compiled without the cache: {reason}")


# ----------------------------------------------------------------------------- the cache
class _KernelCache:
    """numba's cache interface (``load_overload`` / ``save_overload``) over one file per key."""

    def __init__(self, py_func, target, options):
        self._py_func = py_func
        self._base = None  # the key's common part, computed on first use
        self._options = options
        self._target = target
        module = (getattr(py_func, "__module__", None) or "main").replace("<", "").replace(">", "")
        qual = py_func.__qualname__.replace("<locals>.", "").replace("<", "").replace(">", "")
        self._folder = f"{module}.{qual}"
        self._enabled = True
        self._claims = {}  # argument types -> (descriptor, lock file) of a claimed compile
        if target == "cuda":
            from numba.cuda.dispatcher import CUDACacheImpl
            self._impl = CUDACacheImpl.__new__(CUDACacheImpl)
        else:
            from numba.core.caching import CompileResultCacheImpl
            self._impl = CompileResultCacheImpl.__new__(CompileResultCacheImpl)

    # numba's _Cache interface
    @property
    def cache_path(self):
        return os.path.join(cache_dir(), environment_folder(), self._folder)

    def enable(self):
        self._enabled = True

    def disable(self):
        self._enabled = False

    def flush(self):
        pass

    def _base_key(self):
        if self._base is None:
            try:
                fp = fingerprint(self._py_func)
            except Uncacheable:
                self._enabled = False
                _count("uncacheable")
                raise
            self._base = repr((environment_key(), self._target, fp,
                               sorted(self._options.items())))
        return self._base

    def _key(self, sig, codegen):
        target = _cuda_target() if self._target == "cuda" else codegen.magic_tuple()
        # "cuda:env-...:" first, so that an entry's target and environment read without parsing
        return (f"{self._target}:{environment_folder()}:"
                + repr((self._base_key(), _type_key(sig), target)))

    def _path(self, key):
        return os.path.join(self.cache_path, entry_name(key))

    def load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        try:
            self._base_key()
        except Uncacheable:
            return None
        try:
            if self._target == "cuda":
                from numba.core.target_extension import target_override
                with target_override("cuda"):
                    target_context.refresh()
                    return self._load(sig, target_context)
            target_context.refresh()
            return self._load(sig, target_context)
        except Exception:  # an authenticated entry numba cannot rebuild: compile again
            _count("errors")
            return None

    def _miss(self):
        with _lock:
            counters["misses"] += 1
            compiled.append(self._folder)

    def _load(self, sig, target_context):
        key = self._key(sig, target_context.codegen())
        path = self._path(key)
        try:
            key_secret = secret()
        except CacheError as exc:
            _note_problem(str(exc))
            self._miss()
            return None
        try:
            with open(path, "rb") as f:
                data = f.read()
                st = os.fstat(f.fileno())
        except FileNotFoundError:
            self._drop_claim(sig)  # a claim left by an earlier attempt at this compile
            fd, written = _claim(path)
            if written:  # another process compiled it meanwhile
                return self._load(sig, target_context)
            if fd is not None:
                self._claims[_type_key(sig)] = (fd, path + _LOCK_SUFFIX)
            self._miss()
            return None
        except OSError:  # unreadable (permissions, I/O): compile, as for a missing file
            _count("errors")
            self._miss()
            return None
        body = verify_entry(key_secret, data, key)
        if body is None:  # nothing of it is unpickled: it is deleted and compiled again
            _reject(path, st, "failed authentication")
            self._miss()
            return None
        payload = pickle.loads(body)
        data = self._impl.rebuild(target_context, payload)
        _count("hits")
        return data

    def _drop_claim(self, sig):
        claim = self._claims.pop(_type_key(sig), None)
        if claim is not None:
            _release(*claim)

    def save_overload(self, sig, data):
        try:
            self._save(sig, data)
        finally:
            self._drop_claim(sig)

    def _save(self, sig, data):
        if not self._enabled:
            return
        try:
            if self._target != "cuda":
                if any(not x.can_cache for x in data.lifted) or data.library.has_dynamic_globals:
                    return
                codegen = data.codegen
            else:
                codegen = None
            key = self._key(sig, codegen)
            body = pickle.dumps(self._impl.reduce(data), protocol=-1)
            write_entry(self._path(key), pack_entry(secret(), key, body))
            _count("saved")
        except CacheError as exc:
            _count("unsaved")
            _note_problem(str(exc))
        except OSError as exc:  # a read-only or full disk never stops a run
            _count("unsaved")
            _note_problem(_unwritable(cache_dir(), exc))
        except Exception:  # a kernel numba cannot serialise: compiled, never cached
            _count("uncacheable")


def _unwritable(root, exc):
    """Why nothing can be written under ``root`` (a sentence)."""
    return _probe_dir(root) or f"cannot write to {root}: {exc.strerror or exc}"


def _attach(disp, pyfunc, target, options):
    """Give ``disp`` the persistent cache (no-op when off).

    The key is computed at the first compile, not here: kernels are made at
    import time too, and a kernel that turns out uncacheable is then compiled
    as usual.
    """
    if not enabled():
        return disp
    cache = disp._cache = _KernelCache(pyfunc, target, dict(options))
    compile_ = disp.compile

    def compile(sig):  # a compile that fails drops its claim too (save_overload is not called)
        try:
            return compile_(sig)
        except BaseException:
            cache._drop_claim(sig)
            raise

    disp.compile = compile
    return disp


def cpu_jit(pyfunc=None, **options):
    """``numba.njit(**options)(pyfunc)`` with the persistent cache (also a decorator)."""
    import numba
    if pyfunc is None:
        return lambda f: cpu_jit(f, **options)
    options.setdefault("nogil", True)
    return _attach(numba.njit(**options)(pyfunc), pyfunc, "cpu", options)


def cuda_jit(pyfunc, **options):
    """``numba.cuda.jit(**options)(pyfunc)`` with the persistent cache (not under the simulator)."""
    import numba
    from numba import cuda
    if numba.config.ENABLE_CUDASIM:
        options.pop("launch_bounds", None)  # the simulator's jit takes no launch bounds
    disp = cuda.jit(**options)(pyfunc)
    if numba.config.ENABLE_CUDASIM or options.get("device"):
        return disp  # the simulator runs Python; device functions are inlined into kernels
    return _attach(disp, pyfunc, "cuda", options)


# ----------------------------------------------------------------------------- housekeeping
def _walk(root):
    """``(env folder, kernel folder, [entry files])`` for every kernel folder under ``root``."""
    if not os.path.isdir(root):
        return
    for env in sorted(os.listdir(root)):
        env_dir = os.path.join(root, env)
        if not (env.startswith("env-") and os.path.isdir(env_dir)):
            continue
        for name in sorted(os.listdir(env_dir)):
            sub = os.path.join(env_dir, name)
            if os.path.isdir(sub):
                yield env, sub, [f for f in os.listdir(sub)
                                 if f.endswith((_SUFFIX, _LOCK_SUFFIX)) or ".tmp." in f]


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _probe_dir(path):
    """None when files can be made in folder ``path`` (or in the nearest folder above it that
    exists, where ``path`` would be made); otherwise why not (a sentence). Tries a write, so
    permissions that do not bind (root) are not taken for a read-only folder."""
    p = path
    while not os.path.lexists(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    if not os.path.isdir(p):
        if p == path:
            return f"{path} is a file, not a folder"
        return f"{p} is a file, so the folder {path} cannot be made"
    try:
        fd, tmp = tempfile.mkstemp(dir=p, prefix=".gunpy-probe-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        return f"{p} is not writable ({exc.strerror or exc})"
    return None


def problem():
    """None when the cache can be used (read and written); otherwise why not (a sentence):
    switched off, a folder that is a file or is not writable, a key file that is missing and
    cannot be made, or that others may read."""
    if not enabled():
        return "the kernel cache is switched off (GUNPY_KERNEL_CACHE=0)"
    why = _probe_dir(cache_dir())
    if why:
        return why
    path = key_file()
    try:
        if _read_key(path) is None:
            why = _probe_dir(os.path.dirname(path))
            if why:
                return f"no cache key {path}, and it cannot be made: {why}"
    except _PartialKey:
        pass
    except CacheError as exc:
        return str(exc)
    return None


def _rejections(root):
    """``(count, last record)`` of the entries logged as rejected under ``root``."""
    try:
        with open(os.path.join(root, _LOG)) as f:
            lines = [line for line in f.read().splitlines() if line.strip()]
    except OSError:
        return 0, None
    try:
        last = json.loads(lines[-1]) if lines else None
    except ValueError:
        last = None
    return len(lines), last


def info(*, verify=True):
    """What the cache folder holds for this environment, and for others (``stale_*``).

    Returns ``{"path", "environment", "enabled", "problem" (None, or why the cache cannot
    be used), "key_file", "kernels" ({kernel source: entries}), "files", "bytes",
    "stale_files", "stale_bytes", "unverified" (this environment's entries that fail
    authentication now: they would be deleted and compiled again; None when not
    ``verify``), "rejected" (entries logged as rejected so far), "last_rejected"}``.
    """
    root = cache_dir()
    here = environment_folder()
    out = {"path": root, "environment": here, "enabled": enabled(), "problem": problem(),
           "key_file": key_file(), "kernels": {}, "files": 0, "bytes": 0, "stale_files": 0,
           "stale_bytes": 0, "unverified": 0 if verify else None}
    key_secret = None
    if verify:
        try:
            key_secret = _read_key(key_file())
        except (CacheError, _PartialKey):
            pass
    for env, sub, files in _walk(root):
        entries = [f for f in files if f.endswith(_SUFFIX)]
        nbytes = sum(_size(os.path.join(sub, f)) for f in entries)
        if env == here:
            if entries:
                out["kernels"][os.path.basename(sub)] = len(entries)
            out["files"] += len(entries)
            out["bytes"] += nbytes
            if verify:
                for f in entries:
                    try:
                        with open(os.path.join(sub, f), "rb") as fh:
                            data = fh.read()
                    except OSError:
                        data = b""
                    body = None if key_secret is None else verify_entry(key_secret, data)
                    named = body is not None and entry_name(entry_key(data)[0]) == f
                    out["unverified"] += not named
        else:
            out["stale_files"] += len(entries)
            out["stale_bytes"] += nbytes
    out["rejected"], out["last_rejected"] = _rejections(root)
    return out


#: what :func:`clear` did: entries removed, entries it could not remove, and the first reason
Cleared = namedtuple("Cleared", "removed failed error")


def clear(*, stale_only=False):
    """Delete cached kernels (``stale_only``: only other environments'); a :class:`Cleared`.

    Raises :class:`CacheError` when the cache folder is a file.
    """
    root = cache_dir()
    if os.path.lexists(root) and not os.path.isdir(root):
        raise CacheError(f"{root} is a file, not a folder: nothing to clear")
    here = environment_folder()
    removed = failed = 0
    error = None
    for env, sub, files in list(_walk(root)):
        if stale_only and env == here:
            continue
        for f in files:
            try:
                os.unlink(os.path.join(sub, f))
                removed += f.endswith(_SUFFIX)
            except FileNotFoundError:
                pass
            except OSError as exc:
                failed += f.endswith(_SUFFIX)
                error = error or f"{sub}: {exc.strerror or exc}"
        for d in (sub, os.path.dirname(sub)):
            try:
                os.rmdir(d)
            except OSError:  # not empty (another process wrote meanwhile), or gone
                pass
    if not stale_only:
        try:
            os.unlink(os.path.join(root, _LOG))
        except OSError:
            pass
    return Cleared(removed, failed, error)
