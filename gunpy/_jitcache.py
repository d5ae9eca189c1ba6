"""The persistent kernel cache: every kernel gunpy builds is compiled once per machine.

numba's own ``cache=True`` misses on every new process for gunpy's kernels:
they are closures made by factories, and numba keys a closure by a pickle of
its captured objects, which for a captured dispatcher holds a random uuid
(numba issues #2065, #6264); and the parallel and serial builds of one source
share a key (#6845). So gunpy keys each compiled kernel by a **fingerprint**
of what it is made of, computed without pickling:

* the kernel's own code (bytecode, constants, names, nested code) and, found
  recursively, every captured or global function, dispatcher and constant it
  reaches (a functor's hooks, the helpers they call, closure constants such as
  block sizes and booleans); objects from gunpy itself are named only, since
  the source of every gunpy module a kernel can reach is hashed into every key;
* the jit options (parallel or serial, fastmath, ...);
* the argument types of the call (a namedtuple's class and field names too);
* gunpy's version and a hash of its source files (those that can build or
  reach a kernel: the command line, the benchmarks and other :data:`TOOLING`
  are left out, so editing them keeps the cache), numba's and numba-cuda's
  versions, ``NUMBA_OPT`` and the other code-generation settings, Python's
  minor version and bytecode magic number (the patch release changes neither
  the bytecode the fingerprint hashes nor the C API compiled CPU code calls);
* the target: on the CPU, numba's ``magic_tuple`` (the CPU name and
  features); on CUDA, the device's compute capability and the CUDA major
  version (a cubin for one architecture made by any CUDA 13 toolkit loads on
  every CUDA 13 driver: minor-version compatibility, see
  :mod:`gunpy.backends.toolchain`). numba-cuda 0.30 compiles with its own copy
  of numba's pipeline but types with numba's own types and lowers gunpy's
  atomics through numba's extension API, so numba's version stays in CUDA keys.

Editing a functor, a helper it calls, or gunpy itself therefore never reuses a
stale kernel. An object the fingerprint cannot describe by value (one whose
only stable name would be its address) makes the kernel uncacheable: it is
compiled as before, never reused by mistake.

**Integrity.** Every entry is signed: an HMAC-SHA256, under a per-user secret
key, of its key and its bytes, checked before anything in it is unpickled. The
secret lives outside the cache (:func:`key_file`: ``$GUNPY_CACHE_KEY_FILE``,
else ``$XDG_CONFIG_HOME/gunpy/cache.key``, else ``~/.config/gunpy/cache.key``),
is made on first use (64 hex digits, mode 0600, created under a temporary name
and hard-linked into place, so processes that start together agree on one
key), and is refused when another user owns it or others may read or write
it. An entry that fails (a flipped bit, a truncated file, another key's entry
under this key's name, a file someone else wrote) is deleted, logged
(``rejected.log`` in the cache folder), counted (``counters["rejected"]``)
and compiled again: neither corrupt machine code nor a crafted pickle ever
reaches numba's loader. Only the key's owner can make entries this process
accepts; ``gunpy cache import`` re-signs entries carried from another machine,
the user's explicit act of trust.

Where it lives: ``$GUNPY_CACHE_DIR``, else ``$NUMBA_CACHE_DIR/gunpy``, else
``~/.cache/gunpy/kernels`` (``$XDG_CACHE_HOME`` respected), in a sub-folder
per environment (:func:`environment_folder`). One file per compiled kernel,
named by a hash of its key and written to a temporary name then renamed, so
processes running at once (pytest-xdist workers, MPI ranks) share it safely:
two writers of one key write equivalent files, and a reader sees a whole file
or none. A file that cannot be read is a miss (compiled again, rewritten); a
cache that cannot be written (a read-only folder, ``GUNPY_CACHE_DIR`` naming a
file, no usable key) warns once and compiles as if there were none
(:func:`problem` says why). ``GUNPY_KERNEL_CACHE=0`` switches the cache off.

Use :func:`cpu_jit` and :func:`cuda_jit` instead of ``numba.njit`` /
``cuda.jit``; ``gunpy cache info`` and ``gunpy cache clear`` show and empty
the cache (:func:`info`, :func:`clear`); ``gunpy cache export`` / ``import``
carry it to another machine (:mod:`gunpy.warmup`).
"""


import hashlib
import hmac
import importlib.util
import json
import os
import pickle
import re
import stat
import sys
import tempfile
import threading
import time
import types as pytypes
import uuid
import warnings
import weakref
from collections import namedtuple

import numpy as np

__all__ = ["cpu_jit", "cuda_jit", "cache_dir", "key_file", "environment", "environment_folder",
           "enabled", "fingerprint", "problem", "info", "clear", "CacheError", "counters",
           "reset_counters"]

_SUFFIX = ".gpk"
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


class CacheError(RuntimeError):
    """The kernel cache cannot be used (its folder or its key); the message says why."""


# ----------------------------------------------------------------------------- the key
def key_file():
    """Where the secret that signs cache entries lives: ``$GUNPY_CACHE_KEY_FILE``, else
    ``$XDG_CONFIG_HOME/gunpy/cache.key``, else ``~/.config/gunpy/cache.key`` (outside the
    cache, so that whoever can write the cache cannot read the key)."""
    p = os.environ.get("GUNPY_CACHE_KEY_FILE")
    if p:
        return os.path.abspath(os.path.expanduser(p))
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(os.path.abspath(os.path.expanduser(base)), "gunpy", "cache.key")


_KEY_TEXT = re.compile(rb"([0-9a-f]{64})\n?")
_key_lock = threading.Lock()
_secrets = {}        # key file -> the secret (bytes)
_warned = set()      # problems already warned about in this process


class _PartialKey(Exception):
    """A key file another process is still writing (only where hard links are missing)."""


def _read_key(path):
    """The secret in ``path``; None when there is no such file.

    Raises :class:`CacheError` when the file is not a key only its owner can use:
    not a regular file, another user's, readable or writable by group or others.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CacheError(f"cannot read the cache key {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CacheError(f"the cache key {path} is not a regular file")
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise CacheError(f"the cache key {path} belongs to another user (uid {st.st_uid})")
        if st.st_mode & 0o077:
            raise CacheError(f"the cache key {path} may be read or written by others (mode "
                             f"{stat.S_IMODE(st.st_mode):o}): chmod 600 it, or remove it and "
                             f"clear the cache")
        text = os.read(fd, 200)
    finally:
        os.close(fd)
    m = _KEY_TEXT.fullmatch(text)
    if m is None:
        if len(text) < 64 and _KEY_TEXT.fullmatch(text + b"0" * (64 - len(text))):
            raise _PartialKey(path)
        raise CacheError(f"the cache key {path} is not a gunpy cache key (64 hex digits)")
    return bytes.fromhex(m.group(1).decode())


def _create_key(path):
    """Write a new secret to ``path`` unless one is there; the first process to finish wins.

    The secret is written whole to a temporary file, then hard-linked to ``path``:
    the link fails if another process linked its own first, and then both read the
    one that is there. Where hard links are not supported, ``path`` is created with
    ``O_EXCL`` and a reader that finds it half-written waits (:class:`_PartialKey`).
    """
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    text = os.urandom(32).hex().encode() + b"\n"
    tmp = f"{path}.tmp.{uuid.uuid4().hex[:12]}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, text)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:  # no hard links on this file system
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            try:
                os.write(fd, text)
                os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def secret():
    """This user's secret key (bytes), made on first use; raises :class:`CacheError`."""
    path = key_file()
    found = _secrets.get(path)
    if found is not None:
        return found
    with _key_lock:
        for _ in range(100):
            try:
                found = _read_key(path)
            except _PartialKey:
                time.sleep(0.02)
                continue
            if found is not None:
                _secrets[path] = found
                return found
            try:
                _create_key(path)
            except OSError as exc:
                raise CacheError(f"cannot create the cache key {path}: {exc.strerror or exc} "
                                 f"(GUNPY_CACHE_KEY_FILE names another place)") from None
        raise CacheError(f"the cache key {path} stays incomplete")


# ----------------------------------------------------------------------------- entries
# An entry file: MAGIC, the MAC (32 bytes), the key's length (4 bytes, big-endian), the key
# (UTF-8), then the pickled payload. The MAC is HMAC-SHA256 under the secret of everything
# but itself, so the key an entry answers is authenticated with its bytes: an entry moved
# under another key's name fails like a flipped bit does.
_MAGIC = b"GUNPYKC1"
_MAC = 32
_HEAD = len(_MAGIC) + _MAC + 4


def _mac(key_secret, key_bytes, body):
    h = hmac.new(key_secret, digestmod=hashlib.sha256)
    h.update(_MAGIC)
    h.update(len(key_bytes).to_bytes(4, "big"))
    h.update(key_bytes)
    h.update(body)
    return h.digest()


def pack_entry(key_secret, key, body):
    """An entry's bytes: ``body`` (the pickled payload) under ``key``, signed with ``key_secret``."""
    kb = key.encode() if isinstance(key, str) else bytes(key)
    return b"".join((_MAGIC, _mac(key_secret, kb, body), len(kb).to_bytes(4, "big"), kb, body))


def entry_key(data):
    """``(key bytes, body)`` of an entry's bytes, unauthenticated; None if it is not one."""
    if len(data) < _HEAD or data[:len(_MAGIC)] != _MAGIC:
        return None
    n = int.from_bytes(data[len(_MAGIC) + _MAC:_HEAD], "big")
    if n > len(data) - _HEAD:
        return None
    view = memoryview(data)
    return bytes(view[_HEAD:_HEAD + n]), view[_HEAD + n:]


def verify_entry(key_secret, data, key=None):
    """The body (a memoryview, still pickled) of an entry whose MAC checks under
    ``key_secret`` and whose key is ``key`` (any key when None); None otherwise."""
    parsed = entry_key(data)
    if parsed is None:
        return None
    kb, body = parsed
    if key is not None and kb != key.encode():
        return None
    mac = bytes(memoryview(data)[len(_MAGIC):len(_MAGIC) + _MAC])
    if not hmac.compare_digest(mac, _mac(key_secret, kb, body)):
        return None
    return body


def entry_name(key):
    """The file name of the entry for ``key``."""
    kb = key.encode() if isinstance(key, str) else bytes(key)
    return hashlib.sha256(kb).hexdigest()[:32] + _SUFFIX


def write_entry(path, data):
    """Write ``data`` to ``path`` through a temporary file and a rename (readers see all or none)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp.{uuid.uuid4().hex[:12]}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


_LOG = "rejected.log"
_LOG_LIMIT = 1 << 20


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


# ----------------------------------------------------------------------------- fingerprint
class Uncacheable(Exception):
    """An object reached by a kernel has no stable description by value."""


_OWN_PREFIXES = ("gunpy.",)
_LIBRARY_MODULES = ("numpy", "numba", "math", "cmath", "operator", "builtins", "llvmlite")
_fn_memo = weakref.WeakKeyDictionary()


def _is_own(module_name):
    return module_name == "gunpy" or module_name.startswith(_OWN_PREFIXES)


def _is_library(module_name):
    top = (module_name or "").split(".")[0]
    return top in _LIBRARY_MODULES


def _code_names(code):
    """Global and attribute names used by ``code`` and its nested code objects."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            names |= _code_names(c)
    return names


def _code_fp(code):
    parts = [code.co_code, repr(code.co_names), repr(code.co_varnames),
             repr(code.co_freevars), repr(code.co_cellvars), str(code.co_argcount),
             str(code.co_kwonlyargcount), str(code.co_flags)]
    for c in code.co_consts:
        parts.append(_code_fp(c) if isinstance(c, pytypes.CodeType) else _value_fp(c, set()))
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()


def _function_fp(fn, seen):
    if id(fn) in seen:
        return f"fn-cycle:{fn.__qualname__}"
    cached = _fn_memo.get(fn)
    if cached is not None:
        return cached
    seen = seen | {id(fn)}
    module = getattr(fn, "__module__", "") or ""
    parts = [f"fn:{module}:{fn.__qualname__}", _code_fp(fn.__code__),
             _value_fp(fn.__defaults__, seen), _value_fp(fn.__kwdefaults__, seen)]
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                contents = None
            parts.append(f"{name}={_value_fp(contents, seen)}")
    g = fn.__globals__
    names = _code_names(fn.__code__)
    for name in sorted(names):
        if name in g:
            val = g[name]
            parts.append(f"g:{name}={_value_fp(val, seen)}")
            if isinstance(val, pytypes.ModuleType) and not (_is_own(val.__name__)
                                                            or _is_library(val.__name__)):
                # a user module's functions reached as module.attr
                for attr in sorted(names):
                    if hasattr(val, attr):
                        parts.append(f"g:{name}.{attr}="
                                     f"{_value_fp(getattr(val, attr), seen)}")
    fp = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    _fn_memo[fn] = fp
    return fp


def _value_fp(obj, seen):
    """A stable description of ``obj`` by value (raises :class:`Uncacheable`)."""
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return f"{type(obj).__name__}:{obj!r}"
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple instance
        cls = type(obj)
        return (f"nt:{cls.__module__}.{cls.__qualname__}{obj._fields}("
                + ",".join(_value_fp(x, seen) for x in obj) + ")")
    if isinstance(obj, (tuple, list, frozenset, set)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return f"{type(obj).__name__}(" + ",".join(_value_fp(x, seen) for x in items) + ")"
    if isinstance(obj, dict):
        return "dict(" + ",".join(f"{_value_fp(k, seen)}:{_value_fp(v, seen)}"
                                  for k, v in sorted(obj.items(), key=lambda kv: repr(kv[0])))
    if isinstance(obj, np.generic):
        return f"np:{obj.dtype.str}:{obj!r}"
    if isinstance(obj, np.ndarray):
        h = hashlib.sha256(np.ascontiguousarray(obj).tobytes()).hexdigest()
        return f"ndarray:{obj.dtype.str}:{obj.shape}:{h}"
    if isinstance(obj, np.dtype):
        return f"dtype:{obj.str}"
    if isinstance(obj, pytypes.ModuleType):
        return f"module:{obj.__name__}"
    if isinstance(obj, pytypes.FunctionType):
        module = getattr(obj, "__module__", "") or ""
        if _is_own(module):
            # gunpy's own source is hashed whole into every key; but a closure made
            # by a gunpy factory carries user objects in its cells
            if obj.__closure__:
                return _function_fp(obj, seen)
            return f"fn:{module}:{obj.__qualname__}"
        return _function_fp(obj, seen)
    py_func = getattr(obj, "py_func", None)
    if isinstance(py_func, pytypes.FunctionType):  # a numba dispatcher (CPU or CUDA)
        opts = getattr(obj, "targetoptions", {}) or {}
        return (f"disp:{type(obj).__name__}:{_value_fp(py_func, seen)}:"
                f"{_value_fp(dict(opts), seen)}")
    if isinstance(obj, staticmethod):
        return _value_fp(obj.__func__, seen)
    if isinstance(obj, type):
        fields = getattr(obj, "_fields", None)
        return f"type:{obj.__module__}.{obj.__qualname__}" + (f"{fields}" if fields else "")
    if isinstance(obj, (pytypes.BuiltinFunctionType, np.ufunc)):
        return f"builtin:{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', obj.__name__)}"
    module = type(obj).__module__ or ""
    if module.startswith("numba"):
        # numba types and typing objects describe themselves by value
        text = repr(obj)
        if " at 0x" not in text:
            return f"numba:{type(obj).__qualname__}:{text}"
    if _is_own(module) and getattr(obj, "name", None) is not None:
        # gunpy objects that matter to code generation name themselves (backends)
        return f"own:{type(obj).__qualname__}:{obj.name}"
    raise Uncacheable(f"cannot fingerprint {type(obj).__module__}.{type(obj).__qualname__}")


def fingerprint(pyfunc):
    """The stable fingerprint (hex) of a kernel's Python function and all it reaches.

    Raises :class:`Uncacheable` when some reached object has no stable description.
    """
    return _function_fp(pyfunc, set())


#: gunpy modules that build no kernel and that no kernel reaches: editing them (the command
#: line, the benchmarks, the networkx backend...) keeps every cached kernel
TOOLING = frozenset({"cli.py", "bench/", "warmup.py", "nx_backend/", "registry.py",
                     "datasets.py", "_version.py", "backends/toolchain.py"})


def _source_hash(roots=None):
    """Hash of the source files of gunpy and gunpy.primitives that can build kernels.

    ``roots``: ``[(folder, skip_primitives_subfolder)]`` (default: the installed
    packages); files named in :data:`TOOLING` are left out.
    """
    if roots is None:
        import gunpy
        import gunpy.primitives
        roots = [(os.path.dirname(gunpy.__file__), True),
                 (os.path.dirname(gunpy.primitives.__file__), False)]
    h = hashlib.sha256()
    for root, skip_primitives in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            if skip_primitives and os.path.abspath(dirpath) != os.path.abspath(root) and \
                    os.path.basename(dirpath) == "primitives":
                continue
            for f in sorted(filenames):
                if not f.endswith(".py"):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if skip_primitives and (rel in TOOLING or rel.split("/")[0] + "/" in TOOLING):
                    continue
                h.update(rel.encode())
                with open(path, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()


_env = None


def environment():
    """What every key shares, by name: gunpy's version and source hash, numba's and
    numba-cuda's versions, Python's minor version and bytecode magic number, and numba's
    code-generation settings (a dict; :func:`environment_folder` is its hash)."""
    global _env
    if _env is None:
        import numba
        from numba.core import config
        from gunpy._version import __version__
        try:
            from importlib.metadata import version
            cuda_version = version("numba-cuda")
        except Exception:  # not installed
            cuda_version = "none"
        _env = {"gunpy": __version__, "source": _source_hash(), "numba": numba.__version__,
                "numba-cuda": cuda_version, "python": "%d.%d" % sys.version_info[:2],
                "bytecode": int.from_bytes(importlib.util.MAGIC_NUMBER[:2], "little"),
                "NUMBA_OPT": config.OPT, "NUMBA_BOUNDSCHECK": config.BOUNDSCHECK,
                "NUMBA_DEBUGINFO": config.DEBUGINFO_DEFAULT,
                "NUMBA_FASTMATH": getattr(config, "FASTMATH", None)}
    return dict(_env)


def environment_key():
    """:func:`environment` as one string (part of every key)."""
    return repr(tuple(environment().items()))


def _type_key(sig):
    """The call's argument types as text, with each namedtuple's class and fields."""
    from numba.core import types
    parts = [str(sig)]

    def walk(t):
        if isinstance(t, types.BaseNamedTuple):
            cls = t.instance_class
            parts.append(f"{cls.__module__}.{cls.__qualname__}{getattr(cls, '_fields', ())}")
        for sub in getattr(t, "types", ()) or ():
            if isinstance(sub, types.Type):
                walk(sub)

    for t in (sig if isinstance(sig, (tuple, list)) else getattr(sig, "args", ())):
        if isinstance(t, types.Type):
            walk(t)
    return "|".join(parts)


_cuda_major = None


def _cuda_target():
    """A CUDA entry's target: the current device's compute capability and the CUDA major
    version (numba's own ``magic_tuple`` holds the runtime's minor version too, which
    changes nothing a cubin needs to load)."""
    global _cuda_major
    from numba.cuda.cudadrv import devices
    cc = tuple(devices.get_context().device.compute_capability)[:2]
    if _cuda_major is None:
        try:
            from numba.cuda.cudadrv import runtime
            _cuda_major = int(runtime.get_version()[0])
        except Exception:  # no runtime library found: the driver's CUDA version
            from numba.cuda.cudadrv.driver import driver
            _cuda_major = int(driver.get_version()[0])
    return ("sm", cc, "CUDA", _cuda_major)


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

    def save_overload(self, sig, data):
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
    disp._cache = _KernelCache(pyfunc, target, dict(options))
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
def environment_folder():
    """The cache's sub-folder for this environment (gunpy source and version, numba, ...).

    Entries of other environments (an older gunpy, another numba) sit in other
    sub-folders, which ``gunpy cache clear --stale`` removes.
    """
    return "env-" + hashlib.sha256(environment_key().encode()).hexdigest()[:16]


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
                yield env, sub, [f for f in os.listdir(sub) if f.endswith(_SUFFIX) or ".tmp." in f]


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
