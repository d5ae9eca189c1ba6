"""A dense, obviously-correct NumPy reference of GraphBLAS semantics (the oracle of test_blas_ops).

Vectors are ``RefVector(values, present, dtype)``: ``present`` a bool array of
``n``, ``values`` a list of ``n`` tuples: the candidate values of each entry
(one candidate, except where the ``any`` monoid may pick any of several; the
tests check membership). Matrices are ``RefMatrix(values, present, dtype)``
with two ``n x n`` arrays. Everything is computed with Python scalars in
plain loops, one entry at a time, straight from the definitions:

* vxm  ``w(j) = monoid over k of mul(u(k), A(k, j))`` over the k where both exist
* mxv  ``w(i) = monoid over k of mul(A(i, k), u(k))``
* mxm  ``C(i, j) = monoid over k of mul(A(i, k), B(k, j))``, only where the mask allows
* ewise_add (union), ewise_mult (intersection), apply, select, reduce
* the write rule ``w<mask, replace> = accum(w, t)``, masks S, V, ~S, ~V (V: present
  with a nonzero value)

Positional multiplies read the product's indices: vxm ``u(k) * A(k, j)``:
firsti=0, firstj=k, secondi=k, secondj=j; mxv ``A(i, k) * u(k)``: firsti=i,
firstj=k, secondi=k, secondj=0; mxm ``A(i, k) * B(k, j)``: firsti=i, firstj=k,
secondi=k, secondj=j; the ``...1`` variants add 1.

Types follow GraphBLAS: a multiply computes in the operands' common type
(bool for the logical ops) and yields the common type, bool (comparisons,
logical ops) or int64 (positional ops, pair); the monoids on bool are
plus=lor, times=land, min=land, max=lor; the write rule casts into w's type.
"""

import math
from dataclasses import dataclass
from itertools import product as _cartesian

import numpy as np

BOOL, INT64, FP64 = np.dtype(np.bool_), np.dtype(np.int64), np.dtype(np.float64)


def cast(x, dtype):
    """``x`` as a Python scalar of ``dtype`` (bool: nonzero; int: truncation)."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        return bool(x != 0)
    if kind in "iu":
        return int(x)
    return float(x)


def promote(a, b):
    return np.result_type(np.dtype(a), np.dtype(b))


# ----------------------------------------------------------------------------- binary ops
def _div(x, y):
    if y == 0:
        return math.copysign(math.inf, x) if x != 0 else math.nan
    return x / y


BINARY = {
    "plus": lambda x, y: x + y,
    "minus": lambda x, y: x - y,
    "rminus": lambda x, y: y - x,
    "times": lambda x, y: x * y,
    "truediv": _div,
    "min": lambda x, y: min(x, y),
    "max": lambda x, y: max(x, y),
    "first": lambda x, y: x,
    "second": lambda x, y: y,
    "pair": lambda x, y: 1,
    "oneb": lambda x, y: 1,
    "lor": lambda x, y: bool(x) or bool(y),
    "land": lambda x, y: bool(x) and bool(y),
    "lxor": lambda x, y: bool(x) != bool(y),
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
    "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
}
LOGICAL = {"lor", "land", "lxor"}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}
POSITIONAL = {f"{s}{ij}{o}" for s in ("first", "second") for ij in "ij" for o in ("", "1")}


def binop_types(name, xdt, ydt):
    """``(input dtype, output dtype)`` of binary op ``name`` on operands of these types."""
    if name in LOGICAL:
        return BOOL, BOOL
    common = promote(xdt, ydt)
    if name in COMPARE:
        return common, BOOL
    if name in POSITIONAL or name in ("pair", "oneb"):
        return common, INT64
    return common, common


def apply_binary(name, x, y, xdt, ydt, fn=None):
    """``name(x, y)`` (or the Python function ``fn``) with GraphBLAS's casts."""
    in_dt, out_dt = binop_types(name, xdt, ydt)
    f = fn if fn is not None else BINARY[name]
    return cast(f(cast(x, in_dt), cast(y, in_dt)), out_dt)


def positional(name, i, k, j):
    """A positional multiply of the product term with row ``i``, inner ``k``, column ``j``."""
    base = name[:-1] if name.endswith("1") else name
    off = 1 if name.endswith("1") else 0
    value = {"firsti": i, "firstj": k, "secondi": k, "secondj": j}[base]
    return value + off


# ----------------------------------------------------------------------------- monoids
def _identity(name, dt):
    kind = np.dtype(dt).kind
    if name in ("plus", "lor", "lxor", "any"):
        return cast(0, dt)
    if name in ("times", "land", "eq"):
        return cast(1, dt)
    if name == "min":
        return True if kind == "b" else (math.inf if kind == "f" else int(np.iinfo(dt).max))
    if name == "max":
        return False if kind == "b" else (-math.inf if kind == "f" else int(np.iinfo(dt).min))
    raise KeyError(name)


def _bool_monoid(name):
    return {"plus": "lor", "times": "land", "min": "land", "max": "lor"}.get(name, name)


@dataclass(frozen=True)
class RefMonoid:
    """A monoid of the reference: ``fn`` (Python), or a built-in ``name``."""

    name: str
    fn: object = None
    identity: object = None

    def fold(self, values, dt):
        """The candidates of the monoid over ``values`` (a list of scalars of ``dt``), or None."""
        if not values:
            return None
        if self.name == "any":
            return tuple(dict.fromkeys(values))   # any of them
        if self.fn is not None:
            f = self.fn
        else:
            name = _bool_monoid(self.name) if np.dtype(dt).kind == "b" else self.name
            f = BINARY[name]
        acc = values[0]
        for x in values[1:]:
            acc = cast(f(acc, x), dt)
        return (acc,)


def monoid(name, fn=None, identity=None):
    return RefMonoid(name, fn, identity)


@dataclass(frozen=True)
class RefSemiring:
    monoid: RefMonoid
    mul: str              # a name in BINARY or POSITIONAL; "user" with ``fn``
    fn: object = None


def semiring(name):
    """The reference semiring ``monoid_mul`` (``min_plus``, ``any_secondi``...)."""
    for m in ("plus", "times", "min", "max", "any", "lor", "land", "lxor", "eq"):
        if name.startswith(m + "_"):
            return RefSemiring(RefMonoid(m), name[len(m) + 1:])
    raise KeyError(name)


def product_types(sr, xdt, ydt):
    if sr.fn is not None:
        c = promote(xdt, ydt)
        return c, c
    return binop_types(sr.mul, xdt, ydt)


# ----------------------------------------------------------------------------- containers
@dataclass
class RefVector:
    values: list      # n tuples of candidates (empty tuple where absent)
    present: np.ndarray
    dtype: np.dtype

    @property
    def size(self):
        return self.present.shape[0]

    @property
    def nvals(self):
        return int(self.present.sum())

    def value(self, i):
        (x,) = self.values[i]   # deterministic entries only
        return x

    def indices(self):
        return np.flatnonzero(self.present)


def vector(values, present, dtype):
    """A RefVector from a dense value array and a presence array."""
    dtype = np.dtype(dtype)
    present = np.asarray(present, dtype=bool)
    vals = [(cast(values[i], dtype),) if present[i] else () for i in range(present.shape[0])]
    return RefVector(vals, present.copy(), dtype)


def vector_from_coo(indices, values, size, dtype):
    dense = np.zeros(size, dtype=object)
    present = np.zeros(size, dtype=bool)
    for i, x in zip(indices, values):
        dense[int(i)] = x
        present[int(i)] = True
    return vector(dense, present, dtype)


def empty_vector(size, dtype):
    return RefVector([()] * size, np.zeros(size, dtype=bool), np.dtype(dtype))


@dataclass
class RefMatrix:
    values: np.ndarray   # n x n, object (Python scalars)
    present: np.ndarray  # n x n bool
    dtype: np.dtype

    @property
    def n(self):
        return self.present.shape[0]


def matrix_from_coo(rows, cols, values, n, dtype):
    dtype = np.dtype(dtype)
    vals = np.zeros((n, n), dtype=object)
    present = np.zeros((n, n), dtype=bool)
    for i, j, x in zip(rows, cols, values):
        assert not present[i, j], "the reference takes duplicate-free input"
        vals[i, j] = cast(x, dtype)
        present[i, j] = True
    return RefMatrix(vals, present, dtype)


def transpose(A):
    return RefMatrix(A.values.T.copy(), A.present.T.copy(), A.dtype)


# ----------------------------------------------------------------------------- products
def _term(sr, x, y, xdt, ydt, pos):
    if sr.fn is None and sr.mul in POSITIONAL:
        return positional(sr.mul, *pos)
    return apply_binary(sr.mul, x, y, xdt, ydt, sr.fn)


def vxm(u, A, sr):
    """``w(j) = monoid over k of mul(u(k), A(k, j))``."""
    n = A.n
    _, out_dt = product_types(sr, u.dtype, A.dtype)
    vals, present = [], np.zeros(n, dtype=bool)
    for j in range(n):
        terms = [_term(sr, u.value(k), A.values[k, j], u.dtype, A.dtype, (0, k, j))
                 for k in range(n) if u.present[k] and A.present[k, j]]
        c = sr.monoid.fold(terms, out_dt)
        vals.append(c or ())
        present[j] = c is not None
    return RefVector(vals, present, out_dt)


def mxv(A, u, sr):
    """``w(i) = monoid over k of mul(A(i, k), u(k))``."""
    n = A.n
    _, out_dt = product_types(sr, A.dtype, u.dtype)
    vals, present = [], np.zeros(n, dtype=bool)
    for i in range(n):
        terms = [_term(sr, A.values[i, k], u.value(k), A.dtype, u.dtype, (i, k, 0))
                 for k in range(n) if A.present[i, k] and u.present[k]]
        c = sr.monoid.fold(terms, out_dt)
        vals.append(c or ())
        present[i] = c is not None
    return RefVector(vals, present, out_dt)


def mxm(A, B, sr, mask=None, mask_kind="S"):
    """``C<M> = A sr B`` as ``{(i, j): candidates}`` (mask: a RefMatrix, kind "S" or "V";
    None: every position)."""
    n = A.n
    _, out_dt = product_types(sr, A.dtype, B.dtype)
    out = {}
    for i in range(n):
        for j in range(n):
            if mask is not None:
                ok = mask.present[i, j] and (mask_kind == "S" or mask.values[i, j] != 0)
                if not ok:
                    continue
            terms = [_term(sr, A.values[i, k], B.values[k, j], A.dtype, B.dtype, (i, k, j))
                     for k in range(n) if A.present[i, k] and B.present[k, j]]
            c = sr.monoid.fold(terms, out_dt)
            if c is not None:
                out[(i, j)] = c
    return out, out_dt


# ----------------------------------------------------------------------------- element-wise
def ewise_add(u, v, op, fn=None):
    """Union: ``op(u(i), v(i))`` where both exist, else the one that does (cast)."""
    _, out_dt = binop_types(op, u.dtype, v.dtype) if fn is None else \
        (None, promote(u.dtype, v.dtype))
    vals, present = [], u.present | v.present
    for i in range(u.size):
        if u.present[i] and v.present[i]:
            vals.append((apply_binary(op, u.value(i), v.value(i), u.dtype, v.dtype, fn),))
        elif u.present[i]:
            vals.append((cast(u.value(i), out_dt),))
        elif v.present[i]:
            vals.append((cast(v.value(i), out_dt),))
        else:
            vals.append(())
    return RefVector(vals, present, out_dt)


def ewise_mult(u, v, op, fn=None):
    """Intersection: ``op(u(i), v(i))`` where both exist."""
    _, out_dt = binop_types(op, u.dtype, v.dtype) if fn is None else \
        (None, promote(u.dtype, v.dtype))
    vals, present = [], u.present & v.present
    for i in range(u.size):
        vals.append((apply_binary(op, u.value(i), v.value(i), u.dtype, v.dtype, fn),)
                    if present[i] else ())
    return RefVector(vals, present, out_dt)


UNARY = {
    "identity": (lambda x: x, "same"),
    "abs": (abs, "same"),
    "ainv": (lambda x: -x, "same"),
    "minv": (lambda x: _div(1.0, x), "float"),
    "lnot": (lambda x: not x, "bool"),
    "one": (lambda x: 1, "same"),
}


def apply_unary(u, name):
    f, rule = UNARY[name]
    out_dt = {"same": u.dtype, "bool": BOOL, "float": FP64}[rule]
    vals = [(cast(f(u.value(i)), out_dt),) if u.present[i] else () for i in range(u.size)]
    return RefVector(vals, u.present.copy(), out_dt)


def apply_bind(u, op, scalar, scalar_dtype, side):
    """``op(u(i), s)`` (side "right") or ``op(s, u(i))`` (side "left")."""
    if side == "right":
        _, out_dt = binop_types(op, u.dtype, scalar_dtype)
        f = lambda x: apply_binary(op, x, scalar, u.dtype, scalar_dtype)   # noqa: E731
    else:
        _, out_dt = binop_types(op, scalar_dtype, u.dtype)
        f = lambda x: apply_binary(op, scalar, x, scalar_dtype, u.dtype)   # noqa: E731
    vals = [(f(u.value(i)),) if u.present[i] else () for i in range(u.size)]
    return RefVector(vals, u.present.copy(), out_dt)


SELECT = {
    "valueeq": lambda x, i, t: x == t, "valuene": lambda x, i, t: x != t,
    "valuelt": lambda x, i, t: x < t, "valuele": lambda x, i, t: x <= t,
    "valuegt": lambda x, i, t: x > t, "valuege": lambda x, i, t: x >= t,
    "indexle": lambda x, i, t: i <= t, "indexgt": lambda x, i, t: i > t,
}


def select(u, name, thunk):
    keep = np.array([bool(u.present[i] and SELECT[name](u.value(i), i, thunk))
                     for i in range(u.size)], dtype=bool)
    vals = [u.values[i] if keep[i] else () for i in range(u.size)]
    return RefVector(vals, keep, u.dtype)


def reduce(u, mon):
    """The candidates of the monoid over u's entries (None when u has none)."""
    return mon.fold([u.value(i) for i in range(u.size) if u.present[i]], u.dtype)


def reduce_rows(A, mon):
    """``w(i) = monoid over A(i, :)`` (None-entries where a row is empty)."""
    vals, present = [], np.zeros(A.n, dtype=bool)
    for i in range(A.n):
        c = mon.fold([A.values[i, j] for j in range(A.n) if A.present[i, j]], A.dtype)
        vals.append(c or ())
        present[i] = c is not None
    return RefVector(vals, present, A.dtype)


# ----------------------------------------------------------------------------- the write rule
def mask_allows(mask_vec, kind, i):
    """Whether mask ``kind`` (None, "S", "V", "~S", "~V") of ``mask_vec`` lets index i be written."""
    if kind is None:
        return True
    present = bool(mask_vec.present[i])
    if kind.endswith("V"):
        present = present and mask_vec.value(i) != 0
    return not present if kind.startswith("~") else present


def write(w, t, mask_vec=None, mask_kind=None, accum=None, replace=False, accum_fn=None):
    """``w<mask, replace> = accum(w, t)``, the result in w's type.

    ``z = accum(w, t)`` (union: both -> accum, one -> that one; no accum: z = t); then
    where the mask allows, w gets z (or no entry); elsewhere w keeps its entry unless
    ``replace``.
    """
    assert not (replace and mask_kind is None)
    dt = w.dtype
    vals, present = [], np.zeros(w.size, dtype=bool)
    for i in range(w.size):
        if accum is None:
            z = tuple(cast(x, dt) for x in t.values[i]) if t.present[i] else None
        elif t.present[i] and w.present[i]:
            z = tuple(dict.fromkeys(cast(apply_binary(accum, a, b, w.dtype, t.dtype, accum_fn), dt)
                                    for a, b in _cartesian(w.values[i], t.values[i])))
        elif t.present[i]:
            z = tuple(cast(x, dt) for x in t.values[i])
        elif w.present[i]:
            z = w.values[i]
        else:
            z = None
        if mask_allows(mask_vec, mask_kind, i):
            out = z
        else:
            out = None if replace or not w.present[i] else w.values[i]
        vals.append(out or ())
        present[i] = out is not None
    return RefVector(vals, present, dt)


# ----------------------------------------------------------------------------- comparing
def same_value(x, c, dtype=None):
    """``x`` equals candidate ``c`` (floats: np.isclose, NaN equal to NaN)."""
    if isinstance(x, float) or isinstance(c, float) or (dtype is not None and
                                                        np.dtype(dtype).kind == "f"):
        return bool(np.isclose(float(x), float(c), rtol=1e-9, atol=1e-12, equal_nan=True))
    return x == c


def check_vector(indices, values, ref, what=""):
    """Assert ``(indices, values)`` (a to_coo) equals ``ref``: same structure, each value one
    of its entry's candidates."""
    indices = np.asarray(indices)
    expect = ref.indices()
    assert np.array_equal(indices, expect), \
        f"{what}: structure {indices.tolist()} != reference {expect.tolist()}"
    for i, x in zip(indices.tolist(), np.asarray(values).tolist()):
        cands = ref.values[i]
        assert any(same_value(x, c) for c in cands), \
            f"{what}: entry {i} = {x!r}, reference {cands!r}"


def check_matrix_entries(rows, cols, values, ref_entries, what=""):
    got = sorted(zip(np.asarray(rows).tolist(), np.asarray(cols).tolist()))
    expect = sorted(ref_entries)
    assert got == expect, f"{what}: structure {got} != reference {expect}"
    for i, j, x in zip(np.asarray(rows).tolist(), np.asarray(cols).tolist(),
                       np.asarray(values).tolist()):
        cands = ref_entries[(i, j)]
        assert any(same_value(x, c) for c in cands), \
            f"{what}: entry ({i}, {j}) = {x!r}, reference {cands!r}"
