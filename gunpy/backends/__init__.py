"""Backends: how a functor becomes a kernel, and where the arrays live.

Backends are registered (:func:`register_backend`) under a name; gunpy
registers two, best first:

``"cuda"``
    ``numba.cuda`` kernels on an NVIDIA GPU, or on numba's CUDA simulator when
    ``NUMBA_ENABLE_CUDASIM=1`` was set before numba was first imported.
``"cpu"``
    ``numba.njit(parallel=True)`` kernels on all cores, with real hardware
    atomics from :mod:`gunpy.atomics`.

``"auto"`` picks the first registered backend that is usable in this process
(``"cuda"`` when a GPU or the simulator is, else ``"cpu"``).

A backend is a :class:`~gunpy.backends.base.Backend` subclass: array methods,
compilation and launches. The operators are objects
(:mod:`gunpy.operators.operator`) that hold an implementation per backend name
and find a backend's along its class hierarchy; load-balancing strategies are
operators too (:func:`gunpy.operators.advance.register_strategy`).
"""

import functools
import importlib
import sys
from collections import namedtuple

__all__ = ["get_backend", "available", "resolve", "register_backend", "unregister_backend",
           "backend_class", "names", "BACKENDS", "cuda_status"]

#: a registered backend: its class (or ``"module:Class"``, imported on first use) and
#: ``usable()`` -> ``(bool, reason)``
_Entry = namedtuple("_Entry", "where usable")

_REGISTRY = {}

#: the registered backend names, best first (kept up to date by :func:`register_backend`)
BACKENDS = ()


def _always():
    return True, "always"


def register_backend(name, backend, *, usable=None, first=False, replace=False):
    """Make ``backend`` (a :class:`~gunpy.backends.base.Backend` subclass, or
    ``"module:Class"`` imported on first use) the backend called ``name``.

    ``usable()`` returns ``(ok, reason)``: whether it can run in this process
    (default: always); ``"auto"`` takes the first usable backend in registration
    order, or this one ahead of the others with ``first=True``. ``get_backend(name)``
    makes one object of the class (no arguments) and keeps it.

    Raises ``ValueError`` for a bad or already-registered name (unless
    ``replace``) and ``TypeError`` for a class that is not a Backend.

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.backends import register_backend, unregister_backend, get_backend
    >>> from gunpy.backends.cpu import CpuBackend
    >>> class OneCore(CpuBackend):
    ...     name = "one_core"
    ...     serial_below = 1 << 62          # every step runs as one thin pass
    >>> register_backend("one_core", OneCore)
    >>> G = gunpy.generators.path(5)
    >>> gunpy.bfs(G, 0, backend="one_core").depth.tolist()
    [0, 1, 2, 3, 4]
    >>> unregister_backend("one_core")
    """
    global BACKENDS
    if not isinstance(name, str) or not name.isidentifier() or name == "auto":
        raise ValueError(f"a backend name must be an identifier other than 'auto', got {name!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"backend {name!r} is already registered "
                         "(register_backend(..., replace=True) to replace it)")
    if not isinstance(backend, str):
        _check_class(name, backend)
    elif ":" not in backend:
        raise ValueError(f"backend {name!r}: a class or 'module:Class', got {backend!r}")
    entry = _Entry(backend, usable or _always)
    order = {name: entry} if first else {}
    order.update(_REGISTRY)
    order[name] = entry  # a replacement keeps its place unless ``first``
    _REGISTRY.clear()
    _REGISTRY.update(order)
    BACKENDS = tuple(_REGISTRY)
    _make.cache_clear()


def unregister_backend(name):
    """Remove the backend called ``name`` (``KeyError`` if there is none)."""
    global BACKENDS
    del _REGISTRY[name]
    BACKENDS = tuple(_REGISTRY)
    _make.cache_clear()


def _check_class(name, cls):
    from gunpy.backends.base import Backend
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise TypeError(f"backend {name!r}: {cls!r} is not a gunpy.backends.base.Backend "
                        "subclass")
    if cls.name != name:
        raise ValueError(f"backend {name!r}: its class says name = {cls.name!r}")


def names():
    """The registered backend names, best first."""
    return tuple(_REGISTRY)


def backend_class(name):
    """The class registered as ``name`` (imported now if it was given as a path)."""
    where = _entry(name).where
    if isinstance(where, str):
        module, _, attr = where.partition(":")
        cls = getattr(importlib.import_module(module), attr)
        _check_class(name, cls)
        _REGISTRY[name] = _REGISTRY[name]._replace(where=cls)
        return cls
    return where


def _entry(name):
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; valid backends are "
                         f"'auto', {', '.join(repr(b) for b in _REGISTRY)}") from None


#: where numba-cuda looks for the driver on Linux (its cudadrv.driver.locate_driver_and_loader)
_LINUX_DRIVERS = ("libcuda.so", "libcuda.so.1", "/usr/lib/libcuda.so", "/usr/lib/libcuda.so.1",
                  "/usr/lib64/libcuda.so", "/usr/lib64/libcuda.so.1")


def _no_driver():
    """True when no CUDA driver library loads where numba-cuda looks for one (Linux only):
    then ``numba.cuda`` (~0.4 s to import) is not imported just to learn that."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    for path in _LINUX_DRIVERS:
        try:
            ctypes.CDLL(path)
            return False
        except OSError:
            pass
    return True


@functools.lru_cache(maxsize=None)
def cuda_status():
    """``(usable, reason)``: whether CUDA kernels can run in this process."""
    try:
        import numba
    except Exception as exc:  # numba missing or broken
        return False, f"numba cannot be imported: {exc}"
    if not numba.config.ENABLE_CUDASIM and _no_driver():
        return False, "no CUDA driver found (libcuda.so cannot be loaded)"
    try:
        from numba import cuda
    except Exception as exc:  # numba-cuda missing or broken
        return False, f"numba.cuda cannot be imported: {exc}"
    if numba.config.ENABLE_CUDASIM:
        return True, "numba CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    try:
        if cuda.is_available():
            name = cuda.get_current_device().name
            return True, name.decode() if isinstance(name, bytes) else str(name)
        return False, "no CUDA driver or GPU found"
    except Exception as exc:
        return False, f"CUDA is not usable: {exc}"


def available():
    """Names of the backends usable in this process, best first."""
    return [name for name, entry in _REGISTRY.items() if entry.usable()[0]]


def resolve(name):
    """Turn ``"auto"`` into a concrete backend name, validating the choice."""
    if name is None or name == "auto":
        usable = available()
        if not usable:
            raise RuntimeError("no registered backend is usable in this process")
        return usable[0]
    ok, why = _entry(name).usable()
    if not ok:
        raise RuntimeError(f"backend={name!r} requested but {why}; "
                           "use backend='cpu' or backend='auto'")
    return name


@functools.lru_cache(maxsize=None)
def _make(name):
    return backend_class(name)()


def get_backend(name="auto"):
    """The backend object for ``name`` (``"auto"`` or a registered name: ``"cuda"``, ``"cpu"``)."""
    return _make(resolve(name))


register_backend("cuda", "gunpy.backends.cuda:CudaBackend", usable=cuda_status)
register_backend("cpu", "gunpy.backends.cpu:CpuBackend")
