"""Checks of what users hand to :class:`gunpy.Graph`'s constructors, before any conversion.

Ids and offsets must be arrays of an integer dtype (``astype`` would truncate
floats, parse strings and wrap large integers without a word), in range in the
caller's own dtype; weights must be real numbers that float64 holds exactly.
Each check raises ``ValueError`` naming the array, the index and the value.
"""

import operator

import numpy as np
import scipy.sparse as sp

_INT32_MAX = np.iinfo(np.int32).max


def _index_dtype(n):
    """Column indices' dtype for ``n`` vertices: int32 where it holds every id."""
    return np.int32 if n <= _INT32_MAX else np.int64


_INT64_MAX = np.iinfo(np.int64).max
#: Largest integer weight float64 holds exactly (and every integer below it).
_EXACT_FLOAT = 2 ** 53
_KINDS = {"b": "booleans", "f": "floats", "c": "complex numbers", "U": "strings",
          "S": "bytes", "O": "Python objects", "M": "datetimes", "m": "timedeltas",
          "V": "records"}


#: DLPack's device types (``__dlpack_device__()[0]``) by name; 1 and 3 are host memory
_DLPACK_DEVICES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan",
                   8: "Metal", 9: "VPI", 10: "ROCm", 11: "ROCm host", 13: "CUDA managed",
                   14: "oneAPI"}


def is_device_array(a):
    """True for a numba device array (real or simulated): what kernels take as it is."""
    return hasattr(a, "copy_to_host") and type(a).__module__.startswith("numba.")


def device_memory(a):
    """Where ``a`` lives when that is device memory (in words), else None (host memory).

    Numba device arrays, objects with ``__cuda_array_interface__`` (CuPy, PyTorch CUDA
    tensors, JAX GPU arrays, cuDF columns) and DLPack producers whose device is not
    the host's.
    """
    if isinstance(a, np.ndarray):
        return None
    try:
        if is_device_array(a):
            return "GPU memory (a numba device array)"
        if getattr(a, "__cuda_array_interface__", None) is not None:
            return "GPU memory (it has __cuda_array_interface__)"
        if hasattr(a, "__dlpack_device__"):
            kind, dev = a.__dlpack_device__()
            if int(kind) not in (1, 3):
                return (f"{_DLPACK_DEVICES.get(int(kind), f'DLPack device type {kind}')} "
                        f"memory (device {dev})")
    except Exception:  # a property that cannot answer: read it as an array-like
        return None
    return None


def _device_backend(arrays):
    """The CUDA backend when the arrays (``{name: array or None}``) are in device memory,
    None when they are in host memory; raises when they are split between the two, or
    when no CUDA backend can run here."""
    where = {name: device_memory(a) for name, a in arrays.items() if a is not None}
    on = [name for name, w in where.items() if w]
    if not on:
        return None
    host = [name for name, w in where.items() if not w]
    if host:
        raise ValueError(f"{on[0]} is in {where[on[0]]} but {host[0]} is in host memory: "
                         "pass them all in one place")
    from gunpy.backends import get_backend
    try:
        return get_backend("cuda")
    except RuntimeError as exc:
        raise ValueError(f"{on[0]} is in {where[on[0]]}, but the CUDA backend cannot run "
                         f"here ({exc})") from exc


def few_to_host(name, a):
    """``a`` copied to NumPy when it is an array in GPU memory, else ``a`` itself: for
    short lists the host schedules one by one (a run's sources: a few ids, never a
    graph-sized array)."""
    if device_memory(a) is None:
        return a
    from gunpy.backends.interop import device_view
    return device_view(name, a).copy_to_host()


def _host(name, a):
    """``a`` as a NumPy array, without a copy where it can be read in place.

    NumPy arrays and array-likes (lists, pandas and pyarrow columns) go through
    ``np.asarray``; objects that speak DLPack from host memory (PyTorch CPU tensors,
    JAX CPU arrays) through ``np.from_dlpack``. Arrays in device memory are refused
    with the device named (the constructors that build on the GPU take them before
    this: :func:`_device_backend`).
    """
    if isinstance(a, np.ndarray):
        return a
    where = device_memory(a)
    if where is not None:
        kind = f"{type(a).__module__.split('.')[0]}.{type(a).__name__}"
        raise ValueError(f"{name} is a {kind} in {where}; this constructor builds graphs in "
                         "host memory: Graph.from_edges, Graph.from_edge_index and "
                         "Graph(row_offsets, column_indices, values) build them on the GPU "
                         "from device arrays, or copy it first (CuPy: .get(), PyTorch: "
                         ".cpu(), numba: .copy_to_host(), cuDF: .to_pandas())")
    if hasattr(a, "__dlpack__") and not hasattr(a, "__array__"):
        try:
            return np.from_dlpack(a)
        except (TypeError, BufferError, RuntimeError, ValueError):
            pass  # a dtype NumPy cannot view (bfloat16...): the array-like path says why
    return np.asarray(a)


def _refuse_kind(name, arr, what):
    """Raise unless ``arr`` holds integers (an empty array of any numeric kind passes).

    Checked before any conversion: ``astype`` would truncate floats, parse
    strings and wrap large integers without a word.
    """
    kind = arr.dtype.kind
    if kind in "iu" or (arr.size == 0 and kind in "fb"):
        return
    if kind == "O" and arr.size and isinstance(arr.flat[0], str):
        kind = "U"  # strings in an object array (a pandas column)
    hint = ""
    if kind == "f":
        hint = "; convert whole numbers with .astype(np.int64) first"
    elif kind == "O":
        hint = " (integers past int64, or mixed types?)"
    raise ValueError(f"{name} must hold integer {what}, got {_KINDS.get(kind, kind)} "
                     f"(dtype {arr.dtype}){hint}")


def _refuse_past_int64(name, arr):
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size and arr.max() > _INT64_MAX:
        i = int(np.argmax(arr > _INT64_MAX))
        raise ValueError(f"{name}[{i}] = {arr[i]} overflows int64")


def _one_dim(name, arr):
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")


def _as_id_array(name, a):
    """Validate a user id array (integers, none negative) as int32 or int64.

    The caller's array itself is returned when it already is one of those
    (contiguous): it is only read from then on, never kept or written.
    """
    arr = _host(name, a)
    _one_dim(name, arr)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    _refuse_kind(name, arr, "vertex ids")
    _refuse_past_int64(name, arr)
    if arr.dtype.kind == "i" and arr.min() < 0:
        bad = int(np.argmax(arr < 0))
        raise ValueError(f"{name}[{bad}] = {arr[bad]} is negative; vertex ids are 0..n-1")
    if arr.dtype in (np.int32, np.int64):
        return np.ascontiguousarray(arr)
    return arr.astype(np.int64)


def _as_count(name, value):
    """A non-negative Python int from an integer argument (no floats, strings or booleans)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if n < 0:
        raise ValueError(f"{name} must be >= 0, got {n}")
    return n


def _as_weights(weights, m):
    """Validate edge weights (one real number per edge) and return a float64 copy."""
    w = _host("weights", weights)
    if w.ndim != 1 or w.shape[0] != m:
        raise ValueError(f"weights must be a 1-D array of length {m} (one per edge), "
                         f"got shape {w.shape}")
    if w.size and w.dtype.kind not in "iufb":
        raise ValueError(f"weights must be real numbers, got {_KINDS.get(w.dtype.kind, '')} "
                         f"(dtype {w.dtype})")
    if w.size and w.dtype.kind in "iu" and w.dtype.itemsize == 8:
        # float64 holds integers exactly only up to 2**53: refuse to round a weight
        big = (w > _EXACT_FLOAT) if w.dtype.kind == "u" else (np.abs(w) > _EXACT_FLOAT)
        if big.any():
            i = int(np.argmax(big))
            raise ValueError(f"weights[{i}] = {w[i]} is too large to be held exactly as a "
                             f"float64 (integer weights must lie within +-2**53)")
    return w.astype(np.float64, copy=True)


def _as_row_offsets(a):
    """Validate user row offsets (integers, 1-D, non-empty) and return an int64 copy."""
    ro = _host("row_offsets", a)
    _one_dim("row_offsets", ro)
    if ro.shape[0] < 1:
        raise ValueError("row_offsets must have num_vertices + 1 entries, got none")
    _refuse_kind("row_offsets", ro, "offsets")
    _refuse_past_int64("row_offsets", ro)
    return ro.astype(np.int64, copy=True)


def _check_offsets(ro, m):
    """``ro`` (int64) starts at 0, never decreases and ends at ``m``, the number of edges."""
    if ro[0] != 0:
        raise ValueError(f"row_offsets[0] = {ro[0]}; it must be 0")
    down = ro[1:] < ro[:-1]
    if down.any():
        i = int(np.argmax(down)) + 1
        raise ValueError(f"row_offsets decrease at {i} ({ro[i - 1]} then {ro[i]}); "
                         "they must never decrease")
    if ro[-1] != m:
        raise ValueError(f"row_offsets[-1] = {ro[-1]} but there are {m} column indices")


def _as_column_indices(a, n):
    """Validate user column indices (integers in 0..n-1) and return a copy of the index type."""
    ci = _host("column_indices", a)
    _one_dim("column_indices", ci)
    if ci.size == 0:
        return np.zeros(0, dtype=_index_dtype(n))
    _refuse_kind("column_indices", ci, "vertex ids")
    # range first, in the caller's own type: a conversion could wrap an id into range
    lo, hi = ci.min(), ci.max()
    if lo < 0 or hi >= n:
        bad = ci < 0 if lo < 0 else ci >= n
        i = int(np.argmax(bad))
        raise ValueError(f"column_indices[{i}] = {ci[i]} is out of range for {n} vertices "
                         f"(ids 0..{n - 1})")
    return ci.astype(_index_dtype(n), copy=True)


def _nx_weights(ws, edges):
    """float64 weights from networkx edge attributes, refusing what a conversion would change."""
    try:
        w = np.asarray(ws)
    except (ValueError, TypeError):      # sequences among the weights
        w = np.empty(0, dtype=object)
    if w.dtype.kind in "iu":
        bad = np.flatnonzero(np.abs(w.astype(np.float64)) > _EXACT_FLOAT)
    elif w.dtype.kind == "f":
        # floats mixed with large ints convert to float64 silently rounded
        bad = [i for i, x in enumerate(ws)
               if isinstance(x, (int, np.integer)) and abs(int(x)) > _EXACT_FLOAT]
    elif w.dtype.kind == "b":
        bad = []
    else:
        bad = [i for i, x in enumerate(ws)
               if not isinstance(x, (int, float, np.integer, np.floating, np.bool_))
               or isinstance(x, (int, np.integer)) and abs(int(x)) > _EXACT_FLOAT]
    if len(bad):
        i = int(bad[0])
        u, v, _ = edges[i]
        x = ws[i]
        why = ("is not an int or a float" if not isinstance(x, (int, float, np.number))
               else "is too large to be held exactly as a float64 (integer weights must lie "
                    "within +-2**53)")
        raise ValueError(f"the weight of edge ({_short(u)}, {_short(v)}), {_short(x)}, {why}")
    return np.array([float(x) for x in ws] if w.dtype.kind == "O" else w, dtype=np.float64)


def _short(x, limit=60):
    r = repr(x)
    return r if len(r) <= limit else r[:limit] + "..."


def _factorize(values):
    """``(labels, ids)``: the distinct values (sorted, else in order of first appearance)
    and each value's index among them (int64)."""
    try:
        uniq, ids = np.unique(values, return_inverse=True)
        return uniq.tolist(), ids.astype(np.int64, copy=False)
    except TypeError:  # labels of types that do not compare
        index = {}
        ids = np.fromiter((index.setdefault(v, len(index)) for v in values.tolist()),
                          dtype=np.int64, count=values.size)
        return list(index), ids


def table_edges(cols, renumber):
    """``(src, dst, weights, labels, n)`` of a table's columns (``{name: column}``: the
    source, the target, then the weight column if any), where the table is: a table in
    host memory as NumPy arrays, one in GPU memory as device arrays, its integer labels
    renumbered there (:class:`gunpy.Graph`'s ``from_pandas``). ``labels``: the vertex
    labels in id order, None for ids ``0..n-1`` (``n`` None: not renumbered).

    Labels in GPU memory that are not integers (a cuDF frame's strings or categories,
    floats) are renumbered on the host, as a host table's: the two label columns are
    copied down once and the ids up once, and the graph is built on the device.
    """
    names = list(cols)
    down = {name: _table_labels(cols[name]) for name in names[:2]}
    down = {name: a for name, a in down.items() if a is not None}
    backend = _device_backend({k: c for k, c in cols.items() if k not in down})
    if down and backend is None:  # only labels, and they came down: built on the GPU still
        from gunpy.backends import get_backend
        backend = get_backend("cuda")
    if backend is None:
        cols = {k: _host(k, c) for k, c in cols.items()}
    else:
        from gunpy.backends.interop import device_view
        cols = {k: down[k] if k in down else device_view(k, c) for k, c in cols.items()}
    s, d = cols[names[0]], cols[names[1]]
    weights = cols[names[2]] if len(names) > 2 else None
    labels = n = None
    if renumber and backend is not None and not down and all(
            a.dtype.kind in "iu" and not (a.dtype.kind == "u" and a.dtype.itemsize == 8)
            for a in (s, d)):
        from gunpy.backends.device_build import factorize
        ids, uniques = factorize(backend, s, d)
        labels = uniques.copy_to_host().tolist()
        s, d, n = ids[:s.shape[0]], ids[s.shape[0]:], len(labels)
    elif renumber:
        hs, hd = (a if isinstance(a, np.ndarray) else a.copy_to_host() for a in (s, d))
        labels, ids = _factorize(np.concatenate([hs.ravel(), hd.ravel()]))
        s, d, n = ids[:hs.size], ids[hs.size:], len(labels)
        if backend is not None:  # the ids back up: the graph is built where the table is
            s, d = backend.asarray(s), backend.asarray(d)
    elif down:
        raise ValueError(f"{next(iter(down))} holds labels that are not integers, in GPU "
                         "memory: renumber=True numbers them")
    if labels is not None and labels == list(range(n)):
        labels = None
    return s, d, weights, labels, n


def _table_labels(a):
    """A cuDF column of other than numbers (strings, categories), as NumPy values copied
    to the host; None for any other column."""
    if not type(a).__module__.startswith("cudf"):
        return None
    if getattr(getattr(a, "dtype", None), "kind", "O") in "iufb":
        return None
    return np.asarray(a.to_pandas())


def _is_symmetric(A):
    """Whether the square sparse matrix ``A`` equals its transpose (values and pattern)."""
    A = sp.csr_array(A)
    if A.shape[0] == 0:
        return True
    diff = A - A.T
    if diff.dtype == np.bool_:
        return diff.nnz == 0
    diff.eliminate_zeros()
    return diff.nnz == 0 and (A != 0).nnz == (A.T != 0).nnz
