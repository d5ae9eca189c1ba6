"""The near/far band rule (gunpy.operators.near_far.band): one definition for every kernel
and gunpy.dist's SSSP; the level always moves past the lowest far priority."""

import math

import numpy as np
import pytest
from numba import njit

import gunpy
from gunpy.operators.near_far.band import (FAR, NEAR, STALE, band, cpu_band, cpu_raise_level,
                                           raise_level)


@njit
def _compiled(p, level, floor):
    return cpu_band(p, level, floor), cpu_raise_level(level, p)


def test_band_on_scalars_arrays_and_compiled():
    p = np.array([0.5, 1.0, 1.5, 2.0, 7.0])
    assert band(p, 2.0, 1.0).tolist() == [STALE, NEAR, NEAR, FAR, FAR]
    assert band(0.5, 2.0, -np.inf) == NEAR and band(np.inf, 2.0, -np.inf) == FAR
    for x in p:
        assert _compiled(x, 2.0, 1.0)[0] == band(x, 2.0, 1.0)


@pytest.mark.parametrize("lowest", [0.0, 0.5, 2.3, -2.3, 3.999999, 2.0**52 - 0.5, 2.0**53,
                                    2.0**53 + 2, 2.0**64, 1e300])
def test_the_level_always_moves_past_the_lowest(lowest):
    up = raise_level(-np.inf, lowest)
    assert up > lowest and _compiled(lowest, -np.inf, -np.inf)[1] == up
    if abs(lowest) < 2.0**52:
        assert up == math.floor(lowest) + 1.0
    assert raise_level(up + 5.0, lowest) == up + 5.0  # never below the current level


def test_sssp_finishes_with_a_delta_far_below_its_distances(backend):
    """Priorities beyond 2**53 (distance / delta): the level still moves, the run ends."""
    G = gunpy.Graph.from_edges([0, 1, 2, 0], [1, 2, 3, 3], weights=[3e9, 5e9, 7e9, 2e10],
                               num_vertices=5)
    r = gunpy.sssp(G, 0, delta=1e-8, backend=backend)
    assert r.distance.tolist() == [0.0, 3e9, 8e9, 1.5e10, np.inf]
