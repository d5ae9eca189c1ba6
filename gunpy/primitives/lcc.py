"""Local clustering coefficient: how close each vertex's neighbourhood is to a clique.

LDBC Graphalytics' definition (its LCC kernel): ``N(v)`` is the set of ``v``'s
neighbours with direction ignored, each counted once (self-loops ignored);
``lcc(v)`` is the number of edges ``(u, w)`` with ``u`` and ``w`` in ``N(v)``
over ``|N(v)| (|N(v)| - 1)``, and 0 when ``|N(v)| <= 1``. On a directed graph
the edges between neighbours keep their direction (``u -> w`` and ``w -> u``
are two); on an undirected graph each counts both ways, so ``lcc`` is
networkx's ``clustering``.

Undirected graphs: ``lcc(v) = 2 t(v) / (d (d - 1))`` with ``t(v)`` the
triangles at ``v``, each found once (as :func:`gunpy.triangles` finds them) on
the graph ``R`` of :func:`downward`, every edge once from the end of higher
``(degree, id)`` rank to the lower (``O`` the other way):

1. :func:`gunpy.operators.intersect` along every edge ``c -> a`` of ``R``:
   ``c``'s row of ``R`` (its lower neighbours) against ``a``'s row of ``O``
   (its higher ones); each common ``b`` is the triangle ``a < b < c``. The
   operator writes each edge's number of triangles into its slot (``counts=``:
   they are ``c``'s and ``a``'s), and the hook adds one for ``b`` to the slot
   of the edge ``c -> b`` (one atomic a triangle, on a slot of ``c``'s row);
2. :func:`gunpy.operators.neighbor_reduce` over ``R``'s in-edges sums both
   slots (``v`` as ``a`` and as ``b``), then over its out-edges the counts
   (``v`` as ``c``); its apply step adds them, divides by the ordered pairs of
   ``N(v)`` (``d``: ``v``'s out- plus in-degree in ``R``) and returns the
   coefficient, whose sum over the vertices (``aggregates=1``) gives
   :attr:`LCCResult.average` in the same pass.

Directed graphs, two operators, as Gunrock's 1.x LCC does it:

1. :func:`gunpy.operators.intersect` along every edge ``v -> u`` of the
   undirected simple graph ``U``: ``N(v)`` (``v``'s row of ``U``) against
   ``u``'s out-neighbours in the directed simple graph ``D``; the common
   neighbours ``w`` are the edges ``u -> w`` inside ``N(v)``, and the operator
   writes their number into the edge's slot (``counts=``: no per-match hook);
2. :func:`gunpy.operators.neighbor_reduce` over ``U``'s out-edges sums each
   vertex's slots, and its apply step divides by ``|N(v)| (|N(v)| - 1)`` as above.
"""

from collections import namedtuple

import numpy as np

from gunpy import Functor, Graph, Problem, atomics
from gunpy import operators as ops
from gunpy.operators import intersect
from gunpy.primitives._cache import per_graph
from gunpy.primitives.triangles import IntersectEnactor, orient
from gunpy.registry import Primitive, register_primitive, top_vertices
from gunpy.result import Result

__all__ = ["lcc", "LCCResult", "LCCProblem", "LCCEnactor", "OrientedLCCProblem",
           "OrientedLCCEnactor", "neighbourhoods", "downward"]

LCCData = namedtuple("LCCData", "common offsets lcc")
OrientedLCCData = namedtuple("OrientedLCCData", "common middle into offsets in_offsets lcc")


class Middle(Functor):
    """A triangle ``a < b < c`` found along ``c -> a`` with common ``b``: one more for
    ``b`` on the edge ``c -> b`` (atomic: another edge of ``c`` may find it too)."""

    @staticmethod
    def apply_intersection(src, dst, edge, common, src_edge, dst_edge, data):
        atomics.add(data.middle, src_edge, 1)


class InTriangles(Functor):
    """``v``'s triangles as ``a`` (its in-edges' counts) and as ``b`` (their middles)."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return float(data.common[edge] + data.middle[edge])


class OrientedNormalise(Functor):
    """Sum ``v``'s triangles as ``c`` (its out-edges' counts), add the others, and divide
    by the ordered pairs of ``N(v)``: 2 t / (d (d - 1))."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return float(data.common[edge])

    @staticmethod
    def apply_vertex(v, data):
        d = float(data.offsets[v + 1] - data.offsets[v] + data.in_offsets[v + 1] -
                  data.in_offsets[v])  # |N(v)|: each edge at v is oriented once, one way
        x = 0.0
        if d > 1.0:
            x = 2.0 * (data.lcc[v] + data.into[v]) / (d * (d - 1.0))
        data.lcc[v] = x
        return (x,)


@per_graph
def downward(G):
    """``(R, O)``: ``O`` = :func:`gunpy.primitives.triangles.orient` of ``G`` (each edge of
    the undirected simple graph once, from lower to higher ``(degree, id)``) and ``R``
    its reverse (from higher to lower), both with sorted rows. Built once per graph."""
    O = orient(G)
    n, ci = O.num_vertices, O.column_indices
    src = np.repeat(np.arange(n, dtype=ci.dtype), O.out_degrees())
    order = np.argsort(ci, kind="stable")  # rows of R by head, each in tail order
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(ci, minlength=n), out=offsets[1:])
    return Graph(offsets, src[order], directed=True), O


class Pairs(Functor):
    """No hooks: the intersection only counts each edge's common neighbours."""


class Normalise(Functor):
    """Sum the edge slots of ``v``'s row (its neighbours' edges inside ``N(v)``), then
    divide by the ordered pairs of ``N(v)``."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return float(data.common[edge])

    @staticmethod
    def apply_vertex(v, data):
        d = float(data.offsets[v + 1] - data.offsets[v])  # |N(v)|: v's row of U
        x = 0.0
        if d > 1.0:
            x = data.lcc[v] / (d * (d - 1.0))
        data.lcc[v] = x
        return (x,)


@per_graph
def neighbourhoods(G):
    """``(U, D)``: ``G``'s undirected simple graph (``N(v)`` as ``v``'s row) and its
    directed simple graph (``U`` itself when ``G`` is undirected); no self-loops, no
    repeated edges, sorted rows. Built once per graph."""
    n = G.num_vertices
    src = np.repeat(np.arange(n, dtype=G.column_indices.dtype), G.out_degrees())
    U = Graph.from_edges(src, G.column_indices, num_vertices=n, directed=False)
    D = Graph.from_edges(src, G.column_indices, num_vertices=n, directed=True) \
        if G.directed else U
    return U, D


class LCCProblem(Problem):
    """Built on ``U`` (see :func:`neighbourhoods`): an edge slot each, a coefficient a vertex."""

    Data = LCCData

    def init(self):
        self.common = self.edge_array(np.int64)
        self.lcc = self.vertex_array(np.float64)
        self.offsets = self.backend.graph(self.graph).row_offsets

    def reset(self, directed_graph):
        self.directed_graph = directed_graph  # D: the edges counted between neighbours

    def extract(self):
        return self.to_host(self.lcc)


class LCCEnactor(IntersectEnactor):
    """One iteration: the intersections, then the normalising neighbour reduction."""

    def __init__(self, problem):
        super().__init__(problem)
        self.total = 0.0

    def loop(self, frontier):
        p = self.problem
        intersect(self.graph, Pairs, p, right=p.directed_graph, counts=p.common,
                  context=self.context)
        self.total, = ops.neighbor_reduce(self.graph, None, Normalise, p, p.lcc, edges="out",
                                          aggregates=1, context=self.context)
        return frontier


class OrientedLCCProblem(Problem):
    """Built on ``R`` (see :func:`downward`): two edge slots each (a triangle count, a
    middle count) and per vertex its in-edges' sum and its coefficient."""

    Data = OrientedLCCData

    def init(self):
        self.common = self.edge_array(np.int64)
        self.middle = self.edge_array(np.int64, fill=0)
        self.into = self.vertex_array(np.float64)
        self.lcc = self.vertex_array(np.float64)
        dg = self.backend.graph(self.graph, csc=True)
        self.offsets, self.in_offsets = dg.row_offsets, dg.in_offsets

    def reset(self, upward):
        self.upward = upward  # O: the lists each edge c -> a looks up a's out-list in
        self.backend.fill(self.middle, 0)

    def extract(self):
        return self.to_host(self.lcc)


class OrientedLCCEnactor(LCCEnactor):
    """One iteration: the intersections, the in-edges' sums, then the normalising
    reduction over the out-edges."""

    def loop(self, frontier):
        p = self.problem
        intersect(self.graph, Middle, p, right=p.upward, counts=p.common, context=self.context)
        ops.neighbor_reduce(self.graph, None, InTriangles, p, p.into, edges="in",
                            context=self.context)
        self.total, = ops.neighbor_reduce(self.graph, None, OrientedNormalise, p, p.lcc,
                                          edges="out", aggregates=1, context=self.context)
        return frontier


class LCCResult(Result):
    """``lcc`` (float64, one coefficient per vertex) and ``average`` (their mean)."""

    _fields = ("lcc",)
    _main = "lcc"
    _columns = {"lcc": "clustering"}


def lcc(G, *, backend="auto"):
    """The local clustering coefficient of every vertex (LDBC Graphalytics' LCC).

    Parameters
    ----------
    G : gunpy.Graph
        Directed or undirected; weights are ignored, and so are self-loops and
        repeated edges.
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    LCCResult
        ``lcc`` (float64: for each vertex ``v``, the edges between its neighbours
        ``N(v)`` over ``|N(v)| (|N(v)| - 1)``, 0 when ``|N(v)| <= 1``), ``average``
        (their mean over all vertices, networkx's ``average_clustering``; NaN for
        a graph without vertices) and ``stats``. ``to_dict()`` maps node labels to
        coefficients.

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`.
    ValueError
        An unknown backend.

    See Also
    --------
    networkx.clustering : equal on undirected graphs.
    networkx.average_clustering : equal to ``average`` on undirected graphs.
    triangles : the triangles at each vertex.

    Notes
    -----
    ``N(v)`` ignores direction and counts each neighbour once, while on a
    directed graph an edge between two neighbours counts in each direction it
    exists (LDBC's definition; networkx's directed ``clustering`` differs: it
    counts the directed triangles through ``v``). Cost: on an undirected graph,
    triangle counting's (each triangle found once, along its lowest edge in
    ``(degree, id)`` order; :func:`triangles`); on a directed one, an
    intersection of two neighbour lists per stored edge of the undirected
    simple graph.

    References
    ----------
    .. [1] A. Iosup et al., "LDBC Graphalytics: A Benchmark for Large-Scale Graph
       Analysis on Parallel and Distributed Platforms", PVLDB 9(13), 2016;
       the specification's section 2.3.5.

    Examples
    --------
    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 0, 1, 2], [1, 2, 2, 3], directed=False)
    >>> r = gunpy.lcc(G, backend="cpu")
    >>> r.lcc.round(4).tolist(), round(r.average, 4)
    ([1.0, 1.0, 0.3333, 0.0], 0.5833)
    >>> D = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0])      # a directed 3-cycle
    >>> gunpy.lcc(D, backend="cpu").lcc.tolist()
    [0.5, 0.5, 0.5]
    """
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    if G.directed:
        U, D = neighbourhoods(G)
        problem = LCCProblem(U, backend=backend)
        problem.reset(D)
        enactor = LCCEnactor(problem)
    else:
        R, O = downward(G)
        problem = OrientedLCCProblem(R, backend=backend)
        problem.reset(O)
        enactor = OrientedLCCEnactor(problem)
    stats = enactor.enact()
    result = LCCResult(G, stats, lcc=problem.lcc)  # a CUDA run's stays on the device
    result.average = enactor.total / G.num_vertices if G.num_vertices else float("nan")
    return result


def _summary(r, G, source):
    return [f"average clustering coefficient {r.average:.6g}", top_vertices(r.lcc)]


register_primitive(Primitive(
    "lcc", lcc, fields=LCCResult._fields, summary=_summary,
    networkx=("clustering", "average_clustering")))
