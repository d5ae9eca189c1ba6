"""PageRank's one pass an iteration: neighbor_reduce fused with its apply step and sums.

``neighbor_reduce(..., apply=True)`` runs ``apply_vertex`` on each vertex right after
its ``out[v]`` is written; ``aggregates=k`` makes ``apply_vertex`` return ``k`` floats
that the call sums (per thread, per block, one read). Tested on the CPU (one thin
pass, and cut into chunks), under the CUDA simulator (thread and warp mappings,
several blocks), compiled to PTX; then PageRank on it: the same ranks and iteration
counts as networkx, one operator call and nothing allocated per iteration.
"""

from collections import namedtuple

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import Functor
from gunpy import operators as ops
from gunpy.testing import nasty_graphs, to_nx
from _helpers import InDegree

GRAPHS = nasty_graphs(small=True)

Sums = namedtuple("Sums", "out seen scale")


class InWeightStats(Functor):
    """out[v]: v's in-weight; the apply step doubles it and returns (in-weight, 1, v)."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return weight * data.scale

    @staticmethod
    def apply_vertex(v, data):
        got = data.out[v]
        data.out[v] = 2.0 * got
        data.seen[v] += 1.0
        return (got, 1.0, float(v))


class Marks(InDegree):
    """apply=True with no aggregates: apply_vertex returns nothing."""

    @staticmethod
    def apply_vertex(v, data):
        data.seen[v] = data.out[v] + 0.5


def _in_weights(G):
    A = G.to_scipy()
    return np.asarray(A.sum(axis=0)).ravel()


def _in_degrees(G):
    return np.bincount(G.column_indices, minlength=G.num_vertices).astype(float)


def _arrays(G, backend):
    be = gunpy.backends.get_backend(backend)
    n = G.num_vertices
    return be, Sums(be.asarray(np.zeros(n)), be.asarray(np.zeros(n)), 1.5)


@pytest.mark.parametrize("mapping", ["thread", "warp"])
@pytest.mark.parametrize("name", ["preferential_hubs", "star_hub", "disconnected", "grid"])
def test_fused_apply_and_sums_over_every_vertex(name, mapping, backend, cpu_split):
    G = GRAPHS[name]
    be, data = _arrays(G, backend)
    ctx = ops.Context(G, backend=be)
    got = ops.neighbor_reduce(G, None, InWeightStats, data, data.out, mapping=mapping,
                              aggregates=3, context=ctx)
    want = 1.5 * _in_weights(G)
    n = G.num_vertices
    assert isinstance(got, tuple) and len(got) == 3
    assert got == pytest.approx((want.sum(), float(n), n * (n - 1) / 2), rel=1e-12)
    np.testing.assert_allclose(be.to_host(data.out), 2.0 * want, rtol=1e-12)
    assert be.to_host(data.seen).tolist() == [1.0] * n  # each vertex applied once
    assert ctx.record["edges"] == G.num_edges and ctx.record["strategy"] == "neighbor_reduce"


@pytest.mark.parametrize("aggregates", [1, 2, 3])
def test_fused_sums_over_a_frontier_and_out_edges(aggregates, backend, cpu_split):
    G = GRAPHS["preferential_hubs"]
    be, data = _arrays(G, backend)
    ids = np.arange(1, G.num_vertices, 3)
    ctx = ops.Context(G, backend=be)
    got = ops.neighbor_reduce(G, ctx.frontier(ids), InWeightStats, data, data.out, edges="out",
                              aggregates=aggregates, context=ctx)
    outw = 1.5 * np.diff(G.row_offsets)
    # the hook returns 3 values: fewer aggregates sum the first ones
    full = (outw[ids].sum(), float(ids.size), float(ids.sum()))
    assert got == pytest.approx(full[:aggregates], rel=1e-12)
    seen = be.to_host(data.seen)
    assert seen[ids].tolist() == [1.0] * ids.size and seen.sum() == ids.size
    assert ctx.record["edges"] == int(np.diff(G.row_offsets)[ids].sum())


def test_fused_apply_without_sums_returns_out(backend, cpu_split):
    G = GRAPHS["grid"]
    be, data = _arrays(G, backend)
    out = ops.neighbor_reduce(G, None, Marks, data, data.out, apply=True,
                              context=ops.Context(G, backend=be))
    assert out is data.out
    np.testing.assert_allclose(be.to_host(data.seen), _in_degrees(G) + 0.5)


def test_fused_sums_of_nothing_are_zero(backend):
    G = GRAPHS["preferential_hubs"]
    be, data = _arrays(G, backend)
    ctx = ops.Context(G, backend=be)
    assert ops.neighbor_reduce(G, ctx.frontier([]), InWeightStats, data, data.out,
                               aggregates=2, context=ctx) == (0.0, 0.0)
    # a second call's sums start from zero (the backend's sums array is reused)
    ops.neighbor_reduce(G, None, InWeightStats, data, data.out, aggregates=2, context=ctx)
    assert ops.neighbor_reduce(G, None, InWeightStats, data, data.out, aggregates=2,
                               context=ctx)[1] == G.num_vertices


@pytest.mark.parametrize("bad", [-1, 5, True, 1.5])
def test_fused_aggregates_out_of_range(bad):
    G = GRAPHS["grid"]
    _, data = _arrays(G, "cpu")
    with pytest.raises(ValueError, match="aggregates"):
        ops.neighbor_reduce(G, None, InWeightStats, data, data.out, aggregates=bad,
                            context=ops.Context(G, backend="cpu"))


def test_fused_sums_across_many_blocks_in_the_simulator(backend):
    """More vertices than one block has threads: each block adds its own sums once."""
    if backend != "cuda":
        pytest.skip("the CUDA kernels' block sums")
    G = gunpy.generators.path(300)
    be, data = _arrays(G, backend)
    got = ops.neighbor_reduce(G, None, InWeightStats, data, data.out, mapping="thread",
                              aggregates=2, context=ops.Context(G, backend=be))
    assert got == (1.5 * G.num_edges, 300.0)


@pytest.mark.ptx
@pytest.mark.parametrize("mapping", ["thread", "warp"])
def test_fused_kernels_compile_to_ptx(mapping, ptx_backend):
    G = GRAPHS["preferential_hubs"]
    n = G.num_vertices
    data = Sums(ptx_backend.zeros(n, np.float64), ptx_backend.zeros(n, np.float64), 1.0)
    ctx = ops.Context(G, backend=ptx_backend)
    ops.neighbor_reduce(G, None, InWeightStats, data, data.out, mapping=mapping, aggregates=3,
                        context=ctx)
    ops.neighbor_reduce(G, None, Marks, data, data.out, mapping=mapping, apply=True,
                        context=ctx)
    names = " ".join(ptx_backend.kernel_names())
    assert f"by_{mapping}" in names


# ------------------------------------------------------------------------------ PageRank on it
def _nx_rank(G, **kw):
    ref = nx.pagerank(to_nx(G), **kw)
    return np.array([ref[v] for v in range(G.num_vertices)])


@pytest.mark.parametrize("name", ["preferential_hubs", "star_directed_in", "disconnected",
                                  "path_directed", "single_vertex"])
def test_pagerank_pull_one_pass_an_iteration(name, backend):
    G = GRAPHS[name]
    r = gunpy.pagerank(G, backend=backend)
    np.testing.assert_allclose(r.rank, _nx_rank(G), rtol=1e-9, atol=1e-12)
    its = r.stats.per_iteration
    assert len(its) == r.iterations >= 1 and r.converged
    assert all(it["strategy"] == "neighbor_reduce" and it["edges"] == G.num_edges
               for it in its)
    r2 = gunpy.pagerank(G, backend=backend)  # the kept split: the same ranks again
    np.testing.assert_array_equal(r2.rank, r.rank)
    assert [it["allocs"] for it in r2.stats.per_iteration] == [0] * r2.iterations


def test_pagerank_pull_one_launch_an_iteration_on_cuda(backend):
    if backend != "cuda":
        pytest.skip("CUDA launch counts")
    its = gunpy.pagerank(GRAPHS["preferential_hubs"], backend=backend).stats.per_iteration
    # the sums' fill and the fused kernel; the sums' read
    assert all(it["launches"] == 2 and it["syncs"] == 1 for it in its), its


def test_pagerank_results_are_the_callers_own(backend):
    """Each call returns its own array: a later call (same graph, kept buffers) leaves
    an earlier result alone, as does a call with another damping factor."""
    G = GRAPHS["preferential_hubs"]
    first = gunpy.pagerank(G, backend=backend).rank
    kept = first.copy()
    other = gunpy.pagerank(G, alpha=0.5, backend=backend).rank
    np.testing.assert_array_equal(first, kept)
    np.testing.assert_allclose(other, _nx_rank(G, alpha=0.5), rtol=1e-9, atol=1e-12)


def test_pagerank_weights_rebound_renew_the_split():
    """The inverse out-weights are kept per graph: new weights make new ones."""
    G = gunpy.Graph.from_edges([0, 0, 1, 2], [1, 2, 2, 0], [1.0, 3.0, 1.0, 1.0],
                               num_vertices=3)
    before = gunpy.pagerank(G, backend="cpu").rank
    np.testing.assert_allclose(before, _nx_rank(G), rtol=1e-9)
    G.values = [3.0, 1.0, 1.0, 1.0]
    after = gunpy.pagerank(G, backend="cpu").rank
    np.testing.assert_allclose(after, _nx_rank(G), rtol=1e-9)
    assert not np.allclose(before, after)


def test_pagerank_max_iter_zero_is_uniform(backend):
    G = GRAPHS["preferential_hubs"]
    r = gunpy.pagerank(G, max_iter=0, backend=backend)
    assert r.iterations == 0 and not r.converged
    np.testing.assert_array_equal(r.rank, np.full(G.num_vertices, 1.0 / G.num_vertices))


def _address(arr):
    face = getattr(arr, "__cuda_array_interface__", None) or np.asarray(arr).__array_interface__
    return face["data"][0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("iterations", [1, 4, 5])
def test_pagerank_pull_updates_the_ranks_in_place(dtype, iterations, backend):
    """The pull pass writes each vertex's rank over its old one and gathers into the next
    contributions' buffer: three vertex arrays lent, the ranks where they were lent after
    any number of iterations, and the same ranks as the push iteration (its own arrays)."""
    from gunpy.primitives.pagerank import PageRankEnactor, PageRankProblem
    G = GRAPHS["preferential_hubs"]
    n = G.num_vertices
    p = PageRankProblem(G, backend=backend, dtype=dtype)
    e = PageRankEnactor(p, tol=0, max_iter=iterations)
    p.reset(0.85)
    e.enact()
    block, = p._blocks
    assert block.shape[0] == 3 * n  # a graph's first call: the block made for it
    assert _address(p.rank) == _address(block)  # lent first, never swapped
    push = gunpy.pagerank(G, tol=0, max_iter=iterations, direction="push", backend=backend)
    tight = dtype == "float64"
    np.testing.assert_allclose(e.backend.to_host(e.rank), push.rank,
                               rtol=1e-12 if tight else 1e-6, atol=1e-15 if tight else 1e-9)
