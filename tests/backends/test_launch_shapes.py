"""Launch shapes the simulator's defaults never reach, run under the simulator (issue 12).

Under numba's simulator ``CudaBackend()`` launches blocks of 32 threads (at most
two, run one after the other), so the paths of a block with several warps never
execute there: cull's hash slots of warps after the first, scan offsets of 32
and more, the block reductions' upper strides, twc's warp and CTA phases at
their GPU thresholds, and the one-block fused kernels (BFS levels, near/far
steps) with more than one warp. These tests set ``block_size`` on a simulator
backend and run primitives and operators against networkx (or NumPy):

* blocks of 64 and 96 threads on a graph with a hub of degree 100 (more than
  either block) whose leaves each own a pendant vertex, a vertex of degree 40
  (twc's warp phase) and a random part;
* the fused kernels at their real size (one block of 256 threads) on tiny graphs;
* the warp pull without early exit (BC), which a GPU picks by itself once the
  average in-degree reaches 16;
* SSSP's unfused advance + split and the far pile's refill, with real weights.

References come from networkx on the raw edge lists the graphs were built from.
"""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.testing import check_bfs_tree, check_sssp_tree

pytestmark = pytest.mark.sim

_BACKENDS = {}


def cuda_backend(block):
    """A simulator backend launching blocks of ``block`` threads (at most 2 blocks)."""
    if block not in _BACKENDS:
        from gunpy.backends.cuda import CudaBackend
        _BACKENDS[block] = CudaBackend(block_size=block)
    return _BACKENDS[block]


#: several whole warps, and a block that is not a power of two (the block reductions
#: once dropped part of it: the scan's and reduction's totals, hence frontiers, came out short)
BLOCKS = pytest.mark.parametrize("block", [64, 96], ids=["block64", "block96"])


# ----------------------------------------------------------------------------- graphs
def broom(hub=100, extra=24, extra_edges=50, seed=3):
    """``(n, src, dst, weights)`` of an undirected graph, no self-loops or repeated pairs.

    Vertex 0 is a hub with leaves 1..hub; leaf ``i`` owns the pendant vertex
    ``hub + i`` (reachable only through it, so a traversal that drops a leaf
    from a frontier loses its pendant); vertex ``2 hub + 1`` is joined to the
    first 40 leaves; random edges join leaves and ``extra`` more vertices; the
    last vertex is isolated.
    """
    rng = np.random.default_rng(seed)
    leaves = np.arange(1, hub + 1)
    mid = 2 * hub + 1
    pairs = [(0, int(v)) for v in leaves] + [(int(v), int(v) + hub) for v in leaves]
    pairs += [(int(v), mid) for v in leaves[:40]]
    n = mid + extra + 2
    pool = np.concatenate([leaves, np.arange(mid + 1, mid + 1 + extra)])
    seen = set(pairs)
    while len(pairs) < 2 * hub + 40 + extra_edges:
        u, v = sorted(rng.choice(pool, 2, replace=False).tolist())
        if (u, v) not in seen:
            seen.add((u, v))
            pairs.append((u, v))
    src, dst = np.array(pairs).T
    return n, src, dst, rng.random(src.shape[0]) * 10 + 1e-3


def nx_graph(n, src, dst, w=None, directed=False):
    g = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(range(n))
    if w is None:
        g.add_edges_from(zip(src.tolist(), dst.tolist()))
    else:
        g.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()))
    return g


def depths(g, source):
    d = nx.single_source_shortest_path_length(g, source)
    return np.array([d.get(v, -1) for v in range(g.number_of_nodes())])


def distances(g, source):
    d = nx.single_source_dijkstra_path_length(g, source)
    return np.array([d.get(v, np.inf) for v in range(g.number_of_nodes())])


def component_labels(g):
    comps = nx.weakly_connected_components(g) if g.is_directed() else nx.connected_components(g)
    labels = np.empty(g.number_of_nodes(), dtype=np.int64)
    for c in comps:
        labels[list(c)] = min(c)
    return labels


N, SRC, DST, W = broom()
BROOM = gunpy.Graph.from_edges(SRC, DST, num_vertices=N, directed=False)
BROOM_W = gunpy.Graph.from_edges(SRC, DST, W, num_vertices=N, directed=False)
BROOM_NX = nx_graph(N, SRC, DST)
BROOM_W_NX = nx_graph(N, SRC, DST, W)


def test_the_broom_is_what_the_tests_need():
    deg = np.bincount(np.concatenate([SRC, DST]), minlength=N)
    assert deg[0] == 100 > 96 and deg[201] == 40 and deg[-1] == 0
    assert BROOM.num_edges == 2 * SRC.shape[0]  # nothing merged or dropped
    assert np.array_equal(np.diff(BROOM.row_offsets), deg)


# ----------------------------------------------------------------------------- 1. several warps
@BLOCKS
@pytest.mark.parametrize("n", [70, 300, 1000])
def test_scan_across_warps(n, block):
    from gunpy.operators import scan
    be = cuda_backend(block)
    a = (np.arange(n, dtype=np.int64) * 7 + 3) % 11
    d, out = be.asarray(a), be.empty(n, np.int64)
    total = scan.exclusive_scan(be, "array", n, d, d, out)
    expect = np.concatenate([[0], np.cumsum(a)[:-1]])
    assert np.array_equal(be.to_host(out), expect)
    assert total == a.sum()
    flags = be.asarray((a > 5).astype(np.int8))
    assert scan.total(be, "nonzero", n, flags, flags) == int((a > 5).sum())


@BLOCKS
@pytest.mark.parametrize("op", ["sum", "min", "max"])
def test_reduce_across_warps(op, block):
    from gunpy.operators.reduce import reduce_array
    be = cuda_backend(block)
    x = np.random.default_rng(1).permutation(300).astype(np.float64) - 100.0
    got = reduce_array(be, be.asarray(x), 300, op)
    assert got == getattr(np, op)(x)


def test_cull_across_warps():
    # every warp of the 64-thread block (and of the partial last tile) holds 16 vertices
    # twice each: warp culling in each warp's own hash slots drops every repeat
    from gunpy import Functor
    from gunpy import operators as ops
    be = cuda_backend(64)
    ids = np.concatenate([np.random.default_rng(c).permutation(np.repeat(
        np.arange(16 * c, 16 * c + 16), 2)) for c in range(7)])[:200]
    ctx = ops.Context(BROOM, be)
    out = ops.filter(BROOM, ctx.frontier(ids), Functor, (), mode="unique", context=ctx)
    assert sorted(out.to_numpy().tolist()) == sorted(set(ids.tolist()))
    assert ctx.record["culled"] == ids.size - len(set(ids.tolist()))
    mask = ctx.new_bitmap()
    ops.filter(BROOM, ctx.frontier(np.arange(0, 112, 3)), Functor, (), mode="cull",
               mask=mask, context=ctx)  # marks every third vertex visited
    out = ops.filter(BROOM, ctx.frontier(ids), Functor, (), mode="cull", mask=mask, context=ctx)
    assert sorted(out.to_numpy().tolist()) == sorted(v for v in set(ids.tolist()) if v % 3)


BFS_OPTIONS = {
    "twc": dict(direction="push", load_balance="twc"),
    "thread_mapped": dict(direction="push", load_balance="thread_mapped"),
    "merge_path": dict(direction="push", load_balance="merge_path"),
    "cull": dict(direction="push", idempotent=True),
    "pull": dict(direction="pull"),
    "auto": dict(direction="auto"),
}


@BLOCKS
@pytest.mark.parametrize("option", list(BFS_OPTIONS))
def test_bfs_across_warps(option, block):
    # a frontier that loses a leaf (a compaction's short total, a missed lane) loses its
    # pendant vertex too: the depths say so
    r = gunpy.bfs(BROOM, 0, backend=cuda_backend(block), **BFS_OPTIONS[option])
    check_bfs_tree(BROOM, 0, r.depth, r.parent, reference=depths(BROOM_NX, 0))
    strategies = {it["strategy"] for it in r.stats.per_iteration}
    if option in ("twc", "thread_mapped", "merge_path"):
        assert strategies == {option}
    elif option == "pull":
        assert strategies == {"pull-thread"}


@BLOCKS
@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
def test_sssp_across_warps(fuse, block):
    from gunpy.primitives.sssp import SSSPEnactor, SSSPProblem
    problem = SSSPProblem(BROOM_W, backend=cuda_backend(block))
    problem.reset(0)
    stats = SSSPEnactor(problem, fuse=fuse).enact()
    distance, parent = problem.extract()
    ref = distances(BROOM_W_NX, 0)
    check_sssp_tree(BROOM_W, 0, distance, parent, reference=ref, rtol=1e-12)
    reached = int(np.isfinite(ref).sum())
    if fuse:  # one block ran every step
        assert stats.extra["fused_steps"] >= reached - 1
    else:
        assert stats.extra["fused_steps"] == 0
    # each refill raises the level past the far pile's minimum (a block reduction): a
    # minimum too high skips a bucket, which the distances would not show
    cpu = SSSPProblem(BROOM_W, backend="cpu")
    cpu.reset(0)
    assert stats.extra["refills"] == SSSPEnactor(cpu, fuse=fuse).enact().extra["refills"] > 0


@BLOCKS
def test_cc_across_warps(block):
    r = gunpy.cc(BROOM, backend=cuda_backend(block))
    assert np.array_equal(r.labels, component_labels(BROOM_NX))


@pytest.mark.parametrize("direction,block", [("pull", 64), ("push", 96)])
def test_pagerank_across_warps(direction, block):
    r = gunpy.pagerank(BROOM, direction=direction, tol=2e-4, backend=cuda_backend(block))
    pr = nx.pagerank(BROOM_NX, tol=2e-4)
    np.testing.assert_allclose(r.rank, [pr[v] for v in range(N)], rtol=1e-9, atol=1e-12)
    assert r.iterations >= 5


# ----------------------------------------------------------------------------- 2. one block of 256
def _tiny(name):
    """``(n, src, dst)`` of a small undirected graph."""
    if name == "path":
        return 20, np.arange(19), np.arange(1, 20)
    if name == "grid":
        g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(4, 5))
        src, dst = np.array(list(g.edges)).T
        return 20, src, dst
    return 41, np.zeros(40, dtype=np.int64), np.arange(1, 41)  # star


@pytest.mark.parametrize("name,source", [("path", 0), ("path", 9), ("grid", 7), ("star", 0),
                                         ("star", 5)])
def test_fused_levels_in_one_block_of_256(name, source):
    n, src, dst = _tiny(name)
    G = gunpy.Graph.from_edges(src, dst, num_vertices=n, directed=False)
    r = gunpy.bfs(G, source, direction="push", backend=cuda_backend(256))
    check_bfs_tree(G, source, r.depth, r.parent, reference=depths(nx_graph(n, src, dst), source))
    assert {it["strategy"] for it in r.stats.per_iteration} == {"fused"}
    assert r.stats.iterations == r.depth.max() + 1


@pytest.mark.parametrize("name,source", [("grid", 7), ("star", 5)])
def test_fused_near_far_in_one_block_of_256(name, source):
    n, src, dst = _tiny(name)
    w = np.random.default_rng(len(name) + source).random(src.shape[0]) * 4 + 0.01
    G = gunpy.Graph.from_edges(src, dst, w, num_vertices=n, directed=False)
    ref = distances(nx_graph(n, src, dst, w), source)
    r = gunpy.sssp(G, source, delta=0.5, backend=cuda_backend(256))
    check_sssp_tree(G, source, r.distance, r.parent, reference=ref, rtol=1e-12)
    assert r.stats.iterations == 1  # one launch ran every step, refills included
    assert r.stats.extra["fused_steps"] >= n - 1 and r.stats.extra["refills"] > 0


# ----------------------------------------------------------------------------- 3. warp pull
def _dense(n=20, missing=20, seed=2):
    """K_n less ``missing`` random edges: in-degree ~17 on average, BC not all zero."""
    rng = np.random.default_rng(seed)
    pairs = [(u, v) for u in range(n) for v in range(u + 1, n)]
    keep = np.sort(rng.permutation(len(pairs))[missing:])
    src, dst = np.array([pairs[i] for i in keep]).T
    return n, src, dst


def _bc(G, sources, policy):
    from gunpy.primitives.bc import BCEnactor, BCProblem
    problem = BCProblem(G, backend="cuda")
    enactor = BCEnactor(problem, direction="pull", direction_policy=policy)
    strategies = set()
    for s in sources:
        problem.reset(s)
        strategies |= {it["strategy"] for it in enactor.enact().per_iteration
                       if str(it["strategy"]).startswith("pull")}
    return problem.extract(), strategies


def test_bc_warp_pull_chosen_by_in_degree():
    # the GPU default: pull_mapping="auto" takes a warp per vertex at average in-degree >= 16
    from gunpy.direction import DirectionPolicy
    n, src, dst = _dense()
    G = gunpy.Graph.from_edges(src, dst, num_vertices=n, directed=False)
    assert G.num_edges / n >= 16
    sources = [0, 7, 13]
    raw, strategies = _bc(G, sources, DirectionPolicy())
    assert strategies == {"pull-warp"}
    g = nx_graph(n, src, dst)
    expect = nx.betweenness_centrality_subset(g, sources, list(g), normalized=False)
    expect = np.array([expect[v] for v in range(n)])
    assert expect.max() > 0
    np.testing.assert_allclose(raw / 2, expect, rtol=1e-10, atol=1e-12)


def test_bc_warp_pull_forced_on_a_sparse_graph():
    from gunpy.direction import DirectionPolicy
    n, src, dst = 41, np.concatenate([np.zeros(40, np.int64), np.arange(1, 12)]), \
        np.concatenate([np.arange(1, 41), np.arange(2, 13)])  # a star with a path on its rim
    G = gunpy.Graph.from_edges(src, dst, num_vertices=n, directed=False)
    sources = [0, 5, 30]
    raw, strategies = _bc(G, sources, DirectionPolicy(pull_mapping="warp"))
    assert strategies == {"pull-warp"}
    g = nx_graph(n, src, dst)
    expect = nx.betweenness_centrality_subset(g, sources, list(g), normalized=False)
    np.testing.assert_allclose(raw / 2, [expect[v] for v in range(n)], rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------- 4. unfused SSSP
def _random_weighted(n=30, m=110, seed=9):
    rng = np.random.default_rng(seed)
    pairs = {}
    while len(pairs) < m:
        u, v = rng.integers(0, n, 2).tolist()
        if u != v:
            pairs[(u, v)] = rng.random() * 10 + 1e-3
    (src, dst), w = np.array(list(pairs)).T, np.array(list(pairs.values()))
    return n, src, dst, w


@pytest.mark.parametrize("graph,how", [("broom", "unfused"), ("broom", "twc"),
                                       ("random_directed", "unfused"),
                                       ("random_directed", "twc"),
                                       ("random_directed", "merge_path"),
                                       ("random_directed", "bellman_ford")])
def test_sssp_unfused_with_real_weights(graph, how):
    from gunpy.primitives.sssp import SSSPEnactor, SSSPProblem
    if graph == "broom":
        G, g, sources = BROOM_W, BROOM_W_NX, [150]
    else:
        n, src, dst, w = _random_weighted()
        G = gunpy.Graph.from_edges(src, dst, w, num_vertices=n, directed=True)
        g, sources = nx_graph(n, src, dst, w, directed=True), [0]
    problem = SSSPProblem(G, backend="cuda")
    if how == "unfused":
        enactor = SSSPEnactor(problem, fuse=False)
    elif how == "bellman_ford":
        enactor = SSSPEnactor(problem, method="bellman_ford")
    else:
        enactor = SSSPEnactor(problem, load_balance=how)
    for s in sources:
        problem.reset(s, delta=2.0)  # narrow: most vertices wait on the far pile
        stats = enactor.enact()
        distance, parent = problem.extract()
        check_sssp_tree(G, s, distance, parent, reference=distances(g, s), rtol=1e-12)
        assert stats.extra.get("fused_steps", 0) == 0
        if how != "bellman_ford":
            assert stats.extra["refills"] > 0
