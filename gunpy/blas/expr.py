"""Deferred GraphBLAS expressions and how each becomes gunpy operator calls.

An expression (``semiring(u @ A)``, ``u.ewise_add(v, op)``...) computes
nothing until it is materialised with ``.new(mask=...)`` or assigned with
``w(mask, accum, replace) << expr``. The mapping, the push-pull paper's and
GraphBLAST's (docs/graphblas.md has the table):

========================  ==============================================================
vxm ``u @ A``, push       ``advance`` over u's entries (a queue frontier); each edge folds
                          its product into the output with the monoid's atomic; the first
                          edge to reach a row emits it (duplicate-free output); the mask
                          is the visited bitmap advance skips
mxv ``A @ u``, pull       pull ``advance``: each row outside the mask scans its in-edges
                          whose source is in u (u as a bitmap); early exit at the monoid's
                          terminal value; operand reuse tests the mask instead of u
mxm ``A @ B`` masked      ``intersect`` over the mask's edges (sorted-list intersection)
ewise_add / ewise_mult    ``compute`` over all indices / ``filter`` over the sparser input
apply, select             ``compute`` / ``filter`` over the entries
reduce                    ``compute`` + ``reduce``
========================  ==============================================================
"""

import numpy as np

from gunpy.blas import _kernels as K
from gunpy.blas.core import (Descriptor, Matrix, Mask, Scalar, Updater, Vector, _descriptor,
                             _space)
from gunpy.blas.ops import (DTYPES, BinaryOp, Monoid, Semiring, SelectOp, UnaryOp,
                            SELECT_ALIASES, as_binary, binary, lookup_dtype, select, semiring)
from gunpy.functor import Functor
from gunpy.operators import advance, bitmap, compute, intersect
from gunpy.operators import filter as keep

__all__ = ["VectorExpr", "MatMulExpr", "EwiseExpr", "ApplyExpr", "SelectExpr", "ReduceExpr",
           "RowReduceExpr", "cast_into"]


class VectorExpr:
    """An expression whose value is a Vector (``size``, ``dtype``, ``backend``)."""

    def new(self, dtype=None, *, mask=None, name=None, **opts):
        """Compute the expression into a new Vector (only where ``mask`` allows)."""
        out = Vector(self.dtype if dtype is None else dtype, self.size, backend=self.backend,
                     name=name)
        Updater(out, mask, None, False, opts) << self
        return out

    def _compute(self, mask, desc, backend):
        """``(t, masked)``: the result as a fresh Vector; ``masked`` when ``t`` already
        leaves out every index ``mask`` blocks."""
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
        if self.kind == "vxm":
            return b.output_dtype(self.left.dtype, self.right.dtype)
        if self.kind == "mxv":
            return b.output_dtype(self.right.dtype, self.left.dtype)
        return b.output_dtype(self.left.dtype, self.right.dtype)

    def new(self, dtype=None, *, mask=None, name=None, **opts):
        if self.kind == "mxm":
            return _mxm(self.left, self.right, self._sr, mask, dtype)
        return super().new(dtype, mask=mask, name=name, **{**self.opts, **opts})

    def _compute(self, mask, desc, backend):
        if self.kind == "mxm":
            raise TypeError("A @ B is a Matrix: use .new(mask=M.S)")
        if self.opts:
            desc = _descriptor(self.opts, desc)
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


def _workspace(space, dtype, ident):
    """A value array that holds ``ident`` everywhere outside a running operation."""
    key = (np.dtype(dtype).str, np.asarray(ident).tobytes())
    ws = space.blas_workspaces.get(key)
    if ws is None:
        ws = space.blas_workspaces[key] = space.backend.full(max(space.num_vertices, 1), ident,
                                                             dtype)
    return ws


def product(u, A, sr, transposed, mask, desc):
    """``sr(u @ A)`` (``transposed``: ``sr(A @ u)``) where ``mask`` allows; returns
    ``(t, True)``. See the module docstring for the mapping to advance."""
    try:
        return _product(u, A, sr, transposed, mask, desc)
    except BaseException:
        # a product cut short leaves partial folds in the workspace: start a clean one
        u._ctx.blas_workspaces.clear()
        raise


def _product(u, A, sr, transposed, mask, desc):

    n = A.nrows
    backend = u.backend
    binop, mon = sr.binop, sr.monoid
    x_dt, a_dt = u.dtype, A.dtype
    if transposed:   # A(i, k) * u(k): the matrix value is the first operand
        in_dt, out_dt = binop.input_dtype(a_dt, x_dt), binop.output_dtype(a_dt, x_dt)
        reads_x, reads_a = binop.reads_second, binop.reads_first
    else:            # u(k) * A(k, j)
        in_dt, out_dt = binop.input_dtype(x_dt, a_dt), binop.output_dtype(x_dt, a_dt)
        reads_x, reads_a = binop.reads_first, binop.reads_second
    structure_only = desc.structure_only is True or not reads_a
    reads_a = reads_a and not structure_only
    M = A.T if transposed else A   # the matrix whose out-edges carry the products
    G = M._graph(structure_only)
    ctx = M._context(G)
    ctx.record = A.last_stats = {"edges": 0, "structure_only": G.values is None}
    space = u._ctx
    t = Vector(out_dt, n, backend=backend)
    if u.nvals == 0 or n == 0:
        return t, True
    combine = _combine_kind(mon, out_dt)
    direction = desc.direction
    if direction == "auto":
        direction = "pull" if u.nvals > desc.ratio * n else "push"
    if combine is None:
        direction = "pull"   # no atomic for this monoid: one writer per row
    if desc.operand_reuse and (mask is None or not mask.complement):
        raise ValueError("operand_reuse needs a complemented mask (~v.S): the mask stands "
                         "in for the input")
    ident = mon.identity(out_dt)
    terminal = mon.terminal(out_dt)
    is_any = combine == "any"
    out = t._vals if is_any else _workspace(space, out_dt, ident)
    position = binop.position if binop.kind == "positional" else None
    if direction == "push":
        # ``seen``: the rows reached so far (an atomic test-and-set picks the edge that
        # emits each row). For ``any`` the first product is the answer, so seen rows are
        # skipped like the masked ones: one bitmap, starting as the mask, serves both.
        if is_any:
            seen = mask.block(space, writable=True) if mask is not None else \
                backend.zeros(bitmap.num_words(n), np.uint32)
            skip = seen
        else:
            seen = backend.zeros(bitmap.num_words(n), np.uint32)
            skip = mask.block(space, writable=False) if mask is not None else None
        F = K.product_functor(backend, binop.func, position, transposed, in_dt, out_dt,
                              combine, mon.binop.func, False, "none", reads_x, reads_a,
                              transposed)
        data = K.ProductData(u._vals, out, seen, ident)
        t._st = advance(G, u._queue(), F, data, mask=skip, skip_masked=True,
                        update_mask=False, load_balance=desc.load_balance, context=ctx)
    else:
        block = mask.block(space, writable=False) if mask is not None else \
            backend.zeros(bitmap.num_words(n), np.uint32)
        if is_any:
            mode = "any"
        elif desc.early_exit and terminal is not None:
            mode = "value"
        else:
            mode = "none"
        seen = backend.zeros(bitmap.num_words(n) if mode == "value" else 1, np.uint32)
        F = K.product_functor(backend, binop.func, position, transposed, in_dt, out_dt,
                              combine, mon.binop.func, True, mode, reads_x, reads_a,
                              transposed)
        data = K.ProductData(u._vals, out, seen, ident if terminal is None else terminal)
        found = advance(G, u._st, F, data, mask=block, skip_masked=True, update_mask=False,
                        direction="pull",
                        pull_input="visited" if desc.operand_reuse else "frontier",
                        pull_mapping="thread" if combine is None else desc.pull_mapping,
                        early_exit=desc.early_exit and mode != "none", context=ctx)
        if mode == "value":
            t._set_bitmap(seen)
        else:
            t._st = found
    if not is_any and t.nvals:
        compute(space.graph, t._queue(), K.harvest_functor(backend),
                K.HarvestData(t._vals, out, ident), context=space)
    return t, True


def _mxm(A, B, sr, mask, dtype):
    """``C<M> = A sr B`` by sorted-list intersection over the mask's entries."""

    if mask is None or not isinstance(mask, Mask) or not isinstance(mask.parent, Matrix):
        raise NotImplementedError("gunpy.blas computes A @ B only under a matrix mask "
                                  "(.new(mask=M.S)): GraphBLAST's masked SpGEMM")
    if mask.complement:
        raise NotImplementedError("a complemented mask for A @ B is not implemented")
    M = mask.parent if mask.structure else mask.parent.select("!=", 0)
    if not (A.nrows == B.nrows == M.nrows):
        raise ValueError("A, B and the mask must have the same shape")
    if not (A.backend is B.backend is M.backend):
        raise ValueError("A, B and the mask live on different backends")
    binop, mon = sr.binop, sr.monoid
    if mon.binop.kind == "positional":
        raise ValueError("a positional op cannot be a monoid")
    in_dt = binop.input_dtype(A.dtype, B.dtype)
    out_dt = binop.output_dtype(A.dtype, B.dtype)
    backend = M.backend
    left = A._graph(not binop.reads_first)
    right = B.T._graph(not binop.reads_second)
    a_w, b_w = left.values is not None, right.values is not None
    m = M.nvals
    ctx = M._context(M._G)
    res_dt = lookup_dtype(dtype) if dtype is not None else out_dt
    if m and mon.binop is binary.plus and binop in (binary.pair, binary.oneb):
        # plus.pair counts the common neighbours: the operator's per-edge counts, with no
        # per-match work at all
        counts = backend.zeros(m, np.int64)
        intersect(M._G, _Count, None, left=left, right=right, counts=counts, context=ctx)
        vals = backend.to_host(counts)[:m]
        keep = vals > 0
        return M._filtered(keep, vals[keep].astype(res_dt), res_dt)
    out = backend.empty(max(m, 1), out_dt)
    hit = backend.zeros(max(m, 1), np.uint8)
    if m:
        position = binop.position if binop.kind == "positional" else None
        F = K.mxm_functor(backend, binop.func, position, mon.binop.func, in_dt, out_dt, a_w, b_w)
        data = K.MxmData(backend.graph(left).values, backend.graph(right).values, out, hit)
        intersect(M._G, F, data, left=left, right=right, context=ctx)
    keep = backend.to_host(hit)[:m].astype(bool)
    vals = backend.to_host(out)[:m][keep]
    return M._filtered(keep, vals.astype(res_dt), res_dt)


class _Count(Functor):
    """No per-match work: intersect's per-edge counts are the product."""


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

    def _compute(self, mask, desc, backend):
        a, b, op = self.a, self.b, self.op
        space = a._ctx
        in_dt = op.input_dtype(a.dtype, b.dtype)
        t = Vector(self.dtype, self.size, backend=self.backend)
        if self.union:
            if a.nvals + b.nvals == 0:
                return t, False
            words = self.backend.zeros(bitmap.num_words(self.size), np.uint32)
            F = K.ewise_add_functor(self.backend, op.func, in_dt, self.dtype)
            compute(space.graph, None, F, K.EwiseData(a._vals, a._bits(), b._vals, b._bits(),
                                                      t._vals, words), context=space)
            t._set_bitmap(words)
            return t, False
        small, big = (a, b) if a.nvals <= b.nvals else (b, a)
        if small.nvals == 0:
            return t, False
        F = K.ewise_mult_functor(self.backend, op.func, in_dt, self.dtype, small is b)
        data = K.EwiseData(small._vals, small._bits(), big._vals, big._bits(), t._vals,
                           small._bits())
        t._st = keep(space.graph, small._queue(), F, data, context=space)
        return t, False


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

    def _compute(self, mask, desc, backend):
        from gunpy.blas.core import _copy_struct
        u = self.u
        t = Vector(self.dtype, self.size, backend=self.backend)
        if u.nvals == 0:
            return t, False
        F = K.apply_functor(self.backend, self.op.func, self.in_dt, self.dtype, self.bind)
        scalar = self.in_dt.type(self.scalar)
        compute(u._ctx.graph, u._queue(), F, K.ApplyData(u._vals, scalar, t._vals),
                context=u._ctx)
        t._st = _copy_struct(u._st, u._ctx)
        return t, False


def cast_into(w, t):
    """``w`` becomes ``t`` converted to ``w.dtype`` (``t`` is consumed)."""
    if t.nvals:
        vals = ApplyExpr(t, _identity())
        vals.dtype = w.dtype
        r, _ = vals._compute(None, None, w.backend)
        w._vals, w._st = r._vals, t._st
    else:
        w.clear()


def _identity():
    from gunpy.blas.ops import unary
    return unary.identity


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

    def _compute(self, mask, desc, backend):
        u = self.u
        t = Vector(self.dtype, self.size, backend=self.backend)
        if u.nvals == 0:
            return t, False
        thunk = np.asarray(self.thunk).item()
        F = K.select_functor(self.backend, self.op.func)
        t._st = keep(u._ctx.graph, u._queue(), F, K.SelectData(u._vals, thunk, t._vals),
                     context=u._ctx)
        return t, False


# --------------------------------------------------------------------------- reductions
_NUMERIC_REDUCE = {"plus": "sum", "min": "min", "max": "max"}
_HOST_REDUCE = {"plus": np.add, "times": np.multiply, "min": np.minimum, "max": np.maximum,
                "lor": np.logical_or, "land": np.logical_and}


class ReduceExpr:
    """``u.reduce(monoid)``: a Scalar (``.new()``, or ``.value`` directly)."""

    def __init__(self, u, mon):
        self.u, self.monoid = u, mon

    def new(self):
        u, mon = self.u, self.monoid
        if u.nvals == 0:
            return Scalar(u.dtype)
        name = mon.name
        builtin = name in _HOST_REDUCE and getattr(_monoids(), name, None) is mon
        if builtin and name in _NUMERIC_REDUCE and u.dtype.kind != "b":
            from gunpy.operators import compute, reduce
            acc = np.dtype(np.float64 if u.dtype.kind == "f" else np.int64)
            space = u._ctx
            tmp = space.scratch("blas.reduce", max(u.size, 1), acc)
            F = K.dense_functor(u.backend, acc)
            fill = mon.identity(acc)
            compute(space.graph, None, F, K.DenseData(u._vals, u._bits(), fill, tmp),
                    context=space)
            return Scalar(u.dtype, reduce(tmp, _NUMERIC_REDUCE[name], u.size, context=space))
        _, vals = u.to_coo()
        if builtin:
            return Scalar(u.dtype, _HOST_REDUCE[name].reduce(vals))
        if mon.is_any:
            return Scalar(u.dtype, vals[0])
        acc = vals[0]
        for x in vals[1:]:
            acc = mon.binop.func(acc, x)
        return Scalar(u.dtype, acc)

    @property
    def value(self):
        return self.new().value


def _monoids():
    from gunpy.blas.ops import monoid
    return monoid


class RowReduceExpr(VectorExpr):
    """``A.reduce_rowwise(monoid)``: ``A (monoid.first) 1``, a pull over each row."""

    def __init__(self, A, mon, *, rows):
        self.A, self.monoid, self.rows = A, mon, rows
        self.size, self.backend, self.dtype = A.nrows, A.backend, A.dtype

    def _compute(self, mask, desc, backend):
        from gunpy.blas.core import full_vector
        A = self.A
        ones = full_vector(A.dtype, A.nrows, 1, A.backend)
        sr = Semiring(f"{self.monoid.name}_{'first' if self.rows else 'second'}", self.monoid,
                      binary.first if self.rows else binary.second)
        return product(ones, A, sr, self.rows, mask, _descriptor({"direction": "pull"}, desc))


_unused = (Descriptor, DTYPES)
