"""Betweenness centrality in GraphBLAS: Brandes on TurboBFS's path counts (LAGraph's BC).

Forward: :func:`~gunpy.blas.algorithms.bfs_sigma` keeps each level's frontier.
Backward, from the deepest level up, a vertex u on level d-1 gathers from its
successors v on level d::

    t<S[d]>     = (1 + delta) / sigma
    w<S[d-1]>   = A plus.second t          # sum of t over u's out-neighbours in S[d]
    delta      += w * sigma
"""

import numpy as np

from gunpy.blas import binary, semiring, unary
from gunpy.blas.algorithms._common import Timer, as_matrix, check_source
from gunpy.blas.algorithms.bfs import bfs_sigma
from gunpy.blas.vector import Vector
from gunpy.primitives.bc import BCResult

__all__ = ["bc"]


def bc(G, sources=None, *, normalized=False, backend="auto"):
    """Betweenness centrality with :func:`gunpy.bc`'s meaning (networkx's, ``endpoints=False``).

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.blas import algorithms
    >>> G = gunpy.Graph.from_edges([0, 1], [1, 2], directed=False)
    >>> algorithms.bc(G, backend="cpu").centrality.tolist()
    [0.0, 1.0, 0.0]
    """
    A, graph = as_matrix(G, backend)
    n = A.nrows
    srcs = range(n) if sources is None else [check_source(s, n) for s in sources]
    timer = Timer(A)
    total = Vector(np.float64, n, backend=A.backend)
    for s in srcs:
        fwd = bfs_sigma(A, s, keep_levels=True)
        sigma, levels = fwd.sigma_vector, fwd.levels
        delta = Vector(np.float64, n, backend=A.backend)
        for d in range(len(levels) - 1, 0, -1):
            t = levels[d].apply(unary.one).new(dtype=np.float64)
            t(levels[d].S, accum=binary.plus) << delta
            t << t.ewise_mult(sigma, binary.truediv)
            w = semiring.plus_second(A @ t).new(mask=levels[d - 1].S)
            delta(accum=binary.plus) << w.ewise_mult(sigma, binary.times)
        del delta[s]
        total(accum=binary.plus) << delta
    values = total.to_dense(0.0).astype(np.float64)
    if n - 1 >= 2:   # networkx's rescaling for endpoints=False
        values = values / ((n - 1) * (n - 2)) if normalized else \
            (values / 2.0 if not graph.directed else values)
    stats = timer.stats(len(srcs), sources=len(srcs))
    return BCResult(graph, stats, centrality=values)
