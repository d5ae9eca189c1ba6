"""Triangle counting: orient every edge from low to high rank, then intersect neighbour lists.

Gunrock section 5.1.6 (triangle counting by segmented intersection) and the
"forward" algorithm of Schank and Wagner, in three steps:

1. the undirected simple graph: self-loops ignored, a directed graph's edges
   taken in both directions (``u - v`` when ``u -> v`` or ``v -> u``), repeated
   edges counted once, exactly as networkx's ``triangles`` sees a graph;
2. orientation: each undirected edge is kept once, from the end of lower rank
   to the end of higher rank, rank being ``(degree, id)``. Every triangle
   ``a < b < c`` (by rank) then has exactly one oriented edge ``a -> b`` whose
   ends share the out-neighbour ``c``, and high-degree hubs keep short out-lists;
3. :func:`gunpy.operators.intersect` over the oriented graph with itself as
   ``left`` and ``right``: each match ``(a -> b, c)`` is one triangle, and adds
   one to the counts of ``a``, ``b`` and ``c`` (atomic adds: many edges share a
   vertex). :func:`triangle_count` skips the per-vertex counts and takes the
   operator's match count.

Where ranking by id is as good (GAP's rule, :func:`skewed`: no few hubs) and the
graph is already that simple undirected graph with sorted rows, steps 1-2 are
skipped: the intersection reads each list's part below the edge's lower end in place
(``intersect(..., lower=True)``), so a road network's or a mesh's first call
builds nothing.
"""

import time
from collections import namedtuple

import numpy as np

from gunpy import Enactor, Functor, Graph, Problem, atomics
from gunpy._csr import orient as _orient
from gunpy.operators import intersect
from gunpy.operators.intersect import sorted_rows
from gunpy.primitives._cache import per_graph
from gunpy.registry import Primitive, register_primitive, top_vertices
from gunpy.result import Result

__all__ = ["triangles", "triangle_count", "orient", "TrianglesResult", "TrianglesProblem",
           "TrianglesEnactor"]

TrianglesData = namedtuple("TrianglesData", "triangles")


class TrianglesFunctor(Functor):
    @staticmethod
    def apply_intersection(src, dst, edge, common, src_edge, dst_edge, data):
        # atomic adds: every oriented edge at a vertex may find a triangle at once
        atomics.add(data.triangles, src, 1)
        atomics.add(data.triangles, dst, 1)
        atomics.add(data.triangles, common, 1)


class CountFunctor(Functor):
    """No hooks: the operator's match count is the triangle count."""


@per_graph
def orient(G):
    """The simple undirected graph of ``G`` with each edge once, from its lower end to its
    higher: by (degree, id) where the degrees are skewed (:func:`skewed`), else by id.

    A directed :class:`gunpy.Graph` with sorted neighbour lists; cached per graph.
    Either order finds each triangle once; ordering by degree keeps a hub's out-list
    short, and ordering by id keeps each row's last columns, which a graph with even
    degrees (a road network, a mesh) gets by copying (GAP's rule).
    """
    n = G.num_vertices
    ro, ci = G.row_offsets, G.column_indices
    oriented = None if G.directed else _orient(ro, ci, by_degree=skewed(ro))
    if oriented is None:
        # both directions, no self-loops, no repeats, sorted rows
        src = np.repeat(np.arange(n, dtype=ci.dtype), G.out_degrees())
        U = Graph.from_edges(src, ci, num_vertices=n, directed=False)
        oriented = _orient(U.row_offsets, U.column_indices, by_degree=skewed(U.row_offsets))
    offsets, cols = oriented
    return Graph(offsets, cols, directed=True, _trusted=True)  # built here, valid


def in_place(G):
    """Whether ``G`` is counted as it is, by id (``intersect(..., lower=True)``), rather
    than through :func:`orient`: an undirected graph whose rows are strictly increasing
    (no repeated edges; self-loops are skipped) and whose degrees are not skewed."""
    return not G.directed and not skewed(G.row_offsets) and sorted_rows(G) == 2


def skewed(row_offsets, samples=1000):
    """GAP's test for ordering by degree (``WorthRelabelling``): at least 10 undirected
    edges a vertex on average, and a sample of degrees whose mean is over 1.3 times its
    median (a few hubs). ``row_offsets``: an undirected graph's (each edge stored twice)."""
    n = row_offsets.shape[0] - 1
    if n == 0 or (row_offsets[-1] // 2) // n < 10:
        return False
    picks = np.random.default_rng(0).integers(0, n, min(samples, n))
    degrees = np.sort(row_offsets[picks + 1] - row_offsets[picks])
    return degrees.mean() / 1.3 > degrees[degrees.shape[0] // 2]


class TrianglesProblem(Problem):
    """Per-vertex triangle counts over an oriented graph (see :func:`orient`), or the graph
    itself (:func:`in_place`); ``per_vertex=False``: no counts kept (the total only)."""

    Data = TrianglesData

    def init(self, per_vertex=True):
        # (reset fills them)
        self.triangles = self.vertex_array(np.int64) if per_vertex else \
            self.backend.empty(1, np.int64)

    def reset(self):
        self.backend.fill(self.triangles, 0)

    def extract(self):
        return self.to_host(self.triangles)


class IntersectEnactor(Enactor):
    """One iteration, whose :meth:`loop` runs :func:`gunpy.operators.intersect` along every
    edge (and what follows it): no frontier; the stats name the operator."""

    def prepare_frontier(self, frontier):
        pass  # every edge of the graph is visited: no frontier

    def is_converged(self, frontier):
        return self.iteration >= 1

    def finalize(self):
        # no frontier and no direction: the stats name the operator that ran
        self.stats.load_balance, self.stats.direction = "intersect", ""


class TrianglesEnactor(IntersectEnactor):
    """One iteration: intersect the two ends' out-lists along every oriented edge.

    Parameters
    ----------
    problem : TrianglesProblem
        Built on the oriented graph.
    per_vertex : bool, default True
        Count per vertex (atomic adds); False only counts the triangles.
    lower : bool, default False
        The problem's graph is the simple undirected graph itself, not an oriented
        one: each edge's lists are read below its lower end (see :func:`in_place`).
    """

    def __init__(self, problem, *, per_vertex=True, lower=False):
        super().__init__(problem)
        self.functor = TrianglesFunctor if per_vertex else CountFunctor
        self.lower = lower
        self.count = 0

    def loop(self, frontier):
        self.count = intersect(self.graph, self.functor, self.problem, lower=self.lower,
                               context=self.context)
        return frontier


class TrianglesResult(Result):
    """``triangles`` (int64: the triangles at each vertex) and ``count`` (the total)."""

    _fields = ("triangles",)
    _main = "triangles"
    _columns = {"triangles": "counts"}


def _enact(G, backend, per_vertex):
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    t0 = time.perf_counter()
    lower = in_place(G)
    O = G if lower else orient(G)
    orient_ms = (time.perf_counter() - t0) * 1e3
    problem = TrianglesProblem(O, backend=backend, per_vertex=per_vertex)
    problem.reset()
    enactor = TrianglesEnactor(problem, per_vertex=per_vertex, lower=lower)
    stats = enactor.enact()
    stats.extra["triangles"] = enactor.count
    stats.extra["ordering"] = "id, in place" if lower else "oriented"
    if not lower:
        stats.extra["oriented_edges"] = O.num_edges
    stats.extra["orient_ms"] = round(orient_ms, 3)
    return problem, enactor, stats


def triangles(G, *, backend="auto"):
    """The number of triangles at each vertex (networkx's ``triangles``).

    Parameters
    ----------
    G : gunpy.Graph
        Self-loops are ignored; a directed graph is taken as undirected
        (``u - v`` is an edge when ``u -> v`` or ``v -> u``); weights are ignored.
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    TrianglesResult
        ``triangles`` (int64, one count per vertex), ``count`` (the number of
        triangles, ``triangles.sum() // 3``) and ``stats`` (``edges_visited``:
        the neighbour-list entries the intersections read; ``extra`` holds the
        triangle count, the ordering (``"id, in place"`` or ``"oriented"``), the
        oriented graph's edges where one was built, and the time to choose or
        build it).
        ``to_dict()`` maps node labels to counts.

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`.
    ValueError
        An unknown backend.

    See Also
    --------
    networkx.triangles : the counts this must equal (``nx.triangles(G.to_undirected())``
        for a directed ``G``).
    triangle_count : only the total, without per-vertex counts.
    gunpy.operators.intersect : the operator underneath.

    Notes
    -----
    Each undirected edge is oriented from the end of lower ``(degree, id)``
    rank to the other, so every triangle is found exactly once, by the
    intersection along its lowest-ranked edge (Gunrock section 5.1.6). The
    oriented graph is built once per graph (two parallel passes on the host)
    and kept while ``G`` lives. A simple undirected graph without a few hubs
    (GAP's test) is read as it is, by id, with no oriented copy.

    References
    ----------
    .. [1] Y. Wang et al., "Gunrock: GPU Graph Analytics", ACM TOPC 4(1), 2017.
    .. [2] T. Schank and D. Wagner, "Finding, Counting and Listing all
       Triangles in Large Graphs", WEA 2005.

    Examples
    --------
    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 0, 1, 2, 2], [1, 2, 2, 3, 0], directed=False)
    >>> r = gunpy.triangles(G, backend="cpu")
    >>> r.triangles.tolist(), r.count
    ([1, 1, 1, 0], 1)
    >>> r.to_dict()
    {0: 1, 1: 1, 2: 1, 3: 0}
    """
    problem, enactor, stats = _enact(G, backend, True)
    result = TrianglesResult(G, stats, triangles=problem.triangles)  # on the device (CUDA)
    result.count = enactor.count
    return result


def triangle_count(G, *, backend="auto"):
    """The number of triangles in ``G`` (``sum(nx.triangles(G).values()) // 3``).

    Parameters
    ----------
    G : gunpy.Graph
        Self-loops are ignored; a directed graph is taken as undirected.
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    int

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`.
    ValueError
        An unknown backend.

    See Also
    --------
    networkx.triangles
    triangles : the per-vertex counts (with ``stats``).

    Examples
    --------
    >>> import gunpy, networkx as nx
    >>> K5 = gunpy.Graph.from_networkx(nx.complete_graph(5))
    >>> gunpy.triangle_count(K5, backend="cpu")
    10
    """
    return _enact(G, backend, False)[1].count


def _summary(r, G, source):
    return [f"{r.count} triangles", top_vertices(r.triangles, fmt="{}")]


register_primitive(Primitive(
    "triangles", triangles, fields=TrianglesResult._fields, summary=_summary,
    networkx=("triangles", "transitivity", "jaccard_coefficient", "adamic_adar_index",
              "resource_allocation_index", "common_neighbor_centrality",
              "square_clustering", "k_truss")))
