"""Geolocation (gunpy.geo) against a NumPy reference of Gunrock's rules, written here in
the kernels' arithmetic order (results agree to 1e-9)."""

import math

import numpy as np
import pytest

import gunpy
from gunpy.testing import graph_names, nasty_graphs
from doc_examples import check_docstring_examples, run_user_guide_section

PI = 3.141592653589793
# the functors' sine and cosine (libm's within 2 ulp; see gunpy/devmath.py), so that the
# reference takes the same steps
from gunpy.devmath import cos as _c, sin as _s  # noqa: E402
sin, cos = _s.py_func, _c.py_func


def _midpoint(a, b):
    p1_lat, p1_lon = a[0] * PI / 180, a[1] * PI / 180
    p2_lat, p2_lon = b[0] * PI / 180, b[1] * PI / 180
    bx = cos(p2_lat) * cos(p2_lon - p1_lon)
    by = cos(p2_lat) * sin(p2_lon - p1_lon)
    cx = cos(p1_lat) + bx
    lat = math.atan2(sin(p1_lat) + sin(p2_lat), math.sqrt(cx * cx + by * by))
    return lat * 180 / PI, (p1_lon + math.atan2(by, cx)) * 180 / PI


def _haversine(p, y):
    n_lat, m_lat, m_lon = p[0] * PI / 180, y[0] * PI / 180, y[1] * PI / 180
    s1 = sin((m_lat - n_lat) / 2)
    s2 = sin((m_lon - p[1] * PI / 180) / 2)
    a = s1 * s1 + cos(n_lat) * cos(m_lat) * (s2 * s2)
    return 6371.0 * (2 * math.asin(math.sqrt(a)))


def _median(pts, spatial_iter, eps):
    """Weiszfeld from the mean, Vardi-Zhang's step on points (Gunrock's spatial_median)."""
    y = (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts))
    it = 0
    while True:
        it += 1
        d = [_haversine(p, y) for p in pts]
        dinv = [0.0 if x == 0 else 1.0 / x for x in d]
        dinvs = 0.0
        for x in dinv:
            dinvs += x
        zeros = sum(1 for x in d if x == 0)
        if zeros == len(pts):
            return y
        t_lat = t_lon = 0.0
        for w, p in zip(dinv, pts):
            t_lat += (w / dinvs) * p[0]
            t_lon += (w / dinvs) * p[1]
        if zeros == 0:
            n = (t_lat, t_lon)
        else:
            r_lat, r_lon = (t_lat - y[0]) * dinvs, (t_lon - y[1]) * dinvs
            r = math.sqrt(r_lat * r_lat + r_lon * r_lon)
            rinv = 0.0 if r == 0 else zeros / r
            n = (max(0.0, 1 - rinv) * t_lat + min(1.0, rinv) * y[0],
                 max(0.0, 1 - rinv) * t_lon + min(1.0, rinv) * y[1])
        step = math.sqrt((y[0] - n[0]) ** 2 + (y[1] - n[1]) ** 2)
        y = n
        if step < eps or it > spatial_iter:
            return y


def reference(G, lat, lon, max_iter=3, spatial_iter=1000, eps=1e-3):
    lat, lon = np.array(lat, dtype=float), np.array(lon, dtype=float)
    unknown = np.isnan(lat) | np.isnan(lon)
    lat[unknown] = lon[unknown] = np.nan
    ro, ci = G.row_offsets, G.column_indices
    for _ in range(max_iter):
        new_lat, new_lon = lat.copy(), lon.copy()
        for v in np.flatnonzero(np.isnan(lat)):
            pts = [(lat[u], lon[u]) for u in ci[ro[v]:ro[v + 1]] if not np.isnan(lat[u])]
            if len(pts) == 1:
                new_lat[v], new_lon[v] = pts[0]
            elif len(pts) == 2:
                new_lat[v], new_lon[v] = _midpoint(*pts)
            elif len(pts) > 2:
                new_lat[v], new_lon[v] = _median(pts, spatial_iter, eps)
        lat, lon = new_lat, new_lon
    return lat, lon


def _check(G, lat, lon, backend, **kw):
    r = gunpy.geo(G, lat, lon, backend=backend, **kw)
    e_lat, e_lon = reference(G, lat, lon, **kw)
    np.testing.assert_allclose(r.latitude, e_lat, rtol=0, atol=1e-9, equal_nan=True)
    np.testing.assert_allclose(r.longitude, e_lon, rtol=0, atol=1e-9, equal_nan=True)
    assert r.latitude.dtype == r.longitude.dtype == np.float64
    return r


@pytest.mark.parametrize("name", graph_names(nasty_graphs(small=True)))
def test_nasty_graphs_equal_reference(backend, small, name):
    G = nasty_graphs(small=small)[name]
    for known, seed in ((0.5, 1), (0.2, 2))[:1 if small else 2]:
        lat, lon = gunpy.primitives.geo.random_locations(G, known=known, seed=seed)
        _check(G, lat, lon, backend, max_iter=3)


def test_every_rule_and_the_rounds(backend):
    """One neighbour, two (midpoint, order kept), three with the mean on a point (the
    Vardi-Zhang step), all on one point, none; a path filled one vertex a round."""
    nan = np.nan
    # 0: leaves 1 (one) ; 2: leaves 3, 4 (two); 5: leaves 6, 7, 8 (mean on 7);
    # 9: leaves 10, 11, 12 all at one point; 13: no located neighbour
    src = [0, 2, 2, 5, 5, 5, 9, 9, 9, 13]
    dst = [1, 3, 4, 6, 7, 8, 10, 11, 12, 14]
    G = gunpy.Graph.from_edges(src, dst, directed=False)
    lat = [nan, 10, nan, 10, 20, nan, 0, 0, 0, nan, 5, 5, 5, nan, nan]
    lon = [nan, 20, nan, 30, 40, nan, -1, 0, 1, nan, 5, 5, 5, nan, nan]
    lat_in = np.array(lat, dtype=float)
    r = _check(G, lat_in, lon, backend)
    assert np.isnan(lat_in[0])  # the caller's array untouched
    assert (r.latitude[0], r.longitude[0]) == (10.0, 20.0)
    assert abs(r.latitude[5]) < 1e-12 and abs(r.longitude[5]) < 1e-12
    assert (r.latitude[9], r.longitude[9]) == (5.0, 5.0)
    assert np.isnan(r.latitude[13]) and r.stats.extra["unlocated"] == 2
    P = gunpy.Graph.from_edges(np.arange(7), np.arange(1, 8), directed=False)
    lat = [1.0] + [nan] * 7
    for rounds in (0, 1, 3, 10):
        r = _check(P, lat, lat, backend, max_iter=rounds)
        assert np.count_nonzero(~np.isnan(r.latitude)) == 1 + min(rounds, 7)
    assert r.stats.iterations == 7  # no round past the last prediction
    D = gunpy.Graph.from_edges([0, 1], [1, 2])  # directed: out-neighbours only
    r = _check(D, [nan, nan, 3.0], [nan, nan, 4.0], backend)
    assert r.latitude.tolist() == [3.0, 3.0, 3.0] and r.stats.iterations == 2


def test_datasets_and_rmat_equal_reference():
    for G in (gunpy.datasets.load("karate"), gunpy.generators.rmat(8, 8, seed=3)):
        lat, lon = gunpy.primitives.geo.random_locations(G, known=0.3, seed=4)
        r = _check(G, lat, lon, "cpu", max_iter=5, spatial_iter=50)
        assert r.stats.iterations >= 1


def test_errors_and_registry(backend):
    G = gunpy.Graph.from_edges([0, 1], [1, 2], directed=False)
    with pytest.raises(ValueError, match="one value per vertex"):
        gunpy.geo(G, [0.0, 1.0], [0.0, 1.0, 2.0], backend=backend)
    with pytest.raises(ValueError, match="infinite"):
        gunpy.geo(G, [0.0, np.inf, 1.0], [0.0, 1.0, 2.0], backend=backend)
    with pytest.raises(ValueError, match=r"\[-90, 90\]"):
        gunpy.geo(G, [0.0, 91.0, 1.0], [0.0, 1.0, 2.0], backend=backend)
    with pytest.raises(ValueError, match="both"):
        gunpy.geo(G, [0.0, 1.0, 2.0], backend=backend)
    with pytest.raises(TypeError, match="numbers"):
        gunpy.geo(G, ["a", "b", "c"], [0.0, 1.0, 2.0], backend=backend)
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.geo(G.to_scipy(), [0.0] * 3, [0.0] * 3)
    from gunpy.registry import primitive
    spec = primitive("geo")
    assert spec.function is gunpy.geo
    r = spec.call(gunpy.datasets.load("karate"), backend=backend)  # gunpy run geo's call
    lat, lon = gunpy.primitives.geo.random_locations(gunpy.datasets.load("karate"))
    assert np.count_nonzero(np.isnan(r.latitude)) < np.count_nonzero(np.isnan(lat))


@pytest.mark.ptx
def test_geo_compiles_to_ptx(ptx_backend):
    G = nasty_graphs(small=True)["preferential_hubs"]
    lat, lon = gunpy.primitives.geo.random_locations(G)
    gunpy.geo(G, lat, lon, backend=ptx_backend)
    names = " ".join(ptx_backend.kernel_names())
    assert "compute" in names and "flag" in names, names  # the computes, the filter


def test_docstring_examples():
    check_docstring_examples("gunpy.primitives.geo", 4)


def test_user_guide_geo_section_runs():
    run_user_guide_section("## Geolocation", 5)
