"""Betweenness centrality against networkx (all sources, normalised, subsets)."""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import operators as ops
from gunpy.testing import nasty_graphs, to_nx, graph_names

GRAPHS = nasty_graphs(hub=40, random_n=40)  # BC runs one traversal per source: keep them small


def as_array(d, n):
    return np.array([d[v] for v in range(n)])


@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("name", graph_names(GRAPHS))
def test_bc_all_sources(name, normalized, backend, small):
    G = GRAPHS[name]
    if small and (G.num_vertices > 20 or normalized):
        pytest.skip("all-sources BC runs one traversal per vertex: too slow in the simulator")
    r = gunpy.bc(G, normalized=normalized, backend=backend)
    expect = as_array(nx.betweenness_centrality(to_nx(G), normalized=normalized), G.num_vertices)
    np.testing.assert_allclose(r.centrality, expect, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["random_directed", "random_undirected", "disconnected",
                                  "star_hub", "preferential_hubs", "grid"])
def test_bc_source_subset(name, backend):
    G = GRAPHS[name]
    sources = [0, G.num_vertices - 1, 0]  # a repeat counts twice
    r = gunpy.bc(G, sources, backend=backend)
    g = to_nx(G)
    expect = as_array(nx.betweenness_centrality_subset(g, sources, list(g), normalized=False),
                      G.num_vertices)
    np.testing.assert_allclose(r.centrality, expect, rtol=1e-10, atol=1e-12)
    assert r.stats.extra["sources"] == 3


@pytest.mark.parametrize("lb,direction", [("thread_mapped", "push"), ("merge_path", "push"),
                                          ("twc", "auto"), ("auto", "pull")])
def test_bc_load_balance_and_direction(lb, direction, backend, cpu_split):
    G = GRAPHS["preferential_hubs"]
    r = gunpy.bc(G, [0, 5], load_balance=lb, direction=direction, backend=backend)
    g = to_nx(G)
    expect = as_array(nx.betweenness_centrality_subset(g, [0, 5], list(g)), G.num_vertices)
    np.testing.assert_allclose(r.centrality, expect, rtol=1e-10, atol=1e-12)


def test_bc_weights_are_ignored():
    g = nx.path_graph(5)
    for u, v in g.edges:
        g[u][v]["weight"] = 10.0 * (u + 1)
    G = gunpy.Graph.from_networkx(g)
    r = gunpy.bc(G, backend="cpu")
    assert r.to_dict() == pytest.approx(nx.betweenness_centrality(g, normalized=False))


def test_bc_bad_source():
    with pytest.raises(IndexError):
        gunpy.bc(GRAPHS["path_directed"], [0, 10**6], backend="cpu")


@pytest.mark.ptx
def test_bc_compiles_to_ptx(ptx_backend):
    from gunpy.testing import PtxBackend
    be = PtxBackend(cc=(9, 0))  # its own: the names are this call's alone
    gunpy.bc(GRAPHS["preferential_hubs"], [0], backend=be)
    names = " ".join(be.kernel_names())
    # the forward levels (fused and grid-wide). Nothing runs in a compile-only backend, so
    # the forward phase ends after its first level and the grouping and the backward walk
    # are not reached: test_bc_levels.py compiles those (with a functor of its own)
    assert all(k in names for k in ("levels", "advance")), names


@pytest.mark.ptx
def test_the_device_side_scaling_compiles_to_ptx():
    """Scale (networkx's factor applied where the centrality is) compiles for the GPU."""
    from gunpy import operators as ops
    from gunpy.primitives.bc import Scale, ScaleData
    from gunpy.testing import PtxBackend
    be = PtxBackend(cc=(9, 0))
    G = GRAPHS["preferential_hubs"]
    ops.compute(G, None, Scale, ScaleData(np.zeros(G.num_vertices), 0.5),
                context=ops.Context(G, backend=be))
    assert any("compute" in name for name in be.kernel_names()), be.kernel_names()


def test_stats_count_the_backward_edges(backend):
    # path 0-1-2-3 from 0: the forward BFS reads 1+2+2+1 edges, the backward
    # neighbor-reduce reads the out-edges of levels 2 and 1 (2+2)
    G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 3], directed=False)
    r = gunpy.bc(G, [0], direction="push", backend=backend)
    assert r.stats.edges_visited == 10


# --------------------------------------------------------------------- the enactor built directly
from gunpy.primitives.bc import BCEnactor, BCProblem  # noqa: E402


@pytest.mark.parametrize("name", ["disconnected", "directed_cycle", "self_loops_duplicates",
                                  "star_directed_in"])
def test_bc_enactor_with_its_defaults(name, backend, small):
    # a user's own loop: Problem + Enactor(problem), one reset and enact per source
    G = GRAPHS[name]
    if small and G.num_vertices > 20:
        pytest.skip("one traversal per vertex: too slow in the simulator")
    problem = BCProblem(G, backend=backend)
    enactor = BCEnactor(problem)
    assert enactor.direction == "auto"  # bc()'s default
    for s in range(G.num_vertices):
        problem.reset(s)
        enactor.enact()
    raw = problem.extract()  # unscaled: networkx halves undirected values
    expect = as_array(nx.betweenness_centrality(to_nx(G), normalized=False), G.num_vertices)
    np.testing.assert_allclose(raw if G.directed else raw / 2, expect, rtol=1e-10, atol=1e-12)


def test_bc_enactor_rejects_bad_options():
    from test_bfs import assert_enactor_rejects_bad_options
    assert_enactor_rejects_bad_options(BCProblem(GRAPHS["path_directed"], backend="cpu"),
                                       BCEnactor)


def test_bc_problem_delta_is_a_deprecated_alias_of_dependency():
    problem = BCProblem(GRAPHS["path_directed"], backend="cpu")
    with pytest.warns(DeprecationWarning, match="BCProblem.delta is deprecated.*dependency"):
        assert problem.delta is problem.dependency


def _dense_graph(n=20, missing=20, seed=2):
    """K_n less ``missing`` random edges: average in-degree 17, so a GPU pulls a warp per vertex."""
    rng = np.random.default_rng(seed)
    pairs = np.array([(u, v) for u in range(n) for v in range(u + 1, n)])
    keep = pairs[np.sort(rng.permutation(len(pairs))[missing:])]
    return gunpy.Graph.from_edges(keep[:, 0], keep[:, 1], num_vertices=n, directed=False)


@pytest.mark.ptx
def test_bc_warp_pull_without_early_exit_compiles_to_ptx(ptx_backend):
    # BC's pull gathers every parent's path count (no early exit); at average in-degree 16
    # pull_mapping="auto" takes the warp kernel, the one a GPU runs by default
    import inspect
    G = _dense_graph()
    assert G.num_edges / G.num_vertices >= 16
    ptx_backend.compiled.clear()
    gunpy.bc(G, [0], direction="pull", backend=ptx_backend)
    assert any(name.endswith("pull_warp") for name in ptx_backend.kernel_names())
    pulls = [f for f, _ in ptx_backend.compiled if f.__qualname__.endswith("pull_warp")]
    assert [inspect.getclosurevars(f).nonlocals["early_exit"] for f in pulls] == [False]


# --------------------------------------------------------------------- weighted (bc_weighted)
def _weighted(G, kind, seed=5):
    """G's networkx twin with random weights: ``"float"`` (distinct distances, a group a
    vertex) or ``"int"`` in 1..3 (many ties: several shortest paths), and the gunpy graph."""
    g = to_nx(G)
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.uniform(0.1, 2.0)) if kind == "float" else \
            float(rng.integers(1, 4))
    return g, gunpy.Graph.from_networkx(g)


@pytest.mark.parametrize("kind,normalized", [("float", False), ("int", False), ("int", True)])
@pytest.mark.parametrize("name", graph_names(GRAPHS))
def test_bc_weighted_all_sources(name, kind, normalized, backend, small):
    if small and (GRAPHS[name].num_vertices > 20 or normalized or kind == "float"):
        pytest.skip("all-sources BC runs one traversal per vertex: too slow in the simulator")
    g, G = _weighted(GRAPHS[name], kind)
    r = gunpy.bc(G, normalized=normalized, weighted=True, backend=backend)
    expect = as_array(nx.betweenness_centrality(g, normalized=normalized, weight="weight"),
                      G.num_vertices)
    np.testing.assert_allclose(r.centrality, expect, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["random_directed", "random_undirected", "grid",
                                  "preferential_hubs"])
def test_bc_weighted_ties_change_the_answer(name):
    # integer weights give several shortest paths (sigma > 1) and differ from unit lengths
    g, G = _weighted(GRAPHS[name], "int")
    r = gunpy.bc(G, [0, 3], weighted=True, backend="cpu")
    expect = as_array(nx.betweenness_centrality_subset(g, [0, 3], list(g), weight="weight"),
                      G.num_vertices)
    np.testing.assert_allclose(r.centrality, expect, rtol=1e-10, atol=1e-12)
    unit = gunpy.bc(G, [0, 3], backend="cpu").centrality
    assert not np.allclose(r.centrality, unit)
    _, paths = nx.single_source_dijkstra(g, 0)
    assert max(len(list(nx.all_shortest_paths(g, 0, t, weight="weight")))
               for t in paths) > 1


@pytest.mark.parametrize("name", ["random_directed", "disconnected", "star_hub", "grid"])
def test_bc_weighted_source_subset(name, backend):
    g, G = _weighted(GRAPHS[name], "float")
    sources = [0, G.num_vertices - 1, 0]
    r = gunpy.bc(G, sources, weighted=True, backend=backend)
    expect = as_array(nx.betweenness_centrality_subset(g, sources, list(g), normalized=False,
                                                       weight="weight"), G.num_vertices)
    np.testing.assert_allclose(r.centrality, expect, rtol=1e-10, atol=1e-12)
    assert r.stats.extra["sources"] == 3


def test_bc_weighted_hub_larger_than_a_cta():
    # a hub of 300 leaves, the leaves also joined in a ring: a leaf's shortest way to
    # another goes round the ring or through the hub, by the weights
    n = 300
    g = nx.star_graph(n)
    g.add_edges_from((i, i % n + 1) for i in range(1, n + 1))
    rng = np.random.default_rng(3)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.integers(1, 5))
    G = gunpy.Graph.from_networkx(g)
    r = gunpy.bc(G, range(0, n + 1, 7), weighted=True, backend="cpu")
    expect = as_array(nx.betweenness_centrality_subset(g, list(range(0, n + 1, 7)), list(g),
                                                       weight="weight"), G.num_vertices)
    np.testing.assert_allclose(r.centrality, expect, rtol=1e-10, atol=1e-12)
    assert r.centrality[0] > 0


def test_bc_weighted_unit_weights_equal_unweighted():
    G = GRAPHS["preferential_hubs"]  # no weights: weight 1
    np.testing.assert_allclose(gunpy.bc(G, weighted=True, backend="cpu").centrality,
                               gunpy.bc(G, backend="cpu").centrality, rtol=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf])
def test_bc_weighted_rejects_weights_not_positive(bad):
    w = np.array([1.0, bad, 2.0])
    G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 3], w, directed=True)
    with pytest.raises(ValueError, match="positive finite weights; edge 1->2"):
        gunpy.bc(G, weighted=True, backend="cpu")
    assert w[1] == bad or np.isnan(w[1])  # the caller's array untouched
    gunpy.bc(G, backend="cpu")  # unweighted BC ignores them


def test_bc_weighted_rejects_a_direction():
    G = GRAPHS["grid"]
    with pytest.raises(ValueError, match="unweighted BC only"):
        gunpy.bc(G, [0], weighted=True, direction="pull", backend="cpu")
    with pytest.raises(ValueError, match="load_balance|strategy"):
        gunpy.bc(G, [0], weighted=True, load_balance="nope", backend="cpu")


def test_bc_weighted_stats_walk_each_level():
    # path 0-1-2-3 from 0, weights 1, 2, 3: SSSP reads each stored edge once, the tight
    # in-edges are counted over every in-edge, the DAG's four levels read their out-edges
    # (fused), and the dependencies walk levels 2 and 1 over their out-edges
    from gunpy.primitives.bc_weighted import WeightedBCEnactor, WeightedBCProblem
    G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 2.0, 3.0], directed=False)
    problem = WeightedBCProblem(G, backend="cpu")
    enactor = WeightedBCEnactor(problem)
    problem.reset(0)
    stats = enactor.enact()
    assert problem.extract().tolist() == [0.0, 2.0, 1.0, 0.0]  # unscaled
    its = stats.per_iteration
    assert [it["strategy"] for it in its].count("group") == 1
    assert [it["edges"] for it in its if it["strategy"] == "neighbor_reduce"] == [6, 2, 2]
    assert [it["edges"] for it in its if it["strategy"] == "fused"] == [1, 2, 2, 1]
    assert stats.edges_visited == 6 + 6 + 6 + 4


def test_bc_weighted_path_counts_of_a_single_edge():
    # two distances only: no dependency to walk, but the path counts are the problem's
    # state (edge betweenness reads them)
    from gunpy.primitives.bc_weighted import WeightedBCEnactor, WeightedBCProblem
    G = gunpy.Graph.from_edges([0], [1], [2.5], num_vertices=3, directed=True)
    problem = WeightedBCProblem(G, backend="cpu")
    enactor = WeightedBCEnactor(problem)
    problem.reset(0)
    enactor.enact()
    assert problem.sigma.tolist() == [1.0, 1.0, 0.0]
    assert problem.distance.tolist() == [0.0, 2.5, np.inf]


def test_user_guide_bc_section_runs():
    from doc_examples import run_user_guide_section
    run_user_guide_section("## Betweenness centrality", 6)


@pytest.mark.ptx
def test_bc_weighted_functors_compile_to_ptx():
    # nothing runs in a compile-only backend (SSSP would stop after its first step): the
    # DAG's operators are called one by one, each with its weighted-BC functor
    from gunpy.frontier import FrontierStore
    from gunpy.operators import reverse_levels
    from gunpy.primitives.bc_weighted import (TightInDegreeFunctor, WeightedBCBackwardFunctor,
                                              WeightedBCEnactor, WeightedBCForwardFunctor,
                                              WeightedBCProblem)
    from gunpy.testing import PtxBackend
    be = PtxBackend(cc=(9, 0))
    _, G = _weighted(GRAPHS["grid"], "float")
    problem = WeightedBCProblem(G, backend=be)
    enactor = WeightedBCEnactor(problem)
    problem.reset(0)
    ops.neighbor_reduce(G, None, TightInDegreeFunctor, problem, problem.pending, edges="in",
                        context=enactor.context)
    enactor.advance(enactor.start_frontier().push(0), WeightedBCForwardFunctor)
    enactor.advance_filter(enactor.start_frontier().push(0), WeightedBCForwardFunctor)
    store = FrontierStore(be, G.num_vertices)
    reverse_levels.run_group(enactor.context, problem.depth, 3, store)
    store.set_offsets(np.arange(4), rows=np.ones((3, 4), dtype=np.int64))  # as if counted
    reverse_levels.run(enactor.context, store, *enactor._operands(WeightedBCBackwardFunctor),
                       problem.dependency, 1, 1, "out", "sum", True)
    compiled = [f.__qualname__ for f, _ in be.compiled]
    names = " ".join(be.kernel_names())
    assert "walk" in names and "levels" in names and "advance" in names, names
    assert len(compiled) >= 4, compiled


def test_cli_weighted_flag(capsys):
    # gunpy run bc --weighted: Graph500's weights on the RMAT graph, weighted Brandes on them
    from gunpy.cli import main
    assert main(["run", "bc", "--rmat", "6", "--weighted", "--backend", "cpu", "-q"]) == 0
    out = capsys.readouterr().out
    G = gunpy.generators.rmat(6, 16, seed=0, weighted=True, weight_range=(1, 64))
    weighted = gunpy.bc(G, weighted=True, backend="cpu").centrality
    top = int(np.argmax(weighted))
    assert "weighted" in out and f"top vertices: {top} " in out, out
    assert not np.allclose(weighted, gunpy.bc(G, backend="cpu").centrality)
