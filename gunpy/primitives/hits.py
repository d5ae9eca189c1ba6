"""HITS: Kleinberg's hubs and authorities by the power iteration.

A good hub points to good authorities and a good authority is pointed to by
good hubs: ``a = A^T h`` and ``h = A a`` (``A`` the weighted adjacency matrix),
each normalised to sum 1, repeated from the uniform hubs until the hubs change
by less than ``tol`` (their L1 change) or ``max_iter`` updates. The limit is
the principal singular vector pair of ``A``, which is what networkx's ``hits``
computes (with ARPACK's ``svds``): where the largest singular value is simple
the two agree to the tolerance; where it is repeated (an undirected bipartite
graph, two identical components) any vector of its space is an answer, and the
power iteration gives the one nearest the uniform start.

Two operators an iteration, each one pass over the vertices (Gunrock's HITS,
two alternating sparse products):

1. :func:`gunpy.operators.neighbor_reduce` over out-edges: ``h[v]`` sums its
   successors' authorities, scaled by the last sum of authorities; its apply
   step returns ``h[v]`` (``aggregates=1``: the sum of hubs, no extra pass);
2. :func:`gunpy.operators.neighbor_reduce` over in-edges: ``a[v]`` sums its
   predecessors' hubs, scaled by that sum; its apply step returns ``a[v]`` and
   the change of ``h[v]`` (``aggregates=2``: the sum of authorities and the L1
   change of the normalised hubs).

Hubs are kept unnormalised in two arrays (this iteration's and the last, with
their sums on the host), so normalising costs no pass of its own until the end:
one compute scales the hubs and authorities where they are, so a CUDA run's
result stays on the device.
"""

from collections import namedtuple

import numpy as np

from gunpy import Enactor, Functor, Graph, Problem
from gunpy import operators as ops
from gunpy.registry import Option, Primitive, register_primitive, top_vertices
from gunpy.result import Result

__all__ = ["hits", "HITSResult", "HITSProblem", "HITSEnactor"]

HITSData = namedtuple("HITSData", "hub last auth hub_scale last_scale auth_scale")


class Uniform(Functor):
    """The first hubs: 1 each (their sum, n, is the scale)."""

    @staticmethod
    def apply_vertex(v, data):
        data.hub[v] = 1.0
        data.last[v] = 1.0


class Hubs(Functor):
    """``h[v]`` = the authorities of ``v``'s successors (normalised); returns ``h[v]``."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return data.auth[dst] * weight * data.auth_scale

    @staticmethod
    def apply_vertex(v, data):
        return (data.hub[v],)


class Authorities(Functor):
    """``a[v]`` = the hubs of ``v``'s predecessors (normalised); returns ``a[v]`` and the
    change of ``v``'s normalised hub since the last iteration."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return data.hub[src] * weight * data.hub_scale

    @staticmethod
    def apply_vertex(v, data):
        change = abs(data.hub[v] * data.hub_scale - data.last[v] * data.last_scale)
        return (data.auth[v], change)


class Normalize(Functor):
    """Scale ``v``'s hub and authority by their sums' inverses, where they are (no copy)."""

    @staticmethod
    def apply_vertex(v, data):
        data.hub[v] = data.hub[v] * data.hub_scale
        data.auth[v] = data.auth[v] * data.auth_scale


class HITSProblem(Problem):
    """This iteration's hubs (``hub``), the last iteration's (``last``), the authorities
    (``auth``), each unnormalised, and the scales that normalise them (1 / their sum)."""

    Data = HITSData

    def init(self):
        self.hub = self.vertex_array(np.float64)
        self.last = self.vertex_array(np.float64)
        self.auth = self.vertex_array(np.float64)
        self.hub_scale = self.last_scale = self.auth_scale = 1.0

    def swap(self):
        self.hub, self.last = self.last, self.hub
        self.last_scale = self.hub_scale

    def normalize(self, context):
        """Scale ``hub`` and ``auth`` to sum 1 in place, on ``context``'s backend (one
        compute, no copy to the host); their scales become 1."""
        ops.compute(self.graph, None, Normalize, self, context=context)
        self.hub_scale = self.auth_scale = 1.0

    def extract(self):
        """``(hubs, authorities)`` on the host, each summing to 1."""
        return (self.to_host(self.hub) * self.hub_scale,
                self.to_host(self.auth) * self.auth_scale)


class HITSEnactor(Enactor):
    """The power iteration: hubs from authorities, authorities from hubs, until the
    hubs' L1 change is below ``tol`` or ``max_iter`` hub updates.

    Attributes
    ----------
    error : float
        The last iteration's L1 change of the (normalised) hubs.
    """

    def __init__(self, problem, *, tol=1e-8, max_iter=100):
        if not (tol >= 0.0):
            raise ValueError(f"tol must be >= 0, got {tol!r}")
        if isinstance(max_iter, bool) or int(max_iter) != max_iter or max_iter < 0:
            raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
        super().__init__(problem)
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.error = np.inf

    def prepare_frontier(self, frontier):
        p = self.problem
        self.error = np.inf
        self.compute(None, Uniform)
        p.hub_scale = p.last_scale = 1.0 / max(self.num_vertices, 1)
        self._authorities()
        self.error = np.inf  # no update yet (the two hub arrays are equal)

    def _authorities(self):
        p = self.problem
        total, self.error = ops.neighbor_reduce(self.graph, None, Authorities, p, p.auth,
                                                edges="in", aggregates=2, context=self.context)
        p.auth_scale = 1.0 / total if total > 0 else 0.0

    def loop(self, frontier):
        p = self.problem
        p.swap()  # this iteration's hubs go where the last iteration's were
        total, = ops.neighbor_reduce(self.graph, None, Hubs, p, p.hub, edges="out",
                                     aggregates=1, context=self.context)
        p.hub_scale = 1.0 / total if total > 0 else 0.0
        self._authorities()
        return frontier

    @property
    def converged(self):
        """True when the last update changed the hubs by less than ``tol``."""
        return bool(self.num_vertices == 0 or self.error < self.tol)

    def is_converged(self, frontier):
        return (self.num_vertices == 0 or self.problem.auth_scale == 0.0
                or self.iteration >= self.max_iter or self.error < self.tol)

    def finalize(self):
        self.stats.load_balance, self.stats.direction = "neighbor_reduce", "pull"
        if self.problem.auth_scale == 0.0:  # no edge weight: nothing points anywhere
            self.problem.hub_scale = 0.0
            self.error = 0.0


class HITSResult(Result):
    """``hubs`` and ``authorities`` (float64, each summing to 1), ``iterations`` and
    ``converged``."""

    _fields = ("hubs", "authorities")
    _main = "hubs"
    _columns = {"hubs": "hub", "authorities": "authority"}


def hits(G, *, max_iter=100, tol=1e-8, backend="auto"):
    """Hubs and authorities (HITS) by the power iteration, as networkx's ``hits``.

    Parameters
    ----------
    G : gunpy.Graph
        Directed or undirected; edge weights (if any) weight the adjacency matrix,
        as networkx's ``weight`` attribute does.
    max_iter : int, default 100
        The most hub updates.
    tol : float, default 1e-8
        Stop when an update changes the (normalised) hubs by less than ``tol`` in
        L1; 0 runs ``max_iter`` updates.
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    HITSResult
        ``hubs`` and ``authorities`` (float64, each summing to 1; all 0 on a graph
        without edge weight), ``iterations`` (hub updates), ``converged`` (never
        raises for non-convergence) and ``stats``. ``to_dict()`` maps node labels to
        hubs (``to_dict("authorities")``: to authorities).

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`.
    ValueError
        ``tol`` negative, ``max_iter`` not a non-negative integer, an unknown backend.

    See Also
    --------
    networkx.hits : the principal singular vectors by ARPACK (``svds``): the same
        values where the largest singular value of the adjacency matrix is simple.
    pagerank

    Notes
    -----
    Each iteration is two neighbour reductions, over out-edges (hubs) and in-edges
    (authorities), whose apply steps return the sums that normalise them and the
    hubs' L1 change (the module docstring). Where the largest singular value is
    repeated (an undirected bipartite graph, such as a tree or a grid; two equal
    components), the answer is not unique: the power iteration gives the one
    nearest the uniform start, ARPACK another.

    References
    ----------
    .. [1] J. Kleinberg, "Authoritative sources in a hyperlinked environment",
       Journal of the ACM 46(5), 1999.
    .. [2] A. Langville and C. Meyer, "A survey of eigenvector methods of web
       information retrieval", SIAM Review 47(1), 2005.

    Examples
    --------
    Langville and Meyer's example (networkx's test): 1 is the best hub, 5 the best
    authority.

    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([1, 1, 2, 3, 5, 5, 6], [3, 5, 1, 5, 4, 3, 5])
    >>> r = gunpy.hits(G, backend="cpu")
    >>> r.hubs[1:].round(6).tolist()
    [0.366025, 0.0, 0.211325, 0.0, 0.211325, 0.211325]
    >>> r.authorities[1:].round(6).tolist()
    [0.0, 0.0, 0.366025, 0.133975, 0.5, 0.0]
    >>> r.converged
    True
    """
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    problem = HITSProblem(G, backend=backend)
    enactor = HITSEnactor(problem, tol=tol, max_iter=max_iter)
    stats = enactor.enact()
    problem.normalize(enactor.context)
    # a CUDA run's arrays stay on the device: the result copies them when first read
    result = HITSResult(G, stats, hubs=problem.hub, authorities=problem.auth)
    result.iterations = stats.iterations
    result.converged = enactor.converged
    return result


def _summary(r, G, source):
    return [f"{r.iterations} iterations, converged={r.converged}",
            "hubs: " + top_vertices(r.hubs), "authorities: " + top_vertices(r.authorities)]


register_primitive(Primitive(
    "hits", hits, fields=HITSResult._fields, summary=_summary, weighted=True,
    options=(Option("max_iter", 100, "the most hub updates"),
             Option("tol", 1e-8, "L1 tolerance of the hubs")),
    networkx=("hits",)))
