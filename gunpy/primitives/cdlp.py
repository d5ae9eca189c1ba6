"""Community detection by label propagation (LDBC Graphalytics' CDLP).

Every vertex starts with its own id as its label. In each round every vertex
takes the label that is most frequent among its neighbours' labels of the
round before (synchronous: two label arrays, swapped after each round), the
smallest of those that tie; a vertex with no neighbours keeps its label. The
neighbours are the in- and out-neighbours: on a directed graph one joined both
ways counts twice. After exactly ``max_iterations`` rounds the labels are the
communities. This is LDBC's definition (Raghavan, Albert and Kumara's label
propagation made deterministic); on (near-)bipartite parts the labels may
oscillate, which is the defined behaviour.

A round is :func:`gunpy.operators.neighbor_mode` (each vertex counts the keys its
edges give, here the neighbours' labels, and keeps the most frequent), then a
filter that applies the new labels and keeps the vertices whose label changed.
Only a neighbour of a changed vertex can change next round (the others see the
labels they saw): once few change (on an undirected graph), an advance from
them marks their neighbours, and the next round counts only those. The labels
are the same; the rounds after most labels settle read a fraction of the edges
(RMAT: the last five of ten rounds change ~0.2 % of the vertices).
"""

from collections import namedtuple

import numpy as np

from gunpy import Enactor, Functor, Graph, Problem, atomics
from gunpy import operators as ops
from gunpy.registry import Option, Primitive, register_primitive
from gunpy.result import Result

__all__ = ["cdlp", "CDLPResult", "CDLPProblem", "CDLPEnactor"]

CDLPData = namedtuple("CDLPData", "labels next stamp round")

#: a round counts only the neighbours of the vertices that changed in the round before
#: when at most this fraction of the vertices changed (else every vertex: the advance
#: that finds the neighbours would cost about what it saves)
FRONTIER_BELOW = 1 / 16


class Start(Functor):
    """Every vertex's label is its id, in both arrays."""

    @staticmethod
    def apply_vertex(v, data):
        data.labels[v] = v
        data.next[v] = v
        data.stamp[v] = -1


class NeighbourLabel(Functor):
    """The key an edge gives ``v``: the label of the neighbour ``u`` across it."""

    @staticmethod
    def gather_edge(v, u, edge, weight, data):
        return data.labels[u]


class Changed(Functor):
    """The round's label becomes ``v``'s label; keep ``v`` if it changed (only ``v``'s own
    slots are read and written: the round's counting is over)."""

    @staticmethod
    def cond_vertex(v, data):
        new = data.next[v]
        changed = new != data.labels[v]
        data.labels[v] = new
        return changed


class Neighbour(Functor):
    """A changed vertex's neighbour, emitted once a round (the first to stamp it)."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return atomics.max(data.stamp, dst, data.round) < data.round


def check_rounds(max_iterations):
    """``max_iterations`` as an int, or a ValueError (also :func:`gunpy.dist.cdlp`'s check)."""
    if isinstance(max_iterations, (bool, np.bool_)) or \
            not isinstance(max_iterations, (int, np.integer)) or max_iterations < 0:
        raise ValueError(f"max_iterations must be a non-negative integer, got "
                         f"{max_iterations!r}")
    return int(max_iterations)


class CDLPProblem(Problem):
    """The labels of the round before (``labels``), this round's (``next``: equal to
    ``labels`` between rounds) and the round that last reached each vertex (``stamp``)."""

    Data = CDLPData

    def init(self):
        self.labels = self.vertex_array(np.int64)
        self.next = self.vertex_array(np.int64)
        self.stamp = self.vertex_array(np.int64)
        self.round = 0

    def reset(self, max_iterations=10):
        self.max_iterations = check_rounds(max_iterations)

    def extract(self):
        return self.to_host(self.labels)


class CDLPEnactor(Enactor):
    """One round an iteration: every vertex (or every neighbour of the vertices that
    changed, ``frontier``) takes its neighbours' most frequent label; ``counted``: the
    vertices whose labels were counted, over all rounds."""

    def __init__(self, problem):
        super().__init__(problem, max_iterations=problem.max_iterations)
        # an undirected graph stores each edge both ways: its out-edges are all its edges
        self.edges = "both" if self.graph.directed else "out"

    def prepare_frontier(self, frontier):
        self.compute(None, Start)
        self.everyone, self.counted = True, 0
        self.all = self.full_frontier()  # a view made once: a round allocates nothing

    def loop(self, frontier):
        p = self.problem
        counting = self.all if self.everyone else frontier
        self.counted += counting.size
        ops.neighbor_mode(self.graph, None if self.everyone else frontier, NeighbourLabel, p,
                          p.next, edges=self.edges, context=self.context)
        changed = self.filter(counting, Changed)  # after every count: rounds stay synchronous
        # their neighbours, the only vertices that can change next round (directed graphs:
        # in-neighbours too, which out-edges do not reach: every vertex)
        self.everyone = self.graph.directed or changed.size > FRONTIER_BELOW * self.num_vertices
        if self.everyone:
            return changed
        p.round += 1
        return self.advance(changed, Neighbour)

    def is_converged(self, frontier):
        return self.iteration >= self.problem.max_iterations

    def finalize(self):
        self.stats.load_balance, self.stats.direction = "neighbor_mode", ""
        self.stats.extra["counted"] = self.counted


class CDLPResult(Result):
    """``labels`` (int64: each vertex's community label, a vertex id)."""

    _fields = ("labels",)
    _main = "labels"
    _columns = {"labels": "community"}


def cdlp(G, max_iterations=10, *, backend="auto"):
    """Label propagation communities (LDBC Graphalytics' CDLP).

    Parameters
    ----------
    G : gunpy.Graph
        Directed or undirected; weights are ignored. Every stored edge counts
        (a graph built with its self-loops or repeated edges kept counts them).
    max_iterations : int, default 10
        The number of rounds, run exactly (LDBC's rule: no early stop).
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    CDLPResult
        ``labels`` (int64: after the last round, each vertex's label, a vertex
        id; vertices with one label form a community) and ``stats``.
        ``to_dict()`` maps node labels to community labels.

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`.
    ValueError
        ``max_iterations`` is not a non-negative integer, or an unknown backend.

    See Also
    --------
    networkx.algorithms.community.label_propagation_communities : a semi-synchronous
        variant (different rounds, random ties): not the same partition.
    cc : connected components, which label propagation never crosses.

    Notes
    -----
    Labels start as vertex ids; in each round a vertex takes the label most
    frequent among its in- and out-neighbours in the round before (a neighbour
    joined both ways counts twice), the smallest on a tie, and keeps its own
    when it has no neighbours (LDBC's specification, section 2.3.4). A round
    counts each vertex's neighbour labels; on an undirected graph, once at most
    1/16 of the vertices change in a round, the next counts only their
    neighbours (``stats.extra["counted"]``: the vertices counted over all rounds).

    References
    ----------
    .. [1] U. N. Raghavan, R. Albert and S. Kumara, "Near linear time algorithm to
       detect community structures in large-scale networks", Phys. Rev. E 76, 2007.
    .. [2] A. Iosup et al., "LDBC Graphalytics: A Benchmark for Large-Scale Graph
       Analysis on Parallel and Distributed Platforms", PVLDB 9(13), 2016.

    Examples
    --------
    Two triangles joined by one edge settle on two labels:

    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 0, 1, 2, 3, 3, 4], [1, 2, 2, 3, 4, 5, 5],
    ...                            directed=False)
    >>> gunpy.cdlp(G, backend="cpu").labels.tolist()
    [0, 0, 0, 2, 2, 2]
    >>> gunpy.cdlp(G, max_iterations=1, backend="cpu").labels.tolist()
    [1, 0, 0, 2, 3, 3]
    """
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    problem = CDLPProblem(G, backend=backend)
    problem.reset(max_iterations)
    stats = CDLPEnactor(problem).enact()
    return CDLPResult(G, stats, labels=problem.labels)  # a CUDA run's stays on the device


def _summary(r, G, source):
    labels, sizes = np.unique(r.labels, return_counts=True)
    top = np.argsort(-sizes, kind="stable")[:5]
    return [f"{labels.shape[0]} communities after {r.stats.iterations} rounds",
            "largest: " + ", ".join(f"label {labels[i]} ({sizes[i]} vertices)" for i in top)]


register_primitive(Primitive(
    "cdlp", cdlp, fields=CDLPResult._fields, summary=_summary,
    options=(Option("max_iterations", 10, "rounds of label propagation (run exactly)"),),
    dist="gunpy.dist:cdlp"))
