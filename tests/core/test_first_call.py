"""The first call on a new Graph builds only what the primitive needs (issue 22).

Structure, not time: which derived arrays a run builds (the twins map of an undirected
graph, the symmetry check), which hooks are judged to read an edge's id or weight, and
that a pull whose hooks do read them still gets the right ones (oracles from the raw
edge list: networkx for depths, a dict of minimum weights for the weights).
"""

from collections import namedtuple

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import Functor, atomics
from gunpy import operators as ops
from gunpy.functor import Hooks, compile_functor, reads_edge_data, reads_params
from gunpy.operators.advance import pull
from gunpy.primitives.bfs import BFSFunctor, IdempotentBFSFunctor


# ---------------------------------------------------------------- which hooks read what
def _plain(src, dst, edge, weight, data):
    return data[dst] == 0


def _edge(src, dst, edge, weight, data):
    return data[edge] == 0


def _weight(src, dst, edge, weight, data):
    return weight > 0.0


def _helper(src, dst, edge, weight, data):
    return _plain(src, dst, edge, 1.0, data)  # passes edge on: a read


def _captured(src, dst, edge, weight, data):
    def inner():
        return weight
    return inner() > 0.0


def _overwritten(src, dst, edge, weight, data):
    edge = 0  # a store, never a read of the argument
    weight = 1.0
    return data[dst] == 0


def _any(*args):
    return True


def test_reads_params_from_bytecode():
    assert not reads_params(_plain, (2, 3))
    assert reads_params(_edge, (2,)) and not reads_params(_edge, (3,))
    assert reads_params(_weight, (3,)) and not reads_params(_weight, (2,))
    assert reads_params(_helper, (2,))
    assert reads_params(_captured, (3,))
    assert not reads_params(_overwritten, (2, 3))
    # unsure: no bytecode, *args, a position past the parameters
    assert reads_params(len, (0,)) and reads_params(_any, (2,))
    assert reads_params(_plain, (7,))


def _functor(cond=None, apply=None, gather=None):
    body = {}
    if cond is not None:
        body["cond_edge"] = staticmethod(cond)
    if apply is not None:
        body["apply_edge"] = staticmethod(apply)
    if gather is not None:
        body["gather_edge"] = staticmethod(gather)
    return type("F", (Functor,), body)


def test_reads_edge_data_of_functors():
    assert not reads_edge_data(Functor)  # the defaults read nothing
    assert not reads_edge_data(BFSFunctor) and not reads_edge_data(IdempotentBFSFunctor)
    assert reads_edge_data(_functor(cond=_edge))
    assert reads_edge_data(_functor(apply=_edge))
    # the weight matters only on a weighted graph
    assert reads_edge_data(_functor(apply=_weight))
    assert not reads_edge_data(_functor(apply=_weight), weighted=False)
    # only the hooks asked about
    F = _functor(cond=_plain, gather=_edge)
    assert not reads_edge_data(F) and reads_edge_data(F, ("gather_edge",))
    # an inherited hook is the one judged
    assert reads_edge_data(type("G", (_functor(cond=_edge),), {}))
    # not a functor: unsure
    assert reads_edge_data(object) and reads_edge_data(_functor(cond=_plain), ("nope",))


def test_needs_edge_ids_follows_the_compiled_hooks(backend):
    b = ops.Context(gunpy.Graph.from_edges([0], [1]), backend).backend
    hooks = compile_functor(BFSFunctor, b)
    assert isinstance(hooks, Hooks)
    assert not pull.needs_edge_ids(hooks, True) and not pull.needs_edge_ids(hooks, False)
    rec = compile_functor(Record, b)
    assert pull.needs_edge_ids(rec, True) and pull.needs_edge_ids(rec, False)


# ----------------------------------------------------------------- pull with edge data
Data = namedtuple("Data", "depth parent eid wt")


class Record(Functor):
    """Claims dst (compare-and-swap) and records the edge it came by, and its weight."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return atomics.cas(data.depth, dst, -1, data.depth[src] + 1) == -1

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        data.parent[dst] = src
        data.eid[dst] = edge
        data.wt[dst] = weight


def _raw_edges(seed=3):
    """Raw input with duplicates (unequal weights), self-loops, isolated vertices and a
    hub of more than 1024 edges."""
    rng = np.random.default_rng(seed)
    n = 1500
    hub = np.zeros(1100, np.int64), rng.choice(np.arange(1, 1400), 1100, replace=False)
    src = np.concatenate([hub[0], rng.integers(0, 1400, 900), [5, 5, 7, 7, 9]])
    dst = np.concatenate([hub[1], rng.integers(0, 1400, 900), [6, 6, 7, 7, 9]])
    w = rng.integers(1, 50, src.shape[0]).astype(np.float64)  # vertices 1400.. isolated
    return src, dst, w, n


def _oracle(src, dst, w, n, directed):
    """networkx graph and the weight gunpy keeps per edge (the minimum of its copies)."""
    g = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(range(n))
    best = {}
    for s, d, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        if s == d:
            continue  # self-loops are dropped by default
        key = (s, d) if directed else (min(s, d), max(s, d))
        best[key] = min(best.get(key, np.inf), x)
        g.add_edge(s, d)
    return g, best


def _pull_bfs(G, source, backend, functor, mapping="auto"):
    ctx = ops.Context(G, backend)
    n = G.num_vertices
    depth = np.full(n, -1, np.int32)
    depth[source] = 0
    b = ctx.backend
    data = Data(b.asarray(depth), b.asarray(np.full(n, -1, np.int32)),
                b.asarray(np.full(n, -2, np.int64)), b.asarray(np.zeros(n)))
    mask = ctx.new_bitmap()
    frontier = ctx.frontier([source])
    ops.bitmap.queue_to_bitmap(b, frontier.queue, frontier.length, 1, mask)
    while frontier.size:
        frontier = ops.advance(G, frontier, functor, data, mask=mask, direction="pull",
                               pull_mapping=mapping, context=ctx)
    return tuple(b.to_host(a) for a in data)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("mapping", ["thread", "warp"])
def test_pull_hooks_reading_edge_data_get_the_right_edge(backend, directed, weighted, mapping):
    src, dst, w, n = _raw_edges()
    G = gunpy.Graph.from_edges(src, dst, w if weighted else None, num_vertices=n,
                               directed=directed)
    g, best = _oracle(src, dst, w, n, directed)
    depth, parent, eid, wt = _pull_bfs(G, 0, backend, Record, mapping)
    expect = nx.single_source_shortest_path_length(g, 0)
    assert {v: int(d) for v, d in enumerate(depth) if d >= 0} == expect
    row = np.searchsorted(G.row_offsets, np.arange(G.num_edges), side="right") - 1
    for v in expect:
        if v == 0:
            continue
        u, e = int(parent[v]), int(eid[v])
        assert g.has_edge(u, v) and depth[u] == depth[v] - 1
        # the CSR id of the edge u -> v (for an undirected graph: not v -> u's)
        assert 0 <= e < G.num_edges and row[e] == u and G.column_indices[e] == v
        key = (u, v) if directed else (min(u, v), max(u, v))
        assert wt[v] == (best[key] if weighted else 1.0)


def test_a_kernel_without_edge_ids_never_reads_them(backend):
    # edge_ids=False: the hooks get edge -1 and weight 1.0, not the real ones (the
    # arrays are not read at all: the ones passed here hold nothing usable)
    if backend != "cpu":
        pytest.skip("calls the CPU kernel directly")
    G = gunpy.Graph.from_edges([0, 0, 1], [1, 2, 2], [3.0, 4.0, 5.0], directed=False)
    hooks = compile_functor(Record, ops.Context(G, "cpu").backend)
    n = G.num_vertices
    depth = np.array([0, -1, -1], np.int32)
    data = Data(depth, np.full(n, -1, np.int32), np.full(n, -2, np.int64), np.zeros(n))
    visited = np.array([1], np.uint32)  # vertex 0
    counts = np.zeros((1, 3), np.int64)
    next_bits = np.zeros(1, np.uint32)
    pull.cpu_kernel(hooks, True, True, False)(
        n, G.row_offsets, G.column_indices, np.zeros(1, np.int64), np.zeros(1),
        G.row_offsets, visited, np.zeros(1, np.uint32), visited, next_bits, counts, 1, data)
    assert next_bits[0] == 0b110 and data.depth.tolist() == [0, 1, 1]
    assert data.eid.tolist() == [-2, -1, -1] and data.wt.tolist() == [0.0, 1.0, 1.0]


# ------------------------------------------------------------- what a first run builds
def _count_twins(monkeypatch):
    import gunpy.graph as graph_mod
    calls = []
    real = graph_mod.reverse_edge_ids

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(graph_mod, "reverse_edge_ids", counted)
    return calls


def test_a_hook_reading_edges_still_builds_the_twins(monkeypatch, backend):
    calls = _count_twins(monkeypatch)
    src, dst, w, n = _raw_edges()
    G = gunpy.Graph.from_edges(src, dst, w, num_vertices=n, directed=False)
    _pull_bfs(G, 0, backend, Record)
    assert calls == [1]


def test_a_fresh_undirected_bfs_builds_no_twins(monkeypatch, backend):
    calls = _count_twins(monkeypatch)
    src, dst, w, n = _raw_edges()
    G = gunpy.Graph.from_edges(src, dst, num_vertices=n, directed=False)
    r = gunpy.bfs(G, 0, direction="pull", backend=backend)
    g, _ = _oracle(src, dst, w, n, False)
    expect = nx.single_source_shortest_path_length(g, 0)
    assert {v: int(d) for v, d in enumerate(r.depth) if d >= 0} == expect
    assert calls == []


def test_a_fresh_undirected_pagerank_builds_no_twins(monkeypatch, backend):
    calls = _count_twins(monkeypatch)
    src, dst, w, n = _raw_edges()
    G = gunpy.Graph.from_edges(src, dst, num_vertices=n, directed=False)
    r = gunpy.pagerank(G, tol=1e-10, backend=backend)
    g, _ = _oracle(src, dst, w, n, False)
    ref = nx.pagerank(g, tol=1e-10)
    np.testing.assert_allclose(r.rank, [ref[v] for v in range(n)], atol=1e-9)
    assert calls == []
