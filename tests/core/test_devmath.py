"""gunpy.devmath's sine and cosine against libm (math.sin / math.cos), within 2 ulp: in
Python, inside a functor run by the ``compute`` operator (CPU, the simulator), and
compiled for sm_90 with no local memory (PTX; the cubin mode also links and assembles)."""

import math
from collections import namedtuple

import numpy as np
import pytest

import gunpy
from gunpy import Functor, devmath
from gunpy import operators as ops

Angles = namedtuple("Angles", "x s c")


class SinCos(Functor):
    @staticmethod
    def apply_vertex(v, data):
        data.s[v] = devmath.sin(data.x[v])
        data.c[v] = devmath.cos(data.x[v])


def _angles(n, seed=0):
    """Awkward angles first (0, +-0, multiples of pi/4 and pi/2, the largest exact), then
    random ones spread over every magnitude up to devmath.MAX_EXACT."""
    special = [0.0, -0.0, 1e-300, -1e-8, math.pi / 4, math.pi / 2, math.pi, 1.5 * math.pi,
               2 * math.pi, -math.pi / 2, 1e4 * math.pi / 2, devmath.MAX_EXACT,
               -devmath.MAX_EXACT, 0.7853981633974483, 2.356194490192345]
    rng = np.random.default_rng(seed)
    mags = 10.0 ** rng.uniform(-6, math.log10(devmath.MAX_EXACT), n - len(special))
    x = np.concatenate([special, mags * rng.choice([-1.0, 1.0], mags.size)])
    return x


def _ulps(got, want):
    want = np.asarray(want)
    return np.abs(np.asarray(got) - want) / np.array([math.ulp(w) for w in want])


def _reference(x):
    return np.array([math.sin(a) for a in x]), np.array([math.cos(a) for a in x])


def _check(x, s, c):
    ref_s, ref_c = _reference(x)
    assert _ulps(s, ref_s).max() <= 2, x[np.argmax(_ulps(s, ref_s))]
    assert _ulps(c, ref_c).max() <= 2, x[np.argmax(_ulps(c, ref_c))]


def test_compiled_and_python_within_2_ulp_of_libm():
    x = _angles(4000)
    _check(x, [devmath.sin(a) for a in x], [devmath.cos(a) for a in x])
    _check(x[:300], [devmath.sin.py_func(a) for a in x[:300]],
           [devmath.cos.py_func(a) for a in x[:300]])
    for bad in (math.inf, -math.inf, math.nan):
        assert math.isnan(devmath.sin(bad)) and math.isnan(devmath.cos(bad))


def test_in_a_functor_through_compute(backend, small):
    x = _angles(64 if small else 4000, seed=1)
    G = gunpy.Graph.from_edges([], [], num_vertices=x.size)
    ctx = ops.Context(G, backend)
    b = ctx.backend
    data = Angles(b.asarray(x), b.zeros(x.size, np.float64), b.zeros(x.size, np.float64))
    ops.compute(G, None, SinCos, data, context=ctx)
    _check(x, b.to_host(data.s), b.to_host(data.c))


@pytest.mark.ptx
def test_compiles_without_local_memory(ptx_backend):
    n = 8
    G = gunpy.Graph.from_edges([], [], num_vertices=n)
    ctx = ops.Context(G, ptx_backend)
    data = Angles(*(np.zeros(n) for _ in range(3)))
    before = set(ptx_backend.compiled)
    ops.compute(G, None, SinCos, data, context=ctx)
    ptx = [text for key, text in ptx_backend.compiled.items() if key not in before]
    # libdevice's math.sin would leave its reduction table in local memory here
    assert ptx and all(".local" not in text for text in ptx)
