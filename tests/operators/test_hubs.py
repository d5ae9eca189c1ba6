"""Hubs: lists far longer than the rest, in the fused kernels and in ``auto`` (issue 14).

The one-block fused kernels (BFS levels, SSSP's near/far steps) give a list of
at least 32 edges to a warp and one of at least ``min(256, block)`` to the
whole block (TWC inside the block); the push kernels report their output's
largest out-degree (``Frontier.known_max_degree``) with its size, and ``auto``
takes twc for a frontier holding a list of ``AUTO_HUB_DEGREE`` edges or more.

Stars of 300, 3,000 and 5,000 leaves (the simulator: 300 only) from the hub and
from a leaf, a path that reaches a hub mid-traversal, and the hub graphs of ``nasty_graphs``, with
the fused paths forced (``fuse_below`` raised), against networkx, on the CPU
and under the simulator. The simulator runs blocks of 64 threads here (two
warps), so both the warp phase (lists of 32 to 63 edges) and the block phase
run; a 32-thread block would have only the block phase.
"""

import numpy as np
import pytest

import gunpy
from gunpy import operators as ops
from gunpy.operators.advance import AUTO_HUB_DEGREE
from gunpy.testing import (ON_CUDASIM, check_bfs_tree, check_sssp_tree, graph_from_edges,
                           nasty_graphs, reference_depths, reference_distances)
from _helpers import Keep, KeepAll, advance_keep_all, fused_levels_from_0

#: the simulator's block: two warps, so a list of 32..63 edges takes the warp phase
SIM_BLOCK = 64


def star(leaves):
    return graph_from_edges(np.zeros(leaves, dtype=np.int64), np.arange(1, leaves + 1),
                            directed=False)


def path_then_star(length, leaves, *, weighted=False, seed=5):
    """A path 0..length-1 whose last vertex is a hub of ``leaves`` more leaves."""
    hub = length - 1
    src = np.concatenate([np.arange(length - 1), np.full(leaves, hub)])
    dst = np.concatenate([np.arange(1, length), np.arange(length, length + leaves)])
    w = np.random.default_rng(seed).random(src.shape[0]) * 5 + 0.5 if weighted else None
    return graph_from_edges(src, dst, w, directed=False)


_HUBS = nasty_graphs(small=False)
GRAPHS = {
    "star300": star(300), "star3000": star(3000), "star5000": star(5000),
    "path_star": path_then_star(12, 300),
    "path_star_warp": path_then_star(12, 40),  # 41 edges: a warp's list, not the block's
    "path_star_weighted": path_then_star(12, 300, weighted=True),
    "star_hub": _HUBS["star_hub"], "star_directed_in": _HUBS["star_directed_in"],
    "preferential_hubs": _HUBS["preferential_hubs"],
}
#: the simulator's 64-thread block strides star300's hub five times already: the stars of
#: 3,000 and 5,000 leaves (the same kernel paths, ~60 s) run in the CPU and GPU modes
STARS = ("star300",) if ON_CUDASIM else ("star300", "star3000", "star5000")
CASES = [(name, s) for name in STARS for s in (0, 1)]
CASES += [("path_star", 0), ("path_star_warp", 0), ("path_star_weighted", 0),
          ("star_hub", 5), ("star_directed_in", 3), ("preferential_hubs", 0)]
IDS = [f"{name}-from{s}" for name, s in CASES]

_SIM = {}


@pytest.fixture
def fused_backend(backend, monkeypatch):
    """The mode's backend with every thin step fused (``fuse_below`` raised)."""
    if backend == "cuda":
        from gunpy.backends.cuda import CudaBackend
        if "be" not in _SIM:
            _SIM["be"] = CudaBackend(block_size=SIM_BLOCK)
        be = _SIM["be"]
    else:
        be = gunpy.backends.get_backend(backend)
    monkeypatch.setattr(type(be), "fuse_below", 10 ** 9)
    return be


def _run_twice(problem, enactor, source):
    """The second of two runs (the first makes the scratch arrays and piles)."""
    for _ in range(2):
        problem.reset(source)
        stats = enactor.enact()
    return stats


@pytest.mark.parametrize("name,source", CASES, ids=IDS)
def test_fused_bfs_levels_on_hubs(name, source, fused_backend):
    from gunpy.primitives.bfs import BFSEnactor, BFSProblem
    G = GRAPHS[name]
    problem = BFSProblem(G, backend=fused_backend)
    stats = _run_twice(problem, BFSEnactor(problem, direction="push"), source)
    depth, parent = problem.to_host(problem.depth), problem.to_host(problem.parent)
    assert np.array_equal(depth, reference_depths(G, source)), name
    check_bfs_tree(G, source, depth, parent)
    its = stats.per_iteration
    assert {it["strategy"] for it in its} == {"fused"}, its  # the fused kernel ran them all
    assert len(its) == depth.max() + 1 or len(its) == depth.max() + 2
    if fused_backend.name == "cuda":
        # unchanged: the source's degree sum and the one fused call, a launch and a read each
        assert sum(it["launches"] for it in its) <= 2, its
        assert sum(it["syncs"] for it in its) <= 2, its


@pytest.mark.parametrize("name,source", CASES, ids=IDS)
def test_fused_near_far_on_hubs(name, source, fused_backend):
    from gunpy.primitives.sssp import SSSPEnactor, SSSPProblem
    G = GRAPHS[name]
    problem = SSSPProblem(G, backend=fused_backend)
    stats = _run_twice(problem, SSSPEnactor(problem), source)
    distance = problem.to_host(problem.distance)
    parent = problem.to_host(problem.parent)
    np.testing.assert_allclose(distance, reference_distances(G, source), rtol=1e-12)
    check_sssp_tree(G, source, distance, parent)
    reached = int(np.isfinite(distance).sum())
    assert stats.extra["fused_steps"] >= reached - 1, stats.extra  # every step ran fused
    if fused_backend.name == "cuda":
        it, = stats.per_iteration  # unchanged: one launch and one read for the whole band
        assert it["launches"] == 1 and it["syncs"] == 1, (it, stats.extra)


@pytest.mark.parametrize("load_balance", ["thread_mapped", "twc", "merge_path"])
def test_push_output_knows_its_largest_degree(load_balance, backend):
    """A push kernel keeps the largest out-degree of what it emitted (CUDA), read with the
    size; the CPU does not count it (None)."""
    G = GRAPHS["path_star"]  # hub 11: 301 edges; path vertices 2, leaves 1
    deg = np.diff(G.row_offsets)
    ctx = ops.Context(G, backend=backend)
    for ids in ([10], [0, 1, 2], [11], list(range(12, 40)), [5, 10, 20]):
        out, got = advance_keep_all(G, ctx, ids, load_balance)
        if backend == "cuda":
            assert out.known_edges == int(deg[got].sum()), (load_balance, ids)
            assert out.known_max_degree == int(deg[got].max()), (load_balance, ids)
        else:
            assert out.known_max_degree is None
    out.clear()
    assert out.known_max_degree is None


def test_auto_takes_twc_for_a_hub(backend):
    """A frontier known to hold a hub goes to twc under ``auto`` whatever its few edges;
    without one (or on the CPU, which does not count the largest degree) thread-mapped."""
    G = GRAPHS["path_star"]
    ctx = ops.Context(G, backend=backend)
    reach_hub = ops.advance(G, ctx.frontier([9]), KeepAll, Keep(np.zeros(1)), context=ctx)
    assert sorted(reach_hub.to_numpy().tolist()) == [8, 10]
    assert ctx.record["strategy"] == "thread_mapped"
    step = ops.advance(G, reach_hub, KeepAll, Keep(np.zeros(1)), context=ctx)
    assert sorted(step.to_numpy().tolist()) == [7, 9, 9, 11]  # 10's neighbours: 9 and the hub
    assert ctx.record["strategy"] == "thread_mapped"  # largest degree 2 (or unknown)
    hub = ops.advance(G, step, KeepAll, Keep(np.zeros(1)), context=ctx)
    assert step.size == 4 and step.known_edges == 2 + 2 + 2 + 301 or backend == "cpu"
    expected = "twc" if backend == "cuda" else "thread_mapped"
    assert ctx.record["strategy"] == expected, step.known_max_degree
    assert hub.size == 2 + 2 + 2 + 301  # the hub's 301 neighbours among them


def test_auto_predicates():
    from gunpy.operators.advance import choose
    assert choose("auto", 500, 400) == "thread_mapped"
    assert choose("auto", 500, 400, largest=AUTO_HUB_DEGREE - 1) == "thread_mapped"
    assert choose("auto", 500, 400, largest=AUTO_HUB_DEGREE) == "twc"
    assert choose("auto", 9000, 400, largest=3000) == "merge_path"  # fat and uneven
    assert choose("auto", 9000, 8000, largest=3000) == "twc"  # fat but even: the hub decides
    assert choose("merge_path", 10, 10, largest=5000) == "merge_path"  # explicit wins


def test_three_argument_auto_predicates_still_work():
    """A strategy registered with the old ``auto(edges, frontier_size, threshold)``."""
    from gunpy.operators.advance import choose, register_strategy, thread_mapped
    from gunpy.operators.advance import unregister_strategy
    seen = []

    def odd_sizes(edges, frontier_size, threshold):
        seen.append((edges, frontier_size, threshold))
        return frontier_size % 2 == 1

    register_strategy("odd_tm", thread_mapped, auto=odd_sizes)
    try:
        assert choose("auto", 10, 3, largest=5000) == "odd_tm"
        assert choose("auto", 10, 4) == "thread_mapped"
        assert seen == [(10, 3, 4096), (10, 4, 4096)]
    finally:
        unregister_strategy("odd_tm")


def test_fused_levels_report_the_last_levels_largest_degree(backend):
    """Fused levels stop at the level whose edges reach the limit (the hub's); on CUDA
    its largest out-degree comes back in the same read as the levels' sizes."""
    _, run, out, _ = fused_levels_from_0(GRAPHS["path_star"], backend, limit=100)
    assert [int(n) for n, _ in run] == [1] * 11  # 0, 1, ..., 10: the hub's level stops it
    assert out.to_numpy().tolist() == [11] and out.known_edges == 301
    assert out.known_max_degree == (301 if backend == "cuda" else None)
