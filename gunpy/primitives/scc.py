"""Strongly connected components: trimming, one forward-backward search, then colouring.

Slota, Rajamanickam and Madduri's *Multistep* method, on gunpy's operators. Every
vertex starts unassigned (``labels[v] = -1``); each step below assigns whole
components, and later steps run on the vertices still unassigned (the *active* ones):
a component of what is left is a component of the graph.

1. **Trimming.** A vertex with no active in-neighbour, or no active out-neighbour,
   is a component of its own. Each vertex counts its active in- and out-neighbours
   (``in_degree``, ``out_degree``); two streams peel, as k-core peeling does: a
   vertex trimmed for its in-degree takes one off each out-neighbour's in-degree (an
   advance over the graph), one trimmed for its out-degree one off each
   in-neighbour's out-degree (an advance over the reverse graph), and the decrement
   that takes a count to 0 trims that neighbour (a compare-and-swap on its label: it
   is trimmed once). A vertex trimmed for one count has no active neighbour on the
   other side, so the two streams are complete and independent.
2. **Forward-backward** (once, for the giant component): the pivot is the active
   vertex with the largest in-degree times out-degree; a forward search from it
   colours what it reaches with its id, a backward search (an advance over the
   reverse graph) from it within that colour finds its component.
3. **Colouring** (until no vertex is active): every active vertex takes its own key
   as its colour (its id scrambled: ``v * mult % n``, ``mult`` prime to ``n``, a
   bijection) and the smallest colour is pushed along the edges (an atomic min that
   emits the vertex it lowers) until none changes, so each vertex holds the smallest
   key that reaches it; a vertex that kept its own key is a root, the smallest key of
   its component, and a backward search from the roots, each within its own colour,
   labels their components. Keys, not ids: on a graph whose edges mostly run from
   smaller to larger ids (a road network numbered along its roads) the smallest id
   would reach almost everything and a round find few roots (one-way luxembourg_osm:
   153 rounds by ids, 11 by keys).

After 2 and each round of 3, the vertices just assigned take one off their active
neighbours' counts (the two advances that start the streams of step 1 again), so
vertices left without an in- or out-neighbour are trimmed before the next round.
Last, two computes relabel every component by its smallest vertex id. An undirected
graph's strongly connected components are its connected components: :func:`gunpy.cc`.
"""

import math
from collections import namedtuple

import numba
import numpy as np

from gunpy import Enactor, Frontier, Functor, Graph, Problem, atomics
from gunpy import operators as ops
from gunpy.primitives._cache import per_graph
from gunpy.primitives.cc import count_roots
from gunpy.registry import Option, Primitive, register_primitive
from gunpy.result import Result

__all__ = ["scc", "SCCResult", "SCCProblem", "SCCEnactor", "reverse_graph"]

SCCData = namedtuple("SCCData", "labels color in_degree out_degree count best smallest "
                                "row_offsets in_offsets pivot none mult")

TRIM, SELECT, FORWARD, BACKWARD, DONE = range(5)


class Start(Functor):
    """Every vertex unassigned, with its in- and out-degree (self-loops count: such a
    vertex is never trimmed, the colouring finds it)."""

    @staticmethod
    def apply_vertex(v, data):
        out_offsets, in_offsets = data.row_offsets, data.in_offsets
        data.labels[v] = -1
        data.out_degree[v] = out_offsets[v + 1] - out_offsets[v]
        data.in_degree[v] = in_offsets[v + 1] - in_offsets[v]


@numba.njit(inline="always")
def _trim_at_zero(labels, degree, v):
    """Trim ``v`` (label it its own component) if ``degree[v]`` is 0; True if this call
    did (the CAS makes one caller the one)."""
    hit = False
    if degree[v] == 0:
        hit = atomics.cas(labels, v, -1, v) == -1
    return hit


@numba.njit(inline="always")
def _lose_one(labels, degree, v):
    """One active neighbour fewer for an active ``v``; trim it at none (True if this call
    did). Atomic: ``v`` may lose several at once; one decrement sees 1 -> 0."""
    hit = False
    if labels[v] == -1:
        if atomics.add(degree, v, -1) == 1:
            hit = atomics.cas(labels, v, -1, v) == -1
    return hit


class NoInEdges(Functor):
    """Trim the vertices without an active in-neighbour (the in-degree stream's start)."""

    @staticmethod
    def cond_vertex(v, data):
        return _trim_at_zero(data.labels, data.in_degree, v)


class NoOutEdges(Functor):
    """Trim the vertices without an active out-neighbour (the out-degree stream's start)."""

    @staticmethod
    def cond_vertex(v, data):
        return _trim_at_zero(data.labels, data.out_degree, v)


class LoseInEdge(Functor):
    """``src`` is gone: one in-neighbour fewer for ``dst``; trim ``dst`` at none."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return _lose_one(data.labels, data.in_degree, dst)


class LoseOutEdge(Functor):
    """Over the reverse graph: ``src`` is gone, one out-neighbour fewer for ``dst``."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return _lose_one(data.labels, data.out_degree, dst)


class CountOut(Functor):
    """An active out-neighbour counts 1 (``count``); the sum is the active out-degree."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        labels = data.labels
        return 1.0 if labels[dst] == -1 else 0.0

    @staticmethod
    def apply_vertex(v, data):
        data.out_degree[v] = np.int64(data.count[v])


class CountIn(CountOut):
    """Over the reverse graph: the active in-degree."""

    @staticmethod
    def apply_vertex(v, data):
        data.in_degree[v] = np.int64(data.count[v])


class Active(Functor):
    """Keep the unassigned vertices."""

    @staticmethod
    def cond_vertex(v, data):
        return data.labels[v] == -1


class Assigned(Functor):
    """Keep the vertices this round assigned (their edges leave the active counts)."""

    @staticmethod
    def cond_vertex(v, data):
        return data.labels[v] != -1


class Pivot(Functor):
    """The largest in-degree times out-degree, its vertex id in the low 32 bits."""

    @staticmethod
    def apply_vertex(v, data):
        in_degree, out_degree = data.in_degree, data.out_degree
        score = min(np.int64(in_degree[v]) * out_degree[v], 2147483647)
        atomics.max(data.best, 0, (score << 32) | v)


class Colour(Functor):
    """Each active vertex its own key as its colour (a forward-backward round: the pivot
    alone); a vertex's key: ``v * mult % n``, a bijection on the ids."""

    @staticmethod
    def apply_vertex(v, data):
        key = np.int64(v) * data.mult % data.none
        data.color[v] = key if data.pivot < 0 or v == data.pivot else data.none


class Seed(Functor):
    """Keep the vertices holding their own key (every active one; FB: the pivot)."""

    @staticmethod
    def cond_vertex(v, data):
        return data.color[v] == np.int64(v) * data.mult % data.none


class Spread(Functor):
    """Push the smaller colour to an active out-neighbour; emit it when it lowered."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        labels, color = data.labels, data.color
        c = color[src]
        hit = False
        if labels[dst] == -1 and c < color[dst]:
            # atomic min: several in-neighbours may lower dst in one step
            hit = atomics.min(color, dst, c) > c
        return hit


class Root(Seed):
    """A vertex that kept its own key has the smallest key of its component: label it."""

    @staticmethod
    def apply_vertex(v, data):
        data.labels[v] = v


class Gather(Functor):
    """Over the reverse graph: an in-neighbour of the same colour is in the component."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        labels, color = data.labels, data.color
        hit = False
        if labels[dst] == -1 and color[dst] == color[src]:
            hit = atomics.cas(labels, dst, -1, labels[src]) == -1
        return hit


class Smallest(Functor):
    """Each component's smallest vertex id (an atomic min a vertex)."""

    @staticmethod
    def apply_vertex(v, data):
        labels = data.labels
        atomics.min(data.smallest, labels[v], v)


class Relabel(Functor):
    @staticmethod
    def apply_vertex(v, data):
        labels, smallest = data.labels, data.smallest
        data.color[v] = smallest[labels[v]]


@per_graph
def reverse_graph(G):
    """``G`` with every edge turned round (its CSC as a CSR), built once per graph."""
    c = G.csc()
    return Graph(c.in_offsets, c.in_indices, directed=True, _trusted=True)


@per_graph
def symmetric_view(G):
    """A directed ``G`` whose every edge has its reverse, as often, as an undirected
    graph on the same arrays (its strongly connected components are then its connected
    components: a road network stored both ways); else None. Decided once per graph:
    ``G``'s rows sorted and equal to its reverse graph's (rows out of order: None)."""
    R = reverse_graph(G)
    same = (np.array_equal(R.row_offsets, G.row_offsets)
            and np.array_equal(R.column_indices, G.column_indices))
    return Graph(G.row_offsets, G.column_indices, directed=False, _trusted=True) if same else None


def _multiplier(n):
    """A multiplier prime to ``n`` near ``n`` over the golden ratio: ``v * mult % n``
    scrambles the ids (1 above 2**31 vertices: the products must stay in 63 bits)."""
    if n >= 2**31:
        return 1
    mult = max(1, int(n * 0.6180339887))
    while math.gcd(mult, n) != 1:
        mult += 1
    return mult


class SCCProblem(Problem):
    """``labels`` (-1 while active, then a vertex of the component), ``color``, the
    active in- and out-degrees; ``best``: the pivot's packed score; ``smallest``: each
    component's smallest id."""

    Data = SCCData

    def init(self):
        dtype = self.index_dtype
        self.reverse = reverse_graph(self.graph)
        self.labels = self.vertex_array(dtype)
        self.color = self.vertex_array(dtype)
        self.in_degree = self.vertex_array(np.int64)
        self.out_degree = self.vertex_array(np.int64)
        self.count = self.vertex_array(np.float64)
        self.smallest = self.vertex_array(dtype)
        self.best = self.backend.full(1, -1, np.int64)
        self.row_offsets = self.backend.graph(self.graph).row_offsets
        self.in_offsets = self.backend.graph(self.reverse).row_offsets
        self.pivot = -1
        self.none = self.num_vertices  # above every key: no colour yet
        self.mult = _multiplier(self.num_vertices)

    def extract(self):
        return self.take(self.color)


class SCCEnactor(Enactor):
    """Trimming, one forward-backward search, then colouring rounds (the module
    docstring), as a loop of phases: an iteration is one step of the phase at hand.

    ``TRIM``: one advance of each peeling stream (over the graph and its reverse);
    ``SELECT``: the active vertices kept, the round's colours set (the first round:
    the pivot's); ``FORWARD``: one step of colour spreading; ``BACKWARD``: one step of
    the backward search, and when it ends, the decrements that restart trimming.
    ``rounds``: the forward-backward round and the colouring rounds run.
    """

    def prepare_frontier(self, frontier):
        p = self.problem
        self.reverse = p.reverse
        self.rcontext = ops.Context(self.reverse, self.backend)  # the reverse graph's advances
        self.compute(None, Start)
        n = self.num_vertices
        # the active set's two buffers, and the streams' and searches', kept with the
        # graph's scratch arrays (each grown once: a later run on this graph makes none)
        f = self.context.kept("scc.frontiers", lambda: [
            Frontier(self.backend, max(n, 1), dtype=p.index_dtype, name=name, num_vertices=n)
            for name in ("active", "active'", "a", "a'", "b", "b'")])
        self.act, self.a, self.b = f[0:2], f[2:4], f[4:6]
        full = self.full_frontier()
        self.ins = self._filter(full, NoInEdges, self.a[0])
        self.outs = self._filter(full, NoOutEdges, self.b[0])
        self.active = full
        self.phase = TRIM if n else DONE
        self.rounds = 0

    def loop(self, frontier):
        return (self.trim, self.select, self.forward, self.backward)[self.phase]()

    def trim(self):
        # the streams in turn, each to its end (they are independent), thin steps fused;
        # the in-degree stream's frontiers are dropped when it ends (the out-degree
        # stream's steps reuse the enactor's buffers)
        if self.ins is not None:
            if self.ins.size:
                self.ins = self.advance_filter(self.ins, LoseInEdge)
                return self.ins
            self.ins = None
        if self.outs.size:
            self.outs = self.advance_filter(self.outs, LoseOutEdge, context=self.rcontext)
            return self.outs
        return self.select()

    def select(self):
        p = self.problem
        self.active = self._filter(self.active, Active, _other(self.act, self.active))
        if self.active.size == 0:
            self.phase = DONE
            return self.active
        p.pivot = -1
        if self.rounds == 0:  # forward-backward: the pivot of largest in x out degree
            self.backend.fill(p.best, -1)
            self.compute(self.active, Pivot)
            p.pivot = int(self.backend.read_head(p.best, 1)[0]) & 0xFFFFFFFF
        self.rounds += 1
        self.compute(self.active, Colour)
        self.work = self.active if p.pivot < 0 else self._filter(self.active, Seed, self.a[0])
        self.phase = FORWARD
        return self.work

    def forward(self):
        self.work = self.advance_filter(self.work, Spread)  # thin steps fused
        if self.work.size == 0:  # colours settled: the roots start the backward search
            self.work = self._filter(self.active, Root, _other(self.a, self.work))
            self.phase = BACKWARD
        return self.work

    def backward(self):
        self.work = self.advance_filter(self.work, Gather, context=self.rcontext)
        if self.work.size == 0:  # the round's components are labelled
            self.restart_trimming()
        return self.work

    def restart_trimming(self):
        """Keep the vertices left; their counts lose the round's components, and those
        left with none start the trimming streams again."""
        done = self.active
        self.active = self._filter(done, Active, _other(self.act, done))
        if self.active.size == 0:
            self.phase = DONE
            return
        self.phase = TRIM
        if done.size - self.active.size > self.active.size:  # few left: count theirs
            p, left = self.problem, self.active
            ops.neighbor_reduce(self.graph, left, CountOut, p, p.count, edges="out",
                                apply=True, context=self.context)
            ops.neighbor_reduce(self.reverse, left, CountIn, p.data(), p.count, edges="out",
                                apply=True, context=self._reverse_context())
            self.ins = self._filter(left, NoInEdges, self.a[0])
            self.outs = self._filter(left, NoOutEdges, self.b[0])
            return
        # many left: the round's components take one off their neighbours' counts
        gone = self._filter(done, Assigned, self.a[0])
        self.ins = self._advance(self.graph, gone, LoseInEdge, self.a[1])
        self.outs = self._advance(self.reverse, gone, LoseOutEdge, self.b[0])

    def is_converged(self, frontier):
        return self.phase == DONE

    def finalize(self):
        p = self.problem
        self.backend.fill(p.smallest, self.num_vertices)
        self.compute(None, Smallest)
        self.compute(None, Relabel)
        self.rcontext.flush()
        self.stats.extra["rounds"] = self.rounds

    def _filter(self, frontier, functor, out):
        return self.filter(frontier, functor, out=out)

    def _advance(self, graph, frontier, functor, out):
        ctx = self.context if graph is self.graph else self._reverse_context()
        return ops.advance(graph, frontier, functor, self.problem.data(), out=out,
                           load_balance=self.load_balance, context=ctx)

    def _reverse_context(self):
        """The reverse graph's context, logging in this iteration's record."""
        self.rcontext.record = self.context.record
        return self.rcontext


def _other(pair, frontier):
    """The frontier of ``pair`` that is not ``frontier``."""
    return pair[1] if frontier is pair[0] else pair[0]


class SCCResult(Result):
    """``labels`` (each vertex's component, named by its smallest vertex id) and
    ``num_components``."""

    _fields = ("labels",)
    _main = "labels"
    _columns = {"labels": "labels"}


def scc(G, *, load_balance="auto", backend="auto"):
    """Strongly connected components (Multistep: trimming, forward-backward, colouring).

    Parameters
    ----------
    G : gunpy.Graph
        Directed (an undirected graph's components are its connected components,
        :func:`gunpy.cc`'s); weights are ignored, self-loops and repeated edges too.
    load_balance : str, default "auto"
        How the advances map edge lists to threads (as :func:`gunpy.bfs`'s).
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    SCCResult
        ``labels`` (the graph's index dtype, int32 below 2**31 vertices: each vertex's
        component, named by its smallest vertex id), ``num_components`` and ``stats``
        (``stats.extra["rounds"]``: the forward-backward round and the colouring
        rounds). ``to_dict()`` maps node labels to component labels.

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`.
    ValueError
        An unknown backend or ``load_balance``.

    See Also
    --------
    networkx.strongly_connected_components : the same components, as sets.
    scipy.sparse.csgraph.connected_components : ``connection="strong"``.
    gunpy.cc : weakly connected components.

    Notes
    -----
    Trimming peels the vertices without an in- or out-neighbour left (two streams of
    atomic decrements, over the graph and its reverse, built once per graph); one
    forward-backward search from the vertex of largest in- times out-degree finds the
    giant component; colouring rounds (the smallest key, a scrambled id, that reaches
    a vertex, pushed along the edges, then a backward search from each colour's root
    within its colour) find the rest, trimming again after each round (the module
    docstring). Each round finds at least one component; a chain of components in key
    order the trimming does not peel takes a round each. Thin steps run many to a
    call (fused levels, over the reverse graph too). A directed graph storing every
    edge both ways is answered by :func:`gunpy.cc` (checked once per graph).

    References
    ----------
    .. [1] G. Slota, S. Rajamanickam and K. Madduri, "BFS and coloring-based parallel
       algorithms for strongly connected components and related problems", IPDPS 2014.
    .. [2] L. Fleischer, B. Hendrickson and A. Pinar, "On identifying strongly connected
       components in parallel", IPDPS workshops 2000.

    Examples
    --------
    Two cycles joined one way, and a vertex hanging off the second:

    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 1, 2, 2, 3, 4, 4], [1, 2, 0, 3, 4, 3, 5])
    >>> r = gunpy.scc(G, backend="cpu")
    >>> r.labels.tolist(), r.num_components
    ([0, 0, 0, 3, 3, 5], 3)
    """
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    U = symmetric_view(G) if G.directed else G
    if U is not None:
        from gunpy.primitives.cc import cc
        r = cc(U, load_balance=load_balance, backend=backend)
        # CC's labels where they are: a CUDA run's are on the device until read
        labels = r.labels if "labels" in vars(r) else r.device_array("labels")
        result = SCCResult(G, r.stats, labels=labels)
        result.num_components = r.num_components
        return result
    problem = SCCProblem(G, backend=backend)
    enactor = SCCEnactor(problem, load_balance=load_balance)
    stats = enactor.enact()
    # each component's smallest vertex is its own label: counted where the labels are,
    # and a CUDA run's labels stay on the device (the result copies them when first read)
    num = count_roots(enactor.context, problem.color)
    stats.extra["components"] = num
    result = SCCResult(G, stats, labels=problem.color)
    result.num_components = num
    return result


def _summary(r, G, source):
    sizes = np.bincount(r.labels, minlength=1)
    return [f"{r.num_components} strongly connected components, largest has "
            f"{int(sizes.max(initial=0))} vertices, {int(np.count_nonzero(sizes == 1))} "
            "of one vertex"]


def _warmup(G, source, backend):
    # an undirected graph runs gunpy.cc's kernels; a directed one made of its edges (one
    # way, a third both ways) reaches trimming, forward-backward and colouring
    scc(G, backend=backend)
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    keep = (src < G.column_indices) | ((src + G.column_indices) % 3 == 0)
    scc(Graph.from_edges(src[keep], G.column_indices[keep], num_vertices=G.num_vertices),
        backend=backend)


register_primitive(Primitive(
    "scc", scc, fields=SCCResult._fields, summary=_summary, warmup=_warmup,
    options=(Option("load_balance", "auto", "how the advances map edge lists to threads"),),
    networkx=("strongly_connected_components", "number_strongly_connected_components",
              "is_strongly_connected", "condensation", "lowest_common_ancestor")))
