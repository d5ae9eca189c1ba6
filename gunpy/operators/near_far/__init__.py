"""The two-level near/far priority queue (Davidson et al.; Gunrock section 4.4.2).

``band``
    the rule: which band a priority falls in (stale / near / far) and how the
    level moves up when the near slice runs dry; every kernel below and
    :mod:`gunpy.dist`'s SSSP use it;
``queue``
    :class:`NearFarQueue`, the near level and the two far piles of one run;
``split``
    a frontier split into the near slice and the far pile; the far pile's
    lowest priority (the backends' ``near_far.split`` / ``near_far.min_priority``);
``bins``
    the CPU's refill (``near_far.refill``): the far pile filed in buckets, so a
    refill reads only its own bucket (the CUDA backend splits the pile);
``fused``
    GAP's bucket fusion: many thin advance + split steps to a call
    (``near_far.fused``).
"""

from gunpy.operators.near_far.queue import NearFarQueue

__all__ = ["NearFarQueue"]
