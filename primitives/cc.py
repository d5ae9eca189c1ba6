"""Connected components: Soman's hooking and pointer jumping until nothing changes.

Gunrock section 5.1.4. Every vertex starts as its own tree (``label[v] = v``).
*Hooking* is a filter over an edge frontier: an edge whose endpoints carry
different labels links one tree's root under the other's and stays in the
frontier; an edge inside one tree leaves it for good. The hook direction
alternates between iterations (larger root under smaller, then the reverse),
which speeds convergence. *Pointer jumping* is a filter over vertices that
replaces each label by its label's label until every tree is a star. The loop
ends when no edge is left. Directed graphs give weakly connected components
(edges are followed either way). Finally each label becomes the smallest vertex
id of its component.
"""

from collections import namedtuple

import numpy as np

from gunpy import Enactor, Functor, Problem, atomics
from gunpy.result import Result

__all__ = ["cc", "CCResult", "CCProblem", "CCEnactor"]

CCData = namedtuple("CCData", "labels smallest")


class HookDown(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        a, b = data.labels[src], data.labels[dst]
        if a == b:
            return False  # both ends in one tree: done with this edge
        atomics.min(data.labels, max(a, b), min(a, b))
        return True


class HookUp(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        a, b = data.labels[src], data.labels[dst]
        if a == b:
            return False
        atomics.max(data.labels, min(a, b), max(a, b))
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
        atomics.min(data.smallest, data.labels[v], v)


class Relabel(Functor):
    @staticmethod
    def apply_vertex(v, data):
        data.labels[v] = data.smallest[data.labels[v]]


class CCProblem(Problem):
    Data = CCData

    def init(self):
        self.labels = self.vertex_array(self.index_dtype)
        self.smallest = self.vertex_array(self.index_dtype)

    def reset(self):
        from gunpy.operators.reduce import iota
        iota(self.backend, self.labels, self.num_vertices)
        self.backend.fill(self.smallest, self.num_vertices)

    def extract(self):
        return self.to_host(self.labels)


class CCEnactor(Enactor):
    def prepare_frontier(self, frontier):
        self.edges = self.full_frontier("edge")
        self.vertices = self.full_frontier("vertex")

    def loop(self, frontier):
        hook = HookDown if self.iteration % 2 == 0 else HookUp
        self.edges = self.filter(self.edges, hook)
        self.filter_until_empty(self.vertices, Jump)
        return self.edges

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


def cc(G, *, load_balance="auto", backend="auto"):
    """Connected components (weakly connected on directed graphs).

    Parameters
    ----------
    G : gunpy.Graph
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
    problem.reset()
    enactor = CCEnactor(problem, load_balance=load_balance)
    stats = enactor.enact()
    labels = problem.extract()
    num = int(np.count_nonzero(labels == np.arange(G.num_vertices)))
    stats.extra["components"] = num
    result = CCResult(G, stats, labels=labels)
    result.num_components = num
    return result
