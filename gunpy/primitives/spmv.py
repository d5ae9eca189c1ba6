"""SpMV: ``y = A x``, the graph's (weighted) adjacency matrix times a dense vector.

Gunrock's SpMV: row ``v`` of ``A`` is ``v``'s out-edges, so ``y[v]`` sums
``A[v, u] * x[u]`` over them. One operator, :func:`gunpy.operators.neighbor_reduce`
over out-edges (a gather: one writer per vertex, no atomics; on CUDA a thread
or a warp per row, chosen by the average degree or by ``mapping=``). Unweighted
graphs count every edge as 1, as ``G.to_scipy()`` does.
"""

from collections import namedtuple

import numpy as np

from gunpy import Enactor, Functor, Graph, Problem
from gunpy import operators as ops
from gunpy.registry import Option, Primitive, register_primitive, top_vertices
from gunpy.result import Result

__all__ = ["spmv", "SpMVResult", "SpMVProblem", "SpMVEnactor"]

SpMVData = namedtuple("SpMVData", "x")


class Product(Functor):
    """An edge ``v -> u``'s term of row ``v``: ``A[v, u] * x[u]``."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return weight * data.x[dst]


class SpMVProblem(Problem):
    """The input vector ``x`` (on the backend) and the product ``y``."""

    Data = SpMVData

    def init(self):
        self.y = self.vertex_array(np.float64)
        self.x = None

    def reset(self, x):
        """``x``: one float per vertex, copied to the backend."""
        host = np.ascontiguousarray(x, dtype=np.float64)
        if host.shape != (self.num_vertices,):
            raise ValueError(f"x must have one value per vertex ({self.num_vertices}), "
                             f"got shape {np.shape(x)}")
        self.x = self.backend.asarray(host)

    def extract(self):
        return self.take(self.y)


class SpMVEnactor(Enactor):
    """One iteration: the neighbour reduction over every vertex's out-edges."""

    def __init__(self, problem, *, mapping="auto"):
        super().__init__(problem, max_iterations=1)
        self.mapping = mapping

    def prepare_frontier(self, frontier):
        pass

    def loop(self, frontier):
        ops.neighbor_reduce(self.graph, None, Product, self.problem, self.problem.y,
                            edges="out", mapping=self.mapping, context=self.context)
        return frontier

    def is_converged(self, frontier):
        return self.iteration >= 1

    def finalize(self):
        self.stats.load_balance, self.stats.direction = self.mapping, "pull"


class SpMVResult(Result):
    """``y`` (float64: ``A @ x``)."""

    _fields = ("y",)
    _main = "y"
    _columns = {"y": "y"}


def spmv(G, x=None, *, mapping="auto", backend="auto"):
    """The product of ``G``'s adjacency matrix and a dense vector: ``G.to_scipy() @ x``.

    Parameters
    ----------
    G : gunpy.Graph
        ``A[v, u]`` is the weight of the edge ``v -> u`` (1 when unweighted; an
        undirected graph's matrix is symmetric).
    x : array_like, optional
        One number per vertex; None: ones (``y`` is then the weighted out-degrees,
        what ``gunpy run spmv`` computes).
    mapping : {"auto", "thread", "warp"}, default "auto"
        How CUDA maps rows to threads (a thread or a warp a row; "auto" by the
        average degree); the CPU runs rows in parallel either way.
    backend : {"auto", "cuda", "cpu"}, default "auto"

    Returns
    -------
    SpMVResult
        ``y`` (float64, one value per vertex) and ``stats``.

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`.
    ValueError
        ``x`` has not one value per vertex; an unknown mapping or backend.

    See Also
    --------
    scipy.sparse.csr_array.dot : the same product.
    gunpy.blas.semiring.plus_times : ``plus_times(A @ u)``, the GraphBLAS spelling.

    Notes
    -----
    One :func:`gunpy.operators.neighbor_reduce` over out-edges: each row is summed
    by one writer, so the result does not depend on the threads.

    Examples
    --------
    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 0, 1, 2], [1, 2, 2, 0], [2.0, 3.0, 4.0, 5.0])
    >>> gunpy.spmv(G, [1.0, 10.0, 100.0], backend="cpu").y.tolist()
    [320.0, 400.0, 5.0]
    """
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    from gunpy.operators.neighbor_reduce import MAPPINGS
    if mapping not in MAPPINGS:
        raise ValueError(f"unknown mapping {mapping!r}; valid: {', '.join(map(repr, MAPPINGS))}")
    problem = SpMVProblem(G, backend=backend)
    problem.reset(np.ones(G.num_vertices) if x is None else x)
    stats = SpMVEnactor(problem, mapping=mapping).enact()
    return SpMVResult(G, stats, y=problem.y)  # a CUDA run's stays on the device


def _summary(r, G, source):
    return [f"sum of y {r.y.sum():.6g} (x = ones: the weighted out-degrees)", top_vertices(r.y)]


register_primitive(Primitive(
    "spmv", spmv, fields=SpMVResult._fields, summary=_summary, weighted=True,
    options=(Option("mapping", "auto", "CUDA rows to threads", choices=("auto", "thread",
                                                                         "warp")),),
    # spmv of ones gives the degrees; the structure questions read the same CSR
    networkx=("degree_centrality", "in_degree_centrality", "out_degree_centrality",
              "isolates", "number_of_isolates", "is_isolate", "reciprocity",
              "overall_reciprocity", "number_of_selfloops", "is_negatively_weighted",
              "eigenvector_centrality", "katz_centrality", "average_neighbor_degree",
              "average_degree_connectivity", "voterank", "preferential_attachment",
              "is_empty", "complement", "reverse")))
