"""Operators called on their own: a Graph, a Frontier, a functor, data and a Context, no Enactor.

Each free function of :mod:`gunpy.operators` is checked against NumPy / networkx
on graphs with hubs, isolated vertices, self-loops and directed edges, on the
CPU and under the CUDA simulator (the ``backend`` fixture).
"""

import re
from collections import namedtuple
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import Functor, atomics
from gunpy import operators as ops
from gunpy.testing import nasty_graphs, to_nx
from _helpers import InDegree, KeepEven

GRAPHS = nasty_graphs()
# nasty_graphs' self_loops_duplicates goes through from_edges' defaults, which drop both; this
# one keeps its self-loops (0, 1, 2) and repeated edges (0->1 twice, 3->4 twice) in the CSR
LOOPS = ([0, 0, 0, 1, 1, 2, 3, 3, 4], [0, 1, 1, 1, 2, 2, 4, 4, 0])
GRAPHS["self_loops_kept"] = gunpy.Graph.from_edges(*LOOPS, num_vertices=6, directed=True,
                                                   remove_self_loops=False,
                                                   remove_duplicates=False)
NAMES = ["star_hub", "disconnected", "directed_cycle", "preferential_hubs",
         "self_loops_duplicates", "self_loops_kept"]
_missing = sorted(set(NAMES) - set(GRAPHS))
if _missing:  # a misspelt name must not drop its graph from the tests without a word
    raise KeyError(f"no test graph named {_missing}; there are {sorted(GRAPHS)}")

Depth = namedtuple("Depth", "depth")
Kept = namedtuple("Kept", "kept")
Values = namedtuple("Values", "depth acc")


class Claim(Functor):
    """BFS's step: the first frontier vertex to reach ``dst`` claims it."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return atomics.cas(data.depth, dst, -1, data.depth[src] + 1) == -1


class AnyEdge(Functor):
    """Accepts every edge (duplicates stay in a push output)."""


class Bump(Functor):
    @staticmethod
    def apply_vertex(v, data):
        atomics.add(data.acc, v, 1.0)


class Weight(Functor):
    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return weight


def _host(ctx, arr):
    return ctx.backend.to_host(arr)


def _depth_data(ctx, G, sources):
    depth = np.full(G.num_vertices, -1, dtype=np.int32)
    depth[sources] = 0
    return Depth(ctx.backend.asarray(depth))


def _successors(G, vertices):
    ro = G.row_offsets
    return {int(d) for v in vertices for d in G.column_indices[ro[v]:ro[v + 1]]}


@pytest.mark.parametrize("name", NAMES)
def test_push_advance_is_one_bfs_step(name, backend):
    G = GRAPHS[name]
    ctx = ops.Context(G, backend)
    src = [0, G.num_vertices - 1]
    data = _depth_data(ctx, G, src)
    out = ops.advance(G, ctx.frontier(src), Claim, data, context=ctx)
    expect = _successors(G, src) - set(src)
    got = out.to_numpy()
    assert sorted(got.tolist()) == sorted(expect)  # each claimed once: no duplicates
    depth = _host(ctx, data.depth)
    assert (depth[sorted(expect)] == 1).all() if expect else True
    assert ((depth == -1).sum() == G.num_vertices - len(expect) - len(set(src)))
    # the stats sink counted the frontier's out-edges
    assert ctx.record["edges"] == int(sum(G.out_degrees()[v] for v in set(src)))
    assert ctx.record["direction"] == "push"


def test_self_loops_and_repeated_edges_are_traversed_as_stored(backend):
    G = GRAPHS["self_loops_kept"]
    assert G.num_edges == 9 and G.out_degrees().tolist() == [3, 2, 1, 2, 1, 0]
    ctx = ops.Context(G, backend)
    # every stored edge comes out of a push advance, self-loops and repeats included
    out = ops.advance(G, ctx.frontier([0, 1, 3]), AnyEdge, (), context=ctx)
    assert sorted(out.to_numpy().tolist()) == [0, 1, 1, 1, 2, 4, 4]
    assert ctx.record["edges"] == 7
    # a claiming step: the self-loop cannot claim its own (visited) source, a repeated
    # edge claims its target once
    data = _depth_data(ctx, G, [0, 3])
    out = ops.advance(G, ctx.frontier([0, 3]), Claim, data, context=ctx)
    assert sorted(out.to_numpy().tolist()) == [1, 4]
    assert _host(ctx, data.depth).tolist() == [0, 1, -1, 0, 1, -1]
    # pull: vertex 2's in-edges are 1->2 and its own loop; only 1 is in the frontier
    data = _depth_data(ctx, G, [1])
    out = ops.advance(G, ctx.frontier([1]), Claim, data, direction="pull", context=ctx)
    assert out.to_numpy().tolist() == [2]
    assert _host(ctx, data.depth).tolist() == [-1, 0, 1, -1, -1, -1]


Optional = namedtuple("Optional", "depth spare label")


class ReadsSpare(Claim):
    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        data.spare[dst] = 1


def test_none_fields_are_left_out_of_the_functors_data(backend):
    """An optional array left None is not passed (no launch on a device can pass a None):
    a functor that does not read it runs, one that reads it fails to compile, and a string
    is refused by name before any launch."""
    G = GRAPHS["preferential_hubs"]
    ctx = ops.Context(G, backend)
    data = Optional(_depth_data(ctx, G, [0]).depth, None, 3)
    out = ops.advance(G, ctx.frontier([0]), Claim, data, context=ctx)
    assert sorted(out.to_numpy().tolist()) == sorted(_successors(G, [0]) - {0})
    with pytest.raises(Exception, match="spare"):  # (fresh depths: the simulator runs it)
        ops.advance(G, ctx.frontier([0]), ReadsSpare,
                    data._replace(depth=_depth_data(ctx, G, [0]).depth), context=ctx)
    if backend == "cuda":  # the CPU backend passes a string; no device launch can
        with pytest.raises(TypeError, match=r"argument \d+\.label is 'x', which numba-cuda"):
            ops.advance(G, ctx.frontier([0]), Claim, data._replace(label="x"), context=ctx)


@pytest.mark.parametrize("output", ["vertex", "edge", "none"])
def test_push_advance_outputs(output, backend):
    G = GRAPHS["preferential_hubs"]
    ctx = ops.Context(G, backend)
    hub = int(np.argmax(G.out_degrees()))
    out = ops.advance(G, ctx.frontier([hub]), AnyEdge, (), output=output, context=ctx)
    lo, hi = G.row_offsets[hub], G.row_offsets[hub + 1]
    if output == "vertex":
        assert sorted(out.to_numpy().tolist()) == sorted(G.column_indices[lo:hi].tolist())
    elif output == "edge":
        assert out.kind == "edge"
        assert sorted(out.to_numpy().tolist()) == list(range(lo, hi))
    else:
        assert out.size == 0


@pytest.mark.parametrize("load_balance", ["thread_mapped", "twc", "merge_path", "auto"])
def test_push_advance_with_mask_skips_and_marks(load_balance, backend):
    G = GRAPHS["star_hub"]
    n = G.num_vertices
    ctx = ops.Context(G, backend)
    mask = ctx.new_bitmap()
    blocked = np.arange(1, n, 3)  # a third of the leaves counts as visited already
    ops.bitmap.queue_to_bitmap(ctx.backend, *_queue(ctx, blocked), mask)
    out = ops.advance(G, ctx.frontier([0]), AnyEdge, (), mask=mask, load_balance=load_balance,
                      context=ctx)
    expect = sorted(set(range(1, n)) - set(blocked.tolist()))
    assert sorted(out.to_numpy().tolist()) == expect
    # every leaf is now marked
    assert ops.bitmap.popcount(ctx.backend, mask) == n - 1


def _queue(ctx, ids):
    f = ctx.frontier(ids)
    return f.queue, f.length, f.size


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("pull_input", ["frontier", "visited"])
def test_pull_advance_finds_unvisited_vertices_with_a_frontier_in_neighbour(name, pull_input,
                                                                           backend):
    G = GRAPHS[name]
    ctx = ops.Context(G, backend)
    src = [0]
    data = _depth_data(ctx, G, src)
    kw = {}
    if pull_input == "visited":
        kw["mask"] = mask = ctx.new_bitmap()
        ops.bitmap.queue_to_bitmap(ctx.backend, *_queue(ctx, src), mask)
    out = ops.advance(G, ctx.frontier(src), Claim, data, direction="pull",
                      pull_input=pull_input, context=ctx, **kw)
    expect = sorted(_successors(G, src) - set(src))
    assert out.to_numpy().tolist() == expect
    assert ctx.record["direction"] == "pull"
    if pull_input == "visited":
        assert ops.bitmap.popcount(ctx.backend, mask) == len(expect) + 1


def test_a_bfs_written_with_free_operators_matches_networkx(backend):
    """The loop an Enactor runs, written out by hand."""
    G = GRAPHS["preferential_hubs"]
    ctx = ops.Context(G, backend)
    data = _depth_data(ctx, G, [3])
    mask = ctx.new_bitmap()
    frontier = ctx.frontier([3])
    ops.bitmap.queue_to_bitmap(ctx.backend, frontier.queue, frontier.length, 1, mask)
    level = 0
    while frontier.size:
        direction = "pull" if level % 2 else "push"  # alternate: both must agree
        frontier = ops.advance(G, frontier, Claim, data, mask=mask, direction=direction,
                               pull_input="visited", context=ctx)
        level += 1
    expect = nx.single_source_shortest_path_length(to_nx(G), 3)
    depth = _host(ctx, data.depth)
    for v in range(G.num_vertices):
        assert depth[v] == expect.get(v, -1), v


def test_filter_modes(backend):
    G = GRAPHS["disconnected"]
    ctx = ops.Context(G, backend)
    data = Kept(ctx.backend.asarray(np.zeros(G.num_vertices, dtype=np.int32)))
    ids = [4, 3, 3, 8, 1, 4, 10]
    out = ops.filter(G, ctx.frontier(ids), KeepEven, data, context=ctx)
    assert out.to_numpy().tolist() == [4, 8, 4, 10]  # exact, order kept
    assert sorted(np.flatnonzero(_host(ctx, data.kept) == 1).tolist()) == [4, 8, 10]
    uniq = ops.filter(G, ctx.frontier(ids), AnyEdge, (), mode="unique", context=ctx)
    assert sorted(uniq.to_numpy().tolist()) == [1, 3, 4, 8, 10]
    mask = ctx.new_bitmap()
    ops.bitmap.queue_to_bitmap(ctx.backend, *_queue(ctx, [3]), mask)
    culled = ops.filter(G, ctx.frontier(ids), AnyEdge, (), mode="cull", mask=mask, context=ctx)
    assert sorted(culled.to_numpy().tolist()) == [1, 4, 8, 10]
    with pytest.raises(ValueError, match="needs mask"):
        ops.filter(G, ctx.frontier(ids), AnyEdge, (), mode="cull", context=ctx)


def test_filter_bypass_returns_its_input(backend):
    G = GRAPHS["disconnected"]
    ctx = ops.Context(G, backend)
    f = ctx.frontier([1, 2])
    assert ops.filter(G, f, AnyEdge, (), context=ctx) is f


def test_compute_and_reduce(backend):
    G = GRAPHS["disconnected"]
    ctx = ops.Context(G, backend)
    acc = ctx.backend.zeros(G.num_vertices, np.float64)
    data = Values(ctx.backend.zeros(1, np.int32), acc)
    ops.compute(G, ctx.frontier([2, 5, 5]), Bump, data, context=ctx)
    ops.compute(G, None, Bump, data, context=ctx)  # every vertex
    host = _host(ctx, acc)
    expect = np.ones(G.num_vertices)
    expect[2] += 1
    expect[5] += 2
    assert np.array_equal(host, expect)
    assert ops.reduce(acc, "sum", context=ctx) == expect.sum()
    assert ops.reduce(acc, "max", context=ctx) == 3.0
    assert ops.reduce(acc, "min", n=3, context=ctx) == 1.0


@pytest.mark.parametrize("edges", ["in", "out"])
def test_neighbor_reduce_sums_weights(edges, backend):
    rng = np.random.default_rng(3)
    n = 30
    s, d = rng.integers(0, n, 120), rng.integers(0, n, 120)
    G = gunpy.Graph.from_edges(s, d, rng.random(120), num_vertices=n, directed=True)
    ctx = ops.Context(G, backend)
    out = ctx.backend.zeros(n, np.float64)
    ops.neighbor_reduce(G, None, Weight, (), out, edges=edges, context=ctx)
    src = np.repeat(np.arange(n), G.out_degrees())
    expect = np.zeros(n)
    np.add.at(expect, G.column_indices if edges == "in" else src, G.values)
    assert np.allclose(_host(ctx, out), expect)
    assert ctx.record["edges"] == G.num_edges


@pytest.mark.parametrize("serial_below", [0, 1 << 19])  # the parallel and one-core builds
@pytest.mark.parametrize("frontier", [False, True])
def test_cpu_neighbor_reduce_sums_in_list_order(serial_below, frontier, monkeypatch):
    """The CPU kernel takes two edges a step: its sums are still the ones of a left-to-right
    loop over each list, bit for bit (values where the order changes the sum), at every
    list length, odd or even."""
    from gunpy.backends.cpu import CpuBackend
    monkeypatch.setattr(CpuBackend, "serial_below", serial_below)
    degrees = np.arange(10)
    dst = np.repeat(np.arange(10), degrees)
    src = (dst + 1 + np.arange(dst.size) % 9) % 10
    w = np.tile([1e16, 1.0, -1e16, 3.0, 2.5, -1.0, 1e-3, 7e15, -7e15], 6)[:dst.size]
    G = gunpy.Graph.from_edges(src, dst, w, num_vertices=10, directed=True)
    ctx = ops.Context(G, "cpu")
    out = np.full(10, -1.0)
    which = ctx.frontier(np.arange(1, 10, 2)) if frontier else None
    ops.neighbor_reduce(G, which, Weight, (), out, edges="in", context=ctx)
    dg = ctx.backend.graph(G, csc=True, edge_ids=True)
    for v in (range(1, 10, 2) if frontier else range(10)):
        acc = 0.0
        for p in range(dg.in_offsets[v], dg.in_offsets[v + 1]):
            acc += G.values[dg.in_edge_ids[p]]
        assert out[v] == acc, v
    if frontier:
        assert (out[::2] == -1.0).all()


def test_bitmap_round_trip(backend):
    G = GRAPHS["star_hub"]
    ctx = ops.Context(G, backend)
    ids = np.array([0, 5, 31, 32, 33, G.num_vertices - 1])
    words = ctx.new_bitmap()
    ops.bitmap.queue_to_bitmap(ctx.backend, *_queue(ctx, ids), words)
    assert ops.bitmap.popcount(ctx.backend, words) == len(ids)
    f = ctx.frontier(capacity=len(ids))
    total = ops.bitmap.bitmap_to_queue(ctx.backend, words, f.queue, f.length, ctx.scratch)
    f.assume_size(total)
    assert f.to_numpy().tolist() == ids.tolist()


def test_bad_calls_give_clear_errors():
    G = GRAPHS["disconnected"]
    ctx = ops.Context(G, "cpu")
    f = ctx.frontier([0])
    with pytest.raises(ValueError, match="auto"):
        ops.advance(G, f, AnyEdge, (), direction="auto", context=ctx)
    with pytest.raises(ValueError, match="another graph"):
        ops.advance(GRAPHS["star_hub"], f, AnyEdge, (), context=ctx)
    with pytest.raises(ValueError, match="mask must be a bitmap"):
        ops.advance(G, f, AnyEdge, (), mask=np.zeros(3, np.uint32), context=ctx)
    with pytest.raises(ValueError, match="load_balance"):
        ops.advance(G, f, AnyEdge, (), load_balance="nope", context=ctx)
    with pytest.raises(ValueError, match="pull mapping"):
        ops.advance(G, f, AnyEdge, (), direction="pull", pull_mapping="nope", context=ctx)
    with pytest.raises(IndexError):
        ctx.frontier([G.num_vertices])
    with pytest.raises(TypeError, match="Context"):
        ops.compute(G, f, Bump, (), context="cpu")


def test_an_operator_without_context_makes_one():
    G = GRAPHS["directed_cycle"]
    ctx = ops.Context(G, "cpu")
    data = _depth_data(ctx, G, [0])
    out = ops.advance(G, ctx.frontier([0]), Claim, data)
    assert out.to_numpy().tolist() == [1]


# -- backends own their kernels -----------------------------------------------------------
ROOT = Path(__file__).resolve().parents[2]


def test_no_backend_name_comparisons_outside_the_backends():
    """Operators ask the backend for its implementation; they never test which backend it is."""
    pattern = re.compile(r"\.name\s*[!=]=|dry_run")
    offenders = []
    for path in (ROOT / "gunpy").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("gunpy/backends/", "gunpy/testing/", "gunpy/bench/")):
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{rel}:{i}: {line.strip()}")
    assert offenders == []


def test_a_backend_inherits_the_operators_and_hides_some():
    """A new backend: array methods; it inherits every operator of the class it extends
    (strategies included) and hides one with ``operators = {name: None}``, named."""
    from gunpy.backends.cpu import CpuBackend

    class Tracing(CpuBackend):
        name = "tracing"
        operators = {"neighbor_reduce": None}  # the rest is inherited, strategies included

    be = Tracing()
    G = GRAPHS["preferential_hubs"]
    # an explicit strategy (never fused into levels)
    r = gunpy.bfs(G, 0, backend=be, direction="push", load_balance="thread_mapped")
    assert np.array_equal(r.depth, gunpy.bfs(G, 0, backend="cpu").depth)
    assert r.stats.backend == "tracing"
    # what the level ran was found along the class: the CPU's own implementations
    from gunpy.backends import get_backend
    from gunpy.operators.advance import STRATEGIES, thread_mapped
    from gunpy.operators.operator import operator
    assert STRATEGIES["thread_mapped"].op.on(be) is operator(
        "advance.push.thread_mapped").on(get_backend("cpu"))
    assert thread_mapped.THIN.on(be) is thread_mapped.THIN.on(get_backend("cpu"))
    with pytest.raises(NotImplementedError, match="'tracing' backend does not implement "
                                                   "operator 'neighbor_reduce'"):
        gunpy.pagerank(G, direction="pull", backend=be)


class _OutProblem(gunpy.Problem):
    """One float64 slot a vertex, ``out``, zeroed."""
    Data = namedtuple("OutData", "out")

    def init(self):
        self.out = self.vertex_array(np.float64, fill=0.0)


@pytest.mark.parametrize("style", ["free", "deprecated"])
def test_enactor_neighbor_reduce_applies_and_aggregates(backend, style):
    # in-degree by gather, then apply_vertex doubles it in the same pass and returns
    # (new value, 1): the sums are twice the edge count and the vertex count; called
    # in a primitive with the enactor's context (deprecated: the former wrapper, warning)
    from gunpy import Enactor

    class Double(InDegree):
        @staticmethod
        def apply_vertex(v, data):
            data.out[v] *= 2.0
            return (data.out[v], 1.0)

    class E(Enactor):
        def prepare_frontier(self, frontier):
            pass

        def loop(self, frontier):
            if style == "free":
                self.sums = ops.neighbor_reduce(self.graph, None, Double, self.problem,
                                                self.problem.out, edges="in", aggregates=2,
                                                context=self.context)
            else:
                with pytest.warns(DeprecationWarning, match="Enactor.neighbor_reduce"):
                    self.sums = self.neighbor_reduce(None, Double, self.problem.out,
                                                     edges="in", aggregates=2)
            return frontier

        def is_converged(self, frontier):
            return self.iteration >= 1

    G = gunpy.Graph.from_edges([0, 0, 1, 3], [1, 2, 2, 2], num_vertices=4)
    p = _OutProblem(G, backend=backend)
    e = E(p)
    e.enact()
    assert e.sums == (2.0 * G.num_edges, 4.0)
    assert p.to_host(p.out).tolist() == [0.0, 2.0, 6.0, 0.0]


def test_free_operators_in_a_run_leave_their_statistics_to_one_read(backend, monkeypatch):
    """A free operator called with the enactor's context inside a run reads its device
    statistics at the run's end with the others (no read, so no sync, per call); called
    on its own it reads them before it returns."""
    from gunpy import Enactor

    class E(Enactor):
        def prepare_frontier(self, frontier):
            frontier.push(1)

        def loop(self, frontier):
            ops.neighbor_reduce(self.graph, frontier, InDegree, self.problem,
                                self.problem.out, context=self.context)
            return frontier

        def is_converged(self, frontier):
            return self.iteration >= 3

    G = gunpy.Graph.from_edges([0, 2, 3], [1, 1, 1], num_vertices=4)
    reads = []
    flush = ops.Context.flush
    monkeypatch.setattr(ops.Context, "flush", lambda ctx: reads.append(1) or flush(ctx))
    e = E(_OutProblem(G, backend=backend))
    stats = e.enact()
    assert stats.edges_visited == 3 * 3  # vertex 1's three in-edges, three times
    assert len(reads) == 2  # the loop's end, then finalize's
    ctx = ops.Context(G, backend=backend)
    ops.neighbor_reduce(G, ctx.frontier([1]), InDegree, e.problem, e.problem.out,
                        context=ctx)
    assert ctx.record["edges"] == 3 and len(reads) == 3
