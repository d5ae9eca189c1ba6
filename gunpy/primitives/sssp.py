"""Single-source shortest paths: Bellman-Ford relaxation over frontiers, delta-stepping order.

Gunrock section 5.1.2: advance relaxes each out-edge of the frontier with an
atomic min on the destination's distance; the two-level near/far priority
queue (section 4.4.2, Davidson et al.) keeps only vertices within the current
distance band in the frontier and parks the rest, dropping the repeats of
vertices improved several times in one step as it splits. ``method="bellman_ford"``
skips the queue: a unique filter drops the repeats and every improved vertex
goes straight into the next frontier. Thin near/far steps run fused, many to a
call (GAP's bucket fusion, :meth:`gunpy.Enactor.advance_near_far`): on a road
network the whole run is one iteration.

Parents come from the *tight* edges (``distance[src] + weight ==
distance[dst]``). Each successful relaxation records its source and edge, but
that races with the atomic min (a slower writer can leave a parent that no
longer realises the distance), so after the distances settle a filter keeps
the recorded parents that are still tight and, for the few others, one
neighbor-reduce over their in-edges takes the smallest tight in-neighbour.
With positive weights the tight edges form a DAG, so any choice is a tree;
with zero-weight edges tight edges could close a cycle, so a BFS over the
tight edges from the source picks the parents instead. Which tight parent a
vertex gets may differ between runs (as BFS's parents do).
"""

from collections import namedtuple

import numpy as np

from gunpy import INVALID, Enactor, Functor, Problem, atomics
from gunpy import operators as ops
from gunpy.primitives._weights import check_weights
from gunpy.problem import weight_summary
from gunpy.registry import Option, Primitive, register_primitive
from gunpy.result import Result, reached_edges

__all__ = ["sssp", "SSSPResult", "SSSPFunctor", "SSSPProblem", "SSSPEnactor", "METHODS"]

METHODS = ("near_far", "bellman_ford")

SSSPData = namedtuple("SSSPData", "distance parent delta tight source via row_offsets "
                                  "column_indices weights weighted")


class SSSPFunctor(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        new = data.distance[src] + weight
        if new >= data.distance[dst]:
            return False  # most relaxations fail: a plain read spares the atomic
        # atomic min: several frontier vertices may relax dst in the same step
        return atomics.min(data.distance, dst, new) > new

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        # a candidate parent: a slower writer may leave one that no longer realises the
        # distance (or a src from one writer and an edge from another); finalize checks
        data.parent[dst] = src
        data.via[dst] = edge

    @staticmethod
    def priority(v, data):
        return data.distance[v] / data.delta


class UnverifiedParent(Functor):
    """Reached vertices whose recorded (parent, edge) is not a tight edge into them."""

    @staticmethod
    def cond_vertex(v, data):
        d = data.distance[v]
        if v == data.source or not d < np.inf:
            return False
        p = data.parent[v]
        e = data.via[v]
        if p < 0 or p >= data.distance.shape[0] or e < 0 or e >= data.column_indices.shape[0]:
            return True
        if e < data.row_offsets[p] or e >= data.row_offsets[p + 1]:
            return True
        if data.column_indices[e] != v:
            return True
        w = data.weights[e] if data.weighted else 1.0
        return data.distance[p] + w != d


class TightEdgeFunctor(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        # an edge on some shortest path; the first tight parent to arrive wins
        if data.distance[src] + weight != data.distance[dst]:
            return False
        return atomics.cas(data.parent, dst, INVALID, src) == INVALID


class TightParent(Functor):
    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        d = data.distance[dst]
        if d < np.inf and data.distance[src] + weight == d:
            return np.float64(src)
        return np.inf

    @staticmethod
    def apply_vertex(v, data):
        if v != data.source and data.tight[v] < np.inf:
            data.parent[v] = np.int64(data.tight[v])


class SSSPProblem(Problem):
    Data = SSSPData

    def init(self):
        self.distance = self.vertex_array(np.float64)
        self.parent = self.vertex_array(np.int32)
        self.tight = self.vertex_array(np.float64)
        self.via = self.vertex_array(np.int64)  # the edge that last lowered each distance
        dg = self.backend.graph(self.graph)
        self.row_offsets, self.column_indices = dg.row_offsets, dg.column_indices
        self.weights, self.weighted = dg.values, bool(dg.weighted)

    def reset(self, source, delta=None):
        """Start from ``source``, near band ``delta`` wide (default: :func:`default_delta`)."""
        if delta is None:
            delta = default_delta(self.graph)
        if not (np.isfinite(delta) and delta > 0):
            raise ValueError(f"delta must be a positive number, got {delta!r}")
        self.source = self.check_source(source)
        self.delta = float(delta)
        self.backend.fill(self.distance, np.inf)
        self.backend.fill(self.parent, INVALID)
        self.backend.write(self.distance, self.source, 0.0)
        self.backend.write(self.parent, self.source, self.source)

    def extract(self):
        return self.to_host(self.distance), self.to_host(self.parent)


class SSSPEnactor(Enactor):
    """The SSSP loop: relax, drop repeats, keep the near band; then pick parents.

    Parameters
    ----------
    problem : SSSPProblem
        Weights in ``problem.graph.values`` must be non-negative and finite (an
        unweighted graph uses 1). Reset with the source before :meth:`enact`.
    method : {"near_far", "bellman_ford"}, default "near_far"
        Delta-stepping order with the near/far queue, or every improved vertex
        in the next frontier.
    load_balance : {"auto", "thread_mapped", "twc", "merge_path"}, default "auto"
    fuse : bool, default True
        Run thin near/far steps fused, many to a call
        (:meth:`gunpy.Enactor.advance_near_far`); ``False``: one advance and one
        split per iteration.
    **kw
        Other :class:`gunpy.Enactor` options (``max_iterations``, ``auto_threshold``).
    """

    def __init__(self, problem, *, method="near_far", load_balance="auto", fuse=True, **kw):
        if method not in METHODS:
            raise ValueError(f"unknown SSSP method {method!r}; valid: "
                             f"{', '.join(map(repr, METHODS))}")
        G = problem.graph
        w = check_weights(G, "SSSP")  # once per weights array, not three passes per call
        super().__init__(problem, load_balance=load_balance, **kw)
        self.method = method
        self.fuse = bool(fuse)
        #: no zero weights: the tight edges form a DAG (parents by one neighbor-reduce)
        self.positive_weights = w is None or G.num_edges == 0 or w.min > 0

    def prepare_frontier(self, frontier):
        frontier.push(self.problem.source)

    def loop(self, frontier):
        if self.method == "near_far":
            # relax and split (dropping the repeats of a vertex improved twice in a
            # step); thin steps run fused, many to a call
            return self.advance_near_far(frontier, SSSPFunctor, fuse=self.fuse)
        frontier = self.advance(frontier, SSSPFunctor)
        return self.filter(frontier, SSSPFunctor, mode="unique")

    def finalize(self):
        self.stats.extra["method"] = self.method
        pq = self.near_far_queue
        if pq is not None:
            self.stats.extra["refills"] = pq.refills
            self.stats.extra["fused_steps"] = pq.fused_steps
        # distances are final. Positive weights: keep the parent each vertex's last
        # successful relaxation recorded where it is still a tight edge (almost always),
        # and pick the smallest tight in-neighbour for the others (one pass over their
        # in-edges instead of every vertex's)
        if self.positive_weights:
            stale = self.filter(self.full_frontier("vertex"), UnverifiedParent)
            self.stats.extra["parents_repaired"] = stale.size
            if stale.size:
                ops.neighbor_reduce(self.graph, stale, TightParent, self.problem,
                                    self.problem.tight, edges="in", op="min",
                                    context=self.context)
                self.compute(stale, TightParent)
            return
        # zero weights: the relaxations' parents may close a cycle of tight edges; forget
        # them and let a BFS over the tight edges claim each vertex once
        p = self.problem
        p.backend.fill(p.parent, INVALID)
        p.backend.write(p.parent, p.source, p.source)
        frontier = self.start_frontier().push(self.problem.source)
        while frontier.size:
            frontier = self.advance(frontier, TightEdgeFunctor)


class SSSPResult(Result):
    """``distance`` (float64, inf unreachable) and ``parent`` (int32, -1 unreachable, source is its own)."""

    _fields = ("distance", "parent")
    _main = "distance"
    _columns = {"distance": "distance", "parent": "predecessor"}
    _vertex_fields = ("parent",)

    def _unreached(self, name, arr):
        return ~np.isfinite(self.distance)


def default_delta(G):
    """Twice the mean edge weight over the average degree (Meyer and Sanders' Theta(1/d)).

    Measured on Graph500 RMAT-18 with uniform [0, 1) weights, this keeps the
    relaxations within 1.3-1.8x the edge count; wider bands re-relax vertices
    many times (4-6x), narrower ones pay for many near/far refills.
    """
    if G.num_edges == 0:
        return 1.0
    mean_w = weight_summary(G).mean if G.weighted else 1.0
    avg_deg = G.num_edges / max(G.num_vertices, 1)
    if not mean_w > 0:
        return 1.0
    if not np.isfinite(mean_w):  # weights near 1e308: their mean overflowed
        return float(np.finfo(float).max) / 4
    return min(max(2.0 * mean_w / max(avg_deg, 1.0), np.finfo(float).tiny),
               float(np.finfo(float).max) / 4)


def sssp(G, source, *, delta=None, method="near_far", load_balance="auto", backend="auto"):
    """Shortest-path distances and a shortest-path tree from ``source``.

    Parameters
    ----------
    G : gunpy.Graph
        Weights in ``G.values`` (non-negative, finite); an unweighted graph uses 1.
    source : int
    delta : float, optional
        Width of the near band of the priority queue (default: twice the mean
        weight over the average degree, see :func:`default_delta`).
    method : {"near_far", "bellman_ford"}, default "near_far"
    load_balance : {"auto", "thread_mapped", "twc", "merge_path"}, default "auto"
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    SSSPResult
        ``distance`` (float64, ``inf`` unreachable), ``parent`` (int32, -1
        unreachable, ``parent[source] == source``) and ``stats``.

    Raises
    ------
    ValueError
        Negative, NaN or infinite weights; a non-positive delta; an unknown option.
    IndexError
        ``source`` is out of range.

    See Also
    --------
    networkx.single_source_dijkstra_path_length
    scipy.sparse.csgraph.dijkstra

    Examples
    --------
    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 0, 1], [1, 2, 2], [4.0, 1.0, 1.0], directed=True)
    >>> r = gunpy.sssp(G, 0, backend="cpu")
    >>> r.distance.tolist(), r.parent.tolist()
    ([0.0, 4.0, 1.0], [0, 0, 0])
    """
    problem = SSSPProblem(G, backend=backend)
    enactor = SSSPEnactor(problem, method=method, load_balance=load_balance)
    problem.reset(source, delta)
    stats = enactor.enact()
    # the problem's own arrays: left on the device by the CUDA backend until read
    r = SSSPResult(G, stats, distance=problem.distance, parent=problem.parent)
    stats.graph500_edges = lambda: reached_edges(G, r.device_array("parent") if G.on_device
                                                 else r.parent)
    return r


def _summary(r, G, source):
    fin = np.isfinite(r.distance)
    return [f"source {source}: reached {int(fin.sum())} of {G.num_vertices} vertices, "
            f"max distance {float(r.distance[fin].max(initial=0)):.6g}"]


register_primitive(Primitive(
    "sssp", sssp, source="one", fields=SSSPResult._fields, summary=_summary, weighted=True,
    options=(Option("delta", None, "near/far band width (default: from the weights)",
                    type=float),
             Option("method", "near_far", "near_far (delta-stepping) or bellman_ford",
                    choices=METHODS),
             Option("load_balance", "auto", "advance strategy")),
    networkx=("single_source_dijkstra_path_length", "single_source_dijkstra",
              "single_source_dijkstra_path", "dijkstra_path", "dijkstra_path_length",
              "multi_source_dijkstra", "multi_source_dijkstra_path",
              "multi_source_dijkstra_path_length", "bellman_ford_path_length",
              "single_source_bellman_ford_path_length", "single_source_bellman_ford",
              "single_source_bellman_ford_path", "bellman_ford_path",
              "bellman_ford_predecessor_and_distance", "shortest_path",
              "all_pairs_dijkstra_path_length", "all_pairs_dijkstra", "all_pairs_dijkstra_path",
              "all_pairs_bellman_ford_path_length", "all_pairs_bellman_ford_path",
              "shortest_path_length"),
    dist="gunpy.dist:sssp"))
