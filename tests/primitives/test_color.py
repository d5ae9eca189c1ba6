"""Graph colouring (gunpy.color) and its operator, neighbor_mex.

Jones-Plassmann colours each vertex with the first colour its neighbours of higher
priority left free: the sequential greedy colouring in decreasing priority order,
which the reference below computes one vertex at a time (its priorities: the hash
written again in NumPy). Every colouring is also checked proper directly, and its
colour count set beside networkx's ``greedy_color(strategy="largest_first")``. No
allocation per round, and the launches a round: tests/backends/test_allocations.py,
tests/backends/test_launch_budget.py.
"""

from collections import namedtuple

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import Functor
from gunpy import operators as ops
from gunpy.primitives.color import seed_word
from gunpy.testing import graph_names, nasty_graphs
from _helpers import assert_compiled, ptx_set_up
from doc_examples import check_docstring_examples, run_user_guide_section


def priorities(n, seed):
    """The hash of ``gunpy.primitives.color.Start``, vectorised."""
    x = (np.arange(n, dtype=np.uint64) ^ seed_word(seed)) & np.uint64(0xFFFFFFFF)
    for mult, shift in ((0x85EBCA6B, 13), (0xC2B2AE35, 16)):
        x = (x * np.uint64(mult)) & np.uint64(0xFFFFFFFF)
        x ^= x >> np.uint64(shift)
    return x


def neighbours(G):
    """Each vertex's neighbours either way, without itself."""
    A = G.to_scipy()
    A = (A + A.T).tocsr()
    return [set(A.indices[A.indptr[v]:A.indptr[v + 1]].tolist()) - {v}
            for v in range(G.num_vertices)]


def reference(G, seed=None):
    """Greedy first-fit colouring in decreasing priority order."""
    adj = neighbours(G)
    colors = np.full(G.num_vertices, -1)
    for v in np.argsort(-priorities(G.num_vertices, seed).astype(np.int64), kind="stable"):
        used = {colors[u] for u in adj[v]}
        c = 0
        while c in used:
            c += 1
        colors[v] = c
    return colors


def check_proper(G, r):
    A = G.to_scipy().tocoo()
    off = A.row != A.col
    assert not np.any(r.colors[A.row[off]] == r.colors[A.col[off]])
    assert r.colors.dtype == np.int32
    # first fit: every colour below the largest is used
    assert np.unique(r.colors).tolist() == list(range(r.num_colors))


@pytest.mark.parametrize("name", graph_names(nasty_graphs(small=True)))
def test_nasty_graphs_are_coloured_greedily_in_priority_order(backend, cpu_split, small, name):
    G = nasty_graphs(small=small)[name]
    r = gunpy.color(G, seed=3, backend=backend)
    check_proper(G, r)
    np.testing.assert_array_equal(r.colors, reference(G, 3))


def test_seed_decides_the_colouring(backend):
    G = gunpy.generators.grid_2d(6, 6)
    a, b = gunpy.color(G, backend=backend), gunpy.color(G, seed=0, backend=backend)
    np.testing.assert_array_equal(a.colors, b.colors)  # None is seed 0
    c = gunpy.color(G, seed=7, backend=backend)
    assert not np.array_equal(a.colors, c.colors)
    np.testing.assert_array_equal(c.colors, reference(G, 7))
    # a bipartite grid coloured greedily needs at most a few colours
    assert 2 <= c.num_colors <= 4 and c.stats.iterations >= 2


def test_directed_graph_and_self_loops(backend):
    # a directed triangle is coloured as undirected: three colours; a loop changes nothing
    D = gunpy.Graph.from_edges([0, 1, 2, 3], [1, 2, 0, 3], num_vertices=5,
                               remove_self_loops=False)
    r = gunpy.color(D, backend=backend)
    assert sorted(r.colors[:3].tolist()) == [0, 1, 2] and r.colors[3:].tolist() == [0, 0]
    assert r.num_colors == 3 and r.to_dict() == dict(enumerate(r.colors.tolist()))
    empty = gunpy.color(gunpy.Graph.from_edges([], [], num_vertices=0), backend=backend)
    assert empty.num_colors == 0 and empty.colors.size == 0


@pytest.mark.large
@pytest.mark.parametrize("name", ["karate", "dolphins", "chesapeake", "netscience",
                                  "email-Eu-core", "Wiki-Vote", "CA-GrQc", "facebook",
                                  "luxembourg_osm"])
def test_bundled_graphs_beside_networkx_largest_first(name):
    G = gunpy.datasets.load(name)
    r = gunpy.color(G, backend="cpu")
    check_proper(G, r)
    g = nx.Graph(G.to_networkx())
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    theirs = max(nx.greedy_color(g, strategy="largest_first").values()) + 1
    assert r.num_colors <= 2 * theirs + 1, (r.num_colors, theirs)
    if G.num_vertices < 2000:
        np.testing.assert_array_equal(r.colors, reference(G))


@pytest.mark.large
@pytest.mark.parametrize("directed", [False, True])
def test_rmat(backend, directed):
    G = gunpy.generators.rmat(11, 8, seed=5, directed=directed)
    r = gunpy.color(G, seed=11, backend=backend)
    check_proper(G, r)
    np.testing.assert_array_equal(r.colors, reference(G, 11))


def test_bad_input():
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.color([[0, 1]])
    with pytest.raises(TypeError, match="seed"):
        gunpy.color(gunpy.generators.path(3), seed=1.5)
    with pytest.raises(ValueError, match="backend"):
        gunpy.color(gunpy.generators.path(3), backend="abacus")


class Mex(Functor):
    """Keys: the neighbours' ``keys`` entries, only for the vertices ``pick`` marks."""

    @staticmethod
    def cond_vertex(v, data):
        return data.pick[v] != 0

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return data.keys[dst]


def test_neighbor_mex_operator(backend):
    # a star whose hub sees keys 0..69 but 64 (a second window) and -1 (left out);
    # each leaf sees the hub's key only
    n = 72
    G = gunpy.Graph.from_edges(np.zeros(n - 1, dtype=np.int64), np.arange(1, n),
                               directed=False)
    keys = np.concatenate([[5], np.arange(70), [-1]])
    keys[65] = 0  # 64 is missing
    Data = namedtuple("Data", "keys pick")
    ctx = ops.Context(G, backend=backend)
    bk = ctx.backend
    data = Data(bk.asarray(keys.astype(np.int64)), bk.asarray(np.ones(n, dtype=np.int8)))
    out = bk.asarray(np.full(n, -7, dtype=np.int64))
    ops.neighbor_mex(G, None, Mex, data, out, context=ctx)
    got = bk.to_host(out)
    assert got[0] == 64 and got[1:].tolist() == [0] * (n - 1)  # the leaves see 5 only
    assert ctx.record["edges"] == 2 * (n - 1) + (n - 1)  # the hub read its edges twice
    # a frontier, and cond_vertex turning a vertex down: the others keep their values
    data = Data(data.keys, bk.asarray((np.arange(n) != 2).astype(np.int8)))
    out = bk.asarray(np.full(n, -7, dtype=np.int64))
    ops.neighbor_mex(G, ctx.frontier([2, 6, 0]), Mex, data, out, context=ctx)
    assert bk.to_host(out)[[0, 2, 6, 7]].tolist() == [64, -7, 0, -7]


@pytest.mark.ptx
def test_color_compiles_to_ptx(ptx_backend):
    from gunpy.primitives.color import ColorProblem, FirstFree, Higher, Ready, Release, Start
    G, p, ctx, everything = ptx_set_up(ColorProblem, ptx_backend)
    ops.compute(G, None, Start, p.data(), context=ctx)
    ops.neighbor_reduce(G, None, Higher, p.data(), p.waiting, edges="out", context=ctx)
    ops.filter(G, everything, Ready, p.data(), context=ctx)
    ops.neighbor_mex(G, everything, FirstFree, p.data(), p.colors, context=ctx)
    ops.neighbor_mex(G, None, FirstFree, p.data(), p.colors, context=ctx)
    ops.advance(G, everything, Release, p.data(), context=ctx)
    # the colour count, a maximum found where the colours are (a CUDA run's stay there)
    ops.reduce(p.colors, "max", G.num_vertices, context=ctx)
    assert_compiled(ptx_backend, "compute", "mex", "flag", "scatter", "advance",
                    "_cuda_reduce")


@pytest.mark.parametrize("name, at_least", [("gunpy.primitives.color", 4),
                                            ("gunpy.operators.neighbor_mex", 8)])
def test_docstring_examples(name, at_least):
    check_docstring_examples(name, at_least)


def test_registered():
    from gunpy.registry import primitive
    spec = primitive("color")
    assert spec.function is gunpy.color and spec.fields == ("colors",)


def test_user_guide_color_section_runs():
    run_user_guide_section("## Graph colouring", 3)
