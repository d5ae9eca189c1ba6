"""Distributed connected components: min-label propagation over a 1-D partition.

Every vertex starts with its own global id as its label; a label only ever
moves down to a neighbour's, so each converges to the smallest vertex id of
its (weakly) connected component, the labels :func:`gunpy.cc` gives. Each
iteration, the same on every rank:

local phase
    each rank propagates labels over its local graph made symmetric (edges
    followed either way: weak components on directed graphs) with the
    single-device advance and a functor doing ``atomics.min`` on the labels,
    starting from the vertices whose label changed, until nothing changes here.
ghosts to owners
    ghosts whose label went down are sent to their owners as (vertex, label)
    pairs with one Alltoallv; owners keep the minimum.
owners to holders
    owned vertices whose label went down this iteration (locally or from a
    ghost) are sent to every rank that holds them as a ghost (one Alltoallv),
    so after the exchange every ghost's label equals its owner's.

The loop stops when the allreduced count of labels lowered by the exchanges
is zero: every local graph is then at its fixed point with consistent ghosts,
so every edge (each one is in some rank's local graph) joins equal labels.
"""

from collections import namedtuple

import numpy as np

from gunpy import Functor, atomics
from gunpy import operators as ops
from gunpy.dist._common import DistResult, Holders, agreement
from gunpy.dist.enactor import DistEnactor
from gunpy.graph import Graph

__all__ = ["cc", "DistCCResult", "DistCCEnactor", "MinLabelFunctor"]

MinLabelData = namedtuple("MinLabelData", "labels")


class MinLabelFunctor(Functor):
    """Push ``labels[src]`` to ``dst``; ``dst`` joins the output when its label went down."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        lab = data.labels[src]
        return atomics.min(data.labels, dst, lab) > lab


class DistCCResult(DistResult):
    """This rank's part of a distributed CC.

    ``labels`` (int32, original ids: the smallest vertex id of each component) of
    the owned vertices, whose original ids are ``DG.vertices``; ``stats`` as the
    single-device result's, whose ``per_iteration`` entries also hold
    ``comm_ms`` and ``bytes_sent`` (this rank's), ``edges`` (this rank's) and
    ``local_passes`` (this rank's advances in the local phase).
    """

    single = "gunpy.primitives.cc:CCResult"
    fields = ('labels',)
    scalars = ('num_components',)


def cc(dgraph, *, load_balance="auto", backend="cpu", debug=False):
    """Connected components of a :class:`~gunpy.dist.DistGraph` (collective).

    Weakly connected components on directed graphs (edges followed either way).

    Parameters
    ----------
    dgraph : gunpy.dist.DistGraph
    load_balance : str, default "auto"
        The local advance's strategy, as :func:`gunpy.cc`'s option. (Its
        ``sample`` option has no counterpart: label propagation samples nothing.)
    backend, debug : as :func:`gunpy.dist.bfs`'s (default "cpu" and False)

    Returns
    -------
    DistCCResult
        The owned vertices' ``labels`` (int32 original ids, each the smallest
        vertex id of its component), ``num_components`` (on every rank) and
        ``stats``; ``.gather(root)`` gives the single-device ``CCResult``.

    Raises
    ------
    ValueError
        (On every rank) an unknown ``load_balance``, or one that differs between ranks.

    See Also
    --------
    gunpy.cc : the single-device twin (same labels).
    networkx.connected_components, networkx.weakly_connected_components

    Examples
    --------
    Run with ``mpiexec -n 2 python -m mpi4py script.py``::

        import gunpy, gunpy.dist as gd
        DG = gd.DistGraph.from_graph(gunpy.generators.path(10))
        r = gd.cc(DG).gather()
        if r is not None:
            print(r.labels, r.num_components)
    """
    with agreement(dgraph, "gunpy.dist.cc") as agree:  # no communication inside
        run = DistCCEnactor(dgraph, backend=backend, load_balance=load_balance, debug=debug)
        agree.same(run.load_balance, what="load_balance")
    return run.enact()


class DistCCEnactor(DistEnactor):
    """One iteration a loop: the local phase, ghosts to owners, owners to holders."""

    name = "cc"
    Result = DistCCResult

    def local_graph(self):
        dg, L = self.dg, self.dg.local
        self.nloc = L.num_vertices
        self.dtype = np.int32 if dg.num_vertices < 2 ** 31 else np.int64
        if not dg.directed:  # undirected graphs' local parts hold every edge both ways already
            return L
        # weak components: the local edges both ways
        rows = np.asarray(L.row_offsets, dtype=np.int64)
        src = np.repeat(np.arange(self.nloc, dtype=np.int64), np.diff(rows))
        dst = np.asarray(L.column_indices, dtype=np.int64)
        return Graph.from_edges(src, dst, num_vertices=self.nloc, directed=False)

    def setup(self):
        # who holds each owned vertex as a ghost: (owned local id, holder rank) pairs, once
        self.comm.step("cc holders")
        holders = Holders(self.dg, self.comm)
        self.held, self.holder = holders.held, holders.holder

    def prepare(self):
        dg = self.dg
        self.labels = dg.original_gid.astype(self.dtype)  # labels are original ids
        # the owners' labels of the ghosts, as last heard
        self.synced = self.labels[self.n_own:].copy()
        self.frontier = np.arange(self.nloc, dtype=np.int64)

    def frontier_size(self):
        return self.comm.allreduce(self.frontier.shape[0])

    def loop(self):
        dg, comm, n_own, held = self.dg, self.comm, self.n_own, self.held
        before = self.labels[:n_own].copy()
        labels, passes = self.local(self.labels, self.frontier)
        # ghosts whose label went down: to their owners, who keep the minimum
        g = np.flatnonzero(labels[n_own:] < self.synced)
        comm.step("cc ghosts to owners")
        recv_v, recv_l = comm.alltoallv([dg.ghosts[g], labels[n_own + g].astype(np.int64)],
                                        dg.ghost_owner[g])
        local_best = labels[:n_own].copy()
        if recv_v.shape[0]:
            np.minimum.at(labels, recv_v - dg.lo, recv_l.astype(self.dtype))
        remote = np.flatnonzero(labels[:n_own] < local_best)
        # owned labels that went down this iteration: to the ranks holding them as ghosts
        sel = np.flatnonzero(labels[held] < before[held])
        comm.step("cc owners to holders")
        back_v, back_l = comm.alltoallv([held[sel] + dg.lo, labels[held[sel]].astype(np.int64)],
                                        self.holder[sel])
        lowered = np.zeros(0, dtype=np.int64)
        if back_v.shape[0]:
            gl = dg.to_local(back_v)
            old = labels[gl].copy()
            labels[gl] = np.minimum(old, back_l.astype(self.dtype))
            lowered = np.unique(gl[labels[gl] < old])
        self.labels, self.synced = labels, labels[n_own:].copy()
        self.frontier = np.union1d(remote, lowered).astype(np.int64)
        return {"local_passes": passes}

    def is_converged(self):
        return self.comm.allreduce(self.frontier.shape[0]) == 0

    def result(self):
        own = self.labels[:self.n_own]
        roots = int(self.comm.allreduce(int(np.count_nonzero(own == self.dg.vertices))))
        self.extra["components"] = roots
        return {"labels": own.astype(np.int32), "num_components": roots}

    def local(self, labels, frontier):
        """Propagate over the local graph from ``frontier`` until no label changes here."""
        if self.nloc == 0 or frontier.shape[0] == 0:
            return labels, 0
        be = self.be
        dev = be.asarray(labels)
        data = MinLabelData(dev)
        passes = 0
        while frontier.shape[0]:
            out = ops.advance(self.L, self.ctx.frontier(frontier), MinLabelFunctor, data,
                              load_balance=self.load_balance, context=self.ctx)
            frontier = np.unique(out.to_numpy().astype(np.int64))
            passes += 1
        return be.to_host(dev).astype(self.dtype), passes
