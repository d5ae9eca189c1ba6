"""Geolocation: each vertex without a location takes the spatial centre of its located
neighbours, round by round (Gunrock's ``geo``).

A vertex is located when both its latitude and longitude are numbers (NaN marks
one without). Each round, every vertex still without a location looks at its
neighbours (its out-edges; both ways on an undirected graph) that had one after
the previous round (synchronous rounds):

* one located neighbour: its location;
* two: their midpoint on the sphere (the great circle's, first to second in
  neighbour order);
* more: their spatial median, the point whose summed haversine distance to
  them is least, by Weiszfeld's iterations from their mean (Vardi and Zhang's
  rule where the estimate sits on a point), until it moves less than ``eps``
  degrees or after ``spatial_iter`` iterations;
* none: still unknown (it may get one in a later round).

A vertex given a location keeps it. The rounds stop after ``max_iter`` or when
one predicts nothing new (every later round would be the same).

How: ``compute`` over the vertices still without a location, twice (the centre
of one or two neighbours, or their mean; then the median where there are more),
then a ``filter`` that writes the round's predictions and keeps the vertices
still without one. The functors read the graph's rows from their data (a
vertex's neighbours are its CSR row); per-edge inverse distances live in an
edge array, as in Gunrock.
"""

import math
from collections import namedtuple

import numpy as np

from gunpy import Enactor, Functor, Graph, Problem
from gunpy.devmath import cos as _cos, sin as _sin
from gunpy.registry import Option, Primitive, register_primitive
from gunpy.result import Result

__all__ = ["geo", "GeoResult", "GeoProblem", "GeoEnactor"]

GeoData = namedtuple("GeoData", "lat lon next_lat next_lon count dinv row_offsets "
                                "column_indices spatial_iter eps")

PI = 3.141592653589793
#: the earth's radius in km (haversine distances; Gunrock's)
RADIUS = 6371.0
#: the largest |longitude| accepted (degrees): well inside the range where
#: gunpy.devmath's sine and cosine are exact (libdevice's would put a local array on the
#: stack, which the cubin check refuses)
MAX_LONGITUDE = 360.0


class Unlocated(Functor):
    """Keep the vertices without a location."""

    @staticmethod
    def cond_vertex(v, data):
        return data.lat[v] != data.lat[v] or data.lon[v] != data.lon[v]


class Center(Functor):
    """One or two located neighbours: the location or the midpoint; more: their mean (the
    median's start); none: unknown. ``count``: how many were located."""

    @staticmethod
    def apply_vertex(v, data):
        count = 0
        a_lat = a_lon = b_lat = b_lon = 0.0
        s_lat = s_lon = 0.0
        for e in range(data.row_offsets[v], data.row_offsets[v + 1]):
            u = data.column_indices[e]
            la = data.lat[u]
            lo = data.lon[u]
            if la == la and lo == lo:
                if count == 0:
                    a_lat, a_lon = la, lo
                elif count == 1:
                    b_lat, b_lon = la, lo
                count += 1
                s_lat += la
                s_lon += lo
        data.count[v] = count
        if count == 0:
            data.next_lat[v] = math.nan
            data.next_lon[v] = math.nan
        elif count == 1:
            data.next_lat[v] = a_lat
            data.next_lon[v] = a_lon
        elif count == 2:
            # the great circle's midpoint, in radians, then back to degrees
            p1_lat = a_lat * PI / 180
            p1_lon = a_lon * PI / 180
            p2_lat = b_lat * PI / 180
            p2_lon = b_lon * PI / 180
            bx = _cos(p2_lat) * _cos(p2_lon - p1_lon)
            by = _cos(p2_lat) * _sin(p2_lon - p1_lon)
            cx = _cos(p1_lat) + bx
            mid_lat = math.atan2(_sin(p1_lat) + _sin(p2_lat), math.sqrt(cx * cx + by * by))
            mid_lon = p1_lon + math.atan2(by, cx)
            data.next_lat[v] = mid_lat * 180 / PI
            data.next_lon[v] = mid_lon * 180 / PI
        else:
            data.next_lat[v] = s_lat / count
            data.next_lon[v] = s_lon / count


class SpatialMedian(Functor):
    """Three or more located neighbours: Weiszfeld's iterations from their mean."""

    @staticmethod
    def apply_vertex(v, data):
        if data.count[v] < 3:
            return
        y_lat = data.next_lat[v]
        y_lon = data.next_lon[v]
        start, stop = data.row_offsets[v], data.row_offsets[v + 1]
        it = 0
        while True:
            it += 1
            # 1. inverse haversine distances to the estimate (0 for a point on it)
            dinvs = 0.0
            nonzeros = 0
            m_lat = y_lat * PI / 180
            m_lon = y_lon * PI / 180
            for e in range(start, stop):
                u = data.column_indices[e]
                la = data.lat[u]
                lo = data.lon[u]
                if la == la and lo == lo:
                    n_lat = la * PI / 180
                    s1 = _sin((m_lat - n_lat) / 2)
                    s2 = _sin((m_lon - lo * PI / 180) / 2)
                    a = s1 * s1 + _cos(n_lat) * _cos(m_lat) * (s2 * s2)
                    dist = RADIUS * (2 * math.asin(math.sqrt(a)))
                    dinv = 0.0 if dist == 0 else 1.0 / dist
                    data.dinv[e] = dinv
                    nonzeros += 1 if dist != 0 else 0
                    dinvs += dinv
            if nonzeros == 0:
                break  # every point is on the estimate: it is the median
            # 2. the weighted mean of the points
            t_lat = t_lon = 0.0
            length = 0
            for e in range(start, stop):
                u = data.column_indices[e]
                la = data.lat[u]
                lo = data.lon[u]
                if la == la and lo == lo:
                    w = data.dinv[e] / dinvs
                    t_lat += w * la
                    t_lon += w * lo
                    length += 1
            # 3. the next estimate (Vardi-Zhang where it sits on points)
            zeros = length - nonzeros
            if zeros == 0:
                n_lat, n_lon = t_lat, t_lon
            else:
                r_lat = (t_lat - y_lat) * dinvs
                r_lon = (t_lon - y_lon) * dinvs
                r = math.sqrt(r_lat * r_lat + r_lon * r_lon)
                rinv = 0.0 if r == 0 else zeros / r
                n_lat = max(0.0, 1 - rinv) * t_lat + min(1.0, rinv) * y_lat
                n_lon = max(0.0, 1 - rinv) * t_lon + min(1.0, rinv) * y_lon
            d_lat = y_lat - n_lat
            d_lon = y_lon - n_lon
            y_lat, y_lon = n_lat, n_lon
            if math.sqrt(d_lat * d_lat + d_lon * d_lon) < data.eps or it > data.spatial_iter:
                break
        data.next_lat[v] = y_lat
        data.next_lon[v] = y_lon


class Commit(Functor):
    """The round's prediction becomes the vertex's location; keep it while it has none."""

    @staticmethod
    def cond_vertex(v, data):
        la = data.next_lat[v]
        data.lat[v] = la
        data.lon[v] = data.next_lon[v]
        return la != la


class GeoProblem(Problem):
    """The locations (``lat``, ``lon``: degrees, NaN unknown), a round's predictions
    (``next_*``), located-neighbour counts and per-edge inverse distances."""

    Data = GeoData

    def init(self):
        self.lat = self.vertex_array(np.float64)
        self.lon = self.vertex_array(np.float64)
        self.next_lat = self.vertex_array(np.float64)
        self.next_lon = self.vertex_array(np.float64)
        self.count = self.vertex_array(np.int64)
        self.dinv = self.edge_array(np.float64, 0.0)
        dg = self.backend.graph(self.graph)
        self.row_offsets, self.column_indices = dg.row_offsets, dg.column_indices
        self.spatial_iter, self.eps = 1000, 1e-3

    def reset(self, latitude, longitude, spatial_iter=1000, eps=1e-3):
        """Copy the locations in (checked); NaN in either coordinate: no location."""
        lat, lon = (_coordinates(x, name, self.num_vertices)
                    for x, name in ((latitude, "latitude"), (longitude, "longitude")))
        unknown = np.isnan(lat) | np.isnan(lon)
        lat[unknown] = lon[unknown] = np.nan
        self.backend.copy_in(self.lat, 0, lat)
        self.backend.copy_in(self.lon, 0, lon)
        self.spatial_iter, self.eps = int(spatial_iter), float(eps)

    def extract(self):
        return self.take(self.lat), self.take(self.lon)


def _coordinates(x, name, n):
    try:
        a = np.array(x, dtype=np.float64)  # a copy: the caller's array is never touched
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of numbers") from None
    if a.shape != (n,):
        raise ValueError(f"{name} must have one value per vertex ({n}), got shape "
                         f"{np.shape(x)}")
    if np.isinf(a).any():
        raise ValueError(f"{name} holds an infinite value (NaN marks an unknown location)")
    bound = 90.0 if name == "latitude" else MAX_LONGITUDE
    if (np.abs(a[~np.isnan(a)]) > bound).any():
        raise ValueError(f"a {name} outside [-{bound:g}, {bound:g}] degrees")
    return a


class GeoEnactor(Enactor):
    """Rounds over the vertices still without a location: the centres, the medians, then
    the predictions written (a filter keeps the vertices still without one)."""

    def __init__(self, problem, *, max_iter=3):
        super().__init__(problem, max_iterations=max_iter)

    def prepare_frontier(self, frontier):
        # the unknown set's two buffers (filtered from one to the other), lent
        self.spare = [self.context.frontier(capacity=self.num_vertices) for _ in range(2)]
        self.unknown = self.filter(self.full_frontier(), Unlocated, out=self.spare[0])
        self.done = self.unknown.size == 0

    def loop(self, frontier):
        before = self.unknown.size
        self.compute(self.unknown, Center)
        self.compute(self.unknown, SpatialMedian)
        out = self.spare[1] if self.unknown is self.spare[0] else self.spare[0]
        self.unknown = self.filter(self.unknown, Commit, out=out)
        # a round that located nothing leaves every later round the same
        self.done = self.unknown.size in (0, before)
        return frontier

    def is_converged(self, frontier):
        return self.done or self.iteration >= self.max_iterations

    def finalize(self):
        self.stats.extra["unlocated"] = int(self.unknown.size)


class GeoResult(Result):
    """``latitude``, ``longitude`` (float64 degrees; NaN where still unknown)."""

    _fields = ("latitude", "longitude")
    _main = "latitude"
    _columns = {"latitude": "latitude", "longitude": "longitude"}


def random_locations(G, *, known=0.5, seed=0):
    """``(latitude, longitude)`` for a demonstration: a seeded random ``known`` share of
    the vertices placed uniformly on the sphere, the others NaN (what ``gunpy run geo``
    and ``geo(G)`` without locations use: half the vertices, seed 0)."""
    n = G.num_vertices
    rng = np.random.default_rng(seed)
    located = rng.random(n) < known
    lat = np.degrees(np.arcsin(rng.uniform(-1.0, 1.0, n)))
    lon = rng.uniform(-180.0, 180.0, n)
    lat[~located] = lon[~located] = np.nan
    return lat, lon


def geo(G, latitude=None, longitude=None, *, max_iter=3, spatial_iter=1000, eps=1e-3,
        backend="auto"):
    """Predict the locations of the vertices without one from their neighbours'
    (Gunrock's geolocation).

    Parameters
    ----------
    G : gunpy.Graph
        A vertex's neighbours are its out-neighbours (every neighbour on an
        undirected graph); weights are ignored.
    latitude, longitude : array_like of float, optional
        Degrees, one per vertex; NaN (in either) marks a vertex without a location.
        Never modified. Both None: :func:`random_locations` (half the vertices
        located at random, seed 0: what ``gunpy run geo`` runs).
    max_iter : int, default 3
        Rounds at most (each uses the previous round's locations).
    spatial_iter : int, default 1000
        Weiszfeld iterations at most per spatial median (Gunrock's ``spatial_iter``).
    eps : float, default 1e-3
        A median's iterations stop when the estimate moves less than this (degrees).
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    GeoResult
        ``latitude``, ``longitude`` (float64: the given locations, the predicted ones,
        NaN where none was found) and ``stats`` (``stats.extra["unlocated"]``: the
        vertices left without a location).

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`; coordinates that are not numbers.
    ValueError
        Coordinates not one per vertex, infinite, latitudes outside [-90, 90] or
        longitudes outside [-360, 360], only one of the two given, ``max_iter`` < 0; an
        unknown backend.

    Notes
    -----
    Each round a vertex without a location takes, from the neighbours located after
    the previous round: one's location; two's midpoint on the great circle (first to
    second in neighbour order); for more, their spatial median under haversine
    distances (an earth of radius 6371 km) by Weiszfeld's iterations from their mean,
    with Vardi and Zhang's step where the estimate sits on one of them (Gunrock's
    ``spatial_median``). Gunrock updates locations in place within a round; gunpy's
    rounds are synchronous, so the result does not depend on the threads.

    References
    ----------
    .. [1] Y. Vardi and C.-H. Zhang, "The multivariate L1-median and associated data
       depth", PNAS 97(4), 2000.
    .. [2] Gunrock, ``include/gunrock/algorithms/geo.hxx``.

    Examples
    --------
    A path ``0 - 1 - 2`` with its ends located: the middle takes their midpoint.

    >>> import numpy as np, gunpy
    >>> G = gunpy.Graph.from_edges([0, 1], [1, 2], directed=False)
    >>> r = gunpy.geo(G, [0.0, np.nan, 0.0], [10.0, np.nan, 20.0], backend="cpu")
    >>> r.latitude.tolist(), np.round(r.longitude, 9).tolist()
    ([0.0, 0.0, 0.0], [10.0, 15.0, 20.0])

    A star whose centre has four located leaves: the spatial median of the four.

    >>> S = gunpy.Graph.from_edges([0, 0, 0, 0], [1, 2, 3, 4], directed=False)
    >>> lat = [np.nan, 1.0, -1.0, 0.0, 0.0]
    >>> lon = [np.nan, 0.0, 0.0, 1.0, -1.0]
    >>> r = gunpy.geo(S, lat, lon, backend="cpu")
    >>> bool(abs(r.latitude[0]) < 1e-9 and abs(r.longitude[0]) < 1e-9)
    True
    """
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    if (latitude is None) != (longitude is None):
        raise ValueError("give both latitude and longitude, or neither")
    if latitude is None:
        latitude, longitude = random_locations(G)
    if int(max_iter) < 0 or int(spatial_iter) < 0:
        raise ValueError("max_iter and spatial_iter must be at least 0")
    problem = GeoProblem(G, backend=backend)
    problem.reset(latitude, longitude, spatial_iter, eps)
    enactor = GeoEnactor(problem, max_iter=int(max_iter))
    stats = enactor.enact()
    # a CUDA run's locations stay on the device: the result copies them when first read
    return GeoResult(G, stats, latitude=problem.lat, longitude=problem.lon)


def _summary(r, G, source):
    known = int(np.count_nonzero(~np.isnan(r.latitude)))
    return [f"{known} of {G.num_vertices} vertices located after "
            f"{r.stats.iterations} rounds ({r.stats.extra.get('unlocated', 0)} left unknown)",
            f"latitude[:5] {np.round(r.latitude[:5], 4).tolist()}",
            f"longitude[:5] {np.round(r.longitude[:5], 4).tolist()}"]


register_primitive(Primitive(
    "geo", geo, fields=GeoResult._fields, summary=_summary,
    options=(Option("max_iter", 3, "rounds at most"),
             Option("spatial_iter", 1000, "Weiszfeld iterations at most per median"))))
