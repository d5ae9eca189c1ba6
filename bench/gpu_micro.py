"""gpu_micro: what one launch, one device read, one upload and one allocation cost on the cuda backend.

    python bench/gpu_micro.py [--reps 2000]

The fixed costs under every frontier step: a kernel launch (an empty kernel,
and gunpy's fill kernel through ``backend.fill``; each both queued alone and
with a synchronize after it), a device read of one element (``backend.read``,
a device-to-host copy and a host synchronisation), an upload of one element
(``backend.write``), an allocation (``backend.empty``, 1 element and 1 MiB), then
the copy bandwidths (device to device, host to device, device to host). Each
cost is the median of ``--reps`` calls after a warm-up, in microseconds, with
the 10th and 90th percentiles. Prints a markdown table. Then a launch's Python
cost for kernels of 10, 100 and 166 parameter values, numba-cuda's own
``kernel[b, t](*args)`` against gunpy's cached launcher
(:mod:`gunpy.bench.launch`, ``gunpy bench --launch --device gpu``).

Exits 2 with one line when no GPU can run it (no driver, no device, or numba's
simulator switched on: its timings would mean nothing).
"""

import argparse
import sys
import time

import numpy as np


def _why_not():
    try:
        import numba
        from numba import cuda
    except Exception as exc:
        return f"numba.cuda cannot be imported ({exc})"
    if numba.config.ENABLE_CUDASIM:
        return "numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1); timings need a real GPU"
    try:
        if not cuda.is_available():
            return "no usable CUDA GPU here (numba.cuda.is_available() is False)"
    except Exception as exc:
        return f"CUDA is not usable here ({exc})"
    return None


def _stats(samples_ns):
    us = np.asarray(samples_ns, dtype=np.float64) / 1e3
    return float(np.median(us)), float(np.percentile(us, 10)), float(np.percentile(us, 90))


def _time_each(fn, reps, warm=20):
    for _ in range(warm):
        fn()
    out = np.empty(reps, dtype=np.int64)
    clock = time.perf_counter_ns
    for i in range(reps):
        t = clock()
        fn()
        out[i] = clock() - t
    return out


def _bandwidth(copy, nbytes, sync, reps=10):
    copy()
    sync()
    t = time.perf_counter()
    for _ in range(reps):
        copy()
    sync()
    return nbytes * reps / (time.perf_counter() - t) / 1e9


def measure(reps=2000):
    """``(rows, bandwidths)``: ``(what, median us, p10, p90)`` rows and ``(what, GB/s)`` pairs."""
    from numba import cuda

    from gunpy.backends import get_backend
    be = get_backend("cuda")

    @cuda.jit
    def empty_kernel():
        pass

    one = be.empty(1, np.int32)
    be.fill(one, 0)
    cuda.synchronize()
    sync = cuda.synchronize

    def launch_empty():
        empty_kernel[1, 32]()

    from gunpy.backends.launcher import launcher
    empty_launcher = launcher(empty_kernel)

    def launch_empty_launcher():
        empty_launcher.launch(1, 32, (), stream=be.stream)

    def launch_empty_sync():
        empty_kernel[1, 32]()
        sync()

    def fill_one():
        be.fill(one, 7)

    def fill_one_sync():
        be.fill(one, 7)
        sync()

    rows = []
    for what, fn in [("launch: empty kernel, queued (host cost)", launch_empty),
                     ("launch: empty kernel through gunpy's launcher, queued", launch_empty_launcher),
                     ("launch: empty kernel + synchronize", launch_empty_sync),
                     ("launch: backend.fill(1 element), queued", fill_one),
                     ("launch: backend.fill(1 element) + synchronize", fill_one_sync),
                     ("device read: backend.read(arr, 0)", lambda: be.read(one, 0)),
                     ("upload: backend.write(arr, 0, v)", lambda: be.write(one, 0, 3)),
                     ("synchronize alone", sync),
                     ("allocation: backend.empty(1, int32)", lambda: be.empty(1, np.int32)),
                     ("allocation: backend.empty(1 MiB)", lambda: be.empty(1 << 18, np.int32))]:
        samples = _time_each(fn, reps)
        sync()
        rows.append((what,) + _stats(samples))

    bandwidths = []
    n = 256 << 20  # bytes
    a = cuda.device_array(n // 8, dtype=np.float64)
    b = cuda.device_array_like(a)
    host = cuda.pinned_array(n // 8, dtype=np.float64)
    pageable = np.ones(n // 8)
    bandwidths.append(("device to device, 256 MiB (read + write)",
                       2 * _bandwidth(lambda: b.copy_to_device(a), n, sync)))
    bandwidths.append(("host to device, 256 MiB pinned",
                       _bandwidth(lambda: a.copy_to_device(host), n, sync)))
    bandwidths.append(("device to host, 256 MiB pinned",
                       _bandwidth(lambda: a.copy_to_host(host), n, sync)))
    bandwidths.append(("host to device, 256 MiB pageable",
                       _bandwidth(lambda: a.copy_to_device(pageable), n, sync)))
    return rows, bandwidths


def _save_cache_counters():
    """Where ``GUNPY_DAY_COUNTERS`` names a folder (bench/gpu-day), leave this process's
    kernel-cache hits and misses there for the day's report."""
    import json
    import os
    folder = os.environ.get("GUNPY_DAY_COUNTERS")
    mod = sys.modules.get("gunpy._jitcache")
    if folder and mod is not None:
        try:
            with open(os.path.join(folder, f"{os.getpid()}.json"), "w") as fh:
                json.dump(dict(mod.counters, process="gpu_micro"), fh)
        except OSError:
            pass


def main(argv=None):
    p = argparse.ArgumentParser(prog="gpu_micro", description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=2000, help="calls timed per row (default 2000)")
    p.add_argument("--repeats", type=int, default=5,
                   help="interleaved rounds of the launch-cost table (default 5)")
    args = p.parse_args(argv)
    why = _why_not()
    if why:
        print(f"gpu_micro: {why}", file=sys.stderr)
        return 2
    import atexit
    atexit.register(_save_cache_counters)
    from numba import cuda
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    t0 = time.perf_counter()
    rows, bandwidths = measure(args.reps)
    print(f"gpu_micro: {name}, median of {args.reps} calls each, microseconds\n")
    print("| what | median us | p10 us | p90 us |")
    print("|---|---:|---:|---:|")
    for what, med, p10, p90 in rows:
        print(f"| {what} | {med:.1f} | {p10:.1f} | {p90:.1f} |")
    print("\n| copy | GB/s |")
    print("|---|---:|")
    for what, gbs in bandwidths:
        print(f"| {what} | {gbs:,.0f} |")
    from gunpy.bench import launch
    print(f"\nlaunch cost: microseconds a launch (best of {args.repeats} interleaved rounds of "
          f"{args.reps} launches), numba's kernel[b, t](*args) against gunpy's launcher\n")
    print(launch.markdown(launch.measure(reps=args.reps, repeats=args.repeats, device="gpu"),
                          "gpu"))
    print(f"\ngpu_micro: done in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
