"""Connected components: Soman's hooking and pointer jumping until nothing changes.

Gunrock section 5.1.4. Every vertex starts as its own tree (``label[v] = v``).
*Hooking* is a filter over an edge frontier: each end walks to its tree's root
(halving the path on the way); an edge whose roots differ links one root under
the other and stays in the frontier, an edge inside one tree leaves it for
good. The hook direction alternates between iterations (larger root under
smaller, then the reverse), which speeds convergence. *Pointer jumping* is a filter over vertices that
replaces each label by its label's label until every tree is a star. The loop
ends when no edge is left. Directed graphs give weakly connected components
(edges are followed either way). Finally each label becomes the smallest vertex
id of its component.

Afforest's sampling (Sutton, Ben-Nun and Barak, 2018) orders the work: the
first pass hooks only the first ``sample`` edges of every vertex, which already
joins most of a scale-free graph's giant component; after compressing, the
second pass skips the edges of vertices in the (sampled) largest component,
whose other ends reach it from their own side on an undirected graph. Later
passes retry the edges whose hooks may have raced. ``sample=0`` is Soman's
plain hooking from the first pass.
"""

from collections import namedtuple

import numpy as np

from gunpy import Enactor, Functor, Problem, atomics
from gunpy.registry import Option, Primitive, register_primitive
from gunpy.result import Result

__all__ = ["cc", "CCResult", "CCProblem", "CCEnactor"]

CCData = namedtuple("CCData", "labels smallest upward phase sample skip row_offsets")

SAMPLE, REST, ALL = 0, 1, 2


class Hook(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        labels = data.labels
        if data.phase == SAMPLE and edge - data.row_offsets[src] >= data.sample:
            return False  # not among src's first edges: the next pass sees it
        if data.phase == REST and labels[src] == data.skip:
            return False  # src is in the largest component: dst reaches it from its side
        # walk both ends to their roots, halving the paths (racy writes are benign:
        # a label only ever moves to an ancestor)
        a = src
        while labels[a] != a:
            up = labels[labels[a]]
            labels[a] = up
            a = up
        b = dst
        while labels[b] != b:
            up = labels[labels[b]]
            labels[b] = up
            b = up
        if a == b:
            return False  # both ends in one tree: done with this edge
        if data.upward:
            atomics.max(labels, min(a, b), max(a, b))
        else:
            atomics.min(labels, max(a, b), min(a, b))
        return True


class Jump(Functor):
    @staticmethod
    def cond_vertex(v, data):
        parent = data.labels[v]
        grand = data.labels[parent]
        if parent == grand:
            return False  # v points at a root: its tree is a star here
        data.labels[v] = grand
        return True


class SmallestId(Functor):
    @staticmethod
    def apply_vertex(v, data):
        label = data.labels[v]
        # read first: in an ascending pass only a component's first vertex lowers it,
        # the others skip the atomic (a locked instruction even when it changes nothing)
        if v < data.smallest[label]:
            atomics.min(data.smallest, label, v)


class Relabel(Functor):
    @staticmethod
    def apply_vertex(v, data):
        data.labels[v] = data.smallest[data.labels[v]]


class CCProblem(Problem):
    Data = CCData

    def init(self):
        self.labels = self.vertex_array(self.index_dtype)
        self.smallest = self.vertex_array(self.index_dtype)
        self.row_offsets = self.backend.graph(self.graph).row_offsets

    def reset(self, sample=2):
        """Every vertex its own tree; Afforest hooks the first ``sample`` edges first (0: all)."""
        if isinstance(sample, bool) or int(sample) != sample or sample < 0:
            raise ValueError(f"sample must be a non-negative integer, got {sample!r}")
        from gunpy.operators.reduce import iota
        iota(self.backend, self.labels, self.num_vertices)
        self.backend.fill(self.smallest, self.num_vertices)
        self.upward = 0
        self.sample = int(sample)
        self.phase = SAMPLE if self.sample > 0 else ALL
        self.skip = -1

    def extract(self):
        return self.to_host(self.labels)


class CCEnactor(Enactor):
    """The CC loop: hook the edges that remain, jump pointers, until no edge is left.

    Parameters
    ----------
    problem : CCProblem
        Reset (with its Afforest ``sample``) before :meth:`enact`.
    load_balance : {"auto", "thread_mapped", "twc", "merge_path"}, default "auto"
        Accepted for symmetry with the traversals (hooking filters an edge frontier).
    **kw
        Other :class:`gunpy.Enactor` options (``max_iterations``, ``auto_threshold``).
    """

    def __init__(self, problem, *, load_balance="auto", **kw):
        super().__init__(problem, load_balance=load_balance, **kw)

    def prepare_frontier(self, frontier):
        self.edges = self.full_frontier("edge")
        self.vertices = self.full_frontier("vertex")

    def loop(self, frontier):
        p = self.problem
        p.upward = self.iteration % 2
        if p.phase == SAMPLE:
            self.filter(self.edges, Hook)           # hooks the sampled edges, keeps none
            self.filter_until_empty(self.vertices, Jump)
            p.phase, p.skip = REST, self.largest_component()
            return self.edges
        self.edges = self.filter(self.edges, Hook)  # keeps the edges that hooked
        p.phase, p.skip = ALL, -1
        self.filter_until_empty(self.vertices, Jump)
        return self.edges

    def largest_component(self):
        """The label most common among 1024 sampled vertices (undirected graphs only)."""
        if self.graph.directed or self.num_vertices == 0:
            return -1
        rng = np.random.default_rng(0)
        labels = self.problem.to_host(self.problem.labels)
        picks = labels[rng.integers(0, self.num_vertices, min(1024, self.num_vertices))]
        values, counts = np.unique(picks, return_counts=True)
        return int(values[np.argmax(counts)])

    def is_converged(self, frontier):
        if self.iteration == 0:
            return False
        return super().is_converged(self.edges)

    def finalize(self):
        self.compute(self.vertices, SmallestId)
        self.compute(self.vertices, Relabel)


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
        (0: plain Soman hooking over all edges from the start).
    load_balance : str, default "auto"
        Accepted for symmetry with the traversals (hooking filters an edge frontier).
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    CCResult
        ``labels`` (each vertex's component, named by its smallest vertex id),
        ``num_components`` and ``stats``.

    See Also
    --------
    networkx.connected_components, networkx.weakly_connected_components,
    scipy.sparse.csgraph.connected_components

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
    labels = problem.extract()
    num = int(np.count_nonzero(labels == np.arange(G.num_vertices)))
    stats.extra["components"] = num
    result = CCResult(G, stats, labels=labels)
    result.num_components = num
    return result


def _summary(r, G, source):
    sizes = np.bincount(r.labels)
    return [f"{r.num_components} components, largest has {int(sizes.max(initial=0))} vertices"]


register_primitive(Primitive(
    "cc", cc, fields=CCResult._fields, summary=_summary,
    options=(Option("sample", 2, "Afforest: neighbours hooked first (0: none)"),
             Option("load_balance", "auto", "accepted for symmetry with the traversals")),
    networkx=("connected_components", "weakly_connected_components"), dist="gunpy.dist:cc"))
