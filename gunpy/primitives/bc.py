"""Betweenness centrality: Brandes's two phases on every source.

Gunrock section 5.1.3. The forward phase is a BFS that also counts shortest
paths: when ``src`` reaches ``dst`` one level down, ``sigma[dst] += sigma[src]``
(atomic add: many parents). It is direction-optimised like BFS, but pulls
without early exit: an unvisited vertex adds the path counts of *all* its
visited in-neighbours, which (operand reuse) are exactly its parents one level
up. Its thin push levels run fused, many to a call, as BFS's do
(:meth:`~gunpy.Enactor.advance_filter`), so no level is saved on the way down;
instead the vertices are then grouped by depth, one stored frontier per level
(the output-frontier storage of section 4.4.3, filled by one counting sort:
:func:`gunpy.operators.reverse_levels.group`). The backward phase walks those
levels deepest first without a filter, many to a call
(:func:`gunpy.operators.reverse_levels`): a neighbor-reduce over each level's
out-edges gathers ``delta[v] = sum of sigma[v] / sigma[w] * (1 + delta[w])``
over the successors ``w`` one level down (one writer per vertex, no atomics), and
in the same pass, once ``delta[v]`` is final, adds it to ``bc[v]`` (``apply_vertex``;
the source, on level 0, is never walked).
"""
from collections import namedtuple

import numpy as np

from gunpy import INVALID, Enactor, Functor, Problem, atomics
from gunpy import operators as ops
from gunpy._inputs import few_to_host
from gunpy.enactor import DirectionPolicy
from gunpy.frontier import FrontierStore
from gunpy.operators import reverse_levels
from gunpy.progress import bar
from gunpy.registry import Option, Primitive, register_primitive, top_vertices
from gunpy.result import Result

__all__ = ["bc", "BCResult", "BCProblem", "BCEnactor", "BCForwardFunctor", "BCBackwardFunctor"]

BCData = namedtuple("BCData", "depth sigma dependency centrality source")


class BCForwardFunctor(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        level = data.depth[src] + 1
        old = atomics.cas(data.depth, dst, INVALID, level)
        if old == INVALID or old == level:
            # dst is one level down: every such parent adds its path count
            atomics.add(data.sigma, dst, data.sigma[src])
        return old == INVALID


class BCBackwardFunctor(Functor):
    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        if data.depth[dst] == data.depth[src] + 1:
            return data.sigma[src] / data.sigma[dst] * (1.0 + data.dependency[dst])
        return 0.0

    @staticmethod
    def apply_vertex(v, data):
        if v != data.source:
            data.centrality[v] += data.dependency[v]


class BCProblem(Problem):
    Data = BCData

    def init(self):
        self.depth = self.vertex_array(np.int32)
        self.sigma = self.vertex_array(np.float64)
        self.dependency = self.vertex_array(np.float64)
        self.centrality = self.vertex_array(np.float64, fill=0.0)

    def reset(self, source):
        self.source = self.check_source(source)
        self.backend.fill(self.depth, INVALID)
        self.backend.fill(self.sigma, 0.0)
        self.backend.fill(self.dependency, 0.0)
        self.backend.write(self.depth, self.source, 0)
        self.backend.write(self.sigma, self.source, 1.0)

    @property
    def delta(self):
        """Deprecated (goes in gunpy 0.3): :attr:`dependency`, Brandes's ``delta``."""
        import warnings
        warnings.warn("BCProblem.delta is deprecated and goes in gunpy 0.3: it is "
                      "BCProblem.dependency", DeprecationWarning, stacklevel=2)
        return self.dependency

    def extract(self):
        return self.to_host(self.centrality)


#: Beamer's ``alpha`` for BC's forward phase (BFS's is 15): a pull without early exit
#: examines every in-edge of every unvisited vertex, so it pays only when the frontier's
#: out-edges are a good part of those (delaunay_n16: no pull level, 786 K edges a source
#: instead of 930 K; rmat18 pulls the same levels as with 15)
PULL_ALPHA = 4.0


class BCEnactor(Enactor):
    """Brandes's two phases from the problem's source, adding to its ``centrality``.

    The forward phase is :meth:`~gunpy.Enactor.advance_filter` (thin levels run
    fused, many to a call); then the vertices are grouped by depth, one stored
    frontier per level (:func:`gunpy.operators.reverse_levels.group`), and the
    backward phase walks those levels deepest first, many to a call
    (:func:`gunpy.operators.reverse_levels`).

    Parameters
    ----------
    problem : BCProblem
        Reset with a source before each :meth:`enact`; the centralities of
        successive runs add up (unscaled: see :func:`bc` for networkx's scaling).
    direction : {"auto", "push", "pull"}, default "auto"
        Forward phase traversal direction (pull gathers from all parents).
    load_balance : {"auto", "thread_mapped", "twc", "merge_path"}, default "auto"
    direction_policy : DirectionPolicy, optional
        Default: Beamer's rule with ``alpha`` :data:`PULL_ALPHA`.
    **kw
        Other :class:`gunpy.Enactor` options (``auto_threshold``, ...).
    """

    def __init__(self, problem, *, direction="auto", load_balance="auto", direction_policy=None,
                 **kw):
        super().__init__(problem, direction=direction, load_balance=load_balance,
                         direction_policy=direction_policy or DirectionPolicy(alpha=PULL_ALPHA),
                         **kw)
        #: the forward phase's levels, one stored frontier per depth (kept for later runs)
        self.levels = self.context.kept(
            "bc.levels", lambda: FrontierStore(self.backend, self.num_vertices))

    def prepare_frontier(self, frontier):
        frontier.push(self.problem.source)
        self.phase = "forward"

    def loop(self, frontier):
        if self.phase == "forward":
            # an unvisited vertex gathers the path counts of *all* its parents: a pull
            # never stops at the first
            return self.advance_filter(frontier, BCForwardFunctor, early_exit=False)
        if self.phase == "group":  # every depth of the forward phase, a frontier each
            reverse_levels.run_group(self.context, self.problem.depth, self.depths, self.levels)
            self.context.log(strategy="group")
            self.phase = "backward"
            return frontier
        # each vertex's dependency, then (apply_vertex, in the same pass) its centrality
        self.level -= reverse_levels.run(
            self.context, self.levels, *self._operands(BCBackwardFunctor),
            self.problem.dependency, self.level, 1, "out", "sum", True)
        return frontier

    def is_converged(self, frontier):
        if self.phase == "forward" and super().is_converged(frontier):
            # depths 0..iteration-1 were reached; the deepest has no successors: the
            # backward phase starts one above it
            self.depths = self.iteration
            self.level = self.depths - 2
            self.phase = "group"
        return self.phase != "forward" and self.level < 1

class BCResult(Result):
    """``centrality`` (float64), as networkx's betweenness_centrality."""

    _fields = ("centrality",)
    _main = "centrality"
    _columns = {"centrality": "betweenness_centrality"}


#: the rescale's data: the centrality (scaled in place) and the factor
ScaleData = namedtuple("ScaleData", "centrality factor")


class Scale(Functor):
    """Multiply each vertex's centrality by ``factor``, where it is (no copy to the host)."""

    @staticmethod
    def apply_vertex(v, data):
        data.centrality[v] = data.centrality[v] * data.factor


def _scale(n, *, normalized, directed):
    """networkx's ``_rescale`` factor for ``endpoints=False`` and no sampling, or None (no
    scaling). To the bit: a product with networkx's scale (``x * (1 / d)`` may differ
    from ``x / d`` in the last bit, and networkx's own tests compare BC with BC-subset
    exactly)."""
    if n - 1 < 2:
        return None
    if normalized:
        return 1 / ((n - 1) * (n - 2))
    return 0.5 if not directed else None


def bc(G, sources=None, *, normalized=False, weighted=False, direction="auto",
       load_balance="auto", backend="auto", progress=False):
    """Betweenness centrality (Brandes), from every vertex or from a list of sources.

    Parameters
    ----------
    G : gunpy.Graph
        Edges count as unit length (weights ignored, as networkx's ``weight=None``)
        unless ``weighted``.
    sources : sequence of int, optional
        ``None``: all vertices (``nx.betweenness_centrality``). A list (or an array,
        in host or GPU memory): only paths from these sources
        (``nx.betweenness_centrality_subset`` with every vertex a target); repeats
        count twice, as in networkx.
    normalized : bool, default False
        Divide by ``(n-1)(n-2)``; otherwise undirected values are halved.
    weighted : bool, default False
        Shortest paths by the weights in ``G.values`` (networkx's ``weight="weight"``):
        SSSP's distances, then path counts and dependencies over the tight edges
        (:mod:`gunpy.primitives.bc_weighted`). An unweighted graph uses weight 1.
    direction : {"auto", "push", "pull"}, default "auto"
        Forward phase traversal direction (pull gathers from all parents); unweighted
        only.
    load_balance : {"auto", "thread_mapped", "twc", "merge_path"}, default "auto"
    backend : {"auto", "cuda", "cpu"}, default "auto"
    progress : bool or None, default False
        A bar of the sources done on standard error (``None``: only on a terminal;
        :mod:`gunpy.progress`).

    Returns
    -------
    BCResult
        ``centrality`` (float64) and ``stats`` (summed over sources).

    Raises
    ------
    IndexError
        A source is out of range.
    ValueError
        ``weighted`` and a weight that is zero, negative, infinite or NaN, or a
        ``direction`` other than "auto"; an unknown option.

    See Also
    --------
    networkx.betweenness_centrality, networkx.betweenness_centrality_subset

    Examples
    --------
    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 1], [1, 2], directed=False)
    >>> gunpy.bc(G, backend="cpu").centrality.tolist()
    [0.0, 1.0, 0.0]

    Weighted, the long edge 0-2 carries no shortest path:

    >>> G = gunpy.Graph.from_edges([0, 1, 0], [1, 2, 2], [1.0, 1.0, 5.0], directed=False)
    >>> gunpy.bc(G, weighted=True, backend="cpu").centrality.tolist()
    [0.0, 1.0, 0.0]
    """
    srcs = range(G.num_vertices) if sources is None else list(few_to_host("sources", sources))
    if weighted:
        if direction != "auto":
            raise ValueError(f"direction={direction!r}: weighted BC's forward phase is SSSP's "
                             "(push); direction applies to unweighted BC only")
        from gunpy.primitives.bc_weighted import WeightedBCEnactor, WeightedBCProblem
        problem = WeightedBCProblem(G, backend=backend)
        for s in srcs:
            problem.check_source(s)
        enactor = WeightedBCEnactor(problem, load_balance=load_balance)
    else:
        problem = BCProblem(G, backend=backend)
        for s in srcs:
            problem.check_source(s)
        enactor = BCEnactor(problem, load_balance=load_balance, direction=direction)
    total = None
    shown = bar(len(srcs), "bc", unit="source", enabled=progress)
    for s in srcs:
        problem.reset(s)
        st = enactor.enact()
        shown.update()
        if total is None:
            total = st
            total.per_iteration = []
        else:
            total.iterations += st.iterations
            total.edges_visited += st.edges_visited
            total.elapsed_ms += st.elapsed_ms
    shown.close()
    if total is None:
        from gunpy.result import Stats
        total = Stats(backend=problem.backend.name)
    total.extra["sources"] = len(srcs)
    factor = _scale(G.num_vertices, normalized=normalized, directed=G.directed)
    if factor is not None:
        ops.compute(G, None, Scale, ScaleData(problem.centrality, factor),
                    context=enactor.context)
    # a CUDA run's centrality stays on the device: the result copies it when first read
    return BCResult(G, total, centrality=problem.centrality)


def _summary(r, G, source):
    return [top_vertices(r.centrality)]


register_primitive(Primitive(
    "bc", bc, source="many", fields=BCResult._fields, summary=_summary,
    options=(Option("normalized", False, "normalise as networkx does"),
             Option("weighted", False, "shortest paths by edge weight (positive)"),
             Option("direction", "auto", "forward pass: push, pull or auto",
                    choices=("auto", "push", "pull")),
             Option("load_balance", "auto", "advance strategy")),
    networkx=("betweenness_centrality", "edge_betweenness_centrality")))
