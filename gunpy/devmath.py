"""Device math for functors: a sine and a cosine every backend compiles the same way.

Functor hooks may call ``math.sin`` and ``math.cos``, but on CUDA those lower to
libdevice's ``sin``/``cos``, whose slow path (Payne-Hanek reduction, for angles beyond
~1e5 radians) keeps a 40-byte table in a local array; CUDA 13.0's ``ptxas`` leaves it on
the stack, and gunpy's cubin check (``--cuda-mode=cubin``) refuses any local memory. The
functions here reduce the angle by Cody-Waite's three-part pi/2 (fdlibm's constants) and
evaluate fdlibm's kernel polynomials, so they need no table: plain arithmetic that numba
compiles for the CPU, for CUDA (inlined into the hooks) and that the simulator runs as it
is. Within 2 ulp of libm's ``math.sin``/``math.cos`` for ``|x| <= 1e5`` radians (the
reduction's three parts are exact there); larger angles lose accuracy gradually, and
beyond 1e15 radians, for infinities and for NaN the result is NaN.

Use them in a functor like any numba function::

    from gunpy import devmath

    class Rotate(Functor):
        @staticmethod
        def apply_vertex(v, data):
            data.y[v] = devmath.sin(data.x[v])

geolocation (``gunpy.geo``) computes its great circles and haversine distances with them.
"""

import math

import numba

__all__ = ["sin", "cos", "MAX_EXACT"]

#: the largest ``|x|`` (radians) for which :func:`sin` and :func:`cos` stay within 2 ulp
MAX_EXACT = 1e5


@numba.njit(inline="always")
def _kernel_sin(r):
    """fdlibm's ``__kernel_sin`` for ``|r| <= pi/4`` (no tail term)."""
    z = r * r
    t = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 + z * (
        2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08 +
                                          z * 1.58969099521155010221e-10)))
    return r + z * r * (-1.66666666666666324348e-01 + z * t)


@numba.njit(inline="always")
def _kernel_cos(r):
    """fdlibm's ``__kernel_cos`` for ``|r| <= pi/4`` (no tail term)."""
    z = r * r
    t = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * (
        2.48015872894767294178e-05 + z * (-2.75573143513906633035e-07 + z * (
            2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))))
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + z * t)


@numba.njit(inline="always")
def _quadrant(x):
    """``(k mod 4, r)``: ``x = k pi/2 + r``, ``|r| <= pi/4`` (pi/2 in three parts, so
    ``k * part`` is exact while ``|k| < 2**20``)."""
    if not abs(x) < 1e15:
        return 0, x - x  # inf or NaN in: NaN out (and no integer made of inf)
    k = math.floor(x * 6.36619772367581382433e-01 + 0.5)
    r = ((x - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) \
        - k * 2.02226624879595063154e-21
    return int(k) & 3, r


@numba.njit(inline="always")
def _sin_of(q, r):
    """The sine of ``q pi/2 + r`` (``q`` in 0..3, ``|r| <= pi/4``)."""
    if q == 0:
        return _kernel_sin(r)
    if q == 1:
        return _kernel_cos(r)
    if q == 2:
        return -_kernel_sin(r)
    return -_kernel_cos(r)


@numba.njit(inline="always")
def sin(x):
    """The sine of ``x`` (radians, float64), within 2 ulp of ``math.sin`` for
    ``|x| <= 1e5``; callable from functor hooks on every backend and from Python.

    :func:`cos` is the same evaluation a quadrant on, with the same accuracy:

    >>> from gunpy import devmath
    >>> import math
    >>> [abs(mine(x) - libm(x)) <= 2 * math.ulp(libm(x))
    ...  for mine, libm in ((devmath.sin, math.sin), (devmath.cos, math.cos)) for x in (1.0, 2.0)]
    [True, True, True, True]
    """
    q, r = _quadrant(x)
    return _sin_of(q, r)


@numba.njit(inline="always")
def cos(x):
    """The cosine of ``x`` (radians, float64): ``sin(x + pi/2)``, one quadrant on, so
    within 2 ulp of ``math.cos`` for ``|x| <= 1e5`` (examples: :func:`sin`)."""
    q, r = _quadrant(x)
    return _sin_of((q + 1) & 3, r)
