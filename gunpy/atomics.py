"""Atomic read-modify-write operations that functors call on every backend.

``gunpy.atomics.min(arr, i, v)`` is one Python object that compiles three ways:

* on the **CUDA** target it lowers to numba-cuda's own ``cuda.atomic.min``
  (``atom.global.min`` / a CAS loop for floats);
* on the **CPU** target (``numba.njit(parallel=True)``) it lowers to an LLVM
  ``atomicrmw`` / ``cmpxchg`` instruction: real hardware atomics, which numba
  does not offer on the CPU;
* under numba's **CUDA simulator** (and plain Python) the function body runs,
  using the simulator's locks.

Every operation returns the value stored at ``arr[i]`` before the operation, as
CUDA's atomics do.

**One-core builds**: in code compiled without numba's reference counting
(``numba.njit(_nrt=False)``), the operations are plain loads and stores, not
hardware atomics. gunpy compiles so only what one thread runs: the CPU
backend's one-core ("nrt_free") builds of thin work, the serial helpers and
the functor hooks compiled for them (:func:`gunpy.backends.cpu.run_thin`),
where no other writer exists; a ``prange`` body is compiled with reference
counting, so stays atomic. On the road network a compare-and-swap per
discovered vertex was ~15 % of a BFS call. Call such a function from one
thread at a time. ``cas``, ``or_``, ``and_`` and ``exch`` take integer arrays
only (CUDA has no floating-point CAS); ``min``, ``max`` and ``add`` also take
float32/float64. Values are cast to the array's dtype.

How it works: the typing template and the lowering are registered in numba's
core registries, which the CPU target uses and which numba-cuda also installs
("third-party" registrations). The lowering checks which target it is compiling
for and emits the right code, so there is no second function object to keep in
step with the first.

Examples
--------
>>> import numpy as np, numba
>>> from gunpy import atomics
>>> @numba.njit(parallel=True)
... def count(hits):
...     for i in numba.prange(1000):
...         atomics.add(hits, i % 4, 1)
>>> hits = np.zeros(4, np.int64); count(hits); hits
array([250, 250, 250, 250])
"""

import builtins
import threading

from numba.core import cgutils, types
from numba.core.imputils import lower_builtin
from numba.core.typing.templates import AbstractTemplate, infer_global, signature

__all__ = ["cas", "min", "max", "add", "or_", "and_", "exch"]

# --------------------------------------------------------------------------- Python bodies
# These run under the CUDA simulator (device functions are plain Python there)
# and in plain Python. They share the simulator's module-level locks when it is
# loaded, so they are atomic with respect to its cuda.atomic.* as well.
_fallback_lock = threading.Lock()


def _sim_lock(name):
    try:
        from numba.cuda.simulator import kernelapi
        return getattr(kernelapi, name)
    except Exception:  # simulator not available: a private lock is enough
        return _fallback_lock


def cas(arr, i, old, new):
    """Compare-and-swap: if ``arr[i] == old`` store ``new``; return the previous value."""
    with _sim_lock("caslock"):
        prev = arr[i]
        if prev == old:
            arr[i] = new
        return prev


def min(arr, i, v):  # noqa: A001 - the API name mirrors cuda.atomic.min
    """``arr[i] = min(arr[i], v)`` atomically; return the previous value."""
    with _sim_lock("minlock"):
        prev = arr[i]
        arr[i] = builtins.min(prev, v)
        return prev


def max(arr, i, v):  # noqa: A001
    """``arr[i] = max(arr[i], v)`` atomically; return the previous value."""
    with _sim_lock("maxlock"):
        prev = arr[i]
        arr[i] = builtins.max(prev, v)
        return prev


def add(arr, i, v):
    """``arr[i] += v`` atomically; return the previous value."""
    with _sim_lock("addlock"):
        prev = arr[i]
        arr[i] = prev + v
        return prev


def or_(arr, i, v):
    """``arr[i] |= v`` atomically (integers); return the previous value."""
    with _sim_lock("orlock"):
        prev = arr[i]
        arr[i] = prev | v
        return prev


def and_(arr, i, v):
    """``arr[i] &= v`` atomically (integers); return the previous value."""
    with _sim_lock("andlock"):
        prev = arr[i]
        arr[i] = prev & v
        return prev


def exch(arr, i, v):
    """Store ``v`` in ``arr[i]`` atomically (integers); return the previous value."""
    with _sim_lock("exchlock"):
        prev = arr[i]
        arr[i] = v
        return prev


# --------------------------------------------------------------------------- typing
_NUMERIC = (types.int32, types.uint32, types.int64, types.uint64, types.float32, types.float64)
_INTEGER = (types.int32, types.uint32, types.int64, types.uint64)


def _register_typing(func, nvalues, dtypes):
    class _Template(AbstractTemplate):
        key = func

        def generic(self, args, kws):
            if kws or len(args) != 2 + nvalues:
                return None
            ary, idx = args[0], args[1]
            if not isinstance(ary, types.Array) or ary.ndim != 1 or ary.dtype not in dtypes:
                return None
            if not isinstance(idx, types.Integer):
                return None
            return signature(ary.dtype, ary, types.intp, *([ary.dtype] * nvalues))

    _Template.__name__ = f"gunpy_atomic_{func.__name__}"
    infer_global(func, types.Function(_Template))


# --------------------------------------------------------------------------- lowering
def _on_cuda(context):
    return type(context).__module__.startswith("numba.cuda")


def _one_thread(context):
    # compiled without NRT: gunpy's one-core builds only (see the module's docstring)
    return not context.enable_nrt


def _plain_rmw(builder, op, ptr, v):
    # the read-modify-write as a load and a store, for a build only one thread runs
    prev = builder.load(ptr)
    if op == "add":
        new = builder.add(prev, v)
    elif op == "fadd":
        new = builder.fadd(prev, v)
    elif op in ("or", "and"):
        new = getattr(builder, op + "_")(prev, v)
    elif op == "xchg":
        new = v
    elif op[0] == "f":  # fmin / fmax: as LLVM's, a NaN loses to a number
        better = builder.fcmp_ordered("<" if op == "fmin" else ">", v, prev)
        new = builder.select(builder.or_(better, builder.fcmp_unordered("uno", prev, prev)),
                             v, prev)
    elif op[0] == "u":  # umin / umax
        new = builder.select(builder.icmp_unsigned("<" if op == "umin" else ">", v, prev), v, prev)
    else:  # min / max
        new = builder.select(builder.icmp_signed("<" if op == "min" else ">", v, prev), v, prev)
    if op in ("add", "fadd", "or", "and", "xchg"):
        builder.store(new, ptr)
    else:  # min / max: stored only when the value changes
        changed = (builder.fcmp_unordered("!=", new, prev) if op[0] == "f"
                   else builder.icmp_unsigned("!=", new, prev))
        _store_if(builder, changed, new, ptr)
    return prev


def _store_if(builder, pred, value, ptr):
    # a branch, not a select and a store: a store on every call (a failing CAS on most
    # of a BFS's edges) dirties the line for nothing
    with builder.if_then(pred):
        builder.store(value, ptr)


def _item_pointer(context, builder, aryty, ary, idx):
    lary = context.make_array(aryty)(context, builder, ary)
    return cgutils.get_item_pointer(context, builder, aryty, lary, [idx], wraparound=False)


def _cuda_stub(name):
    from numba import cuda
    return getattr(cuda.atomic, name)


def _register_rmw(func, cuda_name, int_op, uint_op, float_op, dtypes):
    _register_typing(func, 1, dtypes)

    @lower_builtin(func, types.Array, types.Integer, types.Any)
    def _lower(context, builder, sig, args):
        if _on_cuda(context):
            return context.get_function(_cuda_stub(cuda_name), sig)(builder, args)
        aryty = sig.args[0]
        ptr = _item_pointer(context, builder, aryty, args[0], args[1])
        dt = aryty.dtype
        if isinstance(dt, types.Float):
            op = float_op
        else:
            op = int_op if dt.signed else uint_op
        if _one_thread(context):
            return _plain_rmw(builder, op, ptr, args[2])
        return builder.atomic_rmw(op, ptr, args[2], "monotonic")


_register_rmw(min, "min", "min", "umin", "fmin", _NUMERIC)
_register_rmw(max, "max", "max", "umax", "fmax", _NUMERIC)
_register_rmw(add, "add", "add", "add", "fadd", _NUMERIC)
_register_rmw(or_, "or_", "or", "or", None, _INTEGER)
_register_rmw(and_, "and_", "and", "and", None, _INTEGER)
_register_rmw(exch, "exch", "xchg", "xchg", None, _INTEGER)

_register_typing(cas, 2, _INTEGER)


@lower_builtin(cas, types.Array, types.Integer, types.Any, types.Any)
def _lower_cas(context, builder, sig, args):
    if _on_cuda(context):
        return context.get_function(_cuda_stub("cas"), sig)(builder, args)
    ptr = _item_pointer(context, builder, sig.args[0], args[0], args[1])
    if _one_thread(context):
        # stored only on success (road network BFS: the levels kernel 2.2 -> x ms)
        prev = builder.load(ptr)
        _store_if(builder, builder.icmp_unsigned("==", prev, args[2]), args[3], ptr)
        return prev
    pair = builder.cmpxchg(ptr, args[2], args[3], "monotonic", "monotonic")
    return builder.extract_value(pair, 0)
