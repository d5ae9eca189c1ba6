"""What a cached kernel is keyed by, computed without pickling.

gunpy's kernel cache (:mod:`gunpy._jitcache`, which says why numba's own keys
miss) keys each compiled kernel by what it is made of:

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

:func:`fingerprint` is the first part, :func:`environment` (and its hash,
:func:`environment_folder`) the shared one, :func:`_type_key` and
:func:`_cuda_target` the call's; :class:`gunpy._jitcache._KernelCache` puts them
together.
"""


import hashlib
import importlib.util
import os
import sys
import types as pytypes
import weakref

import numpy as np

__all__ = ["fingerprint", "Uncacheable", "environment", "environment_key",
           "environment_folder", "TOOLING"]


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
#: line, the benchmarks, the networkx backend...) keeps every cached kernel. The cache's own
#: modules (this one, ``_jitcache.py``, ``_cachesign.py``) stay hashed although no kernel
#: reaches them: a change to how entries are keyed or signed then starts a new environment
#: folder, instead of meeting old entries that would fail and be reported as tampered with
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


def environment_folder():
    """The cache's sub-folder for this environment (gunpy source and version, numba, ...).

    Entries of other environments (an older gunpy, another numba) sit in other
    sub-folders, which ``gunpy cache clear --stale`` removes.
    """
    return "env-" + hashlib.sha256(environment_key().encode()).hexdigest()[:16]
