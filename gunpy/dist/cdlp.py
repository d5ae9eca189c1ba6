"""Distributed label propagation (LDBC's CDLP) over a 1-D partition.

Each rank holds its owned vertices' in- and out-edges (:class:`~gunpy.dist.DistGraph`),
so one round is the single-device round on the rank's part, then one exchange:

local round
    :func:`gunpy.operators.neighbor_mode` over the owned vertices with CDLP's own
    functor (:class:`gunpy.primitives.cdlp.NeighbourLabel`): each takes the most
    frequent label among its neighbours, the ghosts' labels being their owners' from
    the round before;
owners to holders
    every owned vertex's new label goes to the ranks holding it as a ghost (one
    Alltoallv, :class:`~gunpy.dist._common.Holders`).

Labels are original vertex ids, as the single-device run's are ids of the same
graph, so ties break the same way and the labels equal :func:`gunpy.cdlp`'s after
exactly ``max_iterations`` rounds.
"""

import numpy as np

from gunpy import operators as ops
from gunpy.dist._common import DistResult, Holders, agreement
from gunpy.dist.enactor import DistEnactor
from gunpy.functor import compile_functor
from gunpy.primitives.cdlp import CDLPData, NeighbourLabel, check_rounds

__all__ = ["cdlp", "DistCDLPResult", "DistCDLPEnactor"]


class DistCDLPResult(DistResult):
    """This rank's part of a distributed CDLP.

    ``labels`` (int64 original ids) of the owned vertices, whose original ids are
    ``DG.vertices``; ``stats`` as the single-device result's, whose
    ``per_iteration`` entries also hold ``comm_ms`` and ``bytes_sent`` (this rank's).
    """

    single = "gunpy.primitives.cdlp:CDLPResult"
    fields = ("labels",)


def cdlp(dgraph, max_iterations=10, *, backend="cpu", debug=False):
    """Label propagation communities of a :class:`~gunpy.dist.DistGraph` (collective).

    Parameters
    ----------
    dgraph : gunpy.dist.DistGraph
    max_iterations : int, default 10
        The rounds, run exactly (as :func:`gunpy.cdlp`'s).
    backend, debug : as :func:`gunpy.dist.bfs`'s (default "cpu" and False)

    Returns
    -------
    DistCDLPResult
        The owned vertices' ``labels`` (int64 original ids) and ``stats``;
        ``.gather(root)`` gives the single-device ``CDLPResult``.

    Raises
    ------
    ValueError
        ``max_iterations`` is not a non-negative integer (on every rank), or differs
        between ranks.

    See Also
    --------
    gunpy.cdlp : the single-device twin (the same labels).

    Examples
    --------
    Run with ``mpiexec -n 2 python -m mpi4py script.py``::

        import gunpy, gunpy.dist as gd
        DG = gd.DistGraph.from_graph(gunpy.generators.rmat(10, seed=1))
        r = gd.cdlp(DG, 5).gather()
        if r is not None:
            print(r.labels)
    """
    with agreement(dgraph, "gunpy.dist.cdlp") as agree:  # no communication inside
        rounds = check_rounds(max_iterations)  # the single-device check, the same message
        run = DistCDLPEnactor(dgraph, backend=backend, debug=debug)
        agree.same(rounds, what="max_iterations")
    return run.enact(rounds)


class DistCDLPEnactor(DistEnactor):
    """One round a loop: neighbor_mode over the owned vertices, then owners to holders."""

    name = "cdlp"
    Result = DistCDLPResult

    def setup(self):
        self.comm.step("cdlp holders")
        self.holders = Holders(self.dg, self.comm)
        # an undirected part stores every edge both ways: its out-edges are all its edges
        self.edges = "both" if self.dg.directed else "out"
        self.hooks = compile_functor(NeighbourLabel, self.be)

    def prepare(self, rounds):
        self.rounds = rounds
        gid = np.asarray(self.dg.original_gid, dtype=np.int64)  # labels start as the ids
        self.labels, self.next = self.be.asarray(gid), self.be.asarray(gid.copy())
        self.owned = self.ctx.frontier(np.arange(self.n_own, dtype=np.int64))

    def frontier_size(self):
        return None if self.iteration >= self.rounds else self.n_own

    def loop(self):
        # the label count reads labels alone (the stamps, round: the single device's frontier)
        data = CDLPData(self.labels, self.next, self.labels, 0)
        ops.neighbor_mode.run(self.ctx, self.owned, self.hooks, data, self.next, self.edges)
        # the owned vertices' new labels to the ranks holding them as ghosts
        self.comm.step("cdlp owners to holders")
        host = self.host(self.next)
        self.holders.send(host)
        self.store(self.next, host)
        self.labels, self.next = self.next, self.labels
        return None

    def result(self):
        return {"labels": self.host(self.labels)[:self.n_own].astype(np.int64)}
