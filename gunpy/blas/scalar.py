"""Scalar: one value of one element type, or none (what reductions and ``v[i]`` return)."""

from gunpy.blas.ops import lookup_dtype

__all__ = ["Scalar"]


class Scalar:
    """One value, or none (``value is None``): what reductions and ``v[i]`` return.

    >>> from gunpy import blas
    >>> blas.Scalar("INT64", 3).value, blas.Scalar(float).is_empty
    (3, True)
    """

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
