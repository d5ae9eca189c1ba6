"""A distributed Graph500 BFS validator: the five checks without gathering the graph.

Each rank checks its owned vertices and the edges out of them; the depths of
parents and ghosts it needs come from their owners (:meth:`Comm.fetch`). The
verdicts are allreduced, so every rank passes or raises the same error.
"""

import numpy as np

from gunpy.dist._common import agreement, check_graph, source_id
from gunpy.dist.comm import agreed

__all__ = ["check_bfs_tree"]


def check_bfs_tree(dgraph, source, depth, parent):
    """Assert Graph500's BFS-tree checks on a distributed result (collective).

    ``depth`` and ``parent``: this rank's owned parts (a
    :class:`~gunpy.dist.DistBFSResult`'s arrays; parents are original ids).
    Messages name internal ids (``DG.original`` maps them back).
    The checks are those of :func:`gunpy.testing.check_bfs_tree`: the tree is
    rooted at ``source``; tree edges join depths ``d`` and ``d + 1``; every
    edge out of a reached vertex reaches a vertex at most one level further
    (undirected: depths differ by at most one); each parent edge is a graph
    edge; (spanning follows from those).

    Raises
    ------
    AssertionError
        On every rank, naming the failed check (and the rank that saw it first).
    IndexError, TypeError
        (On every rank) ``source`` out of range or not an integer on some rank.
    """
    with agreement(dgraph, "gunpy.dist.check_bfs_tree") as agree:  # no communication inside
        check_graph(dgraph, "gunpy.dist.check_bfs_tree")
        original = source_id(dgraph, source)
        depth = np.asarray(depth)
        parent = np.asarray(parent)
        agree.same(original, what="the source")
    with dgraph.comm.collective("gunpy.dist.check_bfs_tree"):
        problems = _problems(dgraph, dgraph.internal(original), depth, parent)
        verdicts = dgraph.comm.allgather(problems[0] if problems else None)
    for r, msg in enumerate(verdicts):
        if msg is not None:
            raise agreed(AssertionError(f"BFS tree check failed on rank {r}: {msg}"))


def _problems(dg, source, depth, parent):
    """What this rank finds wrong (collective: the depths of parents and ghosts are fetched)."""
    comm = dg.comm
    n_own = dg.num_owned
    problems = []
    if depth.shape != (n_own,) or parent.shape != (n_own,) or depth.dtype.kind not in "iu" \
            or parent.dtype.kind not in "iu":
        problems.append("result arrays have the wrong length or are not integers")
        depth = np.full(n_own, -1, np.int64)
        parent = np.full(n_own, -1, np.int64)
    depth = depth.astype(np.int64)
    # the checks run on internal ids (the partition's); results hold original ones
    parent = parent.astype(np.int64)
    if dg.relabel is not None:
        ok = (parent >= 0) & (parent < dg.num_vertices)
        parent = np.where(ok, dg.internal(np.where(ok, parent, 0)), parent)
    if dg.owns(source):
        s = source - dg.lo
        if parent[s] != source or depth[s] != 0:
            problems.append(f"source {source}: depth {depth[s]}, parent {parent[s]}")
    reached = depth >= 0
    if not np.array_equal(reached, parent >= 0):
        problems.append("depth and parent disagree on which vertices were reached")
    gid = np.arange(dg.lo, dg.hi, dtype=np.int64)
    others = np.flatnonzero(reached & (gid != source))
    p = parent[others]
    if np.any(p >= dg.num_vertices):
        problems.append("a parent id is out of range")
    p = np.clip(p, 0, dg.num_vertices - 1)

    def depth_of(ids):
        return depth[ids - dg.lo]

    # tree edges: depth[parent] + 1 == depth (the parent's depth from its owner)
    pdepth = comm.fetch(p, dg.owner(p), depth_of)
    bad = others[pdepth + 1 != depth[others]]
    if bad.size:
        v = int(gid[bad[0]])
        problems.append(f"tree edge {parent[bad[0]]}->{v} joins depths "
                        f"{pdepth[np.flatnonzero(others == bad[0])[0]]} and {depth[bad[0]]}")
    # parent edges are graph edges: the in-edges of an owned vertex are all local
    L = dg.local
    if others.size:
        lp = dg.to_local(p)
        known = np.isin(p, dg.gid)
        A = L.to_scipy().tocsr()
        has = np.zeros(others.size, dtype=bool)
        has[known] = np.asarray(A[lp[known], others[known]]).ravel() != 0
        if not has.all():
            k = int(np.flatnonzero(~has)[0])
            problems.append(f"parent edge {p[k]}->{gid[others[k]]} is not in the graph")
    # every edge out of an owned reached vertex: the other end's depth from its owner
    ghost_depth = comm.fetch(dg.ghosts, dg.ghost_owner, depth_of)
    ldepth = np.concatenate([depth, ghost_depth])
    rows = np.asarray(L.row_offsets, dtype=np.int64)[:n_own + 1]
    u = np.repeat(np.arange(n_own), np.diff(rows))
    v = np.asarray(L.column_indices, dtype=np.int64)[:u.shape[0]]
    du, dv = ldepth[u], ldepth[v]
    if dg.directed:
        wrong = (du >= 0) & ((dv < 0) | (dv > du + 1))
    else:
        wrong = ((du >= 0) != (dv >= 0)) | ((du >= 0) & (np.abs(du - dv) > 1))
    if wrong.any():
        k = int(np.flatnonzero(wrong)[0])
        problems.append(f"edge {gid[u[k]]}->{dg.gid[v[k]]} joins depths {du[k]} and {dv[k]}")
    return problems
