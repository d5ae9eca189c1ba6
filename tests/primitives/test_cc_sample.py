"""gunpy.operators.sample (Afforest's neighbour sampling), the operator CC's first pass runs."""

from collections import namedtuple

import numpy as np
import pytest

import gunpy
from gunpy import Functor, atomics
from gunpy import operators as ops
from gunpy.operators.sample import sample
from gunpy.testing import nasty_graphs

GRAPHS = nasty_graphs(small=True)
Seen = namedtuple("Seen", "hits kept weights")


class Visit(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        atomics.add(data.hits, edge, 1)
        return dst % 2 == 0

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        atomics.add(data.kept, edge, 1)
        data.weights[edge] = weight  # one writer an edge


def weighted_graph():
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 30, 120), rng.integers(0, 30, 120)
    return gunpy.Graph.from_edges(src, dst, rng.uniform(1, 9, 120), num_vertices=30)


def expected(G, k, vertices=None):
    """Per edge: 1 when it is among the first k of its source's (a frontier vertex's) list."""
    ro = G.row_offsets
    want = np.zeros(G.num_edges, dtype=np.int64)
    for v in range(G.num_vertices) if vertices is None else vertices:
        want[ro[v]:min(ro[v + 1], ro[v] + k)] = 1
    return want


def run(G, k, backend, vertices=None):
    ctx = ops.Context(G, backend=backend)
    b = ctx.backend
    data = Seen(b.asarray(np.zeros(G.num_edges, dtype=np.int64)),
                b.asarray(np.zeros(G.num_edges, dtype=np.int64)),
                b.asarray(np.zeros(G.num_edges, dtype=np.float64)))
    frontier = None if vertices is None else ctx.frontier(vertices)
    assert sample(G, frontier, Visit, data, k=k, context=ctx) is frontier
    return ctx, Seen(*(b.to_host(a) for a in data))


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("name", ["star_hub", "random_directed", "grid", "self_loops_duplicates",
                                  "edgeless", "weighted"])
def test_sample_visits_each_vertexs_first_k_edges(name, k, backend, cpu_split):
    G = weighted_graph() if name == "weighted" else GRAPHS[name]
    ctx, seen = run(G, k, backend)
    want = expected(G, k)
    assert np.array_equal(seen.hits, want)  # each sampled edge once, the others never
    even = (G.column_indices % 2 == 0).astype(np.int64)
    assert np.array_equal(seen.kept, want * even)  # apply_edge where cond_edge held
    weights = np.ones(G.num_edges) if G.values is None else G.values
    assert np.array_equal(seen.weights, np.where(want * even == 1, weights, 0.0))
    assert ctx.record["edges"] == want.sum()


@pytest.mark.parametrize("k", [1, 3])
def test_sample_on_a_frontier_visits_only_its_vertices(k, backend, cpu_split):
    G = GRAPHS["preferential_hubs"]
    vertices = [0, 7, 3, 39]
    ctx, seen = run(G, k, backend, vertices)
    want = expected(G, k, vertices)
    assert np.array_equal(seen.hits, want) and want.sum() >= len(vertices)
    assert ctx.record["edges"] == want.sum()


def test_sample_with_k_zero_visits_nothing_and_checks_k(backend):
    G = GRAPHS["grid"]
    ctx, seen = run(G, 0, backend)
    assert not seen.hits.any() and ctx.record["edges"] == 0
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="k"):
            run(G, bad, backend)


def test_sample_keeps_cc_exact_on_its_own(backend):
    # CC's first pass alone: each vertex hooked to its first smaller neighbour joins a path
    from gunpy.primitives.cc import CCEnactor, CCProblem
    G = gunpy.Graph.from_edges(np.arange(9), np.arange(1, 10), directed=False)
    problem = CCProblem(G, backend=backend)
    problem.reset(sample=1)
    stats = CCEnactor(problem).enact()
    assert problem.extract().tolist() == [0] * 10
    first = stats.per_iteration[0]
    assert first["strategy"] == "sample" and first["edges"] == 10  # one edge a vertex


@pytest.mark.ptx
def test_sample_compiles_to_ptx(ptx_backend):
    G = GRAPHS["random_directed"]
    ctx = ops.Context(G, backend=ptx_backend)
    data = Seen(*(ptx_backend.asarray(np.zeros(G.num_edges, dtype=t))
                  for t in (np.int64, np.int64, np.float64)))
    sample(G, None, Visit, data, k=2, context=ctx)  # every vertex
    sample(G, ctx.frontier([1, 2]), Visit, data, k=2, context=ctx)  # a frontier's
    assert "cuda_kernel.<locals>.sample" in ptx_backend.kernel_names()


def test_sample_docstring_examples_run():
    import doctest
    import gunpy.operators.sample as module
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0
