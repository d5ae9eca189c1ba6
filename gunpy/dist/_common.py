"""What the distributed primitives share: source checks, gathered results, closing stats."""

import operator

import numpy as np

from gunpy.dist.comm import get_comm
from gunpy.dist.graph import DistGraph

__all__ = ["Vertices", "agreement", "check_graph", "source_id", "check_source", "check_weights",
           "finish_stats",
           "gathered_graph", "Holders", "DistResult", "host_view"]


class Vertices:
    """What a gathered result needs of a graph no rank holds whole: its size and labels."""

    node_labels = None

    def __init__(self, dg):
        self.num_vertices = dg.num_vertices
        self.directed = dg.directed

    def labels(self):
        return list(range(self.num_vertices))


def host_view(be, arr):
    """``arr`` itself on the CPU backend (NumPy: writes go through), else a host copy.

    MPI moves host buffers, so every exchange of device values goes through here.
    """
    return arr if isinstance(arr, np.ndarray) else be.to_host(arr)


def gathered_graph(dg):
    """The graph a gathered result refers to: the host graph, or a stand-in of its size."""
    return dg.graph or Vertices(dg)


def agreement(dgraph, what):
    """The checks block every distributed call opens with: ``dgraph.comm.agreement(what)``.

    (``MPI.COMM_WORLD``'s where ``dgraph`` is not a :class:`~gunpy.dist.DistGraph`,
    which :func:`check_graph` then raises inside the block.)
    """
    return (dgraph.comm if isinstance(dgraph, DistGraph) else get_comm(None)).agreement(what)


def check_graph(dgraph, what):
    """A TypeError unless ``dgraph`` is a :class:`~gunpy.dist.DistGraph` (no communication)."""
    if not isinstance(dgraph, DistGraph):
        raise TypeError(f"{what} needs a gunpy.dist.DistGraph, got {type(dgraph).__name__}")


def source_id(dg, source):
    """``source`` as an int, or a TypeError / IndexError (this rank's check: no communication)."""
    if isinstance(source, (bool, np.bool_)) or not isinstance(source, (int, np.integer)):
        raise TypeError(f"source must be an integer vertex id, got {source!r}")
    if not 0 <= int(source) < dg.num_vertices:
        raise IndexError(f"source {int(source)} is out of range for a graph with "
                         f"{dg.num_vertices} vertices")
    return int(source)


def check_weights(dg, algorithm):
    """A ValueError naming the first negative, NaN or infinite weight among this rank's
    edges (out-edges of its owned vertices, original ids), as the single-device check
    words it. This rank's check: no communication."""
    L = dg.local
    if L.values is None:
        return
    rows = np.asarray(L.row_offsets, dtype=np.int64)
    w = np.asarray(L.values)[:int(rows[dg.num_owned])]
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        e = int(bad[0])
        u = int(np.searchsorted(rows, e, side="right") - 1)
        v = int(L.column_indices[e])
        raise ValueError(f"{algorithm} needs non-negative finite weights; edge "
                         f"{int(dg.original_gid[u])}->{int(dg.original_gid[v])} has weight "
                         f"{float(w[e])!r}")


def check_source(dg, comm, source, *same):
    """``source`` as an int, or the same TypeError / IndexError on every rank (collective).

    ``same``: further options that must be equal on every rank (checked with the source).
    """
    with comm.agreement("the source") as agree:
        s = source_id(dg, source)
        agree.same(s, *same, what="the source or an option")
    return s


def finish_stats(comm, stats, iterations, elapsed, **extra):
    """Close a run's stats the same way on every rank (collective).

    ``edges_visited`` and the bytes sent are summed over the ranks, the time is
    the slowest rank's, and ``extra`` gains ``ranks``, this rank's ``comm_ms``
    and ``bytes_sent_all_ranks``.
    """
    its = stats.per_iteration
    edges, nbytes = comm.allreduce(np.array([sum(i["edges"] for i in its),
                                             sum(i["bytes_sent"] for i in its)]))
    stats.iterations = int(iterations)
    stats.edges_visited = int(edges)
    stats.elapsed_ms = comm.allreduce(elapsed * 1e3, op="max")
    stats.extra = {"ranks": comm.size, **extra,
                   "comm_ms": round(sum(i["comm_ms"] for i in its), 3),
                   "bytes_sent_all_ranks": int(nbytes)}
    comm.take_counters()
    return stats


class Holders:
    """Owner-to-holder copies of vertex values: every ghost gets its owner's value.

    Built once per graph (one Alltoallv of the ghost lists); afterwards
    :meth:`send` moves only the values, in an order both sides know.
    """

    def __init__(self, dg, comm):
        self.dg, self.comm = dg, comm
        held, holder = comm.alltoallv([dg.ghosts], dg.ghost_owner, return_sources=True)
        self.held = held - dg.lo          # owned local ids another rank holds as a ghost
        self.holder = holder              # ... and that rank
        # the order values come back in: the ghosts sorted by owner (stable), as sent above
        self.ghost_slots = dg.num_owned + np.argsort(dg.ghost_owner, kind="stable")

    def send(self, values):
        """``values[ghost] = values[owner's copy]`` for every ghost (collective)."""
        (got,) = self.comm.alltoallv([values[self.held]], self.holder)
        values[self.ghost_slots] = got
        return values

    def collect(self, values):
        """``values[owned] += values[its ghost copies]`` over every rank holding one, then
        the ghosts' slots are zeroed (collective): partial sums pushed to ghosts go home."""
        dg = self.dg
        ghosts = values[dg.num_owned:dg.num_owned + dg.num_ghosts]
        # sent in ghost order, grouped by owner: the order ``held`` was built in
        (got,) = self.comm.alltoallv([ghosts.copy()], dg.ghost_owner)
        np.add.at(values, self.held, got)
        ghosts[:] = 0
        return values


class DistResult:
    """This rank's part of a distributed result: per-owned-vertex arrays and the stats.

    Subclasses name the single-device result class (``single``: a
    ``"module:Class"`` string, imported on :meth:`gather`), the per-vertex
    arrays (``fields``) and the scalars copied onto the gathered result
    (``scalars``); the arrays are indexed like ``DG.vertices``.
    """

    single = ""
    fields = ()
    scalars = ()

    def __init__(self, dgraph, stats, **values):
        self.graph = dgraph
        self.stats = stats
        for name, value in values.items():
            setattr(self, name, value)

    def gather(self, root=0):
        """The full single-device result on ``root`` in original id order, None elsewhere.

        Collective: every rank calls it, with the same ``root``.

        Raises
        ------
        ValueError
            (On every rank) ``root`` is not a rank, or differs between ranks.
        """
        comm = self.graph.comm
        with comm.agreement("gather") as agree:
            root = operator.index(root)
            if not 0 <= root < comm.size:
                raise ValueError(f"root {root} is not a rank (0..{comm.size - 1})")
            agree.same(root, what="the root")
        with comm.collective(f"{type(self).__name__}.gather"):
            arrays = {f: self.graph.gather(getattr(self, f), root) for f in self.fields}
        if comm.rank != root:
            return None
        module, name = self.single.split(":")
        cls = getattr(__import__(module, fromlist=[name]), name)
        result = cls(gathered_graph(self.graph), self.stats, **arrays)
        for s in self.scalars:
            setattr(result, s, getattr(self, s))
        return result

    def __repr__(self):
        extra = "".join(f", {s}={getattr(self, s)}" for s in self.scalars)
        return (f"{type(self).__name__}(rank {self.graph.comm.rank}: "
                f"{getattr(self, self.fields[0]).shape[0]} vertices{extra}, "
                f"stats={self.stats.summary()})")
