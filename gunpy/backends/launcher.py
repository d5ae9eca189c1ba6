"""A cached, pre-specialised kernel launcher: numba-cuda's launch without its per-call dispatch.

``kernel[blocks, threads](*args)`` in numba-cuda types every argument on every
launch (a Python ``typeof`` per device array), looks the types up among the
kernel's overloads, then converts each argument by a chain of ``isinstance``
tests (``_Kernel._prepare_args``) before the one driver call
(``cuda.core.launch``). gunpy's kernels take ~100 parameter values (the fused
near/far kernel 166), so that is tens of microseconds a launch, and it warns
(``NumbaPerformanceWarning``) on every grid under 128 blocks, which thin levels
and fused calls always are.

A :class:`Launcher` (one per kernel, :func:`launcher`) keeps a table from a
cheap **signature key** of the arguments (each value's Python type; a device
array's numba type, which numba caches on the array; a tuple's class and its
items' keys) to an **entry** that launches them:

* the first launch of a key goes through numba's own path once (it compiles a
  new overload where the types are new, exactly as before), then resolves the
  compiled kernel and writes a packing function for its argument types (Python
  source generated per signature: the values the driver takes, in order, with no
  type tests left), so later launches of that key are ``pack(*args)`` and the
  driver call numba would make;
* what it cannot pre-specialise (a debug kernel, argument extensions, a kernel
  specialised on its launch configuration, a host array that numba would copy)
  keeps numba's full path, as does every launch under the simulator (it has no
  compiled kernels to call): same table, same shape, an entry that calls numba.

Launches never warn about small grids: the check lives in numba's launch
configuration, which the fast path does not build, and the numba path builds it
with that one warning filtered (in a scoped ``warnings.catch_warnings``): the
user's own kernels and settings are untouched.

A signature key is cheap but not free: a Python ``int`` keys as ``int`` and is
passed as int64 (numba types one over 2**63 as uint64; gunpy never passes one).
An entry keeps the kernel handle of the context current at its first launch.

``GUNPY_LAUNCHER`` in the environment (read once, at import) picks the path:
``gunpy`` (the default; ``cached`` is the same) is the cached launcher above;
``numba`` sends every launch through numba-cuda's own ``kernel[blocks, threads,
stream, shared](*args)``, still without the small-grid warning. The fast path's
packing has been checked against numba's own argument conversion, but only off a
GPU: where kernels fail on a real device, ``GUNPY_LAUNCHER=numba`` tells a fault
of gunpy's packing (numba's path works) from one of the kernels or the driver
(both fail). :func:`launch_path` says which path this process uses;
``bench/gpu-day`` runs its smoke test through both.
"""

import ctypes
import os
import re
import warnings

import numba
import numpy as np

__all__ = ["Launcher", "LaunchStream", "launcher", "signature_key", "numba_only", "launch_path",
           "LAUNCH_PATHS", "ON_CUDASIM", "check_launchable", "DriverCopies"]

ON_CUDASIM = bool(numba.config.ENABLE_CUDASIM)

#: the values ``GUNPY_LAUNCHER`` takes, and the path each selects (unset or empty: ``gunpy``)
LAUNCH_PATHS = {"gunpy": "gunpy", "cached": "gunpy", "numba": "numba"}


def numba_only(environ=os.environ):
    """Whether ``environ`` asks for numba's own launch path (``GUNPY_LAUNCHER=numba``).

    ``GUNPY_LAUNCHER`` unset, empty, ``gunpy`` or ``cached``: gunpy's cached launcher;
    any other value is a ``ValueError`` naming the valid ones.
    """
    value = environ.get("GUNPY_LAUNCHER", "").strip().lower()
    if value and value not in LAUNCH_PATHS:
        raise ValueError(f"GUNPY_LAUNCHER={value!r}; valid: 'gunpy' (the default; 'cached' is "
                         f"the same), 'numba' (numba-cuda's own launch path)")
    return LAUNCH_PATHS.get(value, "gunpy") == "numba"


_NUMBA_ONLY = numba_only()


def launch_path():
    """``"gunpy"`` (the cached launcher) or ``"numba"`` (numba-cuda's own launch, every call):
    the path this process launches through, as ``GUNPY_LAUNCHER`` chose at import."""
    return "numba" if _NUMBA_ONLY else "gunpy"

_GRID_WARNING = r"(?:\x1b\[[0-9;]*m)?Grid size \d+ will likely result in GPU under-utilization"

#: values typed by their Python class alone (numba's typeof of each is fixed by it)
_SCALARS = {int, float, bool, np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
            np.uint16, np.uint32, np.uint64, np.float32, np.float64}


def _device_array_types():
    if ON_CUDASIM:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
        return {FakeCUDAArray: lambda a: (a.dtype, a.ndim)}
    from numba.cuda.cudadrv import devicearray as da
    numba_type = lambda a: a._numba_type_  # noqa: E731  (cached on the array by numba)
    return {cls: numba_type for cls in (da.DeviceNDArray, da.MappedNDArray, da.ManagedNDArray)}


_ARRAYS = _device_array_types()
#: the key of a value no entry can pre-specialise (every key holding it gets numba's path)
_OTHER = object()


def _key(value):
    t = type(value)
    if t in _SCALARS:
        return t
    array = _ARRAYS.get(t)
    if array is not None:
        return array(value)
    if isinstance(value, tuple):
        return (t, *map(_key, value))
    return _OTHER


def _unpassable(value, where):
    """The first ``(where, value)`` inside ``value`` (tuples searched) that numba-cuda's launch
    cannot pass to a kernel (``_Kernel._prepare_args``): ``None`` and strings type, compile
    and run under the simulator, but no device launch takes them."""
    if value is None or isinstance(value, (str, bytes)):
        return where, value
    if isinstance(value, tuple):
        names = getattr(value, "_fields", None) or range(len(value))
        for name, item in zip(names, value):
            found = _unpassable(item, f"{where}.{name}" if isinstance(name, str)
                                else f"{where}[{name}]")
            if found is not None:
                return found
    return None


def check_launchable(kernel, args, argtypes=None):
    """A ``TypeError`` naming the kernel and the argument when one of ``args`` cannot be
    passed to a kernel on a device. Checked once per signature on every path, the simulator
    and the compile-only modes included, where nothing else would notice.

    ``argtypes`` (the compile-only modes, which launch nothing): the packing function a
    device launch of these types would use (:func:`packer`) is written and compiled too.
    """
    for i, arg in enumerate(args):
        found = _unpassable(arg, f"argument {i}")
        if found is not None:
            name = getattr(getattr(kernel, "py_func", kernel), "__qualname__", kernel)
            raise TypeError(f"kernel {name}: {found[0]} is {found[1]!r}, which numba-cuda "
                            f"cannot pass to a kernel on a device (pass an array or a number)")
    if argtypes is not None:
        try:
            packer(argtypes, signature_key(args))
        except NotImplementedError:
            pass  # a type it does not pack: numba's own path serves that signature


def signature_key(args):
    """The launch's signature key: equal keys mean equal numba argument types."""
    return tuple(map(_key, args))


class LaunchStream:
    """The stream launches and uploads are ordered on, as numba and the driver name it.

    ``numba``: what numba's launch and copies take (a ``Stream`` or 0); ``core``:
    what the driver call takes (a ``cuda.core`` stream), made once here rather
    than per launch.
    """

    def __init__(self, stream=0):
        self.numba = stream
        self.core = None
        if not ON_CUDASIM:
            from numba.cuda.cudadrv import driver
            self.core = driver._to_core_stream(stream)


_default_stream = None


def _default():
    global _default_stream
    if _default_stream is None:
        _default_stream = LaunchStream(0)
    return _default_stream


class Launcher:
    """Launches one kernel (a numba-cuda dispatcher) through a per-signature cache.

    ``entries`` maps each signature key seen to its entry; ``misses`` counts the
    keys resolved (typed by numba, and compiled where new), ``hits`` the launches
    that found theirs.
    """

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.entries = {}
        self.last = None  # the compiled entry launched last
        self.hits = self.misses = 0

    def launch(self, blocks, threads, args, *, shared=0, stream=None):
        """``dispatcher[blocks, threads, stream, shared](*args)``, through the cache."""
        stream = stream or _default()
        last = self.last
        if last is not None:
            # the signature launched last (a kernel almost always sees one): its packing
            # function checks the types as it packs, and returns None when they differ
            values = last.pack(*args)
            if values is not None:
                self.hits += 1
                last.launch(blocks, threads, shared, stream, values)
                return
        key = signature_key(args)
        entry = self.entries.get(key)
        if entry is None:
            self.misses += 1
            check_launchable(self.dispatcher, args)
            # numba's path types, compiles where new and launches; the entry serves the next
            _numba_launch(self.dispatcher, blocks, threads, shared, stream, args)
            entry = self.entries[key] = self._entry(key, args)
        else:
            self.hits += 1
            entry(blocks, threads, shared, stream, args)
        self.last = entry if isinstance(entry, _Compiled) else None

    def _entry(self, key, args):
        if ON_CUDASIM or _NUMBA_ONLY or _OTHER in _flatten(key):
            return _NumbaPath(self.dispatcher)
        dispatcher = self.dispatcher
        argtypes = tuple(dispatcher.typeof_pyval(a) for a in args)
        kernel = dispatcher.overloads.get(argtypes)
        if kernel is None or kernel.debug or kernel.extensions or dispatcher.specialized \
                or getattr(kernel, "launch_config_sensitive", False) \
                or getattr(dispatcher, "_launch_config_sensitive", False):
            return _NumbaPath(dispatcher)
        try:
            pack = packer(argtypes, key)
            # checked once against numba's own conversion of these very arguments, so a
            # numba-cuda that packs differently keeps its own path instead of a wrong launch
            expected = []
            for ty, value in zip(argtypes, args):
                kernel._prepare_args(ty, value, 0, [], expected)
            if not _same_values(pack(*args), expected):
                return _NumbaPath(dispatcher)
            handle = kernel._codelibrary.get_cufunc().kernel
        except (NotImplementedError, AttributeError, TypeError):
            return _NumbaPath(dispatcher)
        return _Compiled(handle, pack, kernel.cooperative)


def _same_values(got, expected):
    """Whether two lists of driver parameter values are equal (ctypes values by type and value)."""
    if got is None or len(got) != len(expected):
        return False
    for a, b in zip(got, expected):
        if isinstance(a, ctypes._SimpleCData) or isinstance(b, ctypes._SimpleCData):
            if type(a) is not type(b) or a.value != b.value:
                return False
        elif type(a) is not type(b) and not (isinstance(a, int) and isinstance(b, int)) \
                or a != b:
            return False
    return True


def _flatten(key):
    for k in key:
        if isinstance(k, tuple):
            yield from _flatten(k)
        else:
            yield k


def launcher(kernel):
    """The :class:`Launcher` of ``kernel`` (made on first use, kept on the dispatcher)."""
    found = kernel.__dict__.get("_gunpy_launcher")
    if found is None:
        found = kernel._gunpy_launcher = Launcher(kernel)
    return found


def _numba_launch(dispatcher, blocks, threads, shared, stream, args):
    """numba's own launch, without its small-grid warning (raised as the grid is configured)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_GRID_WARNING)
        configured = dispatcher[blocks, threads, stream.numba, shared]
    configured(*args)


class _NumbaPath:
    """An entry that launches through numba's full path (the simulator; what cannot be packed)."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    def __call__(self, blocks, threads, shared, stream, args):
        _numba_launch(self.dispatcher, blocks, threads, shared, stream, args)


# -- the pre-specialised path ---------------------------------------------------------------
_configs = {}


def _config(blocks, threads, shared, cooperative):
    """A cuda.core ``LaunchConfig`` per shape (kept: building one costs microseconds)."""
    key = (blocks, threads, shared, cooperative)
    config = _configs.get(key)
    if config is None:
        from cuda.core import LaunchConfig
        from numba.cuda._compat import CUDA_CORE_GE_1_0
        coop = {"is_cooperative" if CUDA_CORE_GE_1_0 else "cooperative_launch": cooperative}
        if len(_configs) > 4096:
            _configs.clear()
        config = _configs[key] = LaunchConfig(grid=(blocks, 1, 1), block=(threads, 1, 1),
                                              shmem_size=shared, **coop)
    return config


def _driver_launch(stream, config, kernel, *args):
    """The driver call numba makes (``cuda.core.launch``), looked up once, replaceable in
    benchmarks that stub the driver."""
    from cuda.core import launch
    global _driver_launch
    _driver_launch = launch
    launch(stream, config, kernel, *args)


class _Compiled:
    """An entry that packs the arguments with its signature's function and calls the driver."""

    __slots__ = ("kernel", "pack", "cooperative")

    def __init__(self, kernel, pack, cooperative):
        self.kernel, self.pack, self.cooperative = kernel, pack, cooperative

    def __call__(self, blocks, threads, shared, stream, args):
        self.launch(blocks, threads, shared, stream, self.pack(*args))

    def launch(self, blocks, threads, shared, stream, values):
        """Launch with the driver's parameter values (what :attr:`pack` returned)."""
        _driver_launch(stream.core, _config(blocks, threads, shared, self.cooperative),
                       self.kernel, *values)


_CTYPES = {"float64": "c_double", "float32": "c_float"}


def array_values(array):
    """numba's descriptor of a device array as the driver takes it (meminfo, parent, size,
    itemsize, pointer, shape, strides in bytes), kept on the array: a device array's memory,
    shape and strides never change, and gunpy passes the same arrays level after level."""
    view = array._strided_memory_view_shim
    values = (0, 0, view.size, view.dtype.itemsize, view.ptr, *view.shape,
              *view._layout.strides_in_bytes)
    array.__dict__["_gunpy_values"] = values
    return values


def packer(argtypes, key):
    """A function ``pack(*args)``: the driver's parameter values for ``argtypes``, or None.

    The values are numba-cuda's ``_Kernel._prepare_args`` ones, in its order (an
    array: :func:`array_values`; an
    integer or float as its ctypes value; a boolean as it is; a tuple item by
    item). ``key`` is the signature key they were typed from: as it packs, the
    function checks that every value is still of the key's Python class (and a
    device array of the same numba type, which numba interns), and returns None
    where one is not, so a launcher can try it before computing a key. Written
    as straight-line Python per signature; ``NotImplementedError`` for a type it
    does not pack (numba's path then serves that signature).
    """
    from numba.core import types
    # steps: ("check", expression) or ("line", statement), in order; values: the
    # expressions of the driver's parameter values
    steps, values, consts = [], [], {"array_values": array_values}

    def const(obj):
        name = f"k{len(consts)}"
        consts[name] = obj
        return name

    def walk(ty, k, x):
        if isinstance(k, tuple):
            # 1. tuples (a functor's data): unpacked into locals, then item by item
            cls, items = k[0], k[1:]
            if not isinstance(ty, types.BaseTuple) or len(ty) != len(items):
                raise NotImplementedError(f"cannot pack a {ty}")
            steps.append(("check", f"type({x}) is {const(cls)}"))
            names = [f"{x}_{i}" for i in range(len(items))]
            if names:  # an empty tuple passes no values
                steps.append(("line", f"{', '.join(names)}{',' if len(names) == 1 else ''} = {x}"))
            for item_ty, item_k, name in zip(ty, items, names):
                walk(item_ty, item_k, name)
        elif isinstance(ty, types.Array):
            # 2. device arrays: numba's array descriptor, kept on the array (array_values)
            steps.append(("check", f"type({x}) in {const(tuple(_ARRAYS))} "
                                   f"and {x}._numba_type_ is {const(k)}"))
            values.append(f"*({x}.__dict__.get('_gunpy_values') or array_values({x}))")
        else:
            # 3. scalars: the ctypes value numba would make
            steps.append(("check", f"type({x}) is {const(k)}"))
            if isinstance(ty, types.Boolean):
                values.append(x)
            elif isinstance(ty, types.Integer):
                values.append(f"c_{ty}({x})")
            elif str(ty) in _CTYPES:
                values.append(f"{_CTYPES[str(ty)]}({x})")
            else:
                raise NotImplementedError(f"cannot pack a {ty}")

    params = [f"a{i}" for i in range(len(argtypes))]
    for ty, k, p in zip(argtypes, key, params):
        walk(ty, k, p)
    lines, run = [], []  # consecutive checks become one test
    for kind, text in steps + [("line", None)]:
        if kind == "check":
            run.append(text)
            continue
        if run:
            lines.append(f"if not ({' and '.join(run)}):\n        return None")
            run = []
        if text is not None:
            lines.append(text)
    body = "".join(f"    {line}\n" for line in lines)
    source = (f"def pack({', '.join(params)}):\n{body}"
              f"    return ({', '.join(values)}{',' if values else ''})\n")
    namespace = {name: getattr(ctypes, name) for name in set(re.findall(r"\bc_\w+", source))}
    namespace.update(consts)
    exec(compile(source, "<gunpy.backends.launcher.packer>", "exec"), namespace)
    pack = namespace["pack"]
    pack.source = source
    return pack


# -- small copies -------------------------------------------------------------------------
def device_pointer(array):
    """A device array's data pointer (its first element's address), as a kernel gets it."""
    return (array.__dict__.get("_gunpy_values") or array_values(array))[4]


class DriverCopies:
    """Small copies as the one driver call numba's own copies end in, on the launch stream.

    numba's ``arr[i:j].copy_to_device(pinned, stream=)`` and ``arr[i:j].copy_to_host()``
    build a device-array view of the slice and a host array before that one call: on an
    H200 (``bench/gpu_micro.py``, 2026-11-28) a one-item upload from the pinned ring cost
    185 us and a one-item read 85 us, where a launch costs 6 us and a sync 9 us. Levels
    make both: a frontier's length reset, a level's counters. Here the pointer comes
    from the array's kept descriptor (:func:`device_pointer`) and the copy is
    ``cuMemcpyHtoDAsync`` from the pinned ring, or ``cuMemcpyDtoHAsync`` into a pinned
    landing buffer and a stream synchronisation: the same calls, in the same order on
    the same stream. Off for the simulator and with ``GUNPY_LAUNCHER=numba`` (numba's
    copies then, as its launches).
    """

    #: bytes a read can land in (a few counters)
    LANDING = 256

    def __init__(self, stream, driver=None):
        from numba import cuda
        from numba.cuda.cudadrv import driver as drv
        self.driver = driver or drv.driver
        self.handle = drv._stream_handle(stream.numba)
        self.landing = cuda.pinned_array(self.LANDING, dtype=np.uint8)
        self.landing_ptr = self.landing.ctypes.data

    def to_device(self, array, at, staged):
        """``array[at:at + len(staged)] = staged`` (``staged``: pinned host memory)."""
        self.driver.cuMemcpyHtoDAsync(device_pointer(array) + at * array.dtype.itemsize,
                                      staged.ctypes.data, staged.nbytes, self.handle)

    def to_host(self, array, at, n):
        """A host copy of ``array[at:at + n]`` (at most :attr:`LANDING` bytes), waited for."""
        size = array.dtype.itemsize
        self.driver.cuMemcpyDtoHAsync(self.landing_ptr, device_pointer(array) + at * size,
                                      n * size, self.handle)
        self.driver.cuStreamSynchronize(self.handle)
        return self.landing[:n * size].view(array.dtype).copy()
