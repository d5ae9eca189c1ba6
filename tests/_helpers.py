"""Test-only helpers that more than one test module uses: oracles' building blocks,
functors with the set-ups that run them, and the shared steps of the primitives' tests."""

from collections import namedtuple
from pathlib import Path

import numpy as np

import gunpy
from gunpy import Functor
from gunpy import operators as ops
from gunpy.testing import nasty_graphs

#: the checkout's root, and its tests folder
ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


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


class KeepEven(Functor):
    """A filter keeping the even vertices, each kept one marked: ``data.kept[v] = 1``."""

    @staticmethod
    def cond_vertex(v, data):
        return v % 2 == 0

    @staticmethod
    def apply_vertex(v, data):
        data.kept[v] = 1


class InDegree(Functor):
    """Each edge gathers 1: ``neighbor_reduce`` over in-edges sums the in-degrees."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return 1.0


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


# ----------------------------------------------------------------------- primitives' tests
def enact_own_loop(Problem, Enactor, G, backend, reset=(), **defaults):
    """A user's own loop: ``Problem(G)``, ``reset(*reset)``, then ``Enactor(problem)`` with
    no attribute set afterwards, enacted; first checks the enactor's ``defaults``
    (``attribute=value``, the primitive function's). Returns the enactor, which holds the
    ``problem`` and the run's ``stats``."""
    problem = Problem(G, backend=backend)
    problem.reset(*reset)
    enactor = Enactor(problem)
    for name, value in defaults.items():
        assert getattr(enactor, name) == value, (name, getattr(enactor, name), value)
    enactor.enact()
    return enactor


def ptx_set_up(Problem, backend, graph="preferential_hubs"):
    """Where a compile-to-PTX test of a primitive's operators starts: ``(G, problem, ctx,
    everything)``, the small nasty ``graph``, ``Problem`` on it, a Context and the full
    frontier."""
    G = nasty_graphs(small=True)[graph]
    problem = Problem(G, backend=backend)
    ctx = ops.Context(G, backend)
    return G, problem, ctx, ctx.full_frontier()


def assert_compiled(backend, *parts):
    """Each of ``parts`` is in the name of a kernel that ``backend`` compiled."""
    names = " ".join(backend.kernel_names())
    missing = [part for part in parts if part not in names]
    assert not missing, (missing, names)
