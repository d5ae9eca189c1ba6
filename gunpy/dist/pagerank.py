"""Distributed PageRank: the single-device pull iteration over a 1-D partition.

Each rank updates its owned vertices with the functors of
:mod:`gunpy.primitives.pagerank` (``Contribute``, ``Pull``, ``Update``) and
the single-device operators over its local graph, which holds every in-edge
of an owned vertex. Per iteration, the same on every rank:

1. ``Contribute`` over the owned vertices (``contrib = rank / out-weight``;
   an owned vertex holds all its out-edges, so its out-weight is local);
2. owners send the contributions of the vertices other ranks hold as ghosts
   (one Alltoallv of values only: who holds what is exchanged once);
3. the dangling mass and, after the update, the L1 change are allreduced, so
   every rank applies the same teleport term and stops at the same iteration;
4. ``Pull`` (a neighbor-reduce over in-edges) and ``Update`` over the owned vertices.

networkx's semantics as :func:`gunpy.pagerank`'s: dangling mass spread
uniformly, stop when the L1 change is below ``n * tol``.
"""

import numpy as np

from gunpy import operators as ops
from gunpy.dist._common import DistResult, Holders, agreement, check_weights
from gunpy.dist.enactor import DistEnactor
from gunpy.primitives.pagerank import (DIRECTIONS, Contribute, OutWeight, PRData, Pull, Push,
                                       Update)

__all__ = ["pagerank", "DistPageRankResult", "DistPageRankEnactor"]


class DistPageRankResult(DistResult):
    """This rank's part of a distributed PageRank.

    ``rank`` (float64) of the owned vertices (original ids ``DG.vertices``),
    ``iterations`` and ``converged`` (the same on every rank), ``stats`` whose
    ``per_iteration`` entries also hold ``comm_ms`` and ``bytes_sent``.
    """

    single = "gunpy.primitives.pagerank:PageRankResult"
    fields = ('rank',)
    scalars = ('iterations', 'converged')


def pagerank(dgraph, *, alpha=0.85, tol=1e-6, max_iter=100, direction="pull",
             load_balance="auto", backend="cpu", debug=False):
    """PageRank of a :class:`~gunpy.dist.DistGraph` with networkx's semantics (collective).

    Parameters
    ----------
    dgraph : gunpy.dist.DistGraph
        Edge weights (if any) weight the transitions.
    alpha : float, default 0.85
    tol : float, default 1e-6
        Stop when the L1 change is below ``n * tol``; 0 runs ``max_iter`` iterations.
    max_iter : int, default 100
    direction : {"pull", "push"}, default "pull"
        Pull: each owned vertex gathers over its in-edges (ghosts hold their
        owners' contributions). Push: each owned vertex adds its contribution
        along its out-edges with atomic adds, and the sums that landed on
        ghosts go to their owners. As :func:`gunpy.pagerank`'s option.
    load_balance : str, default "auto"
        The push advance's strategy.
    backend, debug : as :func:`gunpy.dist.bfs`'s (default "cpu" and False)

    Returns
    -------
    DistPageRankResult
        The owned vertices' ``rank``, ``iterations``, ``converged``;
        ``.gather(root)`` gives the single-device ``PageRankResult``.

    Raises
    ------
    ValueError
        (On every rank) ``alpha`` outside [0, 1], a negative ``tol`` or
        ``max_iter``, a negative, NaN or infinite weight (naming the edge), or
        options that differ between ranks.

    See Also
    --------
    gunpy.pagerank : the single-device twin (the same ranks to rounding).
    networkx.pagerank

    Examples
    --------
    Run with ``mpiexec -n 2 python -m mpi4py script.py``::

        import gunpy, gunpy.dist as gd
        G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=True)
        r = gd.pagerank(gd.DistGraph.from_graph(G)).gather()
        if r is not None:
            print(r.rank)       # [0.333 0.333 0.333]
    """
    with agreement(dgraph, "gunpy.dist.pagerank") as agree:  # no communication inside
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
        if not (tol >= 0.0):
            raise ValueError(f"tol must be >= 0, got {tol!r}")
        if int(max_iter) != max_iter or max_iter < 0:
            raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
        if direction not in DIRECTIONS:
            raise ValueError(f"unknown PageRank direction {direction!r}; valid: "
                             f"{', '.join(map(repr, DIRECTIONS))}")
        run = DistPageRankEnactor(dgraph, backend=backend, load_balance=load_balance,
                                  direction=direction, debug=debug)
        check_weights(run.dg, "PageRank")  # a NaN weight would turn every rank NaN
        options = (float(alpha), float(tol), int(max_iter))
        agree.same(*options, direction, run.load_balance,
                   what="alpha, tol, max_iter, direction or load_balance")
    return run.enact(*options)


class DistPageRankEnactor(DistEnactor):
    """One iteration a loop: contributions, their exchange, then the update."""

    name = "pagerank"
    Result = DistPageRankResult

    def setup(self):
        self.holders = Holders(self.dg, self.comm)
        nloc = max(self.L.num_vertices, 1)
        self.arrays = {name: self.be.full(nloc, 0.0, np.float64)
                       for name in ("rank", "received", "contrib", "dangling", "change",
                                    "out_weight")}

    def prepare(self, alpha, tol, max_iter):
        n_own, ctx = self.n_own, self.ctx
        self.n, self.tol, self.max_iter = self.dg.num_vertices, tol, max_iter
        self.be.fill(self.arrays["rank"], 1.0 / max(self.n, 1))
        self.data = PRData(alpha=alpha, base=0.0, **self.arrays)
        self.owned = ctx.frontier(np.arange(n_own)) if n_own else None
        if self.owned is not None:
            ops.neighbor_reduce(self.L, self.owned, OutWeight, self.data, self.data.out_weight,
                                edges="out", context=ctx)
        self.error = np.inf

    def frontier_size(self):
        return None if self.iteration >= self.max_iter or self.n == 0 else self.n_own

    def loop(self):
        ctx, owned, data, n_own = self.ctx, self.owned, self.data, self.n_own
        dangling = 0.0
        if owned is not None:
            ops.compute(self.L, owned, Contribute, data, context=ctx)
            dangling = ops.reduce(data.dangling, n=n_own, context=ctx)
        if self.direction == "pull":
            self.exchange(self.holders.send, data.contrib)  # ghosts get their owners' values
        elif owned is not None:
            ops.advance(self.L, owned, Push, data, output="none",
                        load_balance=self.load_balance, context=ctx)
        if self.direction == "push":
            self.exchange(self.holders.collect, data.received)  # ghosts' sums go home
        dangling = self.comm.allreduce(float(dangling))
        self.data = data = data._replace(base=(data.alpha * dangling + 1.0 - data.alpha) / self.n)
        change = 0.0
        if owned is not None:
            if self.direction == "pull":
                ops.neighbor_reduce(self.L, owned, Pull, data, data.received, edges="in",
                                    context=ctx)
            ops.compute(self.L, owned, Update, data, context=ctx)
            change = ops.reduce(data.change, n=n_own, context=ctx)
        self.error = self.comm.allreduce(float(change))
        return {"error": self.error}

    def is_converged(self):
        return self.error < self.n * self.tol

    def result(self):
        return {"rank": self.be.to_host(self.data.rank)[:self.n_own].copy(),
                "iterations": self.iteration,
                "converged": bool(self.n == 0 or self.error < self.n * self.tol)}

    def exchange(self, how, values):
        """``how(values)`` on the host copy of a device array (in place on the CPU)."""
        host = self.host(values)
        how(host)
        self.store(values, host)
