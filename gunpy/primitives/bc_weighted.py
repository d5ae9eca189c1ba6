"""Weighted betweenness centrality: Brandes's two phases over shortest-path distances.

Brandes (2001), section 5 (the weighted variant; networkx's
``_single_source_dijkstra_path_basic``). The forward phase is SSSP's
(:class:`~gunpy.primitives.sssp.SSSPEnactor`: delta-stepping over the near/far
queue) without its parents. The shortest-path DAG is then the *tight* edges,
``distance[u] + weight == distance[v]``, compared exactly: networkx's Dijkstra
and gunpy's relaxation both settle on the fixpoint ``distance[v] = min over u of
fl(distance[u] + weight)``, so both see the same tight edges (with positive
weights, from a smaller distance to a larger one: a DAG). Then:

1. each vertex's number of tight in-edges (a neighbor-reduce over in-edges);
2. the DAG walked level by level from the source, Kahn's way: an advance over
   the frontier's tight out-edges adds the path counts (``sigma[dst] +=
   sigma[src]``, atomic) and counts the in-edges down; the last one to arrive
   puts ``dst`` in the next frontier, one level below its deepest tight parent
   (thin levels fused, many to a call, as BC's BFS levels are). A level is a
   set of vertices none of which is tight to another, as BFS levels are for
   unit weights, but there are only as many as the longest chain of tight
   edges has edges, not one per distinct distance;
3. the levels grouped by depth (:func:`gunpy.operators.reverse_levels.group`)
   and walked deepest first (:func:`gunpy.operators.reverse_levels`):
   ``delta[v]`` = the sum of ``sigma[v] / sigma[w] * (1 + delta[w])`` over the
   tight out-edges ``v -> w``, and in the same pass ``bc[v] += delta[v]``
   (``apply_vertex``), exactly as the unweighted backward phase with tightness in
   place of ``depth + 1``.
"""
from collections import namedtuple

import numpy as np

from gunpy import INVALID, atomics
from gunpy import operators as ops
from gunpy.frontier import FrontierStore
from gunpy.functor import Functor
from gunpy.operators import reverse_levels
from gunpy.primitives.bc import BCBackwardFunctor
from gunpy.primitives.sssp import SSSPData, SSSPEnactor, SSSPProblem
from gunpy.problem import weight_summary

__all__ = ["WeightedBCProblem", "WeightedBCEnactor", "TightInDegreeFunctor",
           "WeightedBCForwardFunctor", "WeightedBCBackwardFunctor", "check_positive_weights"]

WeightedBCData = namedtuple("WeightedBCData", SSSPData._fields + (
    "depth", "pending", "sigma", "dependency", "centrality"))


class TightInDegreeFunctor(Functor):
    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        # over dst's in-edges; an unreached dst (inf) has none (inf + weight == inf)
        d = data.distance[dst]
        if d < np.inf and data.distance[src] + weight == d:
            return 1.0
        return 0.0


class WeightedBCForwardFunctor(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        if data.distance[src] + weight != data.distance[dst]:
            return False
        atomics.add(data.sigma, dst, data.sigma[src])
        # the last tight in-edge to arrive: every parent's path count is in (the others'
        # frontiers came first), dst goes one level down
        return atomics.add(data.pending, dst, -1.0) == 1.0

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        data.depth[dst] = data.depth[src] + 1


class WeightedBCBackwardFunctor(BCBackwardFunctor):
    """:class:`~gunpy.primitives.bc.BCBackwardFunctor` over the tight edges (its apply step:
    ``bc[v] += dependency[v]``)."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        # an unreached dst has distance inf: never tight from a reached src
        if data.distance[src] + weight == data.distance[dst]:
            return data.sigma[src] / data.sigma[dst] * (1.0 + data.dependency[dst])
        return 0.0


def check_positive_weights(G):
    """Raise ``ValueError`` naming the first edge whose weight is not positive and finite
    (zero weights would make tight edges between vertices of one distance)."""
    w = weight_summary(G)
    if w is None or G.num_edges == 0 or (w.valid and w.min > 0):
        return
    bad = np.flatnonzero(~(np.isfinite(G.values) & (G.values > 0)))[0]
    u = int(np.searchsorted(G.row_offsets, bad, side="right") - 1)
    raise ValueError(f"weighted betweenness needs positive finite weights; edge {u}->"
                     f"{int(G.column_indices[bad])} has weight {float(G.values[bad])!r}")


class WeightedBCProblem(SSSPProblem):
    """SSSP's distances plus the tight-DAG depths, path counts, dependencies and the
    centralities summed over the runs."""

    Data = WeightedBCData

    def init(self):
        super().init()
        self.depth = self.vertex_array(np.int32)
        self.pending = self.vertex_array(np.float64)  # tight in-edges not yet walked
        self.sigma = self.vertex_array(np.float64)
        self.dependency = self.vertex_array(np.float64)
        self.centrality = self.vertex_array(np.float64, fill=0.0)

    def reset(self, source, delta=None):
        super().reset(source, delta)
        self.backend.fill(self.depth, INVALID)
        self.backend.write(self.depth, self.source, 0)
        self.backend.fill(self.sigma, 0.0)
        self.backend.fill(self.dependency, 0.0)
        self.backend.write(self.sigma, self.source, 1.0)

    def extract(self):
        return self.to_host(self.centrality)


class WeightedBCEnactor(SSSPEnactor):
    """Weighted Brandes from the problem's source, adding to its ``centrality``.

    SSSP's loop; then (no parents) the tight in-edges counted, the tight DAG's levels
    walked from the source (path counts, depths), grouped by depth and walked back
    (dependencies, centralities).

    Parameters
    ----------
    problem : WeightedBCProblem
        Weights must be positive and finite (an unweighted graph uses 1).
    **kw
        :class:`~gunpy.primitives.sssp.SSSPEnactor`'s options.

    Raises
    ------
    ValueError
        A zero, negative, infinite or NaN weight.

    Examples
    --------
    Two shortest paths of length 3 from 0 to 3, through 1 and through 2:

    >>> import gunpy
    >>> from gunpy.primitives.bc_weighted import WeightedBCEnactor, WeightedBCProblem
    >>> G = gunpy.Graph.from_edges([0, 0, 1, 2], [1, 2, 3, 3], [1.0, 2.0, 2.0, 1.0],
    ...                            directed=True)
    >>> problem = WeightedBCProblem(G, backend="cpu")
    >>> enactor = WeightedBCEnactor(problem)
    >>> problem.reset(0)
    >>> stats = enactor.enact()
    >>> problem.to_host(problem.sigma).tolist(), problem.extract().tolist()
    ([1.0, 1.0, 1.0, 2.0], [0.0, 0.5, 0.5, 0.0])
    """

    def __init__(self, problem, **kw):
        check_positive_weights(problem.graph)
        super().__init__(problem, **kw)
        #: the DAG's levels, one stored frontier per depth (kept for later runs)
        self.levels = self.context.kept(
            "bc_weighted.levels", lambda: FrontierStore(self.backend, self.num_vertices))

    def prepare_frontier(self, frontier):
        super().prepare_frontier(frontier)
        self.phase = "forward"

    def loop(self, frontier):
        p = self.problem
        if self.phase == "forward":
            return super().loop(frontier)
        if self.phase == "count":  # the tight in-edges of every vertex
            ops.neighbor_reduce(self.graph, None, TightInDegreeFunctor, p, p.pending, edges="in",
                                context=self.context)
            self.phase, self.first = "dag", self.iteration + 1
            return self.start_frontier().push(p.source)
        if self.phase == "dag":  # path counts, a level of the DAG after the other
            return self.advance_filter(frontier, WeightedBCForwardFunctor)
        if self.phase == "group":  # every depth of the DAG, a frontier each
            reverse_levels.run_group(self.context, p.depth, self.depths, self.levels)
            self.context.log(strategy="group")
            self.phase = "backward"
            return frontier
        # each vertex's dependency, then (apply_vertex, in the same pass) its centrality
        self.level -= reverse_levels.run(
            self.context, self.levels, *self._operands(WeightedBCBackwardFunctor),
            p.dependency, self.level, 1, "out", "sum", True)
        return frontier

    def is_converged(self, frontier):
        if self.phase == "forward" and super().is_converged(frontier):
            self.phase = "count"
        elif self.phase == "dag" and frontier.size == 0:
            # depths 0..depths-1 were reached; the deepest has no tight successors
            self.depths = self.iteration - self.first
            self.level = self.depths - 2
            self.phase = "group"
        return self.phase == "backward" and self.level < 1

    def finalize(self):
        # no shortest-path tree: the tight edges were all used
        self.stats.extra["method"] = self.method
