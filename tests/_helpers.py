"""Test-only helpers that more than one test module uses: oracles' building blocks, and
functors with the set-ups that run them."""

from collections import namedtuple

import numpy as np

import gunpy
from gunpy import Functor
from gunpy import operators as ops


def row_stochastic(G):
    """``(P, S)``: G's adjacency matrix with each row divided by its sum, and the row sums
    (0 for a dangling vertex, whose row stays 0), as networkx's _pagerank_scipy builds them."""
    A = G.to_scipy()
    S = np.asarray(A.sum(axis=1)).ravel()
    inv = np.divide(1.0, S, out=np.zeros(G.num_vertices), where=S != 0)
    return (A.T.multiply(inv)).T.tocsr(), S


# ----------------------------------------------------------------------- functors and runs
Depth = namedtuple("Depth", "depth")
Keep = namedtuple("Keep", "dummy")


class Reach(Functor):
    """BFS's step: the first frontier vertex to reach ``dst`` gives it the next depth."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return gunpy.atomics.cas(data.depth, dst, -1, data.depth[src] + 1) == -1


class KeepAll(Functor):
    """Every edge accepted: the output is the frontier's neighbour lists, repeats and all."""


def fused_levels_from_0(G, backend, **options):
    """Fused levels (``levels.run`` with ``options``) of ``Reach`` from vertex 0.

    Returns ``(ctx, run, out, data)``: what ``levels.run`` returned, the frontier it wrote
    and ``Depth`` holding the depths on the device.
    """
    from gunpy.functor import compile_functor
    from gunpy.operators import levels
    depth = np.full(G.num_vertices, -1, dtype=np.int32)
    depth[0] = 0
    ctx = ops.Context(G, backend=backend)
    data = Depth(ctx.backend.asarray(depth))
    out = ctx.frontier([])
    run = levels.run(ctx, ctx.frontier([0]), out, compile_functor(Reach, ctx.backend), data,
                     **options)
    return ctx, run, out, data


def advance_keep_all(G, ctx, ids, load_balance):
    """A push advance of ``KeepAll`` from ``ids``; checks that its output is the ids'
    neighbour lists (as multisets) and returns ``(out, out's vertices)``."""
    out = ops.advance(G, ctx.frontier(ids), KeepAll, Keep(np.zeros(1)),
                      load_balance=load_balance, context=ctx)
    got = out.to_numpy()
    expect = np.concatenate([G.column_indices[G.row_offsets[v]:G.row_offsets[v + 1]]
                             for v in ids])
    assert sorted(got.tolist()) == sorted(expect.tolist())
    return out, got
