"""Arrays in GPU memory from other libraries (CuPy, PyTorch, JAX, numba), read where they are.

:func:`device_view` turns an object with ``__cuda_array_interface__`` (CuPy,
PyTorch and JAX arrays on a GPU, numba device arrays) or one that only speaks
DLPack (``__dlpack__``: :mod:`gunpy.backends.dlpack`) into a numba device array
over the same memory: no copy, and the object is kept alive by the view.
:func:`adopt_csr` checks a CSR held in device memory with one kernel (offsets start
at 0, never decrease and end at the edge count; every column index is in range)
and converts, on the device, what is not already in the graph's types (int64
offsets, int32 or int64 indices, float64 weights). Nothing graph-sized crosses to
the host: the check reads back five numbers.

Under numba's simulator "device memory" is host memory, so a view there is a
NumPy view of the interface's pointer: the same code path, testable without a GPU.
"""

import math

import numpy as np
from numba import cuda

from gunpy._inputs import is_device_array
from gunpy.backends.cuda import ON_CUDASIM, kernel
from gunpy.backends.dlpack import from_dlpack

__all__ = ["device_view", "adopt_csr", "adopt_edges", "adopt_vertex_weights", "DeviceCSR",
           "device_name", "reached_edges"]

_BIG = np.iinfo(np.int64).max


def device_name():
    """The device arrays live on, in words."""
    if ON_CUDASIM:
        return "the simulated CUDA device"
    return f"CUDA device {cuda.get_current_device().id}"


class _SimulatedMemory:
    """The simulator's view of an interface: its pointer read as host memory."""

    def __init__(self, owner, cai):
        self.owner = owner  # kept alive as long as the view (NumPy keeps this object)
        self.__array_interface__ = {"data": cai["data"], "shape": tuple(cai["shape"]),
                                    "typestr": cai["typestr"], "strides": cai.get("strides"),
                                    "version": 3}


def device_view(name, a):
    """``a`` (in GPU memory) as a numba device array over the same memory."""
    if is_device_array(a):
        return a
    try:
        has_cai = getattr(a, "__cuda_array_interface__", None) is not None
    except Exception:  # noqa: BLE001 - a property that cannot answer
        has_cai = False
    if not has_cai:
        if not hasattr(a, "__dlpack__"):
            raise ValueError(f"{name} ({type(a).__module__.split('.')[0]}."
                             f"{type(a).__name__}) is in GPU memory but speaks neither "
                             "__cuda_array_interface__ nor DLPack, the protocols gunpy "
                             "reads device arrays through")
        a = from_dlpack(name, a)  # the capsule read in place, freed with the view
    if ON_CUDASIM:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
        return FakeCUDAArray(np.asarray(_SimulatedMemory(a, a.__cuda_array_interface__)))
    return cuda.as_cuda_array(a)  # waits for the producer's stream (CAI v3 "stream")


class DeviceCSR:
    """A CSR in device memory, in the graph's types: ``values`` is None when unweighted
    and ``device`` names where it lives."""

    __slots__ = ("row_offsets", "column_indices", "values", "device")

    def __init__(self, row_offsets, column_indices, values, device):
        self.row_offsets, self.column_indices = row_offsets, column_indices
        self.values, self.device = values, device


def _check_csr(ro, ci, n, m, out):
    # out: [first offset that decreases, first column out of range, ro[0], ro[n]]
    start = cuda.grid(1)
    if start == 0:
        out[2] = ro[0]
        out[3] = ro[n]
    for i in range(start, max(n, m), cuda.gridsize(1)):
        if i < n and ro[i] > ro[i + 1]:
            cuda.atomic.min(out, 0, i + 1)
        if i < m:
            c = ci[i]
            if c < 0 or c >= n:
                cuda.atomic.min(out, 1, i)


def _convert(src, dst, n):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        dst[i] = src[i]


def _first_outside(a, hi, m, out):
    # out[0]: the first index whose id is negative or >= hi
    for i in range(cuda.grid(1), m, cuda.gridsize(1)):
        v = a[i]
        if v < 0 or v >= hi:
            cuda.atomic.min(out, 0, i)


def _first_not_weight(a, m, out):
    # out[0]: the first index whose value is negative, infinite or NaN
    for i in range(cuda.grid(1), m, cuda.gridsize(1)):
        x = a[i]
        if not (x >= 0.0 and x < math.inf):
            cuda.atomic.min(out, 0, i)


def _divide(a, by, m):
    for i in range(cuda.grid(1), m, cuda.gridsize(1)):
        a[i] = a[i] / by


def _reached_edges(ro, ids, n, out):
    # out[0] += the out-degrees of the vertices with ids[v] >= 0 (a local sum a thread)
    total = 0
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        if ids[i] >= 0:
            total += ro[i + 1] - ro[i]
    if total:
        cuda.atomic.add(out, 0, total)


check_csr_kernel = kernel(_check_csr)
reached_edges_kernel = kernel(_reached_edges)
first_not_weight_kernel = kernel(_first_not_weight)
divide_kernel = kernel(_divide)
convert_kernel = kernel(_convert)
first_outside_kernel = kernel(_first_outside)


def _vector(name, arr, kinds, what):
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    dt = np.dtype(arr.dtype)
    if dt.kind not in kinds or (dt.kind == "u" and dt.itemsize == 8):
        raise ValueError(f"{name} must hold {what}, got dtype {dt} (in GPU memory: convert "
                         "it there first, for example x.astype('int64'))")


def _in_type(backend, arr, dtype, copy):
    """``arr`` as a contiguous device array of ``dtype``: itself when it already is one
    (and ``copy`` is False), else a new array filled on the device."""
    contiguous = arr.shape[0] < 2 or arr.strides[0] == arr.dtype.itemsize
    if not copy and arr.dtype == dtype and contiguous:
        return arr
    out = backend.empty(arr.shape[0], dtype)
    backend.run(convert_kernel, arr.shape[0], arr, out, arr.shape[0])
    return out


def _first_bad_id(backend, name, arr, hi, why):
    """Raise naming the first id of ``arr`` outside ``0..hi-1`` (``why``: the rule)."""
    out = backend.asarray(np.array([_BIG], dtype=np.int64))
    backend.run(first_outside_kernel, arr.shape[0], arr, np.int64(hi), np.int64(arr.shape[0]),
                out)
    i = backend.read(out)
    if i != _BIG:
        value = arr[i:i + 1].copy_to_host()[0]
        raise ValueError(f"{name}[{i}] = {value} " + (why if value >= 0 else
                         "is negative; vertex ids are 0..n-1"))


def _weights(backend, weights, m, copy=False, name="weights"):
    """Weights in device memory, checked (real numbers, one per edge) and as float64."""
    vals = device_view(name, weights)
    _vector(name, vals, "fiub", "real weights")
    if vals.shape[0] != m:
        raise ValueError(f"{name} must be a 1-D array of length {m} (one per edge), "
                         f"got shape {vals.shape}")
    if vals.dtype.kind in "iu" and vals.dtype.itemsize > 4:
        raise ValueError(f"{name} are {vals.dtype} in GPU memory: float64 holds integers "
                         "exactly only within +-2**53, so convert them there first "
                         "(x.astype('float64'))")
    return _in_type(backend, vals, np.float64, copy)


def adopt_edges(backend, src, dst, weights, num_vertices, index_dtype, *, mirror,
                remove_self_loops, remove_duplicates):
    """A :class:`DeviceCSR` built on the device from edge endpoints there (the host
    ``Graph.from_edges``' checks and rules; :func:`gunpy.backends.device_build.build_csr`).
    ``num_vertices`` None: the largest id + 1."""
    from gunpy.backends.device_build import build_csr
    from gunpy.operators.reduce import reduce_array
    s, d = device_view("src", src), device_view("dst", dst)
    _vector("src", s, "iu", "integer vertex ids")
    _vector("dst", d, "iu", "integer vertex ids")
    if s.shape[0] != d.shape[0]:
        raise ValueError(f"src and dst differ in length ({s.shape[0]} vs {d.shape[0]})")
    m = s.shape[0]
    if num_vertices is None:
        for name, arr in (("src", s), ("dst", d)):
            _first_bad_id(backend, name, arr, _BIG, "")
        n = 1 + max((int(reduce_array(backend, a, op="max")) for a in (s, d)), default=-1) \
            if m else 0
    else:
        n = num_vertices
        for name, arr in (("src", s), ("dst", d)):
            _first_bad_id(backend, name, arr, n, f"is out of range for num_vertices = {n}")
    w = None if weights is None else _weights(backend, weights, m)
    ro, ci, vals = build_csr(backend, s, d, w, n, index_dtype(n), mirror=mirror,
                             remove_self_loops=remove_self_loops,
                             remove_duplicates=remove_duplicates)
    return DeviceCSR(ro, ci, vals, device_name())


def adopt_csr(backend, row_offsets, column_indices, values, index_dtype, *, copy=True):
    """Check a device CSR and return it (:class:`DeviceCSR`) in the graph's types.

    ``row_offsets``, ``column_indices`` and ``values`` (or None) are objects in GPU
    memory (:func:`device_view`); ``index_dtype(n)`` is the indices' type for ``n``
    vertices. ``copy=False`` keeps the caller's arrays where their types already
    match (the graph then reads them in place). Raises ``ValueError`` naming the array,
    the index and the rule, as the host constructor does.
    """
    ro = device_view("row_offsets", row_offsets)
    ci = device_view("column_indices", column_indices)
    _vector("row_offsets", ro, "iu", "integer offsets")
    _vector("column_indices", ci, "iu", "integer vertex ids")
    if ro.shape[0] < 1:
        raise ValueError("row_offsets must have num_vertices + 1 entries, got none")
    n, m = ro.shape[0] - 1, ci.shape[0]
    out = backend.asarray(np.array([_BIG, _BIG, 0, 0], dtype=np.int64))
    # in the caller's own types, before any conversion could wrap a bad id into range
    backend.run(check_csr_kernel, max(n, m, 1), ro, ci, np.int64(n), np.int64(m), out)
    bad_offset, bad_column, first, last = backend.to_host(out).tolist()
    if first != 0:
        raise ValueError(f"row_offsets[0] = {first}; it must be 0")
    if bad_offset != _BIG:
        raise ValueError(f"row_offsets decrease at {bad_offset}; they must never decrease")
    if last != m:
        raise ValueError(f"row_offsets[-1] = {last} but there are {m} column indices")
    if bad_column != _BIG:
        value = ci[bad_column:bad_column + 1].copy_to_host()[0]
        raise ValueError(f"column_indices[{bad_column}] = {value} is out of range for {n} "
                         f"vertices (ids 0..{n - 1})")
    vals = None if values is None else _weights(backend, values, m, copy, "values")
    return DeviceCSR(_in_type(backend, ro, np.int64, copy),
                     _in_type(backend, ci, index_dtype(n), copy), vals, device_name())


def adopt_vertex_weights(backend, values, n, name):
    """``values`` (one real number per vertex, in GPU memory) as a new float64 device
    array summing to 1, checked and scaled on the device (PageRank's personalisation
    vectors): ValueError naming the first negative or non-finite entry, or a sum of 0.
    The caller's array is not written."""
    if backend.name != "cuda":
        raise ValueError(f"{name} is in GPU memory; the {backend.name} backend reads host "
                         "memory: run it with backend='cuda', or pass a host copy")
    x = device_view(name, values)
    _vector(name, x, "fiub", "real numbers")
    if x.shape[0] != n:
        raise ValueError(f"{name} must have one value per vertex ({n}), got shape {x.shape}")
    x = _in_type(backend, x, np.float64, copy=True)
    out = backend.asarray(np.array([_BIG], dtype=np.int64))
    backend.run(first_not_weight_kernel, n, x, np.int64(n), out)
    i = backend.read(out)
    if i != _BIG:
        raise ValueError(f"{name} must be finite and non-negative; {name}[{i}] = "
                         f"{x[i:i + 1].copy_to_host()[0]}")
    from gunpy.operators.reduce import reduce_array
    total = reduce_array(backend, x, op="sum")
    if not total > 0:
        raise ValueError(f"{name} sums to 0: no vertex to restart at")
    backend.run(divide_kernel, n, x, np.float64(total), np.int64(n))
    return x


def reached_edges(backend, row_offsets, ids):
    """The out-edges of the vertices whose ``ids`` entry is ``>= 0`` (a run's depth or
    parent array, -1 unreached), counted on the device: one number read back."""
    n = ids.shape[0]
    out = backend.asarray(np.zeros(1, np.int64))
    backend.run(reached_edges_kernel, max(n, 1), row_offsets, ids, np.int64(n), out)
    return int(backend.read(out))
