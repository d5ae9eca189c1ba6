"""k-core decomposition by peeling: each vertex's core number.

The k-core of a graph is its largest subgraph in which every vertex has at
least ``k`` neighbours; a vertex's core number is the largest ``k`` whose
k-core holds it. Peeling finds them level by level (Gunrock's k-core, after
Batagelj and Zaversnik's definition), ``k`` from the smallest degree up:

1. a filter over the vertices still in the graph keeps those of degree at
   most ``k`` (their core number is ``k``: they are removed), and, over the
   same vertices, the smallest degree that stays (the next level's ``k``:
   levels no vertex is at are skipped);
2. an advance from the removed vertices takes one off each remaining
   neighbour's degree (an atomic add: several may lose a neighbour at once);
   the one decrement that takes a degree down to ``k`` emits that neighbour,
   which is removed at this level too (its core number is ``k``), and the
   advance repeats from the vertices it emitted until it emits none;
3. a filter keeps the vertices still in the graph, and the next level begins
   with step 1 at the smallest degree among them.

Each vertex is removed once and each edge is crossed at most once from each
end, so the work is linear in the graph, in as many sub-rounds as the peeling
takes (a long path peels two vertices a round).

On a directed graph a vertex's degree is its in-degree plus its out-degree
and its neighbours are its in- and out-neighbours, with multiplicity (networkx's
rule): the peeling runs on the graph with every edge stored both ways, built
once per graph. Self-loops are ignored (networkx refuses graphs with them).
"""

from collections import namedtuple

import numpy as np

from gunpy import Enactor, Functor, Graph, Problem, atomics
from gunpy.primitives._cache import per_graph
from gunpy.registry import Primitive, register_primitive, top_vertices
from gunpy.result import Result

__all__ = ["kcore", "KCoreResult", "KCoreProblem", "KCoreEnactor", "peeling_graph"]

KCoreData = namedtuple("KCoreData", "degree core low k row_offsets")

#: the smallest-degree slot's value before a level's minimum is taken
NO_DEGREE = np.iinfo(np.int32).max


class Start(Functor):
    """Every vertex is in the graph (core -1) with its degree (no self-loops are stored)."""

    @staticmethod
    def apply_vertex(v, data):
        data.degree[v] = data.row_offsets[v + 1] - data.row_offsets[v]
        data.core[v] = -1


class Remaining(Functor):
    """Keep the vertices still in the graph, taking the smallest of their degrees."""

    @staticmethod
    def cond_vertex(v, data):
        left = data.core[v] < 0
        if left and data.degree[v] < data.low[0]:
            # read first: most vertices are above the minimum and leave the slot alone
            atomics.min(data.low, 0, data.degree[v])
        return left


class Peel(Functor):
    """A level's first removals: the vertices of degree at most ``k``."""

    @staticmethod
    def cond_vertex(v, data):
        return data.degree[v] <= data.k

    @staticmethod
    def apply_vertex(v, data):
        data.core[v] = data.k


class Decrement(Functor):
    """A removed vertex's edge: one neighbour fewer for ``dst``; emit ``dst`` (removed at
    this level) when that takes its degree down to ``k``."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        hit = False
        if data.core[dst] < 0:
            # atomic: dst may lose several neighbours in one round; exactly one decrement
            # sees it go from k + 1 to k
            hit = atomics.add(data.degree, dst, -1) == data.k + 1
        return hit

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        data.core[dst] = data.k


@per_graph
def peeling_graph(G):
    """The graph whose out-edges are each vertex's neighbours for the peeling: ``G``
    itself when undirected without self-loops; otherwise every edge stored both ways
    (directed graphs: in- plus out-neighbours, with multiplicity) and no self-loops.
    Built once per graph."""
    n, ci = G.num_vertices, G.column_indices
    src = np.repeat(np.arange(n, dtype=ci.dtype), G.out_degrees())
    if not (G.directed or np.any(src == ci)):
        return G
    if G.directed:
        src, ci = np.concatenate([src, ci]), np.concatenate([ci, src])
    return Graph.from_edges(src, ci, num_vertices=n, directed=True, remove_self_loops=True,
                            remove_duplicates=False)


class KCoreProblem(Problem):
    """Each vertex's remaining ``degree`` and ``core`` number (-1 while it is in the
    graph); ``low``: the smallest remaining degree; ``k``: the level."""

    Data = KCoreData

    def init(self):
        self.degree = self.vertex_array(np.int32)
        self.core = self.vertex_array(np.int32)
        self.low = self.backend.full(1, NO_DEGREE, np.int32)
        self.row_offsets = self.backend.graph(self.graph).row_offsets
        self.k = 0

    def extract(self):
        return self.take(self.core)


class KCoreEnactor(Enactor):
    """Peeling: a level's first removals, then rounds of decrements until none is
    emitted, then the next level at the smallest degree left.

    An iteration is one round: an advance from the vertices removed last round, or,
    when the last round removed none, the next level's filters. ``levels``: the
    levels run (the distinct core numbers).
    """

    def prepare_frontier(self, frontier):
        self.compute(None, Start)
        self.active = self.full_frontier()  # the vertices still in the graph
        # the active set's two buffers (filtered from one to the other), lent: a later
        # run on this graph makes none
        self.spare = [self.context.frontier(capacity=self.num_vertices) for _ in range(2)]
        self.done = self.num_vertices == 0
        self.levels = 0

    def loop(self, frontier):
        if frontier.size:  # the level goes on from the vertices removed last round
            return self.advance(frontier, Decrement, output="vertex")
        p = self.problem
        # the level is over: keep what remains, and find its smallest degree
        self.backend.fill(p.low, NO_DEGREE)
        out = self.spare[0] if self.active is not self.spare[0] else self.spare[1]
        self.active = self.filter(self.active, Remaining, out=out)
        if self.active.size == 0:
            self.done = True
            return frontier
        p.k = int(self.backend.read_head(p.low, 1)[0])
        self.levels += 1
        return self.filter(self.active, Peel)

    def is_converged(self, frontier):
        return self.done

    def finalize(self):
        self.stats.extra["levels"] = self.levels


class KCoreResult(Result):
    """``core`` (int32: each vertex's core number) and ``max_core`` (the degeneracy)."""

    _fields = ("core",)
    _main = "core"
    _columns = {"core": "core"}


def kcore(G, *, backend="auto"):
    """Core numbers by peeling (k-core decomposition).

    Parameters
    ----------
    G : gunpy.Graph
        Undirected or directed (a vertex's degree is then its in- plus out-degree);
        weights are ignored, self-loops too; every other stored edge counts
        (a graph built with its repeated edges kept counts each).
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    KCoreResult
        ``core`` (int32: the largest ``k`` whose k-core, the largest subgraph of
        minimum degree ``k``, holds the vertex), ``max_core`` (the largest core
        number, 0 on a graph without vertices) and ``stats`` (``stats.extra["levels"]``:
        the distinct core numbers). ``to_dict()`` maps node labels to core numbers.

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`.
    ValueError
        An unknown backend.

    See Also
    --------
    networkx.core_number : the same numbers (it refuses self-loops, which gunpy ignores).
    networkx.k_core, networkx.k_shell, networkx.k_crust, networkx.k_corona : subgraphs
        chosen by core number (``gunpy.nx_backend`` answers them from ``core``).

    Notes
    -----
    Levels run from the smallest degree up, skipping core numbers no vertex has; at a
    level, a filter removes the vertices of degree at most ``k``, then rounds of an
    advance take one off each remaining neighbour's degree (atomically) and remove
    those it takes down to ``k``, until a round removes none (the module docstring).
    A directed graph is peeled on its edges stored both ways, built once per graph.

    References
    ----------
    .. [1] V. Batagelj and M. Zaversnik, "An O(m) algorithm for cores decomposition
       of networks", 2003, arXiv:cs/0310049.
    .. [2] Y. Wang et al., "Gunrock: GPU graph analytics", ACM TOPC 4(1), 2017.

    Examples
    --------
    A triangle with a tail: the triangle is the 2-core, the tail's vertices are in
    the 1-core only, and an isolated vertex has core number 0:

    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 1, 2, 2, 3], [1, 2, 0, 3, 4], num_vertices=6,
    ...                            directed=False)
    >>> r = gunpy.kcore(G, backend="cpu")
    >>> r.core.tolist(), r.max_core
    ([2, 2, 2, 1, 1, 0], 2)

    On a directed graph the degree is the in- plus the out-degree (networkx's
    example: 1 and 2 are joined both ways, and so are 3 and 4):

    >>> D = gunpy.Graph.from_edges([0, 1, 1, 1, 2, 3], [1, 0, 2, 3, 3, 2])
    >>> gunpy.kcore(D, backend="cpu").core.tolist()
    [2, 2, 2, 2]
    """
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    problem = KCoreProblem(peeling_graph(G), backend=backend)
    enactor = KCoreEnactor(problem)
    stats = enactor.enact()
    stats.load_balance, stats.direction = enactor.load_balance, "push"
    result = KCoreResult(G, stats, core=problem.core)  # a CUDA run's stays on the device
    result.max_core = int(problem.k) if G.num_vertices else 0
    return result


def _summary(r, G, source):
    values, sizes = np.unique(r.core, return_counts=True)
    return [f"max core {r.max_core}, {r.stats.extra.get('levels', 0)} levels",
            "largest shells: " + ", ".join(
                f"k={values[i]} ({sizes[i]} vertices)"
                for i in np.argsort(-sizes, kind="stable")[:5]),
            top_vertices(r.core, fmt="{}")]


register_primitive(Primitive(
    "kcore", kcore, fields=KCoreResult._fields, summary=_summary,
    networkx=("core_number", "k_core", "k_shell", "k_crust", "k_corona")))
