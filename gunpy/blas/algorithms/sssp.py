"""SSSP in GraphBLAS: Bellman-Ford on the (min, +) semiring, relaxing only what changed.

GraphBLAST's formulation (section 7): the frontier f holds the vertices whose
distance dropped in the last round; one round is ::

    t     = f min.+ A                      # candidate distances
    stale = t .>= d                        # where t is no better (both present)
    f     = t<~stale.V>                    # new or improved
    d<f.S> = f

until f is empty. Parents come from one pull pass at the end: a vertex's parent is
an in-neighbour on a tight edge (``d[u] + w == d[v]``).
"""

from collections import namedtuple

import numpy as np

from gunpy import Functor, operators
from gunpy.blas import binary, semiring
from gunpy.blas.algorithms._common import Timer, as_matrix, check_source
from gunpy.blas.vector import Vector
from gunpy.primitives.sssp import SSSPResult

__all__ = ["sssp"]

_Tight = namedtuple("_Tight", "dist parent")


class _TightEdge(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return data.dist[src] + weight == data.dist[dst]

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        data.parent[dst] = src


def sssp(G, source, *, backend="auto"):
    """Shortest-path distances and parents with :func:`gunpy.sssp`'s meaning.

    Raises ``ValueError`` for negative or NaN weights.

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.blas import algorithms
    >>> G = gunpy.Graph.from_edges([0, 0, 1], [1, 2, 2], [4.0, 9.0, 1.0])
    >>> algorithms.sssp(G, 0, backend="cpu").distance.tolist()
    [0.0, 4.0, 5.0]
    """
    A, graph = as_matrix(G, backend)
    n = A.nrows
    s = check_source(source, n)
    if graph.values is not None and not (graph.values >= 0).all():
        raise ValueError("sssp needs non-negative, non-NaN weights")
    timer = Timer(A)
    d = Vector(np.float64, n, backend=A.backend)
    d[s] = 0.0
    f = d.dup()
    rounds = 0
    while f.nvals:
        rounds += 1
        t = semiring.min_plus(f @ A).new()
        stale = t.ewise_mult(d, binary.ge).new()
        f = t.dup() if stale.nvals == 0 else Vector(np.float64, n, backend=A.backend)
        if stale.nvals:
            f(~stale.V) << t
        d(f.S) << f
    distance = d.to_dense(np.inf).astype(np.float64)
    # parents: an in-neighbour on a tight edge (a pull with early exit)
    backend_ = A.backend
    dist = backend_.asarray(distance)
    parent = backend_.asarray(np.full(n, -1, dtype=np.int32))
    ctx = operators.Context(graph, backend_)
    visited = ctx.new_bitmap()
    reached = np.isfinite(distance)
    reached_ids = np.flatnonzero(reached)
    ctx.mark(visited, ctx.frontier([s]))
    frontier = ctx.frontier(reached_ids)
    if reached_ids.size > 1:
        operators.advance(graph, frontier, _TightEdge, _Tight(dist, parent), mask=visited,
                          direction="pull", pull_input="frontier", context=ctx)
    parent = backend_.to_host(parent)
    parent[s] = s
    return SSSPResult(graph, timer.stats(rounds), distance=distance, parent=parent)
