"""Writing an output: ``w(mask, accum, replace) << source``, GraphBLAS's assignment rule.

:func:`assign` is the one place a Vector's content is replaced by an
operation's result: it computes the source (a scalar, a Vector or an
expression) and applies the mask, the accumulator and ``replace``. The rule,
at each index ``i`` of ``w``, with ``t`` the source's value::

    mask allows i:   w(i) = accum(w(i), t(i))  (or t(i) with no accumulator;
                     an index neither has stays empty; without accum an
                     index only w has is deleted)
    mask blocks i:   w(i) kept, or deleted with replace=True

Each case that can skip work takes a shorter path (all O(nvals) or a word-wise
OR rather than a pass over all indices): taking ``t`` whole, scattering ``t``
into ``w`` under its own structure, filtering ``t`` by the mask.
"""

import numpy as np

from gunpy.blas import _kernels as K
from gunpy.blas.descriptor import resolve
from gunpy.blas.mask import check_mask
from gunpy.blas.ops import as_binary, promote, unary
from gunpy.blas.vector import Vector
from gunpy.operators import bitmap, compute
from gunpy.operators import filter as keep

__all__ = ["Updater", "assign", "write"]


class Updater:
    """``w(mask, accum, replace) << expr``: GraphBLAS's masked, accumulated assignment."""

    def __init__(self, w, mask, accum, replace, opts):
        self.w = w
        self.mask = check_mask(mask, w.size, w.backend)
        self.accum = None if accum is None else as_binary(accum, "accum")
        self.replace = bool(replace)
        if self.replace and self.mask is None:
            raise ValueError("replace=True needs a mask")
        self.desc = resolve(opts)

    def __lshift__(self, source):
        assign(self.w, source, self.mask, self.accum, self.replace, self.desc)

    __ilshift__ = __lshift__


def assign(w, source, mask=None, accum=None, replace=False, desc=None):
    """``w<mask, replace> = accum(w, source)``; ``source``: a number, a Vector or a vector
    expression (computed under ``desc``, told the mask so it may skip blocked indices)."""
    from gunpy.blas.expr import VectorExpr
    if isinstance(source, (int, float, bool, np.number, np.bool_)):
        if (mask is not None and mask.of_vector and mask.structure and not mask.complement
                and accum is None and not replace):
            _scatter(w, mask.parent.data, source)   # w<m.S> = s: only m's entries change
            return
        t = w.data.space.full(w.dtype, source)
        _write(w, t, mask, accum, replace, masked=False, owned=True)
    elif isinstance(source, Vector):
        if source.size != w.size:
            raise ValueError(f"vector sizes differ: {source.size} and {w.size}")
        if source.backend is not w.backend:
            raise ValueError("the vectors live on different backends")
        _write(w, source.data, mask, accum, replace, masked=False, owned=False)
    elif isinstance(source, VectorExpr):
        if source.size != w.size:
            raise ValueError(f"the expression has size {source.size}, the output {w.size}")
        t = source.evaluate(mask, desc or resolve({}))
        _write(w, t, mask, accum, replace, masked=source.honours_mask, owned=True)
    else:
        raise TypeError(f"cannot assign {type(source).__name__} to a Vector")


def write(w, t, mask, accum, replace, *, masked, owned):
    """``w<mask, replace> = accum(w, t)`` for a Vector ``t`` (``masked``: ``t`` has no
    entry the mask blocks; ``owned``: ``w`` may take ``t``'s arrays)."""
    _write(w, t.data, mask, accum, replace, masked=masked, owned=owned)


def _write(w, t, mask, accum, replace, *, masked, owned):
    """:func:`write` for ``t`` a :class:`~gunpy.blas.structure.VectorData`."""
    if accum is None and (mask is None or (masked and (replace or w.nvals == 0))):
        _take(w, t, owned)
    elif (accum is None and not replace and mask.structure and not mask.complement
            and mask.of_vector and mask.parent.data is t and t.dtype == w.dtype):
        _scatter(w, t)   # w<t.S> = t: t's entries overwrite w's, nothing is deleted
    elif accum is None and (w.nvals == 0 or replace):
        # w becomes t's entries that the mask allows: a filter over t, O(nvals(t))
        _restrict(w, t, mask.allow())
    else:
        _merge(w, t, mask, accum, replace)


def _take(w, t, owned):
    """``w`` becomes ``t`` (structure and values)."""
    if t.dtype != w.dtype:
        w.data = _converted(t if owned else t.with_structure(t.structure_copy()), w.dtype)
    else:
        w.data = t if owned else t.copy()


def _converted(t, dtype):
    """``t`` with its values converted to ``dtype`` (the same structure)."""
    values = t.space.values(dtype)
    if t.nvals:
        F = K.apply_functor(t.backend, unary.identity.func, t.dtype, dtype, None)
        compute(t.context.graph, t.queue(), F, K.ApplyData(t.values, t.dtype.type(0), values),
                context=t.context)
    return t.with_values(values)


def _merge(w, t, mask, accum, replace):
    """The general rule at every index: one pass of the assign functor."""
    backend, wd = w.backend, w.data
    allow = mask.allow() if mask is not None else wd.space.all_words()
    out = wd.space.values(w.dtype)
    out_bits = wd.space.words()
    in_dt = promote(w.dtype, t.dtype) if accum is None else accum.input_dtype(w.dtype, t.dtype)
    if accum is not None and accum.kind == "positional":
        raise ValueError("a positional op cannot accumulate")
    if w.size:
        F = K.assign_functor(backend, None if accum is None else accum.func, in_dt, w.dtype,
                             replace)
        compute(wd.context.graph, None, F,
                K.AssignData(wd.values, wd.bits(), t.values, t.bits(), allow, out, out_bits),
                context=wd.context)
    w.data = wd.with_values(out).with_bitmap(out_bits)


def _restrict(w, t, allow):
    """``w`` becomes the entries of ``t`` whose bits are set in ``allow``."""
    if not t.nvals:
        w.clear()
        return
    values = w.data.space.values(w.dtype)
    F = K.scatter_functor(w.backend, w.dtype, False)
    st = keep(t.context.graph, t.queue(), F,
              K.ScatterData(t.values, w.dtype.type(0), values, allow), context=t.context)
    w.data = w.data.with_values(values).with_structure(st)


def _scatter(w, m, value=None):
    """``w<m.S> = value`` (or ``= m``): O(nvals(m)), the structure grows by m's entries."""
    if m.nvals == 0:
        return
    backend, wd, st = w.backend, w.data, m.structure
    scalar = w.dtype.type(0 if value is None else value)
    # a bitmap-only m (a pull's output) is read in one pass over all indices
    dense = not st.has_queue
    F = K.scatter_functor(backend, w.dtype, value is not None, dense)
    compute(wd.context.graph, None if dense else m.queue(), F,
            K.ScatterData(m.values, scalar, wd.values,
                          st.bitmap if dense else wd.space.placeholder),
            context=wd.context)
    # the structure: a word-wise OR when m is dense, a bit per entry when it is sparse
    words = wd.bits()
    if st.has_bitmap:
        bitmap.or_into(backend, words, st.bitmap)
    else:
        bitmap.queue_to_bitmap(backend, st.queue, st.length, st.size, words, clear=False)
    w.data = wd.with_bitmap(words)
