"""Minimum spanning forest by Borůvka's algorithm (Gunrock's MST).

Every vertex starts as a component of its own (``comp[v] = v``). A round, over
the edges still between components (an edge frontier, each undirected edge
once) and the components still growing (a vertex frontier of their ids):

1. a filter over the edges drops those inside one component (the graph
   contracts: later rounds never see them) and takes, for each end's
   component, the lightest weight leaving it (an atomic min);
2. a second pass over them takes, among each component's lightest edges, the
   one with the smallest ``(smaller end, larger end)`` (an atomic min of
   ``smaller * n + larger``): edges are ordered by ``(weight, smaller end,
   larger end)``, a strict order on simple graphs, so the chosen edges hold no
   cycle but the pairs of components that chose each other's (the same edge);
3. each component hooks onto the component at its edge's other end; of a
   pair that chose each other, the smaller id stays a root (no edge), every
   other component adds its edge to the forest (a slot from an atomic add);
4. pointer jumping (``hook[c] = hook[hook[c]]``, a filter repeated until no
   pointer moves) makes every component point at its tree's root; every
   vertex takes its component's root as its component;
5. a filter keeps the roots that found an edge, their lightest edge reset: the
   next round's components.

Each round at least halves the components that can still grow, so there are at
most ``log2(n)`` rounds; it ends when no component has an edge leaving it. The
forest has ``n - (number of connected components)`` edges, one tree per
component, and its total weight is the minimum; of the minimum forests it is
the one the order above picks (the same on every backend and thread count),
returned in increasing ``(weight, src, dst)`` order with ``src < dst``.

Only undirected graphs have a spanning forest here (networkx raises for
directed ones too); weights may be negative or infinite, not NaN. Self-loops
never join two components and are ignored; a repeated edge (a graph built with
duplicates kept) counts with each of its weights.
"""

from collections import namedtuple

import numpy as np

from gunpy import Enactor, Functor, Graph, Problem, atomics
from gunpy.problem import weight_summary
from gunpy.registry import Primitive, register_primitive
from gunpy.result import Result

__all__ = ["mst", "MSTResult", "MSTProblem", "MSTEnactor"]

MSTData = namedtuple("MSTData", "comp hook lightest key count src dst weight picked n ranked "
                                 "rank lo_of hi_of")

#: a component's key before any edge leaves it
NO_EDGE = np.iinfo(np.int64).max


class Start(Functor):
    """Every vertex a component of its own, pointing at itself, growing, with no lightest
    edge yet."""

    @staticmethod
    def cond_vertex(v, data):
        data.comp[v] = v
        data.hook[v] = v
        data.lightest[v] = np.inf
        data.key[v] = NO_EDGE
        return True


class Lightest(Functor):
    """Keep an edge between two components (once: ``src < dst``), lowering each end's
    component's lightest weight to its own."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        # the arrays taken from data once, at the top: numba then prunes their reference
        # counts, which a body reading data.x in its branches pays per edge (and two
        # threads fight over: RMAT-18's pass 700 -> 100 ms on 2 cores)
        comp, lightest = data.comp, data.lightest
        a, b = comp[src], comp[dst]
        keep = src < dst and a != b
        # read first: most edges are heavier than the minimum so far
        if keep and weight < lightest[a]:
            atomics.min(lightest, a, weight)
        if keep and weight < lightest[b]:
            atomics.min(lightest, b, weight)
        return keep


class Tiebreak(Functor):
    """Of a component's lightest edges, the smallest ``(src, dst)``; keeps no edge."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        comp, lightest, keys = data.comp, data.lightest, data.key  # once (see Lightest)
        a, b = comp[src], comp[dst]
        # the edge's place among equal weights: its ends, or the caller's rank (ties=)
        key = data.rank[edge] if data.ranked else np.int64(src) * data.n + np.int64(dst)
        # read first, as in Lightest: a hub component may have many edges of its weight
        if weight == lightest[a] and key < keys[a]:
            atomics.min(keys, a, key)
        if weight == lightest[b] and key < keys[b]:
            atomics.min(keys, b, key)
        return False


class Hook(Functor):
    """Point a component at the component at the other end of its edge."""

    @staticmethod
    def apply_vertex(c, data):
        key = data.key[c]
        other = c
        if key != NO_EDGE:
            lo = data.lo_of[key] if data.ranked else key // data.n
            hi = data.hi_of[key] if data.ranked else key % data.n
            a = data.comp[lo]
            other = data.comp[hi] if a == c else a
        data.hook[c] = other


class Choose(Functor):
    """Of two components that chose each other's edge, the smaller stays a root; every
    other component with an edge adds it to the forest."""

    @staticmethod
    def apply_vertex(c, data):
        key = data.key[c]
        if key != NO_EDGE:
            d = data.hook[c]
            # d never writes hook[d] when c < d, so this read is safe under the write below
            if data.hook[d] == c and c < d:
                data.hook[c] = c
            else:
                at = atomics.add(data.count, 0, 1)
                data.src[at] = data.lo_of[key] if data.ranked else key // data.n
                data.dst[at] = data.hi_of[key] if data.ranked else key % data.n
                data.weight[at] = data.lightest[c]
                data.picked[at] = key


class Jump(Functor):
    """Pointer jumping: one step up the hooks; keep the components that moved."""

    @staticmethod
    def cond_vertex(c, data):
        up = data.hook[c]
        top = data.hook[up]
        moved = up != top
        if moved:
            data.hook[c] = top
        return moved


class Relabel(Functor):
    """Every vertex takes its component's root as its component."""

    @staticmethod
    def apply_vertex(v, data):
        data.comp[v] = data.hook[data.comp[v]]


class Growing(Functor):
    """Keep the roots that found an edge (the others are whole trees, or hooked), with no
    lightest edge yet for the next round."""

    @staticmethod
    def cond_vertex(c, data):
        keep = data.hook[c] == c and data.key[c] != NO_EDGE
        if keep:
            data.lightest[c] = np.inf
            data.key[c] = NO_EDGE
        return keep


class MSTProblem(Problem):
    """``comp`` (each vertex's component), ``hook`` (each component's parent),
    ``lightest`` / ``key`` (each component's edge: weight, ``src * n + dst``); the
    forest's edges in ``src``, ``dst``, ``weight``, ``count`` of them."""

    Data = MSTData

    def init(self):
        n = self.num_vertices
        self.comp = self.vertex_array(self.index_dtype)
        self.hook = self.vertex_array(self.index_dtype)
        self.lightest = self.vertex_array(np.float64)
        self.key = self.vertex_array(np.int64)
        self.count = self.backend.zeros(1, np.int64)
        self.src = self.backend.empty(max(n - 1, 1), self.index_dtype)
        self.dst = self.backend.empty(max(n - 1, 1), self.index_dtype)
        self.weight = self.backend.empty(max(n - 1, 1), np.float64)
        self.picked = self.backend.empty(max(n - 1, 1), np.int64)
        self.n = np.int64(n)
        self.reset()

    def reset(self, ties=None):
        """``ties``: the order of equal weights (:func:`tie_ranks`), or None: the ends."""
        self.backend.fill(self.count, 0)
        self.ranked = ties is not None
        rank, lo_of, hi_of = tie_ranks(self.graph, ties) if self.ranked else \
            (np.zeros(1, np.int64), np.zeros(1, self.index_dtype), np.zeros(1, self.index_dtype))
        self.rank, self.lo_of, self.hi_of = (self.backend.asarray(a) for a in (rank, lo_of,
                                                                            hi_of))

    def extract(self):
        """The forest's edges, sorted by ``(weight, tie order)``."""
        k = int(self.to_host(self.count)[0])
        src, dst = self.take(self.src)[:k], self.take(self.dst)[:k]
        weight, picked = self.take(self.weight)[:k], self.take(self.picked)[:k]
        # by weight (numpy's quicksort: its stable sort of floats is ~10x slower on
        # random weights); where weights tie, again: by tie key, then stably by weight
        order = np.argsort(weight)
        if np.any(weight[order[1:]] == weight[order[:-1]]):
            order = np.argsort(picked)
            order = order[np.argsort(weight[order], kind="stable")]
        return src[order], dst[order], weight[order]


def tie_ranks(G, ties):
    """``(rank, lo_of, hi_of)`` for ``ties`` (a value per stored edge, read at the copy
    with ``src < dst``): each edge's place in the order of ``ties`` (``0..k-1``), and the
    ends of the edge at each place."""
    ties = np.asarray(ties)
    m = G.num_edges
    if ties.shape != (m,) or ties.dtype.kind not in "iu":
        raise ValueError(f"ties must be an integer array with one value per stored edge "
                         f"({m}), got {ties.dtype} of shape {ties.shape}")
    src = np.repeat(np.arange(G.num_vertices, dtype=G.column_indices.dtype), G.out_degrees())
    kept = src < G.column_indices
    order = np.argsort(ties[kept], kind="stable")
    if order.size > 1 and np.any(np.diff(ties[kept][order]) == 0):
        raise ValueError("ties must give every edge (u < v) a value of its own")
    rank = np.zeros(m, dtype=np.int64)
    rank[np.flatnonzero(kept)[order]] = np.arange(order.size)
    return rank, src[kept][order], G.column_indices[kept][order]


class MSTEnactor(Enactor):
    """Borůvka rounds until no component has an edge leaving it; an iteration is a round
    (its ``frontier``: the growing components)."""

    def prepare_frontier(self, frontier):
        ctx = self.context
        # the edges between components, the growing components and the components whose
        # hook moved: two buffers each (filtered from one to the other; the first growing
        # set is the enactor's frontier), lent, so a later run on this graph makes none
        m, n = self.graph.num_edges, self.num_vertices
        self.edge_sets = [ctx.frontier(capacity=m, kind="edge") for _ in range(2)]
        self.vertex_sets = [ctx.frontier(capacity=n) for _ in range(2)]
        self.jump_sets = [ctx.frontier(capacity=n) for _ in range(2)]
        self.edges = self.full_frontier("edge")
        self._into(None, self.full_frontier(), Start, out=frontier)  # every vertex
        self.done = n == 0 or m == 0
        self.rounds = 0

    def _into(self, sets, current, functor, out=None):
        if out is None:
            out = sets[0] if current is not sets[0] else sets[1]
        return self.filter(current, functor, out=out)

    def loop(self, active):
        self.edges = self._into(self.edge_sets, self.edges, Lightest)
        self._into(self.edge_sets, self.edges, Tiebreak)  # keeps nothing
        self.compute(active, Hook)
        self.compute(active, Choose)
        moved = active
        while moved.size:  # pointer jumping, until no hook moves
            moved = self._into(self.jump_sets, moved, Jump)
        self.compute(None, Relabel)
        active = self._into(self.vertex_sets, active, Growing)
        self.done = active.size == 0 or self.edges.size == 0
        self.rounds += 1
        return active

    def is_converged(self, frontier):
        return self.done

    def finalize(self):
        self.stats.extra["rounds"] = self.rounds


class MSTResult(Result):
    """The forest's edges: ``src``, ``dst`` (``src < dst``), ``weight`` (float64), in
    increasing ``(weight, src, dst)`` order, and ``total``, their weight."""

    _fields = ("src", "dst", "weight")
    _main = "weight"

    def to_dict(self, field=None):
        """``{(label of src, label of dst): weight}`` for the forest's edges."""
        labels = self.graph.labels()
        return {(labels[u], labels[v]): w for u, v, w in
                zip(self.src.tolist(), self.dst.tolist(), self.weight.tolist())}

    def to_networkx(self, nxg=None, *, name="weight"):
        """The forest as a networkx Graph: every vertex (node labels), the forest's edges
        with their weight as ``name``."""
        import networkx as nx
        g = nx.Graph()
        g.add_nodes_from(self.graph.labels())
        g.add_weighted_edges_from(((u, v, w) for (u, v), w in self.to_dict().items()),
                                  weight=name)
        return g

    def to_dataframe(self):
        """A pandas DataFrame with cuGraph's columns ``src``, ``dst``, ``weight``."""
        import pandas as pd
        labels = np.asarray(self.graph.labels(), dtype=object)
        return pd.DataFrame({"src": labels[self.src], "dst": labels[self.dst],
                             "weight": self.weight})


def mst(G, *, ties=None, backend="auto"):
    """A minimum spanning forest, by Borůvka's algorithm.

    Parameters
    ----------
    G : gunpy.Graph
        Undirected; weighted (any weights but NaN: negative and infinite ones too) or
        not (every edge weighs 1).
    ties : array of int, optional
        The order of edges of equal weight: a distinct value per edge, one per stored
        edge (read at the copy whose source is the smaller id); the smaller comes
        first. Default: by ``(smaller end, larger end)``. (networkx's Kruskal breaks
        ties by its edge order: the networkx backend passes that.)
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    MSTResult
        ``src``, ``dst`` (the forest's edges, ``src < dst``, in increasing
        ``(weight, src, dst)`` order, or ``(weight, ties)``), ``weight`` (float64),
        ``total`` (their sum, a float: the forest's weight), ``num_edges`` (``n``
        minus the number of connected components) and ``stats`` (an iteration per
        round; ``stats.extra["rounds"]``). ``to_dict()`` maps ``(label, label)`` edges to
        weights; ``to_networkx()`` is the forest as a networkx Graph.

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`.
    ValueError
        ``G`` is directed, a weight is NaN, ``ties`` is not a distinct integer per
        edge, or an unknown backend.

    See Also
    --------
    networkx.minimum_spanning_tree, networkx.minimum_spanning_edges : the same total
        weight (with tied weights the two may pick different forests; gunpy's is the
        one the order ``(weight, smaller end, larger end)`` picks).
    scipy.sparse.csgraph.minimum_spanning_tree

    Notes
    -----
    A round: a filter over the edges between components drops the others and takes
    each component's lightest weight (an atomic min), a second pass breaks ties by
    the edge's ends, each component hooks onto its edge's other end (of two that
    chose each other, the smaller stays a root), pointer jumping flattens the
    hooks and a filter keeps the roots still growing (the module docstring). At most
    ``log2(n)`` rounds.

    References
    ----------
    .. [1] O. Borůvka, "O jistém problému minimálním", 1926.
    .. [2] Y. Wang et al., "Gunrock: GPU graph analytics", ACM TOPC 4(1), 2017.

    Examples
    --------
    A weighted square with a diagonal, and a separate edge: a tree of three edges and
    one of one:

    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 1, 2, 3, 0, 4], [1, 2, 3, 0, 2, 5],
    ...                            [4.0, 1.0, 2.0, 3.0, 5.0, 7.0], directed=False)
    >>> r = gunpy.mst(G, backend="cpu")
    >>> list(zip(r.src.tolist(), r.dst.tolist(), r.weight.tolist()))
    [(1, 2, 1.0), (2, 3, 2.0), (0, 3, 3.0), (4, 5, 7.0)]
    >>> r.total, r.num_edges
    (13.0, 4)

    Directed graphs have no spanning forest here:

    >>> gunpy.mst(gunpy.Graph.from_edges([0], [1]))
    Traceback (most recent call last):
        ...
    ValueError: mst needs an undirected graph; build it with directed=False
    """
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    if G.directed:
        raise ValueError("mst needs an undirected graph; build it with directed=False")
    summary = weight_summary(G)
    if summary is not None and not summary.valid and np.isnan(G.values).any():
        raise ValueError(f"mst: edge {int(np.flatnonzero(np.isnan(G.values))[0])} has a "
                         "NaN weight")
    problem = MSTProblem(G, backend=backend)
    problem.reset(ties)
    enactor = MSTEnactor(problem)
    stats = enactor.enact()
    stats.load_balance, stats.direction = "filter", "push"
    src, dst, weight = problem.extract()
    result = MSTResult(G, stats, src=src, dst=dst, weight=weight)
    result.total = float(weight.sum())
    result.num_edges = int(src.shape[0])
    return result


def _summary(r, G, source):
    return [f"{r.num_edges} edges, total weight {r.total:g}, "
            f"{G.num_vertices - r.num_edges} trees, {r.stats.extra.get('rounds', 0)} rounds"]


register_primitive(Primitive("mst", mst, fields=MSTResult._fields, summary=_summary,
                             weighted=True,
                             networkx=("minimum_spanning_tree", "minimum_spanning_edges")))
