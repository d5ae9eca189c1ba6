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
  versions, ``NUMBA_OPT``, the Python version, and the target (numba's
  ``magic_tuple``: the CPU name and features, or the CUDA runtime and compute
  capability).

Editing a functor, a helper it calls, or gunpy itself therefore never reuses a
stale kernel. An object the fingerprint cannot describe by value (one whose
only stable name would be its address) makes the kernel uncacheable: it is
compiled as before, never reused by mistake.

Where it lives: ``$GUNPY_CACHE_DIR``, else ``$NUMBA_CACHE_DIR/gunpy``, else
``~/.cache/gunpy/kernels`` (``$XDG_CACHE_HOME`` respected), in a sub-folder
per environment (:func:`environment_folder`). One file per compiled kernel, named by a hash of its key and written to a temporary name
then renamed, so processes running at once (pytest-xdist workers, MPI ranks)
share it safely: two writers of one key write equivalent files, and a reader
sees a whole file or none. A file that cannot be read or unpickled, or whose
stored key differs from the one asked for, is a miss: the kernel is compiled
again and the file rewritten. ``GUNPY_KERNEL_CACHE=0`` switches the cache off.

Use :func:`cpu_jit` and :func:`cuda_jit` instead of ``numba.njit`` /
``cuda.jit``; ``gunpy cache info`` and ``gunpy cache clear`` show and empty
the cache (:func:`info`, :func:`clear`).
"""

import hashlib
import os
import pickle
import sys
import threading
import types as pytypes
import uuid
import weakref

import numpy as np

__all__ = ["cpu_jit", "cuda_jit", "cache_dir", "environment_folder", "enabled", "fingerprint",
           "info", "clear",
           "counters", "reset_counters"]

_SUFFIX = ".gpk"
_lock = threading.Lock()

#: per-process counts: ``hits`` (loaded from disk), ``misses`` (compiled),
#: ``saved``, ``errors`` (unreadable entries or failed writes), ``uncacheable``
#: (kernels whose fingerprint could not be taken)
counters = {"hits": 0, "misses": 0, "saved": 0, "errors": 0, "uncacheable": 0}


#: the kernel sources compiled (not loaded) in this process, in order
compiled = []


def reset_counters():
    for k in counters:
        counters[k] = 0
    compiled.clear()


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


_env_key = None


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


def environment_key():
    """What every key shares: versions, gunpy's source hash, numba settings."""
    global _env_key
    if _env_key is None:
        import numba
        from numba.core import config
        from gunpy._version import __version__
        try:
            from importlib.metadata import version
            cuda_version = version("numba-cuda")
        except Exception:  # not installed
            cuda_version = "none"
        _env_key = repr((__version__, _source_hash(), numba.__version__, cuda_version,
                         sys.version_info[:3], config.OPT, config.BOUNDSCHECK,
                         config.DEBUGINFO_DEFAULT, getattr(config, "FASTMATH", None)))
    return _env_key


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
                with _lock:
                    counters["uncacheable"] += 1
                raise
            self._base = repr((environment_key(), self._target, fp,
                               sorted(self._options.items())))
        return self._base

    def _key(self, sig, codegen):
        return repr((self._base_key(), _type_key(sig), codegen.magic_tuple()))

    def _path(self, key):
        name = hashlib.sha256(key.encode()).hexdigest()[:32] + _SUFFIX
        return os.path.join(self.cache_path, name)

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
        except Exception:  # an unreadable, truncated or foreign entry: compile again
            with _lock:
                counters["errors"] += 1
            return None

    def _load(self, sig, target_context):
        key = self._key(sig, target_context.codegen())
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                stored_key, payload = pickle.load(f)
        except FileNotFoundError:
            with _lock:
                counters["misses"] += 1
                compiled.append(self._folder)
            return None
        if stored_key != key:  # a hash collision or a foreign file
            with _lock:
                counters["misses"] += 1
                compiled.append(self._folder)
            return None
        data = self._impl.rebuild(target_context, payload)
        with _lock:
            counters["hits"] += 1
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
                codegen = data.target_context.codegen() if hasattr(data, "target_context") \
                    else _cuda_codegen()
            key = self._key(sig, codegen)
            payload = self._impl.reduce(data)
            path = self._path(key)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.tmp.{uuid.uuid4().hex[:12]}"
            try:
                with open(tmp, "wb") as f:
                    pickle.dump((key, payload), f, protocol=-1)
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
            with _lock:
                counters["saved"] += 1
        except Exception:  # a read-only or full disk never stops a run
            with _lock:
                counters["errors"] += 1


def _cuda_codegen():
    from numba.cuda.descriptor import cuda_target
    return cuda_target.target_context.codegen()


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


def info():
    """What the cache folder holds for this environment, and for others (``stale_*``).

    Returns ``{"path", "environment", "enabled", "kernels" ({kernel source: entries}),
    "files", "bytes", "stale_files", "stale_bytes"}``.
    """
    root = cache_dir()
    here = environment_folder()
    out = {"path": root, "environment": here, "enabled": enabled(), "kernels": {}, "files": 0,
           "bytes": 0, "stale_files": 0, "stale_bytes": 0}
    for env, sub, files in _walk(root):
        entries = [f for f in files if f.endswith(_SUFFIX)]
        nbytes = sum(_size(os.path.join(sub, f)) for f in entries)
        if env == here:
            if entries:
                out["kernels"][os.path.basename(sub)] = len(entries)
            out["files"] += len(entries)
            out["bytes"] += nbytes
        else:
            out["stale_files"] += len(entries)
            out["stale_bytes"] += nbytes
    return out


def clear(*, stale_only=False):
    """Delete cached kernels (``stale_only``: only other environments'); returns how many."""
    root = cache_dir()
    here = environment_folder()
    removed = 0
    for env, sub, files in list(_walk(root)):
        if stale_only and env == here:
            continue
        for f in files:
            try:
                os.unlink(os.path.join(sub, f))
                removed += f.endswith(_SUFFIX)
            except OSError:
                pass
        for d in (sub, os.path.dirname(sub)):
            try:
                os.rmdir(d)
            except OSError:  # not empty (another process wrote meanwhile), or gone
                pass
    return removed
