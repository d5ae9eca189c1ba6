"""The CPU backend on long-diameter graphs (issue 14): what runs on one core, and what a
level costs outside its kernel (allocations, the fused levels' records)."""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.backends import get_backend
from gunpy.backends.cpu import CpuBackend
from gunpy.operators import neighbor_reduce
from gunpy.operators.context import Context
from gunpy.testing import to_nx
from _helpers import InDegree


def _dense(n):
    src, dst = np.nonzero(~np.eye(n, dtype=bool))
    return gunpy.Graph.from_edges(src, dst, num_vertices=n, directed=True)


@pytest.mark.parametrize("serial_below, serial", [(100, False), (1000, True)])
def test_neighbor_reduce_over_every_vertex_is_serial_by_its_edges(serial_below, serial,
                                                                  monkeypatch):
    """20 vertices, 380 edges: under ``serial_below=100`` the vertices would fit one chunk,
    the edges do not, so the pass runs parallel (no thin build logged)."""
    monkeypatch.setattr(CpuBackend, "serial_below", serial_below)
    G = _dense(20)
    ctx = Context(G, get_backend("cpu"))
    out = np.full(20, -1.0)
    neighbor_reduce(G, None, InDegree, None, out, context=ctx)
    np.testing.assert_array_equal(out, np.full(20, 19.0))
    assert ctx.record.get("build") == ("nrt_free" if serial else None)


def _path(n):
    return gunpy.Graph.from_edges(np.arange(n - 1), np.arange(1, n), num_vertices=n,
                                  directed=False)


def test_fused_levels_allocate_nothing_on_a_second_run():
    """1,500 levels of one vertex (three fused calls): depths as networkx's, one record a
    level with Python ints, and no allocation in any level of the second run."""
    G = _path(1500)
    gunpy.bfs(G, 0, backend="cpu")
    r = gunpy.bfs(G, 0, backend="cpu")
    ref = nx.single_source_shortest_path_length(to_nx(G), 0)
    np.testing.assert_array_equal(r.depth, [ref[v] for v in range(G.num_vertices)])
    its = r.stats.per_iteration
    assert len(its) == 1500 and r.stats.iterations == 1500
    assert [it["frontier"] for it in its] == [1] * 1500
    assert [it["edges"] for it in its] == [1] + [2] * 1498 + [1]
    assert all(type(it["frontier"]) is int and type(it["edges"]) is int for it in its)
    assert sum(it["strategy"] == "fused" for it in its) == 1500
    assert [it["allocs"] for it in its] == [0] * 1500


def _pagerank_reference(G, alpha, iterations):
    A = G.to_scipy()
    n = G.num_vertices
    out = np.asarray(A.sum(axis=1)).ravel()
    inv = np.divide(1.0, out, out=np.zeros(n), where=out != 0)
    x = np.full(n, 1.0 / n)
    for _ in range(iterations):
        x = alpha * (A.T @ (x * inv)) + (alpha * x[out == 0].sum() + 1 - alpha) / n
    return x


@pytest.mark.parametrize("direction", ["pull", "push"])
@pytest.mark.parametrize("iterations", [1, 2, 5])
def test_pagerank_splits_the_new_rank_in_its_update(iterations, direction):
    """Each iteration's split (contributions and dangling mass) is made by the previous
    iteration's update pass: every iteration count matches the power iteration, on a
    graph with dangling vertices and a weighted copy."""
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 60, 300), rng.integers(0, 50, 300)  # 50..59: no in-edges
    keep = src != dst
    G = gunpy.Graph.from_edges(src[keep], dst[keep], num_vertices=70, directed=True)
    r = gunpy.pagerank(G, tol=0.0, max_iter=iterations, direction=direction, backend="cpu")
    assert r.iterations == iterations
    np.testing.assert_allclose(r.rank, _pagerank_reference(G, 0.85, iterations),
                               rtol=1e-12, atol=1e-15)


def test_bc_backward_levels_count_their_edges_in_the_kernel():
    """BC's backward levels on the CPU: each neighbor_reduce record's edges are its level's
    out-degree sum (counted by the kernel onto the context tally, no degree pass), and the
    dependencies added in one pass at the end give networkx's centralities."""
    from gunpy.primitives.bc import BCEnactor, BCProblem
    rng = np.random.default_rng(2)
    G = _path(40)
    src = np.concatenate([np.arange(39), rng.integers(0, 40, 15)])
    dst = np.concatenate([np.arange(1, 40), rng.integers(0, 40, 15)])
    keep = src != dst
    G = gunpy.Graph.from_edges(src[keep], dst[keep], num_vertices=40, directed=False)
    problem = BCProblem(G, backend="cpu")
    problem.reset(0)
    stats = BCEnactor(problem).enact()
    depth = problem.to_host(problem.depth)
    deg = G.out_degrees()
    backward = [it for it in stats.per_iteration if it["strategy"] == "neighbor_reduce"]
    levels = depth.max()
    assert len(backward) == levels - 1  # levels - 1 down to 1
    want = [int(deg[depth == d].sum()) for d in range(levels - 1, 0, -1)]
    assert [it["edges"] for it in backward] == want
    g = to_nx(G)
    ref = nx.betweenness_centrality_subset(g, [0], list(g), normalized=False)
    np.testing.assert_allclose(problem.to_host(problem.centrality),
                               [2 * ref[v] for v in range(40)], rtol=1e-12, atol=1e-12)
