"""Vector, Matrix, Scalar, masks and the assignment rule of gunpy.blas.

A :class:`Vector` is a dense value array plus its structure, a
:class:`gunpy.Frontier`: a queue of indices when sparse, a bitmap when dense,
converted on demand (O(nvals) one way, O(n/32) the other). A :class:`Matrix`
is a square adjacency matrix: a :class:`gunpy.Graph` whose CSR holds the rows.
"""

import collections
import contextlib
import threading
from dataclasses import dataclass, fields, replace

import numpy as np

from gunpy.backends import get_backend
from gunpy.blas import _kernels as K
from gunpy.blas.ops import (DTYPES, BinaryOp, Monoid, Semiring, as_binary, as_monoid, binary,
                            lookup_dtype, promote)
from gunpy.frontier import Frontier
from gunpy.graph import Graph, _index_dtype
from gunpy.operators import Context, bitmap, compute
from gunpy.operators import filter as keep

__all__ = ["Vector", "Matrix", "Scalar", "Mask", "Descriptor", "options"]


# --------------------------------------------------------------------------- descriptor
@dataclass(frozen=True)
class Descriptor:
    """How an operation runs (never what it computes).

    ``direction``: ``"push"`` (advance over the input's entries), ``"pull"``
    (each output row reduces its in-edges) or ``"auto"``: pull when the input
    holds more than ``ratio`` of the vertices (the push-pull paper's rule,
    section 6.3). ``load_balance``: push's workload mapping (any of
    :func:`gunpy.operators.advance.load_balance_options`). ``early_exit``: a
    pull row stops at the monoid's terminal value. ``structure_only``: ignore
    the matrix's values when the multiply does not read them (``"auto"``) or
    always (True). ``operand_reuse``: pull tests the (complemented) mask
    itself as the input set; the caller promises that every masked in-neighbour
    of an unmasked row is in the input (true of BFS's frontier and visited set).
    ``pull_mapping``: see :class:`gunpy.direction.DirectionPolicy`.
    """

    direction: str = "auto"
    load_balance: str = "auto"
    early_exit: bool = True
    structure_only: object = "auto"
    operand_reuse: bool = False
    ratio: float = 0.01
    pull_mapping: str = "auto"

    def __post_init__(self):
        if self.direction not in ("push", "pull", "auto"):
            raise ValueError(f"unknown direction {self.direction!r}; valid: 'push', 'pull', "
                             "'auto'")
        from gunpy.operators.advance import check_load_balance, pull_mapping_options
        check_load_balance(self.load_balance)
        if self.pull_mapping not in pull_mapping_options():
            raise ValueError(f"unknown pull mapping {self.pull_mapping!r}; valid: "
                             f"{pull_mapping_options()}")
        if self.structure_only not in ("auto", True, False):
            raise ValueError("structure_only must be 'auto', True or False")
        if not self.ratio > 0:
            raise ValueError("ratio must be positive")


_OPTION_NAMES = {f.name for f in fields(Descriptor)}
_local = threading.local()


_DEFAULT = Descriptor()


def _current():
    return getattr(_local, "desc", None) or _DEFAULT


@contextlib.contextmanager
def options(**opts):
    """Default descriptor options for the operations in the ``with`` block.

    >>> from gunpy import blas
    >>> with blas.options(direction="push"):
    ...     pass
    """
    saved = _current()
    _local.desc = _descriptor(opts, saved)
    try:
        yield _local.desc
    finally:
        _local.desc = saved


_MEMO = {}


def _descriptor(opts, base=None):
    base = base or _current()
    if not opts:
        return base
    try:
        key = (base, tuple(sorted(opts.items())))
        hit = _MEMO.get(key)
    except TypeError:   # an unhashable option value: checked (and refused) below
        key, hit = None, None
    if hit is not None:
        return hit
    unknown = set(opts) - _OPTION_NAMES
    if unknown:
        raise TypeError(f"unknown gunpy.blas option(s) {sorted(unknown)}; valid: "
                        f"{sorted(_OPTION_NAMES)}")
    desc = replace(base, **opts)
    if key is not None and len(_MEMO) < 4096:
        _MEMO[key] = desc
    return desc


# --------------------------------------------------------------------------- spaces
_SPACES = collections.OrderedDict()


def _space(n, backend):
    """The context of vectors of size ``n`` on ``backend`` (an edgeless graph of n vertices)."""
    key = (int(n), backend)
    ctx = _SPACES.get(key)
    if ctx is None:
        g = Graph(np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=_index_dtype(n)),
                  _trusted=True)
        ctx = _SPACES[key] = Context(g, backend)
        ctx.blas_workspaces = {}
        ctx.dummy_words = ctx.backend.zeros(1, np.uint32)
        while len(_SPACES) > 16:
            _SPACES.popitem(last=False)
    else:
        _SPACES.move_to_end(key)
    return ctx


def _backend(backend):
    return get_backend(backend) if isinstance(backend, str) or backend is None else backend


# --------------------------------------------------------------------------- Scalar
class Scalar:
    """One value, or none (``value is None``): what reductions and ``v[i]`` return."""

    def __init__(self, dtype, value=None):
        self.dtype = lookup_dtype(dtype)
        self._value = None if value is None else self.dtype.type(value)

    @property
    def value(self):
        return None if self._value is None else self._value.item()

    @property
    def is_empty(self):
        return self._value is None

    @property
    def nvals(self):
        return 0 if self._value is None else 1

    def new(self):
        return Scalar(self.dtype, self._value)

    def __eq__(self, other):
        if isinstance(other, Scalar):
            return self.value == other.value
        return self.value == other

    __hash__ = None

    def __bool__(self):
        return bool(self.value)

    def __float__(self):
        return float(self.value)

    def __int__(self):
        return int(self.value)

    def __repr__(self):
        return f"Scalar({self.dtype.name}, {self.value!r})"


# --------------------------------------------------------------------------- masks
class Mask:
    """``v.S`` (where v has an entry), ``v.V`` (where its value is true), and their
    complements ``~v.S`` / ``~v.V``."""

    def __init__(self, parent, structure, complement=False):
        self.parent, self.structure, self.complement = parent, structure, complement

    def __invert__(self):
        return Mask(self.parent, self.structure, not self.complement)

    def __repr__(self):
        return f"{'~' if self.complement else ''}{self.parent!r}.{'S' if self.structure else 'V'}"

    def _set_bits(self, ctx):
        """Words with the bit of every entry the mask (before complement) passes; may be
        the parent's own bitmap: read-only."""
        v = self.parent
        if self.structure:
            return v._bits()
        words = ctx.backend.zeros(bitmap.num_words(v.size), np.uint32)
        if v.nvals:
                compute(ctx.graph, v._queue(), K.value_bits_functor(ctx.backend),
                    K.BitsData(v._vals, words), context=ctx)
        return words

    def allow(self, ctx):
        """Bits of the indices a write may touch (read-only)."""
        words = self._set_bits(ctx)
        if self.complement:
            out = ctx.backend.empty(words.shape[0], np.uint32)
            bitmap.invert(ctx.backend, out, words, self.parent.size)
            return out
        return words

    def block(self, ctx, *, writable):
        """Bits of the indices a write may not touch (a fresh array when ``writable``)."""
        words = self._set_bits(ctx)
        if self.complement:
            if not writable:
                return words
            out = ctx.backend.empty(words.shape[0], np.uint32)
            ctx.backend.copy(words, out, words.shape[0])
            return out
        out = ctx.backend.empty(words.shape[0], np.uint32)
        bitmap.invert(ctx.backend, out, words, self.parent.size)
        return out


class _Masks:
    """``x.S`` (its structure) and ``x.V`` (its true values) as masks."""

    @property
    def S(self):
        return Mask(self, True)

    @property
    def V(self):
        return Mask(self, False)


def _check_mask(mask, size, backend):
    if mask is None:
        return None
    if isinstance(mask, (Vector, Matrix)):
        raise TypeError("a mask must be v.S, v.V, ~v.S or ~v.V (say which: structure or value)")
    if not isinstance(mask, Mask):
        raise TypeError(f"expected a mask (v.S, v.V, ~v.S, ~v.V), got {type(mask).__name__}")
    if isinstance(mask.parent, Vector):
        if mask.parent.size != size:
            raise ValueError(f"the mask has size {mask.parent.size}, the output {size}")
        if mask.parent.backend is not backend:
            raise ValueError("the mask lives on another backend")
    return mask


# --------------------------------------------------------------------------- Vector
class Vector(_Masks):
    """A sparse vector of ``size`` entries of one ``dtype``.

    Parameters
    ----------
    dtype : "BOOL", "INT32", "INT64", "FP32", "FP64", or bool / int / float / a NumPy dtype
    size : int
    backend : {"auto", "cuda", "cpu"}

    Examples
    --------
    >>> from gunpy import blas
    >>> v = blas.Vector.from_coo([0, 3], [1.5, 2.0], size=5, backend="cpu")
    >>> v.nvals, v[3].value, v[1].value
    (2, 2.0, None)
    >>> v[1] = 7
    >>> v.to_coo()
    (array([0, 1, 3]), array([1.5, 7. , 2. ]))
    """

    def __init__(self, dtype=float, size=0, *, backend="auto", name=None):
        size = int(size)
        if size < 0:
            raise ValueError(f"a vector's size must be non-negative, got {size}")
        self.dtype = lookup_dtype(dtype)
        self.size = size
        self.name = name
        self._ctx = _space(size, _backend(backend))
        self.backend = self._ctx.backend
        self._vals = self.backend.empty(max(size, 1), self.dtype)
        self._st = self._new_struct()

    def _new_struct(self):
        return Frontier(self.backend, 1, dtype=self._ctx.index_dtype, num_vertices=self.size,
                        name="vector")

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_coo(cls, indices, values=1.0, dtype=None, *, size=None, dup_op=None,
                 backend="auto", name=None):
        """A vector with ``values`` (a sequence, or one scalar for all) at ``indices``.

        ``size`` defaults to ``max(indices) + 1``. Repeated indices raise
        ``ValueError`` unless ``dup_op`` (a BinaryOp) says how to combine them.
        """
        idx = np.asarray(indices)
        if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
            raise ValueError("indices must be a 1-D array of integers")
        idx = idx.astype(np.int64)
        if size is None:
            size = int(idx.max()) + 1 if idx.size else 0
        size = int(size)
        if idx.size and (idx.min() < 0 or idx.max() >= size):
            raise IndexError(f"vector indices must be in [0, {size})")
        vals = _values_for(values, idx.size, dtype)
        dt = lookup_dtype(dtype if dtype is not None else vals.dtype)
        idx, vals = _combine_duplicates(idx, vals, dup_op)
        v = cls(dt, size, backend=backend, name=name)
        if idx.size:
            host = np.zeros(max(size, 1), dtype=dt)
            host[idx] = vals.astype(dt)
            v._vals = v.backend.asarray(host)
            v._st.push(idx)
        return v

    def dup(self, dtype=None, *, name=None):
        """A copy (converted to ``dtype`` if given)."""
        if dtype is not None and lookup_dtype(dtype) != self.dtype:
            return self.apply(_identity_op()).new(dtype=dtype, name=name)
        out = Vector(self.dtype, self.size, backend=self.backend, name=name)
        self.backend.copy(self._vals, out._vals, max(self.size, 1))
        out._st = _copy_struct(self._st, self._ctx)
        return out

    def clear(self):
        """Remove every entry."""
        self._st = self._new_struct()

    # ---------------------------------------------------------------- structure
    @property
    def nvals(self):
        return self._st.size

    @property
    def shape(self):
        return (self.size,)

    def _queue(self):
        """The structure with its queue form built (a Frontier)."""
        self._st.ensure_queue(self._ctx.scratch)
        return self._st

    def _bits(self):
        return self._st.ensure_bitmap()

    def _set_struct(self, frontier):
        self._st = frontier

    def _set_bitmap(self, words, count=None):
        f = Frontier(self.backend, 1, dtype=self._ctx.index_dtype, num_vertices=self.size,
                     name="vector")
        f.set_bitmap(words, bitmap.popcount(self.backend, words) if count is None else count)
        self._st = f


    # ---------------------------------------------------------------- elements
    def _index(self, i):
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"a vector index must be an integer, got {i!r}")
        i = int(i)
        if i < 0:
            i += self.size
        if not 0 <= i < self.size:
            raise IndexError(f"index {i} out of range for a vector of size {self.size}")
        return i

    def _has(self, i):
        if self.nvals == 0:
            return False
        word = int(self.backend.read(self._bits(), i >> 5))
        return bool((word >> (i & 31)) & 1)

    def __getitem__(self, i):
        i = self._index(i)
        if not self._has(i):
            return Scalar(self.dtype)
        return Scalar(self.dtype, self.backend.read(self._vals, i))

    def __setitem__(self, i, value):
        i = self._index(i)
        if isinstance(value, Scalar):
            if value.is_empty:
                del self[i]
                return
            value = value.value
        self.backend.write(self._vals, i, self.dtype.type(value))
        if self._has(i):
            return
        st = self._st
        if st.has_queue:
            st.push([i])   # drops the bitmap form
        else:
            words = st.bitmap
            w = int(self.backend.read(words, i >> 5)) | (1 << (i & 31))
            self.backend.write(words, i >> 5, np.uint32(w))
            st.set_bitmap(words, st.size + 1)

    def __delitem__(self, i):
        i = self._index(i)
        if not self._has(i):
            return
        words = self._bits()
        w = int(self.backend.read(words, i >> 5)) & ~(1 << (i & 31))
        self.backend.write(words, i >> 5, np.uint32(w))
        self._st.set_bitmap(words, self._st.size - 1)

    def get(self, i, default=None):
        s = self[i]
        return default if s.is_empty else s.value

    def to_coo(self, dtype=None):
        """``(indices, values)``: NumPy arrays, indices sorted."""
        idx = np.sort(self._st.to_numpy().astype(np.int64))
        vals = self.backend.to_host(self._vals)[idx] if idx.size else \
            np.zeros(0, dtype=self.dtype)
        return idx, vals.astype(lookup_dtype(dtype) if dtype is not None else self.dtype,
                                copy=False)

    def to_dense(self, fill_value=0):
        """A NumPy array of ``size`` values, ``fill_value`` where there is no entry."""
        dt = np.result_type(self.dtype, np.asarray(fill_value))
        if self.nvals == 0 or dt.kind not in "biuf" or lookup_dtype(dt) != dt:
            out = np.full(self.size, fill_value, dtype=dt)
            if self.nvals:
                idx = self._st.to_numpy()
                out[idx] = self.backend.to_host(self._vals)[idx]
            return out
        # one pass on the backend: the value where there is an entry, else the fill
        ctx = self._ctx
        out = self.backend.empty(max(self.size, 1), dt)
        compute(ctx.graph, None, K.dense_functor(self.backend, dt),
                K.DenseData(self._vals, self._bits(), dt.type(fill_value), out), context=ctx)
        return self.backend.to_host(out)[:self.size]

    def isequal(self, other, *, check_dtype=False):
        """Same size, structure and values."""
        if not isinstance(other, Vector) or other.size != self.size:
            return False
        if check_dtype and other.dtype != self.dtype:
            return False
        a, b = self.to_coo(), other.to_coo()
        return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])

    def __len__(self):
        return self.size

    def __repr__(self):
        return (f"<gunpy.blas.Vector {self.name or ''} size={self.size} nvals={self.nvals} "
                f"{self.dtype.name} on {self.backend.name}>")

    # ---------------------------------------------------------------- expressions
    def __matmul__(self, other):
        return _expr.MatMulExpr(self, _as_matrix(other, "u @ A"), "vxm")

    def ewise_add(self, other, op=None):
        """Union: ``op(u(i), v(i))`` where both have an entry, else the one there is."""
        from gunpy.blas.expr import EwiseExpr
        return EwiseExpr(self, other, binary.plus if op is None else op, union=True)

    def ewise_mult(self, other, op=None):
        """Intersection: ``op(u(i), v(i))`` where both have an entry."""
        from gunpy.blas.expr import EwiseExpr
        return EwiseExpr(self, other, binary.times if op is None else op, union=False)

    def apply(self, op, right=None, *, left=None):
        """``op(u(i))``; a BinaryOp with ``right=`` (``op(u(i), right)``) or ``left=``."""
        from gunpy.blas.expr import ApplyExpr
        return ApplyExpr(self, op, left=left, right=right)

    def select(self, op, thunk=None):
        """The entries where ``op(u(i), i, thunk)`` holds (``op``: a SelectOp or "<", ">="...)."""
        from gunpy.blas.expr import SelectExpr
        return SelectExpr(self, op, thunk)

    def reduce(self, op=None):
        """The monoid over all entries, as a :class:`Scalar` expression (``.new()``, ``.value``)."""
        from gunpy.blas.expr import ReduceExpr
        from gunpy.blas.ops import monoid
        return ReduceExpr(self, monoid.plus if op is None else as_monoid(op))

    # ---------------------------------------------------------------- assignment
    def __call__(self, mask=None, accum=None, replace=False, **opts):
        return Updater(self, mask, accum, replace, opts)

    def __lshift__(self, expr):
        Updater(self, None, None, False, {}) << expr


def _identity_op():
    from gunpy.blas.ops import unary
    return unary.identity


def _values_for(values, n, dtype):
    if np.isscalar(values) or (isinstance(values, np.ndarray) and values.ndim == 0):
        arr = np.full(n, values)
    else:
        arr = np.asarray(values)
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ValueError(f"values must be a scalar or have one value per index ({n}), "
                             f"got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"values must be numeric, got dtype {arr.dtype}")
    if dtype is None and arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    return arr


_DUP_UFUNCS = {"plus": np.add, "times": np.multiply, "min": np.minimum, "max": np.maximum,
               "lor": np.logical_or, "land": np.logical_and}


def _combine_duplicates(idx, vals, dup_op, key=None):
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
    elif op.name in _DUP_UFUNCS and op is getattr(binary, op.name):
        out = _DUP_UFUNCS[op.name].reduceat(sv, starts)
    else:
        out = np.empty(starts.size, dtype=sv.dtype)
        bounds = np.append(starts, k.size)
        for s in range(starts.size):
            acc = sv[bounds[s]]
            for t in range(bounds[s] + 1, bounds[s + 1]):
                acc = op.func(acc, sv[t])
            out[s] = acc
    return idx[order][starts], out


def _copy_struct(st, ctx):
    backend = ctx.backend
    f = Frontier(backend, max(st.size, 1), dtype=st.dtype, num_vertices=st.num_vertices,
                 name="vector")
    if st.has_queue:
        if st.size:
            backend.copy(st.queue, f.queue, st.size)
        f.set_size(st.size)
        if st.has_bitmap:
            words = f._words()
            backend.copy(st.bitmap, words, words.shape[0])
            f.has_bitmap = True
    else:
        words = backend.empty(st.bitmap.shape[0], np.uint32)
        backend.copy(st.bitmap, words, words.shape[0])
        f.set_bitmap(words, st.size)
    return f


def full_vector(dtype, size, value, backend):
    """Every entry present, all ``value``."""
    v = Vector(dtype, size, backend=backend)
    backend.fill(v._vals, v.dtype.type(value))
    if size:
        v._set_bitmap(bitmap.full(backend, size), size)
    return v


# --------------------------------------------------------------------------- Updater
class Updater:
    """``w(mask, accum, replace) << expr``: GraphBLAS's masked, accumulated assignment."""

    def __init__(self, w, mask, accum, replace, opts):
        self.w = w
        self.mask = _check_mask(mask, w.size, w.backend)
        self.accum = None if accum is None else as_binary(accum, "accum")
        self.replace = bool(replace)
        if self.replace and self.mask is None:
            raise ValueError("replace=True needs a mask")
        self.desc = _descriptor(opts)

    def __lshift__(self, expr):
        w = self.w
        if isinstance(expr, (int, float, bool, np.number, np.bool_)):
            _assign_scalar(w, expr, self.mask, self.accum, self.replace)
            return
        if isinstance(expr, Vector):
            _check_same(w, expr)
            write(w, expr, self.mask, self.accum, self.replace, masked=False, owned=False)
            return
        if not isinstance(expr, _expr.VectorExpr):
            raise TypeError(f"cannot assign {type(expr).__name__} to a Vector")
        if expr.size != w.size:
            raise ValueError(f"the expression has size {expr.size}, the output {w.size}")
        t, masked = expr._compute(self.mask, self.desc, w.backend)
        write(w, t, self.mask, self.accum, self.replace, masked=masked, owned=True)

    __ilshift__ = __lshift__


def _check_same(a, b):
    if a.size != b.size:
        raise ValueError(f"vector sizes differ: {a.size} and {b.size}")
    if a.backend is not b.backend:
        raise ValueError("the vectors live on different backends")


def _take(w, t, owned):
    """``w`` becomes ``t`` (structure and values)."""
    if not owned:
        t = t.dup()
    if t.dtype != w.dtype:
        from gunpy.blas.expr import cast_into
        cast_into(w, t)
        return
    w._vals, w._st = t._vals, t._st


def write(w, t, mask, accum, replace, *, masked, owned):
    """``w<mask, replace> = accum(w, t)`` (``masked``: ``t`` has no entry the mask blocks)."""
    if accum is None and (mask is None or (masked and (replace or w.nvals == 0))):
        _take(w, t, owned)
        return
    if (accum is None and not replace and mask.structure and not mask.complement
            and mask.parent is t and t.dtype == w.dtype):
        _scatter(w, t)   # w<t.S> = t: t's entries overwrite w's, nothing is deleted
        return
    ctx = w._ctx
    if accum is None and (w.nvals == 0 or replace):
        # w becomes t's entries that the mask allows: a filter over t, O(nvals(t))
        _restrict(w, t, mask.allow(ctx))
        return
    backend = w.backend
    allow = mask.allow(ctx) if mask is not None else bitmap.full(backend, w.size)
    out = backend.empty(max(w.size, 1), w.dtype)
    out_bits = backend.zeros(bitmap.num_words(w.size), np.uint32)
    in_dt = promote(w.dtype, t.dtype) if accum is None else accum.input_dtype(w.dtype, t.dtype)
    if accum is not None and accum.kind == "positional":
        raise ValueError("a positional op cannot accumulate")
    if w.size:
        F = K.assign_functor(backend, None if accum is None else accum.func, in_dt, w.dtype,
                             replace)
        compute(ctx.graph, None, F, K.AssignData(w._vals, w._bits(), t._vals, t._bits(), allow,
                                                 out, out_bits), context=ctx)
    w._vals = out
    w._set_bitmap(out_bits)


def _restrict(w, t, allow):
    vals = w.backend.empty(max(w.size, 1), w.dtype)
    if t.nvals:
        F = K.restrict_functor(w.backend, t.dtype, w.dtype)
        st = keep(w._ctx.graph, t._queue(), F, K.RestrictData(t._vals, allow, vals),
                  context=w._ctx)
        w._vals, w._st = vals, st
    else:
        w.clear()


def _assign_scalar(w, value, mask, accum, replace):
    """``w(mask, accum, replace) << value``: the scalar at every index the mask allows."""
    if (mask is not None and mask.structure and not mask.complement and accum is None
            and not replace and isinstance(mask.parent, Vector)):
        _scatter(w, mask.parent, value)
        return
    t = full_vector(w.dtype, w.size, value, w.backend)
    write(w, t, mask, accum, replace, masked=False, owned=True)


def _scatter(w, m, value=None):
    """``w<m.S> = value`` (or ``= m``): O(nvals(m)), the structure grows by m's entries."""
    if m.nvals == 0:
        return
    ctx = w._ctx
    backend = w.backend
    scalar = w.dtype.type(0 if value is None else value)
    st = m._st
    # a bitmap-only m (a pull's output) is read in one pass over all indices
    dense = not st.has_queue
    F = K.scatter_functor(backend, w.dtype, value is not None, dense)
    compute(ctx.graph, None if dense else m._queue(), F,
            K.ScatterData(m._vals, scalar, w._vals, st.bitmap if dense else ctx.dummy_words),
            context=ctx)
    # the structure: a word-wise OR when m is dense, a bit per entry when it is sparse
    words = w._bits()
    if st.has_bitmap:
        bitmap.or_into(backend, words, st.bitmap)
    else:
        bitmap.queue_to_bitmap(backend, st.queue, st.length, st.size, words, clear=False)
    w._st.set_bitmap(words, bitmap.popcount(backend, words))


# --------------------------------------------------------------------------- Matrix
class Matrix(_Masks):
    """A square sparse matrix: the adjacency matrix of a :class:`gunpy.Graph`.

    ``A[i, j]`` is the edge ``i -> j``: ``u @ A`` (vxm) pushes along out-edges,
    ``A @ u`` (mxv) gathers them. Any :class:`gunpy.Graph` is accepted where a
    Matrix is expected (weights are the values; unweighted graphs hold 1.0).

    Examples
    --------
    >>> from gunpy import blas
    >>> A = blas.Matrix.from_coo([0, 0, 1], [1, 2, 2], [5.0, 1.0, 2.0], nrows=3, ncols=3,
    ...                          backend="cpu")
    >>> A.nvals, A.T.to_coo()[1].tolist()
    (3, [0, 0, 1])
    """

    def __init__(self, graph, dtype=None, *, backend="auto", name=None, _transpose_of=None):
        if graph is not None and not isinstance(graph, Graph):
            raise TypeError(f"expected a gunpy.Graph, got {type(graph).__name__}")
        self._graph_obj = graph   # None for a transpose not built yet
        self.dtype = lookup_dtype(dtype or float)
        self.backend = _backend(backend)
        self.name = name
        self._T = _transpose_of
        self._contexts = {}
        self._structure = None
        #: derived data algorithms keep with the matrix (LAGraph's "cached properties")
        self.properties = {}
        #: what the last product with this matrix did: ``edges`` (examined), ``direction``,
        #: ``strategy`` (the advance's), ``structure_only`` (values left unread)
        self.last_stats = {}

    @classmethod
    def from_graph(cls, G, *, backend="auto", name=None):
        """The adjacency matrix of ``G`` (no copy: the matrix reads the graph's CSR)."""
        return cls(G, DTYPES["FP64"], backend=backend, name=name)

    @classmethod
    def from_coo(cls, rows, cols, values=1.0, dtype=None, *, nrows=None, ncols=None,
                 dup_op=None, backend="auto", name=None):
        """A matrix with ``values`` at ``(rows[k], cols[k])``; a scalar value is structure only.

        gunpy.blas matrices are square adjacency matrices: ``nrows`` must equal
        ``ncols``. Self-loops and explicit zeros are kept; repeated positions
        raise ``ValueError`` unless ``dup_op`` combines them.
        """
        r = np.asarray(rows)
        c = np.asarray(cols)
        if r.ndim != 1 or c.ndim != 1 or r.shape != c.shape:
            raise ValueError("rows and cols must be 1-D arrays of the same length")
        if r.size and (r.dtype.kind not in "iu" or c.dtype.kind not in "iu"):
            raise ValueError("rows and cols must be integers")
        r, c = r.astype(np.int64), c.astype(np.int64)
        n = max(int(r.max()) + 1 if r.size else 0, int(c.max()) + 1 if c.size else 0)
        nrows = n if nrows is None else int(nrows)
        ncols = nrows if ncols is None else int(ncols)
        if nrows != ncols:
            raise ValueError(f"gunpy.blas matrices are square (adjacency matrices); got "
                             f"{nrows} x {ncols}")
        n = nrows
        if r.size and (min(r.min(), c.min()) < 0 or max(r.max(), c.max()) >= n):
            raise IndexError(f"matrix indices must be in [0, {n})")
        iso = np.isscalar(values) or (isinstance(values, np.ndarray) and values.ndim == 0)
        vals = _values_for(values, r.size, dtype)
        dt = lookup_dtype(dtype if dtype is not None else vals.dtype)
        key = r * max(n, 1) + c
        keep, vals = _combine_duplicates(np.arange(r.size), vals, dup_op, key=key)
        r, c = r[keep], c[keep]
        weights = None if iso and float(np.asarray(values)) == 1.0 else vals.astype(np.float64)
        G = Graph.from_edges(r, c, weights, num_vertices=n, directed=True,
                             remove_self_loops=False, remove_duplicates=False)
        return cls(G, dt, backend=backend, name=name)

    @property
    def _G(self):
        if self._graph_obj is None:   # a transpose, built on first use
            G = self._T._G
            self._graph_obj = G if not G.directed else _transpose_graph(G)
        return self._graph_obj

    @classmethod
    def _from_csr(cls, row_offsets, column_indices, values, dtype, backend):
        G = Graph(np.asarray(row_offsets, dtype=np.int64), column_indices,
                  None if values is None else np.asarray(values, dtype=np.float64),
                  directed=True, _trusted=True)
        return cls(G, dtype, backend=backend)

    def _filtered(self, keep, values, dtype):
        """The entries of this matrix where ``keep`` (one flag per entry), with ``values``."""
        G = self._G
        rows = np.repeat(np.arange(G.num_vertices, dtype=np.int64), G.out_degrees())
        counts = np.bincount(rows[keep], minlength=G.num_vertices)
        offsets = np.zeros(G.num_vertices + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return Matrix._from_csr(offsets, G.column_indices[keep], values, dtype, self.backend)

    @property
    def nrows(self):
        if self._graph_obj is None:
            return self._T.nrows
        return self._G.num_vertices

    ncols = nrows

    @property
    def shape(self):
        return (self.nrows, self.nrows)

    @property
    def nvals(self):
        return self._G.num_edges

    @property
    def T(self):
        """The transpose (cached; an undirected graph is its own)."""
        if self._T is None:
            self._T = Matrix(None, self.dtype, backend=self.backend, _transpose_of=self)
        return self._T

    def to_coo(self):
        """``(rows, cols, values)`` sorted by row, then column."""
        G = self._G
        rows = np.repeat(np.arange(G.num_vertices, dtype=np.int64), G.out_degrees())
        cols = G.column_indices.astype(np.int64)
        vals = (G.values if G.values is not None else np.ones(G.num_edges)).astype(self.dtype)
        return rows, cols, vals

    def to_graph(self):
        """The :class:`gunpy.Graph` behind the matrix."""
        return self._G


    def __matmul__(self, other):
        if isinstance(other, Vector):
            return _expr.MatMulExpr(other, self, "mxv")
        return _expr.MatMulExpr(self, _as_matrix(other, "A @ B"), "mxm")

    def reduce_rowwise(self, op=None):
        """``w(i) = op over A(i, :)`` (rows with no entry get none)."""
        from gunpy.blas.expr import RowReduceExpr
        from gunpy.blas.ops import monoid
        return RowReduceExpr(self, monoid.plus if op is None else as_monoid(op), rows=True)

    def reduce_columnwise(self, op=None):
        from gunpy.blas.expr import RowReduceExpr
        from gunpy.blas.ops import monoid
        return RowReduceExpr(self, monoid.plus if op is None else as_monoid(op), rows=False)

    def reduce_scalar(self, op=None):
        """The monoid over every entry (a :class:`Scalar` expression)."""
        from gunpy.blas.ops import monoid
        op = monoid.plus if op is None else as_monoid(op)
        G = self._G
        if G.num_edges and op.name in _DUP_UFUNCS and op is getattr(monoid, op.name):
            # the values live on the host: one NumPy reduction
            vals = (G.values if G.values is not None else np.ones(G.num_edges)).astype(self.dtype)
            return Scalar(self.dtype, _DUP_UFUNCS[op.name].reduce(vals))
        return _expr.ReduceExpr(_values_vector(self), op)

    def select(self, op, thunk=0):
        """A structural selection: ``"tril"`` / ``"triu"`` (``j <= i + thunk`` / ``j >= i +
        thunk``), ``"offdiag"``, ``"diag"``, or a value test ("==", "!=", "<", "<=", ">", ">=")."""
        rows, cols, vals = self.to_coo()
        tests = {"tril": lambda: cols <= rows + thunk, "triu": lambda: cols >= rows + thunk,
                 "offdiag": lambda: cols != rows, "diag": lambda: cols == rows,
                 "==": lambda: vals == thunk, "!=": lambda: vals != thunk,
                 "<": lambda: vals < thunk, "<=": lambda: vals <= thunk,
                 ">": lambda: vals > thunk, ">=": lambda: vals >= thunk}
        if op not in tests:
            raise ValueError(f"unknown matrix select {op!r}; valid: {sorted(tests)}")
        keep = tests[op]()
        weights = vals[keep] if self._G.values is not None else 1.0
        return Matrix.from_coo(rows[keep], cols[keep], weights, dtype=self.dtype,
                               nrows=self.nrows, ncols=self.ncols, backend=self.backend)

    def isequal(self, other):
        if not isinstance(other, Matrix) or other.nrows != self.nrows:
            return False
        a, b = self.to_coo(), other.to_coo()
        return all(np.array_equal(x, y) for x, y in zip(a, b))

    def __repr__(self):
        return (f"<gunpy.blas.Matrix {self.name or ''} {self.nrows}x{self.ncols} "
                f"nvals={self.nvals} {self.dtype.name} on {self.backend.name}>")

    # ---------------------------------------------------------------- for the operations
    def _graph(self, structure_only):
        if not structure_only or self._G.values is None:
            return self._G
        if self._structure is None:
            G = self._G
            self._structure = Graph(G.row_offsets, G.column_indices, None, directed=G.directed,
                                    _trusted=True)
            self._structure._csc = G._csc
        return self._structure

    def _context(self, G):
        ctx = self._contexts.get(id(G))
        if ctx is None or ctx.graph is not G:
            ctx = self._contexts[id(G)] = Context(G, self.backend)
        return ctx


def _values_vector(A):
    """A's values as a dense vector of nvals entries (what a scalar reduction folds)."""
    G = A._G
    vals = G.values if G.values is not None else np.ones(G.num_edges)
    return Vector.from_coo(np.arange(G.num_edges), vals.astype(A.dtype), dtype=A.dtype,
                           size=G.num_edges, backend=A.backend)


def _as_matrix(obj, where):
    if isinstance(obj, Matrix):
        return obj
    if isinstance(obj, Graph):
        return Matrix.from_graph(obj)
    raise TypeError(f"{where}: expected a gunpy.blas Matrix or a gunpy.Graph, got "
                    f"{type(obj).__name__}")


def _transpose_graph(G):
    """``G``'s reverse as a Graph: the CSC serves as its CSR (values permuted once), and
    ``G``'s CSR as its CSC, so neither direction is ever transposed again."""
    from gunpy.graph import CSC
    c = G.csc()
    m = G.num_edges
    vals = None if G.values is None else G.values[c.in_edge_ids]
    GT = Graph(c.in_offsets, c.in_indices, vals, directed=True, _trusted=True)
    inv = np.empty(m, dtype=np.int64)
    inv[c.in_edge_ids] = np.arange(m, dtype=np.int64)
    GT._csc = CSC(G.row_offsets, G.column_indices, inv)
    return GT


def as_vector_or_scalar(x):
    return x


__all__ += ["full_vector", "write", "Updater"]
# keep flake8 quiet about names the expression module reads from here
_unused = (Monoid, Semiring, BinaryOp)


from gunpy.blas import expr as _expr  # noqa: E402  (expr imports this module)
