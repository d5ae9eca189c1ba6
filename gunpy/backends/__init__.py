"""Backends: how a functor becomes a kernel, and where the arrays live.

Two targets run the same functor source:

``"cuda"``
    ``numba.cuda`` kernels on an NVIDIA GPU, or on numba's CUDA simulator when
    ``NUMBA_ENABLE_CUDASIM=1`` was set before numba was first imported.
``"cpu"``
    ``numba.njit(parallel=True)`` kernels on all cores, with real hardware
    atomics from :mod:`gunpy.atomics`.

``"auto"`` picks ``"cuda"`` when a GPU (or the simulator) is usable, else ``"cpu"``.
"""

import functools

__all__ = ["get_backend", "available", "resolve", "BACKENDS", "cuda_status"]

BACKENDS = ("cuda", "cpu")


@functools.lru_cache(maxsize=None)
def cuda_status():
    """``(usable, reason)``: whether CUDA kernels can run in this process."""
    try:
        import numba
        from numba import cuda
    except Exception as exc:  # numba-cuda missing or broken
        return False, f"numba.cuda cannot be imported: {exc}"
    if numba.config.ENABLE_CUDASIM:
        return True, "numba CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    try:
        if cuda.is_available():
            return True, cuda.get_current_device().name.decode() \
                if isinstance(cuda.get_current_device().name, bytes) \
                else str(cuda.get_current_device().name)
        return False, "no CUDA driver or GPU found"
    except Exception as exc:
        return False, f"CUDA is not usable: {exc}"


def available():
    """Names of the backends usable in this process, best first."""
    names = []
    if cuda_status()[0]:
        names.append("cuda")
    names.append("cpu")
    return names


def resolve(name):
    """Turn ``"auto"`` into a concrete backend name, validating the choice."""
    if name is None or name == "auto":
        return available()[0]
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; valid backends are "
                         f"'auto', {', '.join(repr(b) for b in BACKENDS)}")
    if name == "cuda" and not cuda_status()[0]:
        raise RuntimeError(f"backend='cuda' requested but {cuda_status()[1]}; "
                           "use backend='cpu' or backend='auto'")
    return name


@functools.lru_cache(maxsize=None)
def _make(name):
    if name == "cuda":
        from gunpy.backends.cuda import CudaBackend
        return CudaBackend()
    from gunpy.backends.cpu import CpuBackend
    return CpuBackend()


def get_backend(name="auto"):
    """The backend object for ``name`` (``"auto"``, ``"cuda"`` or ``"cpu"``)."""
    return _make(resolve(name))
