"""Host-side COO input of Vector.from_coo and Matrix.from_coo: values, repeated indices."""

import numpy as np

from gunpy.blas.ops import as_binary, binary

__all__ = ["values_for", "combine_duplicates", "HOST_UFUNCS"]

#: monoids whose NumPy ufunc folds host values in one call
HOST_UFUNCS = {"plus": np.add, "times": np.multiply, "min": np.minimum, "max": np.maximum,
               "lor": np.logical_or, "land": np.logical_and}


def values_for(values, n, dtype):
    """``values`` as a NumPy array of ``n`` numbers (a scalar is repeated)."""
    arr = np.asarray(values)
    if arr.ndim == 0:
        arr = np.full(n, values)
    elif arr.shape != (n,):
        raise ValueError(f"values must be a scalar or have one value per index ({n}), got "
                         f"shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"values must be numeric, got dtype {arr.dtype}")
    return arr.astype(np.int64) if dtype is None and arr.dtype.kind in "iu" else arr


def combine_duplicates(idx, vals, dup_op, key=None):
    """Sort by ``key`` (default ``idx``) and fold repeated keys with ``dup_op``."""
    key = idx if key is None else key
    if key.size < 2:
        return idx, vals
    order = np.argsort(key, kind="stable")
    k = key[order]
    rep = k[1:] == k[:-1]
    if not rep.any():
        return idx, vals
    if dup_op is None:
        raise ValueError("repeated indices: pass dup_op= (e.g. blas.binary.plus) to combine them")
    op = as_binary(dup_op, "dup_op")
    starts = np.flatnonzero(np.concatenate(([True], ~rep)))
    sv = vals[order]
    if op is binary.first or op is binary.any:
        out = sv[starts]
    elif op is binary.second:
        out = sv[np.append(starts[1:], k.size) - 1]
    elif op.name in HOST_UFUNCS and op is getattr(binary, op.name):
        out = HOST_UFUNCS[op.name].reduceat(sv, starts)
    else:
        out = np.empty(starts.size, dtype=sv.dtype)
        bounds = np.append(starts, k.size)
        for s in range(starts.size):
            acc = sv[bounds[s]]
            for t in range(bounds[s] + 1, bounds[s + 1]):
                acc = op.func(acc, sv[t])
            out[s] = acc
    return idx[order][starts], out
