"""The networkx backend's conversions: exact, made once per graph, dropped when it changes;
and ``should_run``'s size thresholds (issue 17).

Host glue (NumPy over networkx's dicts): CPU mode only.
"""

import random
import warnings

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.nx_backend import _graph, convert_from_nx, should_run
from gunpy.nx_backend.dispatch import MIN_EDGES
from gunpy.testing import nasty_graphs, to_nx


def _weighted(g, seed=0):
    rng = random.Random(seed)
    for *_, d in g.edges(data=True):
        d["weight"] = rng.choice([1, 2, 0.5, 7])
    return g


def _graphs():
    out = {name: _weighted(to_nx(G)) for name, G in nasty_graphs(small=True).items()}
    les = nx.les_miserables_graph()
    out["labelled"] = nx.relabel_nodes(les, {v: f"<{v}>" for v in les})
    multi = nx.MultiDiGraph(out["labelled"].to_directed())
    multi.add_edge("<Valjean>", "<Javert>", weight=0.25)  # a parallel edge: the least counts
    multi.add_edge("<Valjean>", "<Valjean>")  # a self-loop without the attribute: 1
    out["multi"] = multi
    shuffled = nx.Graph()
    shuffled.add_nodes_from(random.Random(3).sample(range(50), 50))  # ids, not in order
    shuffled.add_edges_from(nx.gnm_random_graph(50, 120, seed=3).edges, weight=3)
    out["shuffled"] = shuffled
    out["view"] = out["labelled"].subgraph(list(out["labelled"])[::2])
    return out


@pytest.mark.parametrize("name, g", list(_graphs().items()))
def test_conversion_equals_the_edge_list_build(name, g):
    # the one-pass adjacency conversion against Graph.from_networkx (an edge list through
    # from_edges): the same CSR, weights and node labels, weighted and not
    for weight in (None, "weight"):
        got = convert_from_nx(g, edge_attrs=None if weight is None else {weight: 1}).graph
        want = gunpy.Graph.from_networkx(g, weight=weight, remove_self_loops=False)
        assert got.directed == want.directed and got.node_labels == want.node_labels
        assert np.array_equal(got.row_offsets, want.row_offsets)
        assert np.array_equal(got.column_indices, want.column_indices)
        assert got.column_indices.dtype == want.column_indices.dtype
        if weight is None or not g.number_of_edges():
            assert got.values is None or not got.values.size
        else:
            assert np.array_equal(got.values, want.values)


def test_second_call_converts_nothing_and_mutation_converts_again():
    g = nx.karate_club_graph()
    before = _graph.conversions
    first = nx.pagerank(g, backend="gunpy")
    assert _graph.conversions == before + 1
    converted = g.__networkx_cache__[("gunpy", "graph", "weight", 1)]
    assert nx.pagerank(g, backend="gunpy") == first
    assert _graph.conversions == before + 1  # the same GunpyGraph, its gunpy Graph and all
    assert g.__networkx_cache__[("gunpy", "graph", "weight", 1)] is converted
    # an unweighted call builds its graph from the same adjacency pass (no second read)
    csr = g.__networkx_cache__[("gunpy", "csr")]
    assert nx.number_connected_components(g, backend="gunpy") == 1
    assert g.__networkx_cache__[("gunpy", "csr")] is csr
    assert nx.number_connected_components(g, backend="gunpy") == 1
    assert _graph.conversions == before + 2
    g.add_edge(100, 101)  # networkx's methods clear its cache, gunpy's keys with it
    assert ("gunpy", "csr") not in g.__networkx_cache__
    assert nx.number_connected_components(g, backend="gunpy") == 2
    assert _graph.conversions == before + 3
    assert nx.pagerank(g, backend="gunpy") == pytest.approx(nx.pagerank(g), abs=1e-6)


def test_networkx_s_cache_warning_never_fires():
    g = nx.path_graph(6)
    ignored = set(nx.config.warnings_to_ignore)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # networkx's UserWarning would raise here
        for _ in range(3):
            assert list(nx.bfs_edges(g, 0, backend="gunpy"))[-1] == (4, 5)
            assert nx.pagerank(g, backend="gunpy")[0] == pytest.approx(nx.pagerank(g)[0])
    assert nx.config.warnings_to_ignore == ignored  # gunpy changes no networkx setting
    assert not g.__networkx_cache__["backends"].get("gunpy")  # networkx's slot stays empty


def test_no_caching_where_networkx_caches_nothing():
    g = nx.path_graph(5)
    before = _graph.conversions
    nx.config.cache_converted_graphs = False
    try:
        for _ in range(2):
            assert nx.shortest_path_length(g, 0, backend="gunpy") == {i: i for i in range(5)}
    finally:
        nx.config.cache_converted_graphs = True
    assert _graph.conversions == before + 2
    assert not [k for k in g.__networkx_cache__ if k != "backends"]


def test_should_run_declines_small_graphs_only_when_networkx_chooses():
    small = nx.path_graph(20)
    reason = should_run("bfs_edges", (small, 0), {})
    assert isinstance(reason, str) and "networkx is faster below" in reason
    assert should_run("pagerank", (small,), {}) is True  # gunpy wins at every size measured
    assert "negative" in should_run("pagerank", (small,), {"personalization": {0: -1}})
    before = _graph.conversions
    with nx.config.backend_priority(algos=["gunpy"]):  # automatic: networkx runs it
        assert list(nx.bfs_edges(small, 0)) == [(i, i + 1) for i in range(19)]
    assert _graph.conversions == before
    # backend="gunpy": networkx never asks should_run, gunpy runs whatever the size
    assert list(nx.bfs_edges(small, 0, backend="gunpy")) == [(i, i + 1) for i in range(19)]
    assert _graph.conversions == before + 1


def test_a_converted_graph_lowers_the_threshold():
    cold, warm = MIN_EDGES["traversal"]
    g = nx.gnm_random_graph(warm // 2, warm + 100, seed=1)
    assert warm <= g.number_of_edges() < cold
    assert "not yet converted" in should_run("descendants", (g, 0), {})
    nx.pagerank(g, backend="gunpy")  # converts the graph
    assert should_run("descendants", (g, 0), {}) is True
    with nx.config.backend_priority(algos=["gunpy"]):
        before = _graph.conversions
        assert nx.descendants(g, 0) == nx.descendants.orig_func(g, 0)
        assert _graph.conversions == before + 1  # gunpy ran: the unweighted graph, no re-read


def test_families_measured_with_their_thresholds():
    from gunpy.nx_backend import _FUNCTIONS
    from gunpy.nx_backend.dispatch import _FAMILY
    assert set(_FAMILY) <= set(_FUNCTIONS) and set(_FAMILY.values()) <= set(MIN_EDGES)
    g = nx.gnm_random_graph(300, 1_200, seed=2)  # past katz's and voterank's thresholds
    assert should_run("katz_centrality", (g,), {}) is True
    assert should_run("voterank", (g,), {}) is True
    assert "below 2048" in should_run("average_neighbor_degree", (g,), {})
    # networkx's ego_graph reads only the ball around the node: never chosen by size
    big = nx.gnm_random_graph(20_000, 200_000, seed=3)
    assert "every size" in should_run("ego_graph", (big, 0), {})
    assert set(nx.ego_graph(g, 0, backend="gunpy")) == set(nx.ego_graph(g, 0))
