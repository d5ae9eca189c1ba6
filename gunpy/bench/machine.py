"""The machine a benchmark ran on, and the harmonic mean (Graph500's TEPS summary).

One :func:`machine_info` for every benchmark (the suite, start-up, gunpy.dist's weak
scaling): date, commit, Python, numba, gunpy, CPU, cores, load average, the GPU and
its copy bandwidth on CUDA, the MPI library where asked.
"""

import os
import platform
import subprocess
import time
from datetime import datetime, timezone

import numpy as np

__all__ = ["machine_info", "copy_bandwidth", "harmonic", "cores"]


def harmonic(xs):
    """Harmonic mean of the positive values (Graph500's TEPS mean); nan if none."""
    xs = [x for x in xs if x > 0]
    return len(xs) / sum(1.0 / x for x in xs) if xs else float("nan")


def cores():
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine_info(backend, *, mpi=False, bandwidth=True):
    """What to print beside a benchmark's numbers.

    ``mpi=True`` adds the MPI library's version; ``bandwidth=False`` skips the
    GPU copy-bandwidth measurement (a second of device time).
    """
    import numba

    import gunpy
    info = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "python": platform.python_version(), "machine": platform.machine(),
            "cpu_count": os.cpu_count(), "cores": cores(), "numba": numba.__version__,
            "gunpy": gunpy.__version__, "numba_threads": numba.get_num_threads(),
            "backend": backend}
    if mpi:
        from gunpy.dist.comm import require_mpi
        info["mpi"] = " ".join(require_mpi().Get_library_version().split()[:3])
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f
                               if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        info["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True, timeout=10,
                                        cwd=os.path.dirname(__file__)).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    if hasattr(os, "getloadavg"):
        info["load_average"] = os.getloadavg()[0]
    from gunpy.backends import threads
    info.update({f"threads: {k}": v for k, v in threads.describe().items()})
    if backend == "cuda":
        from numba import cuda
        name = getattr(cuda.get_current_device(), "name", "CUDA simulator")
        info["gpu"] = name.decode() if isinstance(name, bytes) else str(name)
        if bandwidth and not numba.config.ENABLE_CUDASIM:
            info["copy_bandwidth_GBs"] = copy_bandwidth()
    return info


def copy_bandwidth(nbytes=1 << 30):
    """Device-to-device copy bandwidth in GB/s (read + write), measured now."""
    from numba import cuda
    a = cuda.device_array(nbytes // 8, dtype=np.float64)
    b = cuda.device_array_like(a)
    b.copy_to_device(a)
    cuda.synchronize()
    t = time.perf_counter()
    for _ in range(10):
        b.copy_to_device(a)
    cuda.synchronize()
    return 2 * nbytes * 10 / (time.perf_counter() - t) / 1e9
