"""Weighted betweenness centrality: Brandes's two phases over shortest-path distances.

Brandes (2001), section 5 (the weighted variant; networkx's
``_single_source_dijkstra_path_basic``). The forward phase is SSSP's
(:class:`~gunpy.primitives.sssp.SSSPEnactor`: delta-stepping over the near/far
queue) without its parents. The shortest-path DAG is then the *tight* edges,
``distance[u] + weight == distance[v]``, compared exactly: networkx's Dijkstra
and gunpy's relaxation both settle on the fixpoint ``distance[v] = min over u of
fl(distance[u] + weight)``, so both see the same tight edges. With positive
weights a tight edge goes to a strictly larger distance, so the vertices of one
distance are never tight to each other: grouped by the dense rank of their
distance (:func:`gunpy.operators.reverse_levels.rank`, then
:func:`~gunpy.operators.reverse_levels.group`), the groups play the BFS
levels' part in the unweighted :mod:`~gunpy.primitives.bc`. Two walks over them,
many groups to a call (:func:`gunpy.operators.reverse_levels`):

1. upward (``ascending``), over in-edges: ``sigma[v]`` = the sum of ``sigma[u]``
   over the tight in-edges ``u -> v`` (the groups above are final);
2. downward, over out-edges: ``delta[v]`` = the sum of ``sigma[v] / sigma[w] *
   (1 + delta[w])`` over the tight out-edges ``v -> w``, and in the same pass
   ``bc[v] += delta[v]`` (``apply_vertex``), exactly as the unweighted backward
   phase with tightness in place of ``depth + 1``.

With random real weights almost every distance is distinct: as many groups as
reached vertices. The CPU walks them all in one serial call; a GPU runs every
run of thin groups in one block with a barrier between groups (one launch, a
barrier per group), and the rank costs a copy of the distances to the host and
of the ranks back (a sort on the host; one sync).
"""
from collections import namedtuple

import numpy as np

from gunpy.frontier import FrontierStore
from gunpy.functor import Functor
from gunpy.operators import reverse_levels
from gunpy.primitives.sssp import SSSPData, SSSPEnactor, SSSPProblem
from gunpy.problem import weight_summary

__all__ = ["WeightedBCProblem", "WeightedBCEnactor", "WeightedBCSigmaFunctor",
           "WeightedBCBackwardFunctor", "check_positive_weights"]

WeightedBCData = namedtuple("WeightedBCData",
                            SSSPData._fields + ("rank", "sigma", "dependency", "centrality"))


class WeightedBCSigmaFunctor(Functor):
    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        # over dst's in-edges: src's path count if src -> dst is on a shortest path
        if data.distance[src] + weight == data.distance[dst]:
            return data.sigma[src]
        return 0.0


class WeightedBCBackwardFunctor(Functor):
    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        # an unreached dst has distance inf: never tight from a reached src
        if data.distance[src] + weight == data.distance[dst]:
            return data.sigma[src] / data.sigma[dst] * (1.0 + data.dependency[dst])
        return 0.0

    @staticmethod
    def apply_vertex(v, data):
        if v != data.source:
            data.centrality[v] += data.dependency[v]


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
    """SSSP's distances plus the rank of each distance, path counts, dependencies and
    the centralities summed over the runs."""

    Data = WeightedBCData

    def init(self):
        super().init()
        self.rank = self.vertex_array(np.int32)
        self.sigma = self.vertex_array(np.float64)
        self.dependency = self.vertex_array(np.float64)
        self.centrality = self.vertex_array(np.float64, fill=0.0)

    def reset(self, source, delta=None):
        super().reset(source, delta)
        self.backend.fill(self.sigma, 0.0)
        self.backend.fill(self.dependency, 0.0)
        self.backend.write(self.sigma, self.source, 1.0)

    def extract(self):
        return self.to_host(self.centrality)


class WeightedBCEnactor(SSSPEnactor):
    """Weighted Brandes from the problem's source, adding to its ``centrality``.

    SSSP's loop, then (no parents) the vertices grouped by distance rank and two
    walks over the groups: path counts upward, dependencies downward.

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
        #: the distance groups, one stored frontier each (kept for later runs)
        self.levels = self.context.kept(
            "bc_weighted.levels", lambda: FrontierStore(self.backend, self.num_vertices))

    def prepare_frontier(self, frontier):
        super().prepare_frontier(frontier)
        self.phase = "forward"

    def loop(self, frontier):
        if self.phase == "forward":
            return super().loop(frontier)
        ctx, p = self.context, self.problem
        if self.phase == "group":  # one frontier per distinct distance, in increasing order
            self.groups = reverse_levels.run_rank(ctx, p.distance, p.rank)
            reverse_levels.run_group(ctx, p.rank, self.groups, self.levels)
            ctx.log(strategy="group")
            self.phase, self.level = "sigma", 1  # group 0 is the source alone
            if self.groups < 2:  # the source alone
                self.phase, self.level = "backward", 0
            return frontier
        if self.phase == "sigma":
            self.level += reverse_levels.run(
                ctx, self.levels, *self._operands(WeightedBCSigmaFunctor), p.sigma,
                self.level, self.groups - 1, "in", "sum", False, 1)
            if self.level >= self.groups:
                # the last group has no tight successors: the walk down starts above it
                self.phase, self.level = "backward", self.groups - 2
            return frontier
        self.level -= reverse_levels.run(
            ctx, self.levels, *self._operands(WeightedBCBackwardFunctor), p.dependency,
            self.level, 1, "out", "sum", True)
        return frontier

    def is_converged(self, frontier):
        if self.phase == "forward" and super().is_converged(frontier):
            self.phase = "group"
        return self.phase == "backward" and self.level < 1

    def finalize(self):
        # no shortest-path tree: the tight edges were all used
        self.stats.extra["method"] = self.method
