"""BFS in GraphBLAS: the push-pull paper's algorithm 1, and TurboBFS's path counts.

Each level is one masked product: the next frontier is ``q<~pi.S> = q any.secondi A``,
whose value at a new vertex is the parent that found it. Pushed (an advance over q)
while the frontier is thin, pulled (each unvisited vertex scans its in-edges and stops
at the first parent: early exit) once it is fat, and then the visited set itself is
the input (operand reuse: every visited in-neighbour of an unvisited vertex is in q).
"""

import numpy as np

from gunpy.blas import semiring
from gunpy.blas.algorithms._common import Timer, as_matrix, check_source
from gunpy.blas.vector import Vector
from gunpy.direction import DirectionPolicy, PushPull, check_direction
from gunpy.primitives.bfs import BFSResult
from gunpy.result import Result

__all__ = ["bfs", "bfs_sigma", "BFSSigmaResult"]


def bfs(G, source, *, direction="auto", policy=None, backend="auto"):
    """Levels and parents from ``source``, written in GraphBLAS.

    Parameters
    ----------
    G : gunpy.Graph or gunpy.blas.Matrix
    source : int
    direction : {"auto", "push", "pull"}
        ``auto``: Beamer's rule per level (:class:`gunpy.direction.DirectionPolicy`).
    policy : gunpy.direction.DirectionPolicy, optional
    backend : {"auto", "cuda", "cpu"}

    Returns
    -------
    gunpy.primitives.bfs.BFSResult
        ``depth`` and ``parent`` as :func:`gunpy.bfs` returns them.

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.blas import algorithms
    >>> G = gunpy.generators.path(4)
    >>> algorithms.bfs(G, 0, backend="cpu").depth.tolist()
    [0, 1, 2, 3]
    """
    check_direction(direction)
    A, graph = as_matrix(G, backend)
    n = A.nrows
    s = check_source(source, n)
    timer = Timer(A)
    ctx = A.context(A.operand(structure_only=True))
    ctx.record = {"edges": 0}
    push_pull = PushPull(policy or DirectionPolicy(), n, A.nvals)
    q = Vector(np.int64, n, backend=A.backend)      # the frontier; values: parents
    q[s] = s
    parent = q.dup()                                 # the visited set
    depth = Vector(np.int32, n, backend=A.backend)
    depth[s] = 0
    level = 0
    while q.nvals:
        level += 1
        d = push_pull.decide(ctx, q.data.structure, direction)
        q(~parent.S, replace=True, direction=d, operand_reuse=d == "pull") \
            << semiring.any_secondi(q @ A)
        if q.nvals == 0:
            break
        parent(q.S) << q
        depth(q.S) << level
    stats = timer.stats(level, ctx.record["edges"])
    return BFSResult(graph, stats, depth=depth.to_dense(-1).astype(np.int32),
                     parent=parent.to_dense(-1).astype(np.int32))


class BFSSigmaResult(Result):
    """``depth`` (int32, -1 unreachable) and ``sigma`` (float64: shortest paths from the source)."""

    _fields = ("depth", "sigma")
    _main = "sigma"

    def _unreached(self, name, arr):
        return self.depth < 0


def bfs_sigma(G, source, *, backend="auto", keep_levels=False):
    """Levels and shortest-path counts sigma (TurboBFS): ``q<~depth.S> = q plus.first A``.

    The frontier's values are sigma; a new vertex sums the sigma of its parents
    in the frontier. ``keep_levels``: also return the frontier of every level
    (``result.levels``, a list of Vectors), as Brandes' backward sweep needs.

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.blas import algorithms
    >>> G = gunpy.generators.grid_2d(2, 2)      # a square: two paths from 0 to 3
    >>> algorithms.bfs_sigma(G, 0, backend="cpu").sigma.tolist()
    [1.0, 1.0, 1.0, 2.0]
    """
    A, graph = as_matrix(G, backend)
    n = A.nrows
    s = check_source(source, n)
    timer = Timer(A)
    q = Vector(np.float64, n, backend=A.backend)
    q[s] = 1.0
    sigma = q.dup()
    depth = Vector(np.int32, n, backend=A.backend)
    depth[s] = 0
    levels = [q.dup()] if keep_levels else None
    level = 0
    while q.nvals:
        level += 1
        q(~depth.S, replace=True) << semiring.plus_first(q @ A)
        if q.nvals == 0:
            break
        sigma(q.S) << q
        depth(q.S) << level
        if keep_levels:
            levels.append(q.dup())
    result = BFSSigmaResult(graph, timer.stats(level), depth=depth.to_dense(-1).astype(np.int32),
                            sigma=sigma.to_dense(0.0).astype(np.float64))
    result.levels = levels
    result.sigma_vector = sigma
    return result
