"""Distributed single-source shortest paths: delta-stepping over a 1-D partition.

Every edge ``u -> v`` is in the local graph of ``u``'s owner, so the owner
relaxes it whenever ``u``'s distance drops; a ghost ``v`` whose distance went
down is sent to its owner, who keeps the minimum. Distances only ever move
down to lengths of real paths, so at the fixed point (nothing pending on any
rank, nothing in flight) they are the shortest ones. Each round, the same on
every rank:

local phase
    each rank relaxes the out-edges of its owned vertices in the current
    band (``distance < upper``, ``upper = level * delta``) with the
    single-device advance and :class:`gunpy.primitives.sssp.SSSPFunctor`
    (an atomic min), over and over until no owned vertex in the band is left
    to expand here. Owned vertices that improved beyond the band wait in the
    *far* set (Gunrock's near/far queue, section 4.4.2).
ghosts to owners
    ghosts whose distance went below what was last sent for them go to their
    owners as (vertex, distance) pairs with one Alltoallv; improved owned
    vertices join the band or the far set.
band
    when no rank has a vertex left in the band (an allreduced count), the band
    moves up to the next multiple of ``delta`` above the smallest far distance
    on any rank (an allreduced minimum); the run ends when that is infinite.

Which band a vertex is in and how the band moves up are the near/far kernels'
rule, :func:`gunpy.operators.near_far.band.band` and
:func:`~gunpy.operators.near_far.band.raise_level`, on priorities
``distance / delta`` (the ``level`` is in those units).

Parents are picked after the distances settle, as the single-device primitive
does: one owner-to-holder exchange gives every ghost its final distance, then
each vertex takes its smallest tight in-neighbour (positive weights; a
neighbor-reduce over its in-edges, all of which its owner holds) or, with
zero-weight edges, a distributed BFS over the tight edges picks them.
"""

from collections import namedtuple

import numpy as np

from gunpy import INVALID, Functor
from gunpy import operators as ops
from gunpy.dist._common import DistResult, Holders, agreement, check_weights
from gunpy.dist.enactor import DistEnactor
from gunpy.operators.near_far.band import FAR, NEAR, band, raise_level
from gunpy.primitives.sssp import METHODS, SSSPFunctor

__all__ = ["sssp", "DistSSSPResult", "DistSSSPEnactor", "TightParentFunctor"]

TightData = namedtuple("TightData", "distance gid")
RelaxData = namedtuple("RelaxData", "distance")


class RelaxFunctor(Functor):
    """:class:`gunpy.primitives.sssp.SSSPFunctor`'s relaxation (an atomic min), no parents:
    they are picked once the distances settle."""

    cond_edge = staticmethod(SSSPFunctor.cond_edge)


class TightParentFunctor(Functor):
    """Over in-edges: the global id of a tight in-neighbour (the smallest wins under ``min``)."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        d = data.distance[dst]
        if d < np.inf and data.distance[src] + weight == d:
            return np.float64(data.gid[src])
        return np.inf


class DistSSSPResult(DistResult):
    """This rank's part of a distributed SSSP.

    ``distance`` (float64, inf unreachable) and ``parent`` (original ids, int32;
    -1 unreachable, the source is its own) of the owned vertices, whose
    original ids are ``DG.vertices``; ``stats`` as the single-device
    result's, whose ``per_iteration`` entries (one per round) also hold
    ``comm_ms``, ``bytes_sent``, ``local_passes`` and the band's ``upper`` bound.
    """

    single = "gunpy.primitives.sssp:SSSPResult"
    fields = ('distance', 'parent')
    scalars = ('source',)


def sssp(dgraph, source, *, delta=None, method="near_far", load_balance="auto", backend="cpu",
         debug=False):
    """Shortest-path distances and a shortest-path tree over a :class:`~gunpy.dist.DistGraph`.

    Collective: every rank calls it with the same arguments.

    Parameters
    ----------
    dgraph : gunpy.dist.DistGraph
        Weights non-negative and finite; an unweighted graph uses 1.
    source : int
        Global vertex id.
    delta : float, optional
        Width of the distance band (default: as :func:`gunpy.sssp`'s,
        :func:`gunpy.primitives.sssp.default_delta`, computed over the whole graph).
    method : {"near_far", "bellman_ford"}, default "near_far"
        Delta-stepping bands, or every improved vertex expanded at once (one
        band of infinite width), as :func:`gunpy.sssp`'s option.
    load_balance : str, default "auto"
        The local advance's strategy.
    backend, debug : as :func:`gunpy.dist.bfs`'s (default "cpu" and False)

    Returns
    -------
    DistSSSPResult
        The owned vertices' ``distance`` and ``parent`` (original ids);
        ``.gather(root)`` gives the single-device ``SSSPResult``.

    Raises
    ------
    ValueError
        (On every rank) a negative, NaN or infinite weight (naming the edge), a
        non-positive delta, an unknown method, or options that differ between ranks.
    IndexError
        (On every rank) ``source`` out of range.

    See Also
    --------
    gunpy.sssp : the single-device twin (same distances; parents along tight edges,
        not necessarily the same ones).
    networkx.single_source_dijkstra_path_length

    Examples
    --------
    Run with ``mpiexec -n 2 python -m mpi4py script.py``::

        import gunpy, gunpy.dist as gd
        G = gunpy.Graph.from_edges([0, 1, 0], [1, 2, 2], [1.0, 1.0, 5.0], directed=True)
        r = gd.sssp(gd.DistGraph.from_graph(G), 0).gather()
        if r is not None:
            print(r.distance)     # [0. 1. 2.]
    """
    with agreement(dgraph, "gunpy.dist.sssp") as agree:  # no communication inside
        if method not in METHODS:
            raise ValueError(f"unknown SSSP method {method!r}; valid: "
                             f"{', '.join(map(repr, METHODS))}")
        run = DistSSSPEnactor(dgraph, backend=backend, load_balance=load_balance, debug=debug)
        check_weights(run.dg, "SSSP")
        source = run.source_id(source)
        if delta is not None and not (isinstance(delta, (int, float, np.integer, np.floating))
                                      and np.isfinite(delta) and delta > 0):
            raise ValueError(f"delta must be a positive number, got {delta!r}")
        agree.same(source, run.load_balance, method, None if delta is None else float(delta),
                   what="the source, load_balance, method or delta")
    run.delta = _delta(run.dg, run.comm) if delta is None else float(delta)
    run.method = method
    return run.enact(source)


def _owned_weights(dg):
    L = dg.local
    if L.values is None:
        return None
    return np.asarray(L.values)[:int(L.row_offsets[dg.num_owned])]


def _delta(dg, comm):
    """:func:`gunpy.primitives.sssp.default_delta` over the whole graph (collective)."""
    w = _owned_weights(dg)
    total = comm.allreduce(0.0 if w is None else float(w.sum()))
    if dg.num_edges == 0:
        return 1.0
    mean_w = total / dg.num_edges if dg.weighted else 1.0
    avg_deg = dg.num_edges / max(dg.num_vertices, 1)
    if not mean_w > 0:
        return 1.0
    return max(2.0 * mean_w / max(avg_deg, 1.0), np.finfo(float).tiny)


class DistSSSPEnactor(DistEnactor):
    """One round a loop: the local phase, ghosts to owners, and the band moved up if done.

    The band is :mod:`gunpy.operators.near_far.band`'s, in priority units
    (``distance / delta``): a vertex is near below ``level``, far from it on,
    never stale (an improved vertex is always expanded again). Bellman-Ford is
    one band of infinite level.
    """

    name = "sssp"
    Result = DistSSSPResult
    delta, method = 1.0, "near_far"

    def prepare(self, source):
        dg, be, n_own = self.dg, self.be, self.n_own
        self.source = source
        self.dist = be.full(max(self.L.num_vertices, 1), np.inf, np.float64)
        self.data = RelaxData(self.dist)
        self.sent = np.full(dg.num_ghosts, np.inf)  # the distance last sent for each ghost
        self.far = np.zeros(n_own, dtype=bool)      # owned vertices improved beyond the band
        self.near = np.zeros(0, dtype=np.int64)
        self.level = 1.0 if self.method == "near_far" else np.inf
        self.done = False
        s = dg.internal(source)
        if dg.owns(s):
            be.write(self.dist, s - dg.lo, 0.0)
            self.near = np.array([s - dg.lo], dtype=np.int64)

    def frontier_size(self):
        return self.near.shape[0]

    def loop(self):
        dg, comm, n_own = self.dg, self.comm, self.n_own
        passes = 0
        # local phase: expand the band's owned vertices until none is left here
        while self.near.shape[0]:
            improved = self.relax(self.near)
            passes += 1
            owned = improved[improved < n_own]
            self.sort(owned, self.host(self.dist)[owned])  # (CUDA: a whole copy a step)
        # ghosts that improved: to their owners, who keep the minimum
        host = self.host(self.dist)
        g = np.flatnonzero(host[n_own:n_own + dg.num_ghosts] < self.sent)
        self.sent[g] = host[n_own + g]
        comm.step("sssp ghosts to owners")
        recv_v, recv_d = comm.alltoallv([dg.ghosts[g], self.sent[g]], dg.ghost_owner[g])
        if recv_v.shape[0]:
            best = np.full(n_own, np.inf)
            np.minimum.at(best, recv_v - dg.lo, recv_d)
            won = np.flatnonzero(best < host[:n_own])
            host[won] = best[won]
            self.store(self.dist, host)
            self.sort(won, best[won])
        if comm.allreduce(self.near.shape[0]) == 0:
            self.raise_band(host)
        return {"local_passes": passes, "upper": float(self.level * self.delta)}

    def sort(self, vertices, distance):
        """Improved owned ``vertices`` (at ``distance``) to the band or to the far set."""
        # floor 0: distances are never negative, so none is stale (improved: expanded again)
        where = band(distance / self.delta, self.level, 0.0)
        self.far[vertices[where == FAR]] = True
        self.near = vertices[where == NEAR]
        self.far[self.near] = False

    def raise_band(self, host):
        """The band is done everywhere: move it past the smallest far distance (collective)."""
        f = np.flatnonzero(self.far)
        low = self.comm.allreduce(float(host[f].min()) if f.shape[0] else np.inf, op="min")
        if low == np.inf:
            self.done = True
            return
        self.level = raise_level(self.level, low / self.delta)
        self.far[f] = False
        self.sort(f, host[f])

    def is_converged(self):
        return self.done

    def finalize(self):
        self.comm.step("sssp parents")
        self.final = self.host(self.dist)
        self.parent = self.parents(self.source, self.final)

    def result(self):
        self.extra.update(method=self.method, delta=self.delta)
        return {"distance": self.final[:self.n_own].copy(), "parent": self.parent,
                "source": self.source}

    # ------------------------------------------------------------------ steps
    def relax(self, near):
        # the frontiers lent by the context: nothing allocated per step once warm
        out = ops.advance(self.L, self.ctx.frontier(near), RelaxFunctor, self.data,
                          out=self.ctx.frontier(), load_balance=self.load_balance,
                          context=self.ctx)
        return np.unique(out.to_numpy().astype(np.int64))

    def parents(self, source, host):
        """Each reached vertex's parent along a tight edge (original ids; collective)."""
        dg, comm, be, n_own = self.dg, self.comm, self.be, self.n_own
        Holders(dg, comm).send(host)  # every ghost learns its final distance
        w = _owned_weights(dg)
        positive = comm.allreduce(int(w is not None and w.size and w.min() == 0)) == 0
        pid = np.int32 if dg.num_vertices < 2 ** 31 else np.int64
        if positive:
            tight = be.full(max(self.L.num_vertices, 1), np.inf, np.float64)
            # original ids: the smallest tight in-neighbour is gunpy.sssp's parent
            data = TightData(be.asarray(host), be.asarray(dg.original_gid.astype(np.int64)))
            if n_own:
                ops.neighbor_reduce(self.L, self.ctx.frontier(np.arange(n_own)),
                                    TightParentFunctor, data, tight, edges="in", op="min",
                                    context=self.ctx)
            t = be.to_host(tight)[:n_own]
            parent = np.where(np.isfinite(t), t, INVALID).astype(pid)
        else:
            parent = dg.original(self.tight_bfs(dg.internal(source), host)).astype(pid)
        if dg.owns(dg.internal(source)):
            parent[dg.internal(source) - dg.lo] = source
        return parent

    def tight_bfs(self, source, host):
        """Parents from a distributed BFS over the tight edges (zero weights may close cycles)."""
        from gunpy.dist.bfs import bfs
        from gunpy.dist.graph import DistGraph
        dg, L = self.dg, self.L
        rows = np.asarray(L.row_offsets, dtype=np.int64)
        n_rows = int(rows[self.n_own])
        src = np.repeat(np.arange(self.n_own, dtype=np.int64), np.diff(rows[:self.n_own + 1]))
        dst = np.asarray(L.column_indices[:n_rows], dtype=np.int64)
        w = np.ones(n_rows) if L.values is None else np.asarray(L.values)[:n_rows]
        keep = np.isfinite(host[src]) & (host[src] + w == host[dst])
        # each kept edge goes to its destination's owner too: one Alltoallv inside the constructor
        tight = DistGraph.from_edges(dg.gid[src[keep]], dg.gid[dst[keep]],
                                     num_vertices=dg.num_vertices, directed=True, comm=self.comm,
                                     relabel=None)  # internal ids (its parents: internal too)
        return bfs(tight, source, direction="push", backend=self.be).parent
