"""Distributed breadth-first search: level-synchronous push-pull BFS over a 1-D partition.

Each level runs in one direction, the same on every rank (Buluc and Madduri's
1-D BFS; Beamer, Asanovic and Patterson's direction optimisation, SC 2012):

push (top-down)
    each rank advances its owned frontier over its local graph (the
    single-device operator and a functor), keeps the owned vertices it
    discovered, and sends each ghost it discovered to its owner as a
    (vertex, parent) pair with one Alltoallv; owners claim the unvisited ones
    (a filter with a compare-and-swap, so one parent wins).
pull (bottom-up)
    the ranks allgather the frontier as a bitmap (``n / 8`` bytes in all), and
    each rank's unvisited owned vertices scan their in-edges for a frontier
    vertex (the single-device pull advance, ghosts masked out).

The direction (``auto``: Beamer's rule, :class:`gunpy.direction.PushPull`) and
the stop test use allreduced frontier sizes and edge counts only, so every
rank makes the same choice.
"""

from collections import namedtuple

import numpy as np

from gunpy import INVALID, Functor, atomics
from gunpy import operators as ops
from gunpy.operators import bitmap
from gunpy.direction import DirectionPolicy, PushPull, check_direction
from gunpy.dist._common import DistResult, agreement
from gunpy.dist.enactor import DistEnactor
from gunpy.primitives.bfs import IdempotentBFSFunctor

__all__ = ["bfs", "DistBFSResult", "DistBFSEnactor", "DistBFSFunctor", "IdempotentDistBFSFunctor",
           "ClaimFunctor"]

DistBFSData = namedtuple("DistBFSData", "depth parent gid level")
ClaimData = namedtuple("ClaimData", "depth parent level vertex from_parent")


class DistBFSFunctor(Functor):
    skip_visited = True

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        # a ghost's depth is not kept up to date, so the new depth comes from the level;
        # compare-and-swap: several frontier vertices may reach dst in one level
        return atomics.cas(data.depth, dst, INVALID, data.level[0] + 1) == INVALID

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        data.parent[dst] = data.gid[src]


class IdempotentDistBFSFunctor(Functor):
    """Discover without atomics: racing discoverers store the same depth (a benign race)."""

    skip_visited = True
    cond_edge = staticmethod(IdempotentBFSFunctor.cond_edge)

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        data.depth[dst] = data.level[0] + 1
        data.parent[dst] = data.gid[src]


class ClaimFunctor(Functor):
    """Over positions ``i`` of the received (vertex, parent) pairs: claim the unvisited ones."""

    @staticmethod
    def cond_vertex(i, data):
        return atomics.cas(data.depth, data.vertex[i], INVALID, data.level[0] + 1) == INVALID

    @staticmethod
    def apply_vertex(i, data):
        data.parent[data.vertex[i]] = data.from_parent[i]


class DistBFSResult(DistResult):
    """This rank's part of a distributed BFS.

    ``depth`` and ``parent`` (original ids) of the owned vertices, whose
    original ids are ``DG.vertices``; ``stats`` as the single-device
    result's, whose ``per_iteration`` entries also hold ``comm_ms`` and
    ``bytes_sent`` (this rank's) and ``edges`` (this rank's).
    """

    single = "gunpy.primitives.bfs:BFSResult"
    fields = ('depth', 'parent')
    scalars = ('source',)


def _words(bits):
    """A boolean array as bitmap words (uint32, bit ``v & 31`` of word ``v >> 5``)."""
    packed = np.packbits(bits, bitorder="little")
    buf = np.zeros(4 * max(1, (bits.shape[0] + 31) // 32), dtype=np.uint8)
    buf[:packed.shape[0]] = packed
    return buf.view("<u4").astype(np.uint32)


def bfs(dgraph, source, *, direction="auto", load_balance="auto", idempotent=False,
        backend="cpu", direction_policy=None, debug=False):
    """Breadth-first search over a :class:`~gunpy.dist.DistGraph` (collective).

    Parameters
    ----------
    dgraph : gunpy.dist.DistGraph
    source : int
        Global vertex id; the same on every rank.
    direction : {"auto", "push", "pull"}, default "auto"
    load_balance : str, default "auto"
        The local push advance's strategy (:func:`gunpy.operators.advance`).
    idempotent : bool, default False
        Push levels discover without atomics (racing discoverers store the
        same depth; their duplicates are dropped before the exchange), as
        :func:`gunpy.bfs`'s option.
    backend : {"cpu", "cuda", "auto"}, default "cpu"
        Where each rank's local operators run.
    direction_policy : gunpy.direction.DirectionPolicy, optional
    debug : bool, default False
        Check at every step that all ranks run the same operator sequence
        (``RuntimeError: rank divergence`` otherwise).

    Returns
    -------
    DistBFSResult
        The owned vertices' ``depth`` and ``parent`` (original ids, int32; -1
        unreachable); ``.gather(root)`` gives the single-device ``BFSResult``.

    Raises
    ------
    IndexError
        On every rank: ``source`` out of range (on any rank).
    ValueError
        On every rank: an unknown direction or strategy, or a source that differs
        between ranks. (An error a rank finds in its own checks is raised on every
        rank, naming that rank; one during the run ends the job: see
        :meth:`gunpy.dist.Comm.collective`.)

    See Also
    --------
    gunpy.bfs : the single-device twin (same options and results).
    networkx.single_source_shortest_path_length

    Examples
    --------
    Run with ``mpiexec -n 2 python -m mpi4py script.py``::

        import gunpy, gunpy.dist as gd
        DG = gd.DistGraph.from_graph(gunpy.generators.path(10))
        r = gd.bfs(DG, 0).gather()
        if r is not None:
            print(r.depth)
    """
    with agreement(dgraph, "gunpy.dist.bfs") as agree:  # no communication inside
        check_direction(direction)
        run = DistBFSEnactor(dgraph, backend=backend, load_balance=load_balance,
                             direction=direction, debug=debug)
        source = run.source_id(source)
        agree.same(source, direction, run.load_balance, bool(idempotent),
                   what="the source, direction, load_balance or idempotent")
    run.policy = direction_policy or DirectionPolicy()
    run.functor = IdempotentDistBFSFunctor if idempotent else DistBFSFunctor
    return run.enact(source)


class DistBFSEnactor(DistEnactor):
    """One level a loop: a push or a pull, the same on every rank."""

    name = "bfs"
    Result = DistBFSResult
    functor = DistBFSFunctor
    policy = DirectionPolicy()

    def setup(self):
        dg, be = self.dg, self.be
        self.pid = np.int32 if dg.num_vertices < 2 ** 31 else np.int64
        self.lengths = np.diff(dg.starts)
        self.ghost_byte, self.ghost_shift = dg.ghost_bit_positions()
        nloc = self.L.num_vertices
        self.depth = be.full(max(nloc, 1), INVALID, np.int32)
        self.parent = be.full(max(nloc, 1), INVALID, self.pid)
        self.level = be.zeros(1, np.int32)
        # parents are written as original ids (the functor stores gid[src])
        self.data = DistBFSData(self.depth, self.parent,
                                be.asarray(dg.original_gid if nloc else np.zeros(1, np.int64)),
                                self.level)
        # the pull mask: visited owned vertices and every ghost (a ghost's in-edges are not
        # all here); owned vertices reached by push levels are added before the next pull
        self.visited = None
        self.unmarked = []
        self.push_pull = PushPull(self.policy, dg.num_vertices, dg.num_edges)

    def prepare(self, source):
        dg, be = self.dg, self.be
        self.source = source
        self.frontier = np.zeros(0, dtype=np.int64)  # owned local ids
        if dg.owns(dg.internal(source)):
            s = dg.internal(source) - dg.lo
            be.write(self.depth, s, 0)
            be.write(self.parent, s, source)
            self.frontier = np.array([s], dtype=np.int64)
        self.unmarked.append(self.frontier)
        self.examined, self.pulled_m_f = 0, None

    def frontier_size(self):
        # one allreduce a level: the frontier's size and edges, and the last pull's work
        frontier = self.frontier
        n_f, m_f, ex = self.comm.allreduce(np.array([frontier.shape[0],
                                                     int(self.dg.out_degrees[frontier].sum()),
                                                     self.examined]))
        if self.pulled_m_f is not None:
            self.push_pull.pulled(ex, self.pulled_m_f)
            self.pulled_m_f = None
        if n_f == 0:
            return None
        if self.direction == "auto":
            self.way = self.push_pull.choose(n_f, m_f)
        else:
            self.way = self.direction
            self.push_pull.account(m_f)
        self.m_f = m_f
        return n_f

    def loop(self):
        self.be.write(self.level, 0, self.iteration)
        self.examined = 0
        if self.way == "push":
            self.frontier = self.push(self.frontier)
        else:
            self.frontier, self.examined = self.pull(self.frontier)
            self.pulled_m_f = self.m_f
        self.unmarked.append(self.frontier)
        return {"direction": self.way}

    def result(self):
        be, n_own = self.be, self.n_own
        return {"depth": be.to_host(self.depth)[:n_own], "parent": be.to_host(self.parent)[:n_own],
                "source": self.source}

    def push(self, frontier):
        """Advance the owned frontier; ghosts found go to their owners, who claim them."""
        dg, comm, n_own = self.dg, self.comm, self.n_own
        found = np.zeros(0, dtype=np.int64)
        if frontier.shape[0]:
            # frontiers and uploads lent by the context: nothing allocated per level once warm
            out = ops.advance(self.L, self.ctx.frontier(frontier), self.functor, self.data,
                              out=self.ctx.frontier(), load_balance=self.load_balance,
                              context=self.ctx)
            found = out.to_numpy().astype(np.int64)
            if self.functor is IdempotentDistBFSFunctor:
                found = np.unique(found)  # racing discoverers each emitted the vertex
        mine = found[found < n_own]
        ghosts = found[found >= n_own]
        # (vertex, parent) pairs in the id type (int32 below 2**31 vertices: half the bytes)
        send_v = dg.gid[ghosts].astype(self.pid)
        send_p = self.host(self.parent)[ghosts].astype(self.pid)  # CUDA: a whole copy
        comm.step("bfs push exchange")
        recv_v, recv_p = comm.alltoallv([send_v, send_p], dg.ghost_owner[ghosts - n_own])
        claimed = np.zeros(0, dtype=np.int64)
        if recv_v.shape[0]:
            # one pair per vertex (several ranks may send the same one); the first parent wins
            recv_v, first = np.unique(recv_v.astype(np.int64) - dg.lo, return_index=True)
            recv_p = recv_p[first]
            data = ClaimData(self.depth, self.parent, self.level, self.ctx.upload(recv_v),
                             self.ctx.upload(recv_p))
            pos = ops.filter(self.L, self.ctx.frontier(np.arange(recv_v.shape[0])), ClaimFunctor,
                             data, context=self.ctx).to_numpy()
            claimed = recv_v[pos]
        return np.concatenate([mine, claimed])

    def pull(self, frontier):
        """Allgather the frontier bitmap; unvisited owned vertices scan their in-edges."""
        comm, n_own = self.comm, self.n_own
        nloc = self.L.num_vertices
        bits = np.zeros(n_own, dtype=bool)
        bits[frontier] = True
        comm.step("bfs pull exchange")
        buf, _ = comm.allgather_bits(bits, self.lengths, packed=True)
        if n_own == 0:
            self.unmarked.clear()
            return np.zeros(0, dtype=np.int64), 0
        # the input over local ids: this rank's frontier, then the ghosts in the others'
        local = np.empty(nloc, dtype=bool)
        local[:n_own] = bits
        local[n_own:] = (buf[self.ghost_byte] >> self.ghost_shift) & 1
        inp = self.ctx.frontier(())
        inp.num_vertices = nloc
        inp.set_bitmap(self.ctx.upload(_words(local)), int(np.count_nonzero(local)))
        self.mark_visited()
        out = ops.advance(self.L, inp, DistBFSFunctor, self.data, out=self.ctx.frontier(),
                          mask=self.visited,
                          direction="pull", pull_input="frontier",
                          pull_mapping=self.policy.pull_mapping, context=self.ctx)
        return out.to_numpy().astype(np.int64), int(out.examined)

    def mark_visited(self):
        """Bring the pull mask up to date with the owned vertices reached since the last pull."""
        ids = np.concatenate(self.unmarked) if self.unmarked else np.zeros(0, dtype=np.int64)
        self.unmarked.clear()
        if self.visited is None:
            bits = np.zeros(self.L.num_vertices, dtype=bool)
            bits[self.n_own:] = True
            bits[ids] = True
            self.visited = self.ctx.upload(_words(bits))  # recycled after the run
        elif ids.shape[0]:
            f = self.ctx.frontier(ids)
            bitmap.queue_to_bitmap(self.be, f.queue, f.length, f.size, self.visited, clear=False)
