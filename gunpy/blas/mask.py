"""Masks: ``v.S`` (where v has an entry), ``v.V`` (where its value is true), ``~v.S``, ``~v.V``.

A mask says which indices a write may touch; :func:`gunpy.blas.assign.assign`
applies it (products also skip the rows it blocks). Vectors hand a mask
out as bitmap words: :meth:`Mask.allow` (the indices a write may touch) or
:meth:`Mask.block` (those it may not).
"""

import numpy as np

from gunpy.blas import _kernels as K
from gunpy.operators import bitmap, compute

__all__ = ["Mask", "Maskable", "check_mask"]


class Mask:
    """``v.S`` (where v has an entry), ``v.V`` (where its value is true), and their
    complements ``~v.S`` / ``~v.V``.

    >>> from gunpy import blas
    >>> v = blas.Vector.from_coo([1, 2], [True, False], size=4, backend="cpu")
    >>> w = blas.Vector.from_coo([0, 1, 2], [5, 6, 7], size=4, backend="cpu")
    >>> w(~v.V) << 0          # zero where v is not true: indices 0, 2 (no entry) and 3
    >>> w.to_coo()
    (array([0, 1, 2, 3]), array([0, 6, 0, 0]))
    """

    def __init__(self, parent, structure, complement=False):
        self.parent, self.structure, self.complement = parent, structure, complement

    def __invert__(self):
        return Mask(self.parent, self.structure, not self.complement)

    def __repr__(self):
        return f"{'~' if self.complement else ''}{self.parent!r}.{'S' if self.structure else 'V'}"

    @property
    def of_vector(self):
        """Whether the mask is a vector's (a matrix's masks only an ``A @ B`` takes)."""
        return len(self.parent.shape) == 1

    def _set_bits(self):
        """Words with the bit of every entry the mask (before complement) passes; may be
        the parent's own bitmap: read-only."""
        data = self.parent.data
        if self.structure:
            return data.bits()
        words = data.space.words()
        if data.nvals:
            compute(data.context.graph, data.queue(), K.value_bits_functor(data.backend),
                    K.BitsData(data.values, words), context=data.context)
        return words

    def allow(self):
        """Bits of the indices a write may touch (read-only)."""
        words = self._set_bits()
        if self.complement:
            return _inverted(self.parent, words)
        return words

    def block(self, *, writable):
        """Bits of the indices a write may not touch (a fresh array when ``writable``)."""
        words = self._set_bits()
        if not self.complement:
            return _inverted(self.parent, words)
        if not writable:
            return words
        backend = self.parent.backend
        out = self.parent.data.context.recycled(words.shape[0], np.uint32)
        backend.copy(words, out, words.shape[0])
        return out


def _inverted(parent, words):
    out = parent.data.context.recycled(words.shape[0], np.uint32)
    bitmap.invert(parent.backend, out, words, parent.size)
    return out


class Maskable:
    """``x.S`` (its structure) and ``x.V`` (its true values) as masks."""

    @property
    def S(self):
        return Mask(self, True)

    @property
    def V(self):
        return Mask(self, False)


def check_mask(mask, size, backend):
    """``mask`` (or None) checked as the mask of an output of ``size`` on ``backend``."""
    if mask is None:
        return None
    if isinstance(mask, Maskable):
        raise TypeError("a mask must be v.S, v.V, ~v.S or ~v.V (say which: structure or value)")
    if not isinstance(mask, Mask):
        raise TypeError(f"expected a mask (v.S, v.V, ~v.S, ~v.V), got {type(mask).__name__}")
    if mask.of_vector:
        if mask.parent.size != size:
            raise ValueError(f"the mask has size {mask.parent.size}, the output {size}")
        if mask.parent.backend is not backend:
            raise ValueError("the mask lives on another backend")
    return mask
