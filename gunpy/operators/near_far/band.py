"""The near/far rule: which band a priority falls in, and how the band moves up.

Written once, as plain Python arithmetic, and used as it is by every near/far
kernel (compiled for the CUDA and CPU targets: :data:`cuda_band`,
:data:`cpu_band`, ...) and, on NumPy arrays, by :mod:`gunpy.dist`'s SSSP.

A frontier item with priority ``p`` is

* **stale** (:data:`STALE`) when ``p < floor``: it improved below an earlier
  level, went to that level's near slice then, and has been processed;
* **near** (:data:`NEAR`) when ``floor <= p < level``: it is expanded now;
* **far** (:data:`FAR`) otherwise: it waits on the far pile.

When the near slice runs dry the level moves to just above the lowest priority
left on the far pile (:func:`raise_level`), skipping empty buckets; the old
level becomes the floor of the split that follows.
"""

import functools
import math

from gunpy.operators.common import device_attributes

__all__ = ["STALE", "NEAR", "FAR", "band", "raise_level", "cuda_band", "cuda_raise_level",
           "cpu_band", "cpu_raise_level"]

STALE, NEAR, FAR = 0, 1, 2


def band(p, level, floor):
    """:data:`STALE`, :data:`NEAR` or :data:`FAR` for priority ``p`` (elementwise on arrays)."""
    return (p >= floor) * (1 + (p >= level))


def raise_level(level, lowest):
    """The level after the near slice ran dry: the next whole number above ``lowest``
    (the far pile's smallest finite priority), never below ``level``.

    Always above ``lowest``, so the split that follows takes at least one item:
    from 2**52 up every float is whole (and ``floor`` would overflow compiled
    code's integers above 2**63), so the level moves one step of the float's
    precision instead; an SSSP with a ``delta`` far below its distances would
    otherwise never finish.
    """
    if abs(lowest) < 4503599627370496.0:  # 2**52
        return max(level, math.floor(lowest) + 1.0)
    return max(level, lowest + abs(lowest) * 2.220446049250313e-16)


def _compile():
    from numba import njit
    return njit(inline="always")(band), njit(inline="always")(raise_level)


cpu_band, cpu_raise_level = _compile()


@functools.cache
def _cuda_compiled():
    """The rule as CUDA device functions, made on first CUDA use."""
    from gunpy.backends.cuda import device
    return {"cuda_band": device(band), "cuda_raise_level": device(raise_level)}


__getattr__ = device_attributes(__name__, ("cuda_band", "cuda_raise_level"), _cuda_compiled)
