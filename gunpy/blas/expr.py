"""Deferred GraphBLAS expressions and how each becomes gunpy operator calls.

An expression (``semiring(u @ A)``, ``u.ewise_add(v, op)``...) computes
nothing until it is materialised with ``.new(mask=...)`` or assigned with
``w(mask, accum, replace) << expr``: :func:`gunpy.blas.assign.assign` calls the
expression's ``evaluate(mask, desc)``, which returns a fresh
:class:`~gunpy.blas.structure.VectorData`, and writes it under the mask
(``honours_mask``: the result already leaves out what the mask blocks, as a
product's does). The mapping, the push-pull paper's and GraphBLAST's
(docs/graphblas.md has the table):

========================  ==============================================================
vxm ``u @ A``, push       ``advance`` over u's entries (a queue frontier); each edge folds
                          its product into the output with the monoid's atomic; the first
                          edge to reach a row emits it (duplicate-free output); the mask
                          is the visited bitmap advance skips
mxv ``A @ u``, pull       pull ``advance``: each row outside the mask scans its in-edges
                          whose source is in u (u as a bitmap); early exit at the monoid's
                          terminal value; operand reuse tests the mask instead of u
mxm ``A @ B`` masked      ``intersect`` over the mask's edges (:func:`gunpy.blas.matrix.mxm`)
mxm unmasked, ``~M``      ``spgemm``: Gustavson's row-wise product, pattern then values
ewise_add / ewise_mult    ``compute`` over all indices / ``filter`` over the sparser input
apply, select             ``compute`` / ``filter`` over the entries
reduce                    ``compute`` + ``reduce``
========================  ==============================================================
"""

import numpy as np

from gunpy.blas import _kernels as K
from gunpy.blas.descriptor import resolve
from gunpy.blas.matrix import mxm
from gunpy.blas.ops import (BinaryOp, Monoid, Semiring, SelectOp, UnaryOp, SELECT_ALIASES,
                            as_binary, binary, lookup_dtype, select, semiring)
from gunpy.blas.scalar import Scalar
from gunpy.blas.vector import Vector, full_vector
from gunpy.operators import advance, compute
from gunpy.operators import filter as keep

__all__ = ["VectorExpr", "MatMulExpr", "EwiseExpr", "ApplyExpr", "SelectExpr", "ReduceExpr",
           "RowReduceExpr", "product", "cast_into"]


class VectorExpr:
    """An expression whose value is a Vector (``size``, ``dtype``, ``backend``)."""

    #: :meth:`evaluate` leaves out every index the mask blocks (products skip them)
    honours_mask = False

    def new(self, dtype=None, *, mask=None, name=None, **opts):
        """Compute the expression into a new Vector (only where ``mask`` allows)."""
        out = Vector(self.dtype if dtype is None else dtype, self.size, backend=self.backend,
                     name=name)
        out(mask, **opts) << self
        return out

    def evaluate(self, mask, desc):
        """The result as a fresh :class:`~gunpy.blas.structure.VectorData` of ``dtype``
        (``mask``: a hint; :func:`gunpy.blas.assign.assign` applies it)."""
        raise NotImplementedError


def _check_pair(a, b):
    if a.size != b.size:
        raise ValueError(f"sizes differ: {a.size} and {b.size}")
    if a.backend is not b.backend:
        raise ValueError("the operands live on different backends")


# --------------------------------------------------------------------------- products
class MatMulExpr(VectorExpr):
    """``u @ A`` (vxm), ``A @ u`` (mxv) or ``A @ B`` (mxm); a semiring binds it
    (unbound, it means ``plus_times``)."""

    honours_mask = True

    def __init__(self, left, right, kind, sr=None, opts=None):
        self.left, self.right, self.kind = left, right, kind
        self.semiring = sr
        self.opts = opts or {}
        if kind == "mxm":
            if left.nrows != right.nrows:
                raise ValueError(f"shapes differ: {left.shape} and {right.shape}")
            self.size = left.nrows
        else:
            u, A = left, right
            if u.size != A.nrows:
                raise ValueError(f"the vector has size {u.size}, the matrix is "
                                 f"{A.nrows} x {A.ncols}")
            if u.backend is not A.backend:
                raise ValueError("the vector and the matrix live on different backends")
            self.size = A.nrows
        self.backend = left.backend

    def bind(self, sr, opts):
        return MatMulExpr(self.left, self.right, self.kind, sr, {**self.opts, **opts})

    @property
    def _sr(self):
        return self.semiring or semiring.plus_times

    @property
    def dtype(self):
        b = self._sr.binop
        if self.kind == "mxv":
            return b.output_dtype(self.right.dtype, self.left.dtype)
        return b.output_dtype(self.left.dtype, self.right.dtype)

    def new(self, dtype=None, *, mask=None, name=None, **opts):
        if self.kind == "mxm":
            return mxm(self.left, self.right, self._sr, mask, dtype)
        return super().new(dtype, mask=mask, name=name, **{**self.opts, **opts})

    def evaluate(self, mask, desc):
        if self.kind == "mxm":
            raise TypeError("A @ B is a Matrix: use .new() or .new(mask=M.S)")
        if self.opts:
            desc = resolve(self.opts, desc)
        return product(self.left, self.right, self._sr, self.kind == "mxv", mask, desc)


def _combine_kind(monoid, dtype):
    kind = monoid.atomic
    if kind in (None, "any"):
        return kind
    if np.dtype(dtype).kind == "b":
        # on booleans plus and max are "or", min "and" (as in SuiteSparse)
        return {"add": "lor", "max": "lor", "min": "land"}.get(kind, kind)
    if kind in ("lor", "land"):
        return None
    return kind


class _Step:
    """What one product needs, worked out once: types, direction, the graph it walks."""

    def __init__(self, u, A, sr, transposed, mask, desc):
        binop, mon = sr.binop, sr.monoid
        x_dt, a_dt = u.dtype, A.dtype
        if transposed:   # A(i, k) * u(k): the matrix value is the first operand
            self.in_dt, self.out_dt = binop.input_dtype(a_dt, x_dt), binop.output_dtype(a_dt, x_dt)
            self.reads_x, reads_a = binop.reads_second, binop.reads_first
        else:            # u(k) * A(k, j)
            self.in_dt, self.out_dt = binop.input_dtype(x_dt, a_dt), binop.output_dtype(x_dt, a_dt)
            self.reads_x, reads_a = binop.reads_first, binop.reads_second
        structure_only = desc.structure_only is True or not reads_a
        self.reads_a = reads_a and not structure_only
        M = A.T if transposed else A   # the matrix whose out-edges carry the products
        self.graph = M.operand(structure_only)
        self.context = M.context(self.graph)
        self.combine = _combine_kind(mon, self.out_dt)
        self.is_any = self.combine == "any"
        self.ident, self.terminal = mon.identity(self.out_dt), mon.terminal(self.out_dt)
        self.position = binop.position if binop.kind == "positional" else None
        self.sr, self.transposed, self.mask, self.desc = sr, transposed, mask, desc

    def functor(self, backend, pull, mode):
        sr = self.sr
        return K.product_functor(backend, sr.binop.func, self.position, self.transposed,
                                 self.in_dt, self.out_dt, self.combine, sr.monoid.binop.func,
                                 pull, mode, self.reads_x, self.reads_a, self.transposed)


def product(u, A, sr, transposed, mask, desc):
    """``sr(u @ A)`` (``transposed``: ``sr(A @ u)``) as a VectorData holding no index
    ``mask`` blocks. See the module docstring for the mapping to advance."""
    ud = u.data
    try:
        return _product(ud, A, _Step(u, A, sr, transposed, mask, desc))
    except BaseException:
        # a product cut short leaves partial folds in the workspace: start a clean one
        ud.space.drop_workspaces()
        raise


def _product(ud, A, step):
    n = A.nrows
    desc, mask = step.desc, step.mask
    step.context.record = A.last_stats = {"edges": 0,
                                          "structure_only": step.graph.values is None}
    t = ud.space.empty(step.out_dt)
    if ud.nvals == 0 or n == 0:
        return t
    direction = desc.direction
    if direction == "auto":
        direction = "pull" if ud.nvals > desc.ratio * n else "push"
    if step.combine is None:
        direction = "pull"   # no atomic for this monoid: one writer per row
    if desc.operand_reuse and (mask is None or not mask.complement):
        raise ValueError("operand_reuse needs a complemented mask (~v.S): the mask stands "
                         "in for the input")
    out = t.values if step.is_any else ud.space.workspace(step.out_dt, step.ident)
    t = (_push if direction == "push" else _pull)(ud, t, out, step)
    if not step.is_any and t.nvals:
        sp = ud.space
        compute(sp.context.graph, t.queue(), K.harvest_functor(sp.backend),
                K.HarvestData(t.values, out, step.ident), context=sp.context)
    return t


def _push(ud, t, out, step):
    """``advance`` over u's entries; the first edge to reach a row emits it."""
    backend, mask = ud.backend, step.mask
    # ``seen``: the rows reached so far (an atomic test-and-set picks the edge that
    # emits each row). For ``any`` the first product is the answer, so seen rows are
    # skipped like the masked ones: one bitmap, starting as the mask, serves both.
    if step.is_any:
        seen = mask.block(writable=True) if mask is not None else ud.space.words()
        skip = seen
    else:
        seen = ud.space.words()
        skip = mask.block(writable=False) if mask is not None else None
    F = step.functor(backend, False, "none")
    data = K.ProductData(ud.values, out, seen, step.ident)
    # the output frontier lent by the context (no allocation per product once warm)
    return t.with_structure(advance(step.graph, ud.queue(), F, data, out=step.context.frontier(),
                                    mask=skip, skip_masked=True, update_mask=False,
                                    load_balance=step.desc.load_balance,
                                    context=step.context))


def _pull(ud, t, out, step):
    """Pull ``advance``: each row outside the mask scans its in-edges from u."""
    backend, mask, desc = ud.backend, step.mask, step.desc
    block = mask.block(writable=False) if mask is not None else ud.space.words()
    if step.is_any:
        mode = "any"
    elif desc.early_exit and step.terminal is not None:
        mode = "value"
    else:
        mode = "none"
    seen = ud.space.words()  # read in "value" mode only
    F = step.functor(backend, True, mode)
    # the terminal value is read in "value" mode only (``any``'s terminal is no value)
    data = K.ProductData(ud.values, out, seen, step.terminal if mode == "value" else step.ident)
    found = advance(step.graph, ud.structure, F, data, out=step.context.frontier(),
                    mask=block, skip_masked=True,
                    update_mask=False, direction="pull",
                    pull_input="visited" if desc.operand_reuse else "frontier",
                    pull_mapping="thread" if step.combine is None else desc.pull_mapping,
                    early_exit=desc.early_exit and mode != "none", context=step.context)
    return t.with_bitmap(seen) if mode == "value" else t.with_structure(found)


# --------------------------------------------------------------------------- element-wise
class EwiseExpr(VectorExpr):
    """``u.ewise_add(v, op)`` (union) or ``u.ewise_mult(v, op)`` (intersection)."""

    def __init__(self, a, b, op, *, union):
        if not isinstance(b, Vector):
            raise TypeError(f"expected a gunpy.blas Vector, got {type(b).__name__}")
        _check_pair(a, b)
        self.a, self.b, self.union = a, b, union
        self.op = as_binary(op)
        if self.op.kind == "positional":
            raise ValueError("positional ops apply to products only")
        self.size, self.backend = a.size, a.backend
        self.dtype = self.op.output_dtype(a.dtype, b.dtype)

    def evaluate(self, mask, desc):
        a, b, op = self.a.data, self.b.data, self.op
        sp = a.space
        in_dt = op.input_dtype(a.dtype, b.dtype)
        t = sp.empty(self.dtype)
        if self.union:
            if a.nvals + b.nvals == 0:
                return t
            words = sp.words()
            F = K.ewise_add_functor(self.backend, op.func, in_dt, self.dtype)
            compute(sp.context.graph, None, F,
                    K.EwiseData(a.values, a.bits(), b.values, b.bits(), t.values, words),
                    context=sp.context)
            return t.with_bitmap(words)
        small, big = (a, b) if a.nvals <= b.nvals else (b, a)
        if small.nvals == 0:
            return t
        F = K.ewise_mult_functor(self.backend, op.func, in_dt, self.dtype, small is b)
        data = K.EwiseData(small.values, small.bits(), big.values, big.bits(), t.values,
                           small.bits())
        return t.with_structure(keep(sp.context.graph, small.queue(), F, data,
                                     context=sp.context))


class ApplyExpr(VectorExpr):
    """``u.apply(unary)`` or ``u.apply(binary, right=s)`` / ``left=s``."""

    def __init__(self, u, op, *, left=None, right=None):
        self.u = u
        self.size, self.backend = u.size, u.backend
        if isinstance(op, Monoid):
            op = op.binop
        if isinstance(op, UnaryOp):
            if left is not None or right is not None:
                raise TypeError("a unary op takes no left= or right=")
            self.op, self.bind, self.scalar = op, None, 0
            self.in_dt = u.dtype
            self.dtype = op.output_dtype(u.dtype)
        elif isinstance(op, BinaryOp):
            if (left is None) == (right is None):
                raise TypeError("a binary op in apply needs exactly one of left= or right=")
            if op.kind == "positional":
                raise ValueError("positional ops apply to products only")
            s = left if left is not None else right
            s_dt = lookup_dtype(np.asarray(s.value if isinstance(s, Scalar) else s).dtype)
            self.op, self.bind = op, "left" if left is not None else "right"
            self.scalar = s.value if isinstance(s, Scalar) else s
            pair = (s_dt, u.dtype) if left is not None else (u.dtype, s_dt)
            self.in_dt = op.input_dtype(*pair)
            self.dtype = op.output_dtype(*pair)
        else:
            raise TypeError(f"apply takes a UnaryOp or a BinaryOp, got {op!r}")

    def evaluate(self, mask, desc):
        u = self.u.data
        t = u.space.empty(self.dtype)
        if u.nvals == 0:
            return t
        F = K.apply_functor(self.backend, self.op.func, self.in_dt, self.dtype, self.bind)
        scalar = self.in_dt.type(self.scalar)
        compute(u.context.graph, u.queue(), F, K.ApplyData(u.values, scalar, t.values),
                context=u.context)
        return t.with_structure(u.structure_copy())


class SelectExpr(VectorExpr):
    """``u.select(op, thunk)``: the entries where ``op(u(i), i, thunk)`` holds."""

    def __init__(self, u, op, thunk):
        if isinstance(op, str):
            name = SELECT_ALIASES.get(op, op)
            if name not in select:
                raise ValueError(f"unknown select op {op!r}; valid: "
                                 f"{sorted(SELECT_ALIASES)} or blas.select names")
            op = getattr(select, name)
        if not isinstance(op, SelectOp):
            raise TypeError(f"select takes a SelectOp or one of {sorted(SELECT_ALIASES)}, "
                            f"got {op!r}")
        self.u, self.op = u, op
        self.thunk = 0 if thunk is None else (thunk.value if isinstance(thunk, Scalar) else thunk)
        self.size, self.backend, self.dtype = u.size, u.backend, u.dtype

    def evaluate(self, mask, desc):
        u = self.u.data
        t = u.space.empty(self.dtype)
        if u.nvals == 0:
            return t
        thunk = np.asarray(self.thunk).item()
        F = K.select_functor(self.backend, self.op.func)
        return t.with_structure(keep(u.context.graph, u.queue(), F,
                                     K.SelectData(u.values, thunk, t.values),
                                     context=u.context))


# --------------------------------------------------------------------------- reductions
_NUMERIC_REDUCE = {"plus": "sum", "min": "min", "max": "max"}


class ReduceExpr:
    """``u.reduce(monoid)``: a Scalar (``.new()``, or ``.value`` directly)."""

    def __init__(self, u, mon):
        self.u, self.monoid = u, mon

    def new(self):
        from gunpy.blas.coo import HOST_UFUNCS
        from gunpy.blas.ops import monoid
        u, mon = self.u, self.monoid
        if u.nvals == 0:
            return Scalar(u.dtype)
        name = mon.name
        builtin = name in HOST_UFUNCS and getattr(monoid, name, None) is mon
        if builtin and name in _NUMERIC_REDUCE and u.dtype.kind != "b":
            from gunpy.operators import reduce
            acc = np.dtype(np.float64 if u.dtype.kind == "f" else np.int64)
            ud = u.data
            tmp = ud.context.scratch("blas.reduce", max(u.size, 1), acc)
            F = K.dense_functor(u.backend, acc)
            fill = mon.identity(acc)
            compute(ud.context.graph, None, F, K.DenseData(ud.values, ud.bits(), fill, tmp),
                    context=ud.context)
            return Scalar(u.dtype, reduce(tmp, _NUMERIC_REDUCE[name], u.size,
                                          context=ud.context))
        _, vals = u.to_coo()
        if builtin:
            return Scalar(u.dtype, HOST_UFUNCS[name].reduce(vals))
        if mon.is_any:
            return Scalar(u.dtype, vals[0])
        acc = vals[0]
        for x in vals[1:]:
            acc = mon.binop.func(acc, x)
        return Scalar(u.dtype, acc)

    @property
    def value(self):
        return self.new().value


class RowReduceExpr(VectorExpr):
    """``A.reduce_rowwise(monoid)``: ``A (monoid.first) 1``, a pull over each row."""

    honours_mask = True

    def __init__(self, A, mon, *, rows):
        self.A, self.monoid, self.rows = A, mon, rows
        self.size, self.backend, self.dtype = A.nrows, A.backend, A.dtype

    def evaluate(self, mask, desc):
        A = self.A
        ones = full_vector(A.dtype, A.nrows, 1, A.backend)
        sr = Semiring(f"{self.monoid.name}_{'first' if self.rows else 'second'}", self.monoid,
                      binary.first if self.rows else binary.second)
        return product(ones, A, sr, self.rows, mask, resolve({"direction": "pull"}, desc))


def cast_into(w, t):
    """``w`` becomes ``t`` converted to ``w.dtype``."""
    w << t
