"""Vector: a sparse vector, its elements, and the expressions it starts.

A :class:`Vector`'s content is one :class:`~gunpy.blas.structure.VectorData`
(a dense value array and a :class:`gunpy.Frontier` structure), read by the
operations through :attr:`Vector.data` and replaced only by
:func:`gunpy.blas.assign.assign` (``w(mask, accum, replace) << ...``,
``expr.new()``).
"""

import numpy as np

from gunpy.backends import get_backend
from gunpy.blas import _kernels as K
from gunpy.blas.coo import combine_duplicates, values_for
from gunpy.blas.mask import Maskable
from gunpy.blas.ops import as_monoid, binary, lookup_dtype
from gunpy.blas.scalar import Scalar
from gunpy.blas.structure import VectorData, space
from gunpy.operators import compute

__all__ = ["Vector", "full_vector", "as_backend"]


def as_backend(backend):
    """A backend object from a name ("auto", "cuda", "cpu"), None or a backend object."""
    return get_backend(backend) if isinstance(backend, str) or backend is None else backend


class Vector(Maskable):
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
        sp = space(size, as_backend(backend))
        self.backend = sp.backend
        self._data = sp.empty(self.dtype)

    @property
    def data(self):
        """The content (:class:`~gunpy.blas.structure.VectorData`): values and structure on
        the backend. Operations read it; assigning one of this vector's size and dtype
        replaces the content (the vector then owns its arrays)."""
        return self._data

    @data.setter
    def data(self, data):
        if not isinstance(data, VectorData):
            raise TypeError(f"expected a VectorData, got {type(data).__name__}")
        if data.size != self.size or data.backend is not self.backend or \
                data.dtype != self.dtype:
            raise ValueError(f"the data holds {data.size} {data.dtype} values on "
                             f"{data.backend.name}; the vector {self.size} {self.dtype}")
        self._data = data

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
        vals = values_for(values, idx.size, dtype)
        dt = lookup_dtype(dtype if dtype is not None else vals.dtype)
        idx, vals = combine_duplicates(idx, vals, dup_op)
        v = cls(dt, size, backend=backend, name=name)
        if idx.size:
            host = np.zeros(max(size, 1), dtype=dt)
            host[idx] = vals.astype(dt)
            v.data.structure.push(idx)
            v.data = v.data.with_values(v.backend.asarray(host))
        return v

    def dup(self, dtype=None, *, name=None):
        """A copy (converted to ``dtype`` if given)."""
        if dtype is not None and lookup_dtype(dtype) != self.dtype:
            from gunpy.blas.ops import unary
            return self.apply(unary.identity).new(dtype=dtype, name=name)
        out = Vector(self.dtype, self.size, backend=self.backend, name=name)
        out._data = self._data.copy()
        return out

    def clear(self):
        """Remove every entry."""
        self._data = self._data.with_structure(self._data.space.structure())

    # ---------------------------------------------------------------- structure
    @property
    def nvals(self):
        return self._data.nvals

    @property
    def shape(self):
        return (self.size,)

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
        word = int(self.backend.read(self._data.bits(), i >> 5))
        return bool((word >> (i & 31)) & 1)

    def __getitem__(self, i):
        i = self._index(i)
        if not self._has(i):
            return Scalar(self.dtype)
        return Scalar(self.dtype, self.backend.read(self._data.values, i))

    def __setitem__(self, i, value):
        i = self._index(i)
        if isinstance(value, Scalar):
            if value.is_empty:
                del self[i]
                return
            value = value.value
        self.backend.write(self._data.values, i, self.dtype.type(value))
        if self._has(i):
            return
        st = self._data.structure
        if st.has_queue:
            st.push([i])   # drops the bitmap form
        else:
            self._flip(i, True)

    def __delitem__(self, i):
        i = self._index(i)
        if self._has(i):
            self._flip(i, False)

    def _flip(self, i, on):
        """Set (``on``) or clear index ``i``'s bit; the structure keeps its bitmap form only."""
        st = self._data.structure
        words = self._data.bits()
        w = int(self.backend.read(words, i >> 5))
        w = w | (1 << (i & 31)) if on else w & ~(1 << (i & 31))
        self.backend.write(words, i >> 5, np.uint32(w))
        st.set_bitmap(words, st.size + (1 if on else -1))

    def get(self, i, default=None):
        s = self[i]
        return default if s.is_empty else s.value

    def to_coo(self, dtype=None):
        """``(indices, values)``: NumPy arrays, indices sorted."""
        idx = np.sort(self._data.structure.to_numpy().astype(np.int64))
        vals = self.backend.to_host(self._data.values)[idx] if idx.size else \
            np.zeros(0, dtype=self.dtype)
        return idx, vals.astype(lookup_dtype(dtype) if dtype is not None else self.dtype,
                                copy=False)

    def to_dense(self, fill_value=0):
        """A NumPy array of ``size`` values, ``fill_value`` where there is no entry."""
        dt = np.result_type(self.dtype, np.asarray(fill_value))
        data = self._data
        if self.nvals == 0 or dt.kind not in "biuf" or lookup_dtype(dt) != dt:
            out = np.full(self.size, fill_value, dtype=dt)
            if self.nvals:
                idx = data.structure.to_numpy()
                out[idx] = self.backend.to_host(data.values)[idx]
            return out
        # one pass on the backend: the value where there is an entry, else the fill
        out = self.backend.empty(max(self.size, 1), dt)
        compute(data.context.graph, None, K.dense_functor(self.backend, dt),
                K.DenseData(data.values, data.bits(), dt.type(fill_value), out),
                context=data.context)
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
        from gunpy.blas.expr import MatMulExpr
        from gunpy.blas.matrix import as_matrix
        return MatMulExpr(self, as_matrix(other, "u @ A"), "vxm")

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
        from gunpy.blas.assign import Updater
        return Updater(self, mask, accum, replace, opts)

    def __lshift__(self, expr):
        from gunpy.blas.assign import Updater
        Updater(self, None, None, False, {}) << expr


def full_vector(dtype, size, value, backend):
    """A Vector with every entry present, all ``value``."""
    v = Vector(dtype, size, backend=backend)
    v.data = v.data.space.full(v.dtype, value)
    return v
