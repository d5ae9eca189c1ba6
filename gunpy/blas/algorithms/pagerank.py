"""PageRank in GraphBLAS (plus_times), with networkx's dangling rule and stop test.

::

    out  = A.reduce_rowwise(plus), without zeros     # out-weight per vertex
    c    = r ./ out                                 # what each vertex sends per unit weight
    recv = c plus.times A                           # pulled: every row gathers (dense)
    r'   = alpha * recv + (alpha * dangling + 1 - alpha) / n
"""

import numpy as np

from gunpy.blas import binary, semiring, unary
from gunpy.blas.algorithms._common import Timer, as_matrix
from gunpy.blas.vector import Vector, full_vector
from gunpy.primitives.pagerank import PageRankResult

__all__ = ["pagerank"]


def pagerank(G, *, alpha=0.85, tol=1e-6, max_iter=100, backend="auto"):
    """Ranks with :func:`gunpy.pagerank`'s meaning (``nx.pagerank``).

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.blas import algorithms
    >>> G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=True)
    >>> algorithms.pagerank(G, backend="cpu").rank.round(4).tolist()
    [0.3333, 0.3333, 0.3333]
    """
    A, graph = as_matrix(G, backend)
    n = A.nrows
    timer = Timer(A)
    if n == 0:
        result = PageRankResult(graph, timer.stats(0), rank=np.zeros(0))
        result.iterations, result.converged = 0, True
        return result
    out = A.reduce_rowwise().new().select("!=", 0).new()
    r = full_vector(np.float64, n, 1.0 / n, A.backend)
    it, converged = 0, False
    while it < max_iter:
        it += 1
        c = r.ewise_mult(out, binary.truediv).new()
        dangling_r = Vector(np.float64, n, backend=A.backend)
        dangling_r(~out.S) << r
        dangling = dangling_r.reduce().value or 0.0
        recv = semiring.plus_times(c @ A).new(direction="pull")
        new = full_vector(np.float64, n, (alpha * dangling + 1.0 - alpha) / n, A.backend)
        new(accum=binary.plus) << recv.apply(binary.times, right=alpha)
        err = new.ewise_add(r, binary.minus).new().apply(unary.abs).new().reduce().value
        r = new
        if tol > 0 and err < n * tol:
            converged = True
            break
    result = PageRankResult(graph, timer.stats(it), rank=r.to_dense(0.0).astype(np.float64))
    result.iterations, result.converged = it, converged
    return result
