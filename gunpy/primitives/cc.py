"""Connected components: union-find hooking over the edges, then flattening the trees.

Every vertex starts as its own tree (``label[v] = v``). *Hooking* is an
advance that emits nothing: for each edge, both ends walk to their roots
(halving the paths on the way) and, when the roots differ, the larger root is
linked under the smaller with a compare-and-swap; a CAS that fails (another
edge linked that root first) climbs to the root's new parent and tries again
(Jaiganesh and Burtscher's ECL-CC, 2018). So one pass over the edges joins
every component, on one core or many, and since a root only ever goes under a
smaller id, every root is the smallest vertex id of its tree. *Flattening*
(a compute over the vertices) points each vertex straight at its root, which
is then its label. Directed graphs give weakly connected components (edges
are followed either way).

Afforest's sampling (Sutton, Ben-Nun and Barak, 2018) orders the work: the
first pass hooks only the first ``sample`` edges of every vertex (those to a
smaller id; :mod:`gunpy.operators.sample` visits no other edge), which already
joins most of a large component. The largest component's root is taken from
1,024 sampled vertices; a filter that flattens the trees as it goes keeps the
vertices outside that component, and the second pass hooks all their edges:
on an undirected graph an edge from the largest component is also stored the
other way, from a vertex the filter kept (or both ends are already joined).
``sample=0``, and a directed graph's second pass, hook every edge (on an
undirected graph, the copy whose source is the larger id).
"""

from collections import namedtuple

import numba
import numpy as np

from gunpy import Enactor, Frontier, Functor, Problem, atomics
from gunpy import operators as ops
from gunpy.registry import Option, Primitive, register_primitive
from gunpy.result import Result

__all__ = ["cc", "CCResult", "CCProblem", "CCEnactor"]

CCData = namedtuple("CCData", "labels lower_only skip")

SAMPLE, REST, ALL = 0, 1, 2

#: a vertex id as an array index: unsigned, so numba emits no fix-up for negative indices
u = np.uint64


class Hook(Functor):
    """Join the trees of an edge's two ends (ECL-CC's hook); keeps no edge."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        labels = data.labels
        # one early return: numba prunes the reference counts of such a body (a parallel
        # build pays none per edge), not of one with several exits
        if data.lower_only and dst > src:
            return False  # the pass hooks the copy (dst, src), or needs only some edges
        # walk both ends to their roots, halving the paths (racy writes are benign:
        # a label only ever moves to an ancestor). Ids index as unsigned (``u(x)``):
        # numba then drops every access's fix-up for negative indices (one core's
        # hooking pass ~25 % faster)
        a = src
        while labels[u(a)] != a:
            up = labels[u(labels[u(a)])]
            labels[u(a)] = up
            a = up
        b = dst
        while labels[u(b)] != b:
            up = labels[u(labels[u(b)])]
            labels[u(b)] = up
            b = up
        # link the larger root under the smaller, so every root is its tree's smallest
        # id; the CAS fails when another edge linked that root first: climb and retry
        # (no break, for the pruning too)
        while a != b:
            if a > b:
                a, b = b, a
            seen = atomics.cas(labels, u(b), b, a)
            b = a if seen == b else seen
        return False


@numba.njit(inline="always")
def _flatten(labels, v):
    """Point ``v`` straight at its root; return the root."""
    root = labels[u(v)]
    while labels[u(root)] != root:
        root = labels[u(root)]
    labels[u(v)] = root
    return root


class Outside(Functor):
    """Flatten each vertex's path; keep those outside the largest component."""

    @staticmethod
    def cond_vertex(v, data):
        return _flatten(data.labels, v) != data.skip


class Flatten(Functor):
    """Point every vertex straight at its root (no hook runs meanwhile)."""

    @staticmethod
    def apply_vertex(v, data):
        _flatten(data.labels, v)


#: the sampled vertices' roots: the labels, the sampled ids, their roots (one slot each)
PickData = namedtuple("PickData", "labels picks roots")


class PickRoot(Functor):
    """Over the slots ``0..k-1``: the root of sampled vertex ``picks[i]`` (its path
    flattened on the way, as :class:`Outside` does)."""

    @staticmethod
    def apply_vertex(i, data):
        data.roots[i] = _flatten(data.labels, data.picks[i])


#: the root count's data: the labels and a one-item counter
RootData = namedtuple("RootData", "labels count")


class CountRoots(Functor):
    """Count the vertices that are their own label (one per component, once flattened)."""

    @staticmethod
    def apply_vertex(v, data):
        if data.labels[v] == v:
            atomics.add(data.count, 0, 1)


def count_roots(context, labels):
    """The vertices that are their own label (each component's root once the trees are
    flat), counted where the labels are: a fill, a compute and one 8-byte read."""
    count = context.scratch("cc.roots", 1, np.int64)
    context.backend.fill(count, 0)
    ops.compute(context.graph, None, CountRoots, RootData(labels, count), context=context)
    return int(context.backend.read(count, 0))


class CCProblem(Problem):
    Data = CCData

    def init(self):
        self.labels = self.vertex_array(self.index_dtype)

    def reset(self, sample=2):
        """Every vertex its own tree; Afforest hooks the first ``sample`` edges first (0: all)."""
        if isinstance(sample, bool) or int(sample) != sample or sample < 0:
            raise ValueError(f"sample must be a non-negative integer, got {sample!r}")
        from gunpy.operators.reduce import iota
        iota(self.backend, self.labels, self.num_vertices)
        self.sample = int(sample)
        self.phase = SAMPLE if self.sample > 0 else ALL
        self.skip = -1

    @property
    def lower_only(self):
        """Whether this pass's hooks take only edges to a smaller id: the sampled ones (any
        subset will do), and on an undirected graph all of them (each is stored twice)."""
        return self.phase == SAMPLE or (self.phase == ALL and not self.graph.directed)

    def extract(self):
        return self.to_host(self.labels)


class CCEnactor(Enactor):
    """The CC loop: hook the sampled edges; then flatten, hook the rest and flatten again.

    Parameters
    ----------
    problem : CCProblem
        Reset (with its Afforest ``sample``) before :meth:`enact`.
    load_balance : {"auto", "thread_mapped", "twc", "merge_path"}, default "auto"
        How the hooking advance maps edge lists to threads.
    **kw
        Other :class:`gunpy.Enactor` options (``max_iterations``, ``auto_threshold``).
    """

    def __init__(self, problem, *, load_balance="auto", **kw):
        super().__init__(problem, load_balance=load_balance, **kw)

    def prepare_frontier(self, frontier):
        self.vertices = self.full_frontier("vertex")
        self.vertices.known_edges = self.graph.num_edges  # no degree sum to make

    def loop(self, frontier):
        p = self.problem
        if p.phase == SAMPLE:  # each vertex's first edges (Afforest)
            ops.sample(self.graph, None, Hook, p, k=p.sample, context=self.context)
            p.skip = self.largest_component()
            p.phase = REST if p.skip >= 0 else ALL
            return self.vertices
        # flattening the trees as it goes, a filter keeps the vertices whose edges are left
        todo = self.filter(self.vertices, Outside) if p.phase == REST else self.vertices
        self.advance(todo, Hook, output="none")  # links trees, emits nothing
        self.compute(None, Flatten)
        # every edge has been hooked: done (an empty frontier whose size needs no read)
        return self.start_frontier()

    def largest_component(self):
        """The root most common among 1024 sampled vertices (undirected graphs only)."""
        n = self.num_vertices
        if self.graph.directed or n == 0:
            return -1
        k = min(1024, n)
        backend = self.backend
        # the same vertices every run on this graph; their roots found where the labels
        # are (a CUDA run copies k roots down, not the labels)
        picks, slots, length, roots = self.context.kept("cc.picks", lambda: (
            backend.asarray(np.random.default_rng(0).integers(0, n, k)),
            backend.asarray(np.arange(k, dtype=self.context.index_dtype)),
            backend.asarray(np.array([k, 0, -1], dtype=np.int64)),
            backend.empty(k, np.int64)))
        ops.compute(self.graph, Frontier.view(backend, slots, k, name="cc.picks",
                                              num_vertices=n, length=length),
                    PickRoot, PickData(self.problem.labels, picks, roots), context=self.context)
        values, counts = np.unique(backend.head_to_host(roots, k), return_counts=True)
        return int(values[np.argmax(counts)])

    def is_converged(self, frontier):
        return self.iteration > 0 and super().is_converged(frontier)


class CCResult(Result):
    """``labels`` (int32: the smallest vertex id of each component) and ``num_components``."""

    _fields = ("labels",)
    _main = "labels"
    _columns = {"labels": "labels"}


def cc(G, *, sample=2, load_balance="auto", backend="auto"):
    """Connected components (weakly connected on directed graphs).

    Parameters
    ----------
    G : gunpy.Graph
    sample : int, default 2
        Afforest sampling: hook the first ``sample`` edges of every vertex first
        (0: hook every edge in one pass).
    load_balance : str, default "auto"
        How the hooking advance maps edge lists to threads (as :func:`gunpy.bfs`'s).
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    CCResult
        ``labels`` (each vertex's component, named by its smallest vertex id),
        ``num_components`` and ``stats``.

    Raises
    ------
    ValueError
        ``sample`` is not a non-negative integer; an unknown ``load_balance``.

    See Also
    --------
    networkx.connected_components, networkx.weakly_connected_components,
    scipy.sparse.csgraph.connected_components

    Notes
    -----
    Two iterations: the sampled edges, then every edge of the vertices outside
    the largest component (one, over every edge, with ``sample=0``), each a
    single pass (compare-and-swap hooks that retry when they lose a race), then
    a pass that points every vertex at its root (the module docstring).

    References
    ----------
    .. [1] J. Jaiganesh and M. Burtscher, "A high-performance connected components
       implementation for GPUs", HPDC 2018 (ECL-CC).
    .. [2] M. Sutton, T. Ben-Nun and A. Barak, "Optimizing parallel graph connectivity
       computation via subgraph sampling", IPDPS 2018 (Afforest).

    Examples
    --------
    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 3], [1, 4], num_vertices=5, directed=False)
    >>> r = gunpy.cc(G, backend="cpu")
    >>> r.labels.tolist(), r.num_components
    ([0, 0, 2, 3, 3], 3)
    """
    problem = CCProblem(G, backend=backend)
    problem.reset(sample=sample)
    enactor = CCEnactor(problem, load_balance=load_balance)
    stats = enactor.enact()
    # a CUDA run's labels stay on the device: the result copies them when first read
    num = count_roots(enactor.context, problem.labels)
    stats.extra["components"] = num
    result = CCResult(G, stats, labels=problem.labels)
    result.num_components = num
    return result


def _summary(r, G, source):
    sizes = np.bincount(r.labels)
    return [f"{r.num_components} components, largest has {int(sizes.max(initial=0))} vertices"]


register_primitive(Primitive(
    "cc", cc, fields=CCResult._fields, summary=_summary,
    options=(Option("sample", 2, "Afforest: neighbours hooked first (0: none)"),
             Option("load_balance", "auto", "how the hooking advance maps edge lists to threads")),
    networkx=("connected_components", "weakly_connected_components", "is_connected",
              "number_connected_components", "is_weakly_connected",
              "number_weakly_connected_components", "is_tree", "is_forest", "is_branching",
              "is_arborescence", "k_edge_components"), dist="gunpy.dist:cc"))
