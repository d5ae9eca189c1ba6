"""launch: the Python cost of one kernel launch, numba-cuda's own path against gunpy's launcher.

    gunpy bench --launch [--reps 2000] [--repeats 5] [--values 10,100,166] [--device stub|gpu]

Every frontier step pays a launch's host cost before the GPU does anything;
gunpy's kernels take 30-94 parameter values (the fused near/far kernel 166), and
numba-cuda types and converts each of them on every ``kernel[blocks, threads](*args)``.
This times, for kernels of 10, 100 and 166 parameter values as the driver gets
them (a device array is 7; a few top-level arguments and a functor-style
``data`` namedtuple of arrays and integers, :func:`kernel_arguments`), one
launch each way, interleaved in one process (each the best of
``--repeats`` rounds of ``--reps`` launches; CPU time of the process without a
GPU, so that other work on a shared machine does not count, wall time with one):

* **numba**: ``kernel[blocks, threads](*args)`` (configure, type, match the
  overload, ``_prepare_args``, ``LaunchConfig``, the driver call);
* **launcher**: :meth:`gunpy.backends.launcher.Launcher.launch` (signature key,
  the signature's packing function, the kept ``LaunchConfig``, the driver call),
  and its two parts alone: ``key`` (:func:`~gunpy.backends.launcher.signature_key`)
  and ``pack``.

``--device gpu`` launches an empty kernel on the GPU (host time per launch,
queued). ``--device stub`` (the default where there is no GPU, and the only mode
without one) runs everything but the driver: the device arrays are numba's own
``DeviceNDArray`` over a fake pointer, the compiled kernel is a stand-in whose
handle the driver never sees, and the driver call (``cuda.core.launch``) is
replaced, in numba and in the launcher alike, by building cuda.core's parameter
buffer (``ParamHolder``), the part of that call that converts the values; the
``stub`` column is that replacement's own cost, included in both.
"""

import argparse
import contextlib
import ctypes
import sys
import time
import warnings
from collections import namedtuple
from types import SimpleNamespace

import numpy as np

__all__ = ["measure", "markdown", "main", "kernel_arguments"]

_DTYPES = (np.int32, np.int64, np.float64)


def kernel_arguments(values, make_array):
    """``(pyfunc, args)``: a kernel whose launch hands the driver ``values`` parameter values.

    Shaped like gunpy's kernels: ``out`` (an int32 array: 7 values, as every 1-D
    array), ``n`` (an int), ``x`` (a float) and ``data``, a namedtuple of the rest:
    device arrays (int32, int64, float64 in turn) and, every fourth item or where
    fewer than 7 values are left, Python ints. gunpy's own launches (counted under the
    simulator, 2026-11-24): the fused near/far kernel 166 values (28 Python values),
    the fused BFS levels 94, the pull advance 85, a push advance 70.
    ``make_array(n, dtype)`` makes each device array.
    """
    if values < 10:
        raise ValueError("a kernel of at least 10 parameter values")
    items, left = [], values - 9
    while left:
        if len(items) % 4 != 3 and left >= 7:
            items.append(make_array(64, _DTYPES[len(items) % 3]))
            left -= 7
        else:
            items.append(len(items))
            left -= 1
    Data = namedtuple(f"Data{values}", [f"f{i}" for i in range(len(items))])

    def empty_kernel(out, n, x, data):
        pass

    return empty_kernel, (make_array(64, np.int32), 64, 0.5, Data(*items))


# -- the no-driver stand-ins --------------------------------------------------------------------
class _FakeMemory:
    """What numba's DeviceNDArray needs of its memory: a device pointer (never dereferenced)."""

    def __init__(self, ptr):
        self.device_ctypes_pointer = ctypes.c_void_p(ptr)


def _fake_array(n, dtype):
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    itemsize = np.dtype(dtype).itemsize
    return DeviceNDArray((n,), (itemsize,), dtype, gpu_data=_FakeMemory(0x7F0000000000 + 4096 * n))


def _stand_in_kernel(dispatcher, args):
    """Give ``dispatcher`` a compiled kernel for ``args``'s types without compiling: numba's
    ``_Kernel`` with every launch-time attribute and a module that is never loaded."""
    from numba.core.typing import signature
    from numba.cuda import types
    from numba.cuda.dispatcher import _Kernel
    argtypes = tuple(dispatcher.typeof_pyval(a) for a in args)
    k = object.__new__(_Kernel)
    k.signature = signature(types.none, *argtypes)
    k.debug, k.extensions, k.cooperative, k.launch_config_sensitive = False, [], False, False
    k.objectmode, k.entry_point = False, None
    handle = SimpleNamespace(name="stand_in")
    k._codelibrary = SimpleNamespace(get_cufunc=lambda: SimpleNamespace(kernel=handle,
                                                                        name="stand_in"))
    dispatcher.add_overload(k, argtypes)


def _param_holder(stream, config, kernel, *args):
    from cuda.core._kernel_arg_handler import ParamHolder
    return ParamHolder(args)


@contextlib.contextmanager
def _driver_stubbed():
    """The driver call replaced by its argument conversion, in numba and the launcher."""
    import numba.cuda.dispatcher as nd

    from gunpy.backends import launcher as gl
    saved = nd.launch, gl._driver_launch
    nd.launch = gl._driver_launch = _param_holder
    try:
        yield
    finally:
        nd.launch, gl._driver_launch = saved


# -- timing ---------------------------------------------------------------------------------------
def _per_call_us(fn, reps, clock=time.perf_counter):
    t = clock()
    for _ in range(reps):
        fn()
    return (clock() - t) / reps * 1e6


def _cases(values, device):
    """``{name: zero-argument callable}`` for one kernel size, every dispatcher fresh."""
    from numba import cuda

    from gunpy.backends.launcher import Launcher, LaunchStream, packer, signature_key
    make = _fake_array if device == "stub" else (lambda n, dt: cuda.device_array(n, dtype=dt))
    pyfunc, args = kernel_arguments(values, make)
    before, after = cuda.jit(pyfunc), cuda.jit(pyfunc)
    if device == "stub":
        _stand_in_kernel(before, args)
        _stand_in_kernel(after, args)
    stream = LaunchStream(0)
    launcher = Launcher(after)
    blocks, threads = 2, 256
    with warnings.catch_warnings():  # numba's small-grid warning: once, at configuration
        warnings.simplefilter("ignore")
        configured = before[blocks, threads]
    launcher.launch(blocks, threads, args, stream=stream)  # resolves the signature
    configured(*args)
    pack = packer(tuple(after.typeof_pyval(a) for a in args), signature_key(args))
    cases = {"numba": lambda: configured(*args),
             "launcher": lambda: launcher.launch(blocks, threads, args, stream=stream),
             "key": lambda: signature_key(args),
             "pack": lambda: pack(*args)}
    if device == "stub":
        values_ = pack(*args)
        cases["stub"] = lambda: _param_holder(None, None, None, *values_)
    return cases


def measure(values=(10, 100, 166), *, reps=2000, repeats=5, device="stub"):
    """``[(values, {case: us per call})]``: the best of ``repeats`` interleaved rounds."""
    from numba import cuda
    if device not in ("stub", "gpu"):
        raise ValueError(f"device must be 'stub' or 'gpu', got {device!r}")
    if cuda.is_available() if device == "stub" else not cuda.is_available():
        raise RuntimeError("--device stub is for machines without a GPU; --device gpu needs one")
    # no GPU: the process's CPU time (what the Python costs, however busy the machine is);
    # a GPU: wall time (a launch may also wait for the driver's queue)
    clock = time.process_time if device == "stub" else time.perf_counter
    rows = []
    with (_driver_stubbed() if device == "stub" else contextlib.nullcontext()):
        for v in values:
            cases = _cases(v, device)
            best = {name: float("inf") for name in cases}
            for _ in range(repeats):
                for name, fn in cases.items():  # interleaved: noise hits every case alike
                    fn()
                    best[name] = min(best[name], _per_call_us(fn, reps, clock))
                if device == "gpu":
                    cuda.synchronize()
            rows.append((v, best))
    return rows


def markdown(rows, device):
    """The rows as a markdown table (microseconds per launch)."""
    extra = ["stub"] if device == "stub" else []
    head = ["numba", "launcher", "key", "pack"] + extra
    lines = ["| parameter values | " + " | ".join(f"{h} us" for h in head) + " | numba / launcher |",
             "|---:|" + "---:|" * (len(head) + 1)]
    for v, best in rows:
        cells = " | ".join(f"{best[h]:.1f}" for h in head)
        lines.append(f"| {v} | {cells} | {best['numba'] / best['launcher']:.1f}x |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="gunpy bench --launch", description=__doc__.split("\n\n")[0])
    p.add_argument("--launch", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--reps", type=int, default=2000, help="launches timed per round")
    p.add_argument("--repeats", type=int, default=5, help="interleaved rounds (the best counts)")
    p.add_argument("--values", default="10,100,166", help="kernel sizes, parameter values")
    p.add_argument("--device", choices=("stub", "gpu"), default=None,
                   help="gpu: real launches; stub: no driver (default: gpu when there is one)")
    args = p.parse_args(argv)
    import numba
    from numba import cuda
    if numba.config.ENABLE_CUDASIM:
        print("gunpy bench --launch: numba's simulator is on; launches there mean nothing",
              file=sys.stderr)
        return 2
    device = args.device or ("gpu" if cuda.is_available() else "stub")
    values = tuple(int(v) for v in args.values.split(","))
    from gunpy.bench.machine import machine_info
    info = machine_info("cuda" if device == "gpu" else "cpu", bandwidth=False)
    print(f"gunpy bench --launch ({device}): " + ", ".join(f"{k} {v}" for k, v in info.items()))
    print(markdown(measure(values, reps=args.reps, repeats=args.repeats, device=device), device))
    return 0


if __name__ == "__main__":
    sys.exit(main())
