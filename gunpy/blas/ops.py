"""Operators of the GraphBLAS algebra: unary and binary ops, monoids, semirings, select ops.

Names follow python-graphblas (``gb.binary.plus``, ``gb.semiring.min_plus``...)
so its users carry over. Each op is a plain Python function that gunpy compiles
for every backend the way it compiles a functor's hooks (``njit`` on the CPU,
an inline device function on CUDA), so user-defined ops run everywhere::

    >>> from gunpy import blas
    >>> absdiff = blas.binary.register_anonymous(lambda x, y: abs(x - y), name="absdiff")
    >>> blas.monoid.register_new("maxabs", blas.binary.max, identity=0.0)
    Monoid('maxabs')
    >>> blas.semiring.register_new("max_absdiff", blas.monoid.maxabs, absdiff)
    Semiring('max_absdiff')

A monoid may name a ``terminal`` value (``lor``: True, ``land``: False,
``min``: -inf, ``any``: every value): a pull reduction stops scanning a row
once it reaches it (the push-pull paper's early exit).
"""

import math
import numbers

import numpy as np

__all__ = ["BinaryOp", "Monoid", "Semiring", "UnaryOp", "SelectOp", "binary", "monoid",
           "semiring", "unary", "select", "lookup_dtype", "DTYPES"]

#: the element types gunpy.blas stores (python-graphblas names on the left)
DTYPES = {
    "BOOL": np.dtype(np.bool_), "INT32": np.dtype(np.int32), "INT64": np.dtype(np.int64),
    "FP32": np.dtype(np.float32), "FP64": np.dtype(np.float64),
}
_BY_NUMPY = {v: v for v in DTYPES.values()}


def lookup_dtype(dtype):
    """A NumPy dtype from a python-graphblas name ("FP64"), a Python type or a NumPy dtype."""
    if isinstance(dtype, str) and dtype.upper() in DTYPES:
        return DTYPES[dtype.upper()]
    if dtype is bool:
        return DTYPES["BOOL"]
    if dtype is int:
        return DTYPES["INT64"]
    if dtype is float:
        return DTYPES["FP64"]
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is not None and dt in _BY_NUMPY:
        return dt
    if dt is not None and dt.kind in "iu" and dt.itemsize <= 4:
        return DTYPES["INT32"] if dt.kind == "i" else DTYPES["INT64"]
    if dt is not None and dt.kind in "iu":
        return DTYPES["INT64"]
    raise ValueError(f"unsupported dtype {dtype!r}; gunpy.blas stores "
                     f"{', '.join(DTYPES)} (or the NumPy dtypes bool, int32, int64, "
                     "float32, float64)")


def promote(x, y):
    """The common type of two element types (bool with bool stays bool)."""
    return lookup_dtype(np.result_type(np.dtype(x), np.dtype(y)))


def _name(fn, name):
    return name or getattr(fn, "__name__", "anonymous")


class _Op:
    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


class UnaryOp(_Op):
    """``z = f(x)``; ``out`` is the result type rule: "same", "bool" or "float"."""

    def __init__(self, name, func, *, out="same"):
        self.name, self.func, self.out = name, func, out

    def output_dtype(self, x):
        if self.out == "bool":
            return DTYPES["BOOL"]
        if self.out == "float":
            return DTYPES["FP64"] if np.dtype(x) != DTYPES["FP32"] else DTYPES["FP32"]
        return np.dtype(x)


class BinaryOp(_Op):
    """``z = f(x, y)``.

    ``kind``: ``"arith"`` (result in the common type), ``"compare"`` (bool
    result), ``"logical"`` (bool operands and result) or ``"positional"`` (the
    result is an index of the product, int64: ``firsti``, ``secondi``...).
    ``atomic``: the atomic read-modify-write that combines with this op on
    every backend (``"add"``, ``"min"``, ``"max"``, ``"lor"``, ``"land"``), if any.
    """

    def __init__(self, name, func, *, kind="arith", atomic=None, position=None):
        self.name, self.func, self.kind, self.atomic = name, func, kind, atomic
        self.position = position   # positional ops: ("first"|"second", "i"|"j", offset)

    def output_dtype(self, x, y):
        if self.kind in ("compare", "logical"):
            return DTYPES["BOOL"]
        if self.kind == "positional" or self.name in ("pair", "oneb"):
            return DTYPES["INT64"]
        return promote(x, y)

    def input_dtype(self, x, y):
        if self.kind == "logical":
            return DTYPES["BOOL"]
        return promote(x, y)

    @property
    def reads_first(self):
        return self.kind != "positional" and self.name not in ("second", "pair", "oneb")

    @property
    def reads_second(self):
        return self.kind != "positional" and self.name not in ("first", "pair", "oneb")


class Monoid(_Op):
    """An associative, commutative :class:`BinaryOp` with an identity (and maybe a terminal).

    ``identity`` / ``terminal``: a value, or a function of the element type
    (``min``'s identity is +inf for floats, the largest integer for ints).
    ``terminal="any"``: every value is terminal (the ``any`` monoid).
    """

    def __init__(self, name, binop, identity, terminal=None):
        self.name, self.binop = name, binop
        self._identity, self._terminal = identity, terminal

    def identity(self, dtype):
        v = self._identity(np.dtype(dtype)) if callable(self._identity) else self._identity
        return np.dtype(dtype).type(v)

    def terminal(self, dtype):
        t = self._terminal
        if t is None or t == "any":
            return t
        v = t(np.dtype(dtype)) if callable(t) else t
        return None if v is None else np.dtype(dtype).type(v)

    @property
    def is_any(self):
        return self._terminal == "any"

    @property
    def atomic(self):
        return "any" if self.is_any else self.binop.atomic


class Semiring(_Op):
    """``monoid`` over ``binop``: ``w(j) = monoid over i of binop(u(i), A(i, j))``.

    Calling it on a matrix-vector product (``u @ A``, ``A @ u``, ``A @ B``)
    binds it: ``blas.semiring.min_plus(u @ A).new()``.
    """

    def __init__(self, name, monoid, binop):
        self.name, self.monoid, self.binop = name, monoid, binop

    def __call__(self, expr, **opts):
        from gunpy.blas.expr import MatMulExpr
        if not isinstance(expr, MatMulExpr):
            raise TypeError(f"a semiring applies to a product (u @ A, A @ u or A @ B), got "
                            f"{type(expr).__name__}")
        return expr.bind(self, opts)


class SelectOp(_Op):
    """``keep = f(x, i, thunk)``: which entries :meth:`Vector.select` keeps."""

    def __init__(self, name, func):
        self.name, self.func = name, func


# --------------------------------------------------------------------------- built-ins
def _plus(x, y):
    return x + y


def _minus(x, y):
    return x - y


def _rminus(x, y):
    return y - x


def _times(x, y):
    return x * y


def _truediv(x, y):
    return x / y


def _min(x, y):
    return x if x <= y else y


def _max(x, y):
    return x if x >= y else y


def _first(x, y):
    return x


def _second(x, y):
    return y


def _pair(x, y):
    return 1


def _lor(x, y):
    return x or y


def _land(x, y):
    return x and y


def _lxor(x, y):
    return x != y


def _eq(x, y):
    return x == y


def _ne(x, y):
    return x != y


def _lt(x, y):
    return x < y


def _le(x, y):
    return x <= y


def _gt(x, y):
    return x > y


def _ge(x, y):
    return x >= y


def _positional(x, y):  # never called: positional ops read the product's indices
    return 0


_BINARY = {
    "plus": BinaryOp("plus", _plus, atomic="add"),
    "minus": BinaryOp("minus", _minus),
    "rminus": BinaryOp("rminus", _rminus),
    "times": BinaryOp("times", _times),
    "truediv": BinaryOp("truediv", _truediv),
    "min": BinaryOp("min", _min, atomic="min"),
    "max": BinaryOp("max", _max, atomic="max"),
    "first": BinaryOp("first", _first),
    "second": BinaryOp("second", _second),
    "pair": BinaryOp("pair", _pair),
    "oneb": BinaryOp("oneb", _pair),
    "any": BinaryOp("any", _first),
    "lor": BinaryOp("lor", _lor, kind="logical", atomic="lor"),
    "land": BinaryOp("land", _land, kind="logical", atomic="land"),
    "lxor": BinaryOp("lxor", _lxor, kind="logical"),
    "eq": BinaryOp("eq", _eq, kind="compare"),
    "ne": BinaryOp("ne", _ne, kind="compare"),
    "lt": BinaryOp("lt", _lt, kind="compare"),
    "le": BinaryOp("le", _le, kind="compare"),
    "gt": BinaryOp("gt", _gt, kind="compare"),
    "ge": BinaryOp("ge", _ge, kind="compare"),
}
for _side in ("first", "second"):
    for _ij in ("i", "j"):
        for _off in (0, 1):
            _n = f"{_side}{_ij}{'1' if _off else ''}"
            _BINARY[_n] = BinaryOp(_n, _positional, kind="positional", position=(_side, _ij, _off))


def _big(dt):
    return math.inf if dt.kind == "f" else (True if dt.kind == "b" else np.iinfo(dt).max)


def _small(dt):
    return -math.inf if dt.kind == "f" else (False if dt.kind == "b" else np.iinfo(dt).min)


_MONOID = {
    "plus": Monoid("plus", _BINARY["plus"], 0),
    "times": Monoid("times", _BINARY["times"], 1,
                    terminal=lambda dt: 0 if dt.kind in "iub" else None),
    "min": Monoid("min", _BINARY["min"], _big, terminal=_small),
    "max": Monoid("max", _BINARY["max"], _small, terminal=_big),
    "lor": Monoid("lor", _BINARY["lor"], False, terminal=True),
    "land": Monoid("land", _BINARY["land"], True, terminal=False),
    "lxor": Monoid("lxor", _BINARY["lxor"], False),
    "any": Monoid("any", _BINARY["any"], 0, terminal="any"),
    "eq": Monoid("eq", _BINARY["eq"], True),
}


def _abs(x):
    return abs(x)


def _ainv(x):
    return -x


def _minv(x):
    return 1.0 / x


def _lnot(x):
    return not x


def _one(x):
    return 1


def _identity(x):
    return x


def _sqrt(x):
    return math.sqrt(x)


def _exp(x):
    return math.exp(x)


def _log(x):
    return math.log(x)


# each unary op is named after its function; ``out``: its result type rule
_UNARY = {f.__name__[1:]: UnaryOp(f.__name__[1:], f, out=out) for f, out in (
    (_identity, "same"), (_abs, "same"), (_ainv, "same"), (_minv, "float"), (_lnot, "bool"),
    (_one, "same"), (_sqrt, "float"), (_exp, "float"), (_log, "float"))}


def _valueeq(x, i, t):
    return x == t


def _valuene(x, i, t):
    return x != t


def _valuelt(x, i, t):
    return x < t


def _valuele(x, i, t):
    return x <= t


def _valuegt(x, i, t):
    return x > t


def _valuege(x, i, t):
    return x >= t


def _rowle(x, i, t):
    return i <= t


def _rowgt(x, i, t):
    return i > t


_SELECT = {
    "valueeq": SelectOp("valueeq", _valueeq), "valuene": SelectOp("valuene", _valuene),
    "valuelt": SelectOp("valuelt", _valuelt), "valuele": SelectOp("valuele", _valuele),
    "valuegt": SelectOp("valuegt", _valuegt), "valuege": SelectOp("valuege", _valuege),
    "rowle": SelectOp("rowle", _rowle), "rowgt": SelectOp("rowgt", _rowgt),
    "indexle": SelectOp("indexle", _rowle), "indexgt": SelectOp("indexgt", _rowgt),
}
#: python-graphblas's string shorthands for select: ``v.select(">", 0)``
SELECT_ALIASES = {"==": "valueeq", "!=": "valuene", "<": "valuelt", "<=": "valuele",
                  ">": "valuegt", ">=": "valuege"}


class _Namespace:
    """``blas.binary`` etc.: attribute access to the ops, plus ``register_new``."""

    def __init__(self, kind, table):
        self._kind, self._table = kind, table

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._table[name]
        except KeyError:
            op = self._missing(name)
            if op is None:
                raise AttributeError(f"gunpy.blas.{self._kind} has no {name!r}; known: "
                                     f"{', '.join(sorted(self._table))}") from None
            return op

    def _missing(self, name):
        return None

    def __dir__(self):
        return sorted(self._table) + ["register_new", "register_anonymous"]

    def __contains__(self, name):
        return name in self._table

    def _add(self, name, op):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"an op name must be an identifier, got {name!r}")
        if name in self._table:
            raise ValueError(f"gunpy.blas.{self._kind}.{name} already exists")
        self._table[name] = op
        return op


def _check_callable(func):
    if not callable(func):
        raise TypeError(f"expected a Python function, got {func!r}")
    return getattr(func, "py_func", func)


class _UnaryNamespace(_Namespace):
    def register_anonymous(self, func, name=None, *, out="same"):
        """A :class:`UnaryOp` from ``func(x)`` (not added to the namespace)."""
        return UnaryOp(_name(func, name), _check_callable(func), out=out)

    def register_new(self, name, func, *, out="same"):
        """Add ``func(x)`` as ``blas.unary.<name>``."""
        return self._add(name, self.register_anonymous(func, name, out=out))


class _BinaryNamespace(_Namespace):
    def register_anonymous(self, func, name=None):
        """A :class:`BinaryOp` from ``func(x, y)`` (result in the operands' common type)."""
        return BinaryOp(_name(func, name), _check_callable(func))

    def register_new(self, name, func):
        """Add ``func(x, y)`` as ``blas.binary.<name>``."""
        return self._add(name, self.register_anonymous(func, name))


class _MonoidNamespace(_Namespace):
    def register_anonymous(self, binop, identity, name=None, *, terminal=None):
        """A :class:`Monoid` of ``binop`` (a BinaryOp or a function) with ``identity``."""
        if not isinstance(binop, BinaryOp):
            binop = binary.register_anonymous(binop)
        if binop.kind == "positional":
            raise ValueError("a positional op cannot be a monoid")
        if not isinstance(identity, (numbers.Number, np.generic)) and not callable(identity):
            raise TypeError(f"a monoid's identity must be a number, got {identity!r}")
        return Monoid(name or binop.name, binop, identity, terminal)

    def register_new(self, name, binop, identity, *, terminal=None):
        """Add a monoid as ``blas.monoid.<name>`` (``terminal``: the early-exit value)."""
        return self._add(name, self.register_anonymous(binop, identity, name, terminal=terminal))


class _SemiringNamespace(_Namespace):
    def _missing(self, name):
        # every built-in monoid over every built-in binary op: min_plus, any_secondi...
        for m in sorted(_MONOID, key=len, reverse=True):
            if name.startswith(m + "_") and name[len(m) + 1:] in _BINARY:
                return self._table.setdefault(name, Semiring(name, _MONOID[m],
                                                             _BINARY[name[len(m) + 1:]]))
        return None

    def register_anonymous(self, monoid, binop, name=None):
        """A :class:`Semiring` of ``monoid`` (add) over ``binop`` (multiply)."""
        if not isinstance(monoid, Monoid):
            raise TypeError(f"expected a gunpy.blas Monoid, got {monoid!r}")
        if not isinstance(binop, BinaryOp):
            binop = binary.register_anonymous(binop)
        return Semiring(name or f"{monoid.name}_{binop.name}", monoid, binop)

    def register_new(self, name, monoid, binop):
        """Add a semiring as ``blas.semiring.<name>``."""
        return self._add(name, self.register_anonymous(monoid, binop, name))


class _SelectNamespace(_Namespace):
    def register_anonymous(self, func, name=None):
        """A :class:`SelectOp` from ``func(x, index, thunk) -> bool``."""
        return SelectOp(_name(func, name), _check_callable(func))

    def register_new(self, name, func):
        return self._add(name, self.register_anonymous(func, name))


unary = _UnaryNamespace("unary", _UNARY)
binary = _BinaryNamespace("binary", _BINARY)
monoid = _MonoidNamespace("monoid", _MONOID)
semiring = _SemiringNamespace("semiring", {})
select = _SelectNamespace("select", _SELECT)


def as_binary(op, what="op"):
    """A BinaryOp from a BinaryOp, a Monoid (its op) or a name."""
    if isinstance(op, Monoid):
        return op.binop
    if isinstance(op, BinaryOp):
        return op
    if isinstance(op, str) and op in _BINARY:
        return _BINARY[op]
    raise TypeError(f"{what} must be a gunpy.blas BinaryOp or Monoid, got {op!r}")


def as_monoid(op):
    if isinstance(op, Monoid):
        return op
    if isinstance(op, str) and op in _MONOID:
        return _MONOID[op]
    if isinstance(op, BinaryOp) and op.name in _MONOID and _MONOID[op.name].binop is op:
        return _MONOID[op.name]
    raise TypeError(f"expected a gunpy.blas Monoid, got {op!r}")
