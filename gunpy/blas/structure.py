"""What a Vector holds on its backend, and the space its index-wise operations run in.

:class:`VectorData` is a vector's content: a dense value array and its
structure, a :class:`gunpy.Frontier` (a queue of indices when sparse, a bitmap
when dense, converted on demand: O(nvals) one way, O(n/32) the other). Every
operation reads its operands' ``VectorData`` and builds a new one for its
result; only :func:`gunpy.blas.assign.assign` puts one into a Vector.

A :class:`Space` is shared by all vectors of one size on one backend: an
edgeless graph of ``size`` vertices and its operator :class:`Context`
(``compute`` and ``filter`` over indices run in it), and the clean value
arrays products fold into.
"""

import collections
from typing import NamedTuple

import numpy as np

from gunpy.frontier import Frontier
from gunpy.graph import Graph, _index_dtype
from gunpy.operators import Context, bitmap

__all__ = ["VectorData", "Space", "space"]


class VectorData(NamedTuple):
    """A vector's content: ``values`` (``max(size, 1)`` slots on the backend, meaningful
    where ``structure`` has the index), ``structure`` (a :class:`gunpy.Frontier` of the
    indices present) and the :class:`Space` they live in."""

    values: object
    structure: Frontier
    space: "Space"

    @property
    def size(self):
        return self.space.size

    @property
    def nvals(self):
        """How many indices hold an entry (one read of the device length, if a kernel
        wrote the structure's queue)."""
        return self.structure.size

    @property
    def dtype(self):
        return np.dtype(self.values.dtype)

    @property
    def backend(self):
        return self.space.backend

    @property
    def context(self):
        """The operator :class:`~gunpy.operators.Context` that index-wise operations on
        this vector (``compute``, ``filter``) run in."""
        return self.space.context

    def queue(self):
        """The structure with its queue form built (a Frontier)."""
        self.structure.ensure_queue(self.space.context.scratch)
        return self.structure

    def bits(self):
        """The structure's bitmap words (built on demand; read-only to the caller)."""
        return self.structure.ensure_bitmap()

    def with_structure(self, structure):
        return self._replace(structure=structure)

    def with_bitmap(self, words, count=None):
        """These values with the indices whose bits are set in ``words`` (``count``: their
        popcount, if known)."""
        return self._replace(structure=self.space.bitmap_structure(words, count))

    def with_values(self, values):
        return self._replace(values=values)

    def copy(self):
        """A deep copy: the values and the structure."""
        values = self.space.context.recycled(self.values.shape[0], self.dtype)
        self.backend.copy(self.values, values, self.values.shape[0])
        return VectorData(values, self.structure_copy(), self.space)

    def structure_copy(self):
        """A copy of the structure (its queue form if it has one, else its bitmap)."""
        backend, st = self.backend, self.structure
        if not st.has_queue:
            words = self.space.context.recycled(st.bitmap.shape[0], np.uint32)
            backend.copy(st.bitmap, words, st.bitmap.shape[0])
            return self.space.bitmap_structure(words, st.size)
        f = self.space.context.frontier(capacity=st.size)
        if st.size:
            backend.copy(st.queue, f.queue, st.size)
        f.set_size(st.size)
        return f


class Space:
    """Where the vectors of ``size`` entries on ``backend`` compute: ``context`` (an
    operator Context over an edgeless graph of ``size`` vertices), clean workspaces, and
    a one-word ``placeholder`` for kernel arguments a specialisation never reads."""

    def __init__(self, size, backend):
        g = Graph(np.zeros(size + 1, dtype=np.int64), np.zeros(0, dtype=_index_dtype(size)),
                  _trusted=True)
        self.size = int(size)
        self.context = Context(g, backend)
        self.backend = self.context.backend
        self.index_dtype = self.context.index_dtype
        self.placeholder = self.backend.zeros(1, np.uint32)
        self._workspaces = {}

    def structure(self):
        """An empty structure (a queue frontier of indices), lent by the context: the
        arrays of structures that went are reused (no allocation per operation once warm)."""
        return self.context.frontier()

    def bitmap_structure(self, words, count=None):
        """The structure whose indices are the bits set in ``words``."""
        f = self.structure()
        f.set_bitmap(words, bitmap.popcount(self.backend, words) if count is None else count)
        return f

    def empty(self, dtype):
        """A VectorData with no entries (values uninitialised; the array of a gone vector's
        values when one is free, see :meth:`gunpy.operators.Context.recycled`)."""
        return VectorData(self.values(dtype), self.structure(), self)

    def values(self, dtype):
        """A value array of ``size`` slots (uninitialised; recycled when it goes)."""
        return self.context.recycled(max(self.size, 1), dtype)

    def words(self):
        """A cleared bitmap of ``size`` bits (recycled when it goes)."""
        words = self.context.recycled(bitmap.num_words(self.size), np.uint32)
        self.backend.fill(words, 0)
        return words

    def all_words(self):
        """A bitmap with all ``size`` bits set (recycled when it goes)."""
        words = self.context.recycled(bitmap.num_words(self.size), np.uint32)
        self.backend.fill(words, 0)
        bitmap.invert(self.backend, words, words, self.size)
        return words

    def full(self, dtype, value):
        """Every index present, all ``value``."""
        values = self.values(dtype)
        self.backend.fill(values, np.dtype(dtype).type(value))
        data = VectorData(values, self.structure(), self)
        return data.with_bitmap(bitmap.full(self.backend, self.size), self.size) if self.size \
            else data

    def workspace(self, dtype, ident):
        """A value array that holds ``ident`` everywhere outside a running operation."""
        key = (np.dtype(dtype).str, np.asarray(ident).tobytes())
        ws = self._workspaces.get(key)
        if ws is None:
            ws = self._workspaces[key] = self.backend.full(max(self.size, 1), ident, dtype)
        return ws

    def drop_workspaces(self):
        """Forget the workspaces (an operation cut short may have left partial folds)."""
        self._workspaces.clear()


_SPACES = collections.OrderedDict()


def space(size, backend):
    """The :class:`Space` of vectors of ``size`` entries on ``backend`` (one per pair, the
    16 most recent kept)."""
    key = (int(size), backend)
    sp = _SPACES.get(key)
    if sp is None:
        sp = _SPACES[key] = Space(int(size), backend)
        while len(_SPACES) > 16:
            _SPACES.popitem(last=False)
    else:
        _SPACES.move_to_end(key)
    return sp
