"""gunpy as a NetworkX backend, and results converted to what users hold."""

import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.nx_backend import _FUNCTIONS

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def graphs():
    g = nx.karate_club_graph()
    d = nx.gnp_random_graph(60, 0.06, directed=True, seed=3)
    d.add_edge(5, 5)
    labelled = nx.relabel_nodes(nx.les_miserables_graph(), {n: f"<{n}>" for n in
                                                            nx.les_miserables_graph()})
    parts = nx.disjoint_union(nx.path_graph(7), nx.star_graph(5))
    parts.add_nodes_from(["iso-a", "iso-b"])
    return {"karate": g, "directed": d, "labelled": labelled, "parts": parts}


GRAPHS = graphs()


def first_node(g):
    return next(iter(g))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_traversals_identical_to_networkx(name):
    g = GRAPHS[name]
    s = first_node(g)
    assert list(nx.bfs_edges(g, s, backend="gunpy")) == list(nx.bfs_edges(g, s))
    assert list(nx.bfs_edges(g, s, depth_limit=2, backend="gunpy")) == \
        list(nx.bfs_edges(g, s, depth_limit=2))
    assert list(nx.bfs_layers(g, s, backend="gunpy")) == list(nx.bfs_layers(g, s))
    a = nx.single_source_shortest_path_length(g, s, backend="gunpy")
    b = nx.single_source_shortest_path_length(g, s)
    assert list(a.items()) == list(b.items())  # same order, too
    assert nx.single_source_shortest_path_length(g, s, cutoff=1, backend="gunpy") == \
        nx.single_source_shortest_path_length(g, s, cutoff=1)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_weighted_and_global_algorithms_match(name):
    g = GRAPHS[name]
    s = first_node(g)
    a = nx.single_source_dijkstra_path_length(g, s, backend="gunpy")
    b = nx.single_source_dijkstra_path_length(g, s)
    assert a.keys() == b.keys()
    assert all(a[k] == pytest.approx(b[k], rel=1e-12) and type(a[k]) is type(b[k]) for k in b)
    for normalized in (True, False):
        a = nx.betweenness_centrality(g, normalized=normalized, backend="gunpy")
        b = nx.betweenness_centrality(g, normalized=normalized)
        assert a == pytest.approx(b, rel=1e-10, abs=1e-12)
    a = nx.pagerank(g, backend="gunpy")
    assert a == pytest.approx(nx.pagerank(g), rel=1e-8, abs=1e-12)
    f = nx.weakly_connected_components if g.is_directed() else nx.connected_components
    assert list(f(g, backend="gunpy")) == list(f(g))


def test_errors_match_networkx():
    g = GRAPHS["karate"]
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_shortest_path_length(g, "nope", backend="gunpy")
    with pytest.raises(nx.NetworkXNotImplemented):
        list(nx.connected_components(GRAPHS["directed"], backend="gunpy"))
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(g, tol=1e-15, max_iter=2, backend="gunpy")


def test_unsupported_options_are_declined():
    from gunpy.nx_backend import can_run
    g = GRAPHS["karate"]
    assert can_run("betweenness_centrality", (g,), {"weight": "weight"}) is True  # positive
    assert can_run("betweenness_centrality", (g,), {"endpoints": True}) is not True
    assert can_run("pagerank", (g,), {"nstart": {0: 1}}) is True
    assert can_run("pagerank", (g,), {"nstart": {0: 0}}) is not True  # networkx divides by 0
    assert can_run("pagerank", (g,), {"nstart": {0: -1, 1: 2}}) is not True
    assert can_run("pagerank", (g,), {"personalization": {0: -1}}) is not True
    assert can_run("pagerank", (g,), {"personalization": {0: 1}, "dangling": {1: 2}}) is True
    assert can_run("bfs_edges", (g, 0), {"sort_neighbors": sorted}) is not True
    assert can_run("pagerank", (g,), {}) is True


@pytest.mark.large
def test_networkx_own_tests_pass_with_gunpy_as_test_backend(tmp_path):
    """networkx's backend-testing mode: its own tests for these functions, run through gunpy."""
    plugin = tmp_path / "countcalls.py"
    plugin.write_text(
        "import atexit, collections, gunpy.nx_backend as nb\n"
        "CALLS, WEIGHTED, LEFT = (collections.Counter() for _ in range(3))\n"
        "for name in list(nb._FUNCTIONS):\n"
        "    f = getattr(nb.BackendInterface, name)\n"
        "    def wrap(f=f, name=name):\n"
        "        def g(*a, **k):\n"
        "            CALLS[name] += 1\n"
        "            if 'betweenness' in name and k.get('weight', a[3] if len(a) > 3 else None):\n"
        "                WEIGHTED[name] += 1\n"
        "            try:\n"
        "                return f(*a, **k)\n"
        "            except NotImplementedError:  # networkx runs it: not gunpy's answer\n"
        "                LEFT[name] += 1\n"
        "                raise\n"
        "        return staticmethod(g)\n"
        "    setattr(nb.BackendInterface, name, wrap())\n"
        "atexit.register(lambda: print('GUNPY_CALLS', sum((CALLS - LEFT).values()),\n"
        "                              len(CALLS - LEFT),\n"
        "                              sorted(set(nb._FUNCTIONS) - set(CALLS - LEFT))))\n"
        "atexit.register(lambda: print('GUNPY_WEIGHTED', dict(sorted(WEIGHTED.items()))))\n")
    # networkx's own examples for the functions its test modules never call directly
    (tmp_path / "test_nx_examples.py").write_text(
        "import doctest, networkx as nx\n"
        "def test_examples():\n"
        "    runner = doctest.DocTestRunner()\n"
        "    for f in (nx.generic_bfs_edges,):\n"
        "        for t in doctest.DocTestFinder().find(f, globs={'nx': nx}):\n"
        "            runner.run(t)\n"
        "    assert runner.summarize().attempted > 3 and not runner.summarize().failed\n")
    env = {**os.environ, "NETWORKX_TEST_BACKEND": "gunpy", "NETWORKX_FALLBACK_TO_NX": "True",
           "PYTHONPATH": str(tmp_path), "GUNPY_NX_BACKEND": "cpu"}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    mods = ["test_nx_examples.py", "networkx.algorithms.traversal",
            "networkx.algorithms.shortest_paths.tests.test_generic",
            "networkx.algorithms.shortest_paths.tests.test_unweighted",
            "networkx.algorithms.shortest_paths.tests.test_weighted",
            "networkx.algorithms.tests.test_dag",
            "networkx.algorithms.centrality.tests.test_betweenness_centrality",
            "networkx.algorithms.centrality.tests.test_betweenness_centrality_subset",
            "networkx.algorithms.centrality.tests.test_closeness_centrality",
            "networkx.algorithms.centrality.tests.test_harmonic_centrality",
            "networkx.algorithms.centrality.tests.test_degree_centrality",
            "networkx.algorithms.tests.test_efficiency",
            # eccentricity's classes, less the 500 random graphs that compare diameter's
            # bounds with itself (70 s through the backend, nothing new for eccentricity)
            "networkx.algorithms.tests.test_distance_measures::TestDistance",
            "networkx.algorithms.tests.test_distance_measures::TestWeightedDistance",
            "networkx.algorithms.components",
            "networkx.algorithms.link_analysis.tests.test_pagerank",
            "networkx.algorithms.tests.test_cluster",
            "networkx.algorithms.community.tests.test_louvain",
            "networkx.algorithms.tests.test_core",
            "networkx.algorithms.tests.test_lowest_common_ancestors",
            "networkx.algorithms.connectivity.tests.test_edge_kcomponents",
            "networkx.algorithms.link_analysis.tests.test_hits",
            "networkx.algorithms.tests.test_isolate",
            "networkx.algorithms.tests.test_reciprocity",
            "networkx.algorithms.tree.tests.test_recognition",
            "networkx.classes.tests.test_function",
            "networkx.algorithms.tests.test_link_prediction",
            "networkx.algorithms.centrality.tests.test_eigenvector_centrality",
            "networkx.algorithms.centrality.tests.test_katz_centrality",
            "networkx.algorithms.centrality.tests.test_voterank",
            "networkx.generators.tests.test_ego",
            "networkx.algorithms.operators.tests.test_unary",
            "networkx.algorithms.assortativity.tests.test_connectivity",
            "networkx.algorithms.assortativity.tests.test_neighbor_degree",
            # the spanning-forest classes, and the multigraph iterator's (its edge_subgraph
            # views of a MultiGraph reach the conversion: len() of their rows counts keys)
            *(f"networkx.algorithms.tree.tests.test_mst::{name}" for name in
              ("test_unknown_algorithm", "TestBoruvka", "TestKruskal", "TestPrim",
               "TestSpanningTreeMultiGraphIterator"))]
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "countcalls", "-p",
                          "no:cacheprovider", "-W", "ignore",
                          "-k", "not use_bounds_on_off_consistency", "--pyargs", *mods],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1500)
    tail = out.stdout[-3000:]
    assert out.returncode == 0, tail
    calls = [line for line in out.stdout.splitlines() if line.startswith("GUNPY_CALLS")]
    total, functions, missing = calls[-1].split(maxsplit=3)[1:]
    # gunpy really ran, for every function (the cluster module calls triangles, transitivity,
    # clustering and average_clustering; test_louvain its louvain_communities; test_core
    # core_number, k_core, k_shell, k_crust, k_corona and k_truss;
    # test_lowest_common_ancestors lowest_common_ancestor; test_edge_kcomponents
    # k_edge_components (k = 1 and 2); test_hits its hits; test_dag
    # ancestors and descendants; networkx's docstring examples generic_bfs_edges; the
    # traversal, component and shortest-path modules the BFS family, reachability and paths
    # (test_weighted and test_generic the Bellman-Ford lengths, paths and predecessors: equal
    # weights by BFS's queue, unequal integer ones by the tight in-edges, ties left to
    # networkx); test_betweenness_centrality its edge betweenness; the
    # centrality and distance-measure modules closeness, harmonic centrality and
    # eccentricity; test_strongly_connected the strongly connected family and condensation;
    # test_unweighted and test_generic single-target and all-pairs paths, predecessor and
    # average_shortest_path_length; test_degree_centrality the degree centralities;
    # test_efficiency global_efficiency; test_mst's Kruskal and Borůvka classes
    # minimum_spanning_tree and minimum_spanning_edges; test_isolate and test_reciprocity
    # their families; test_function number_of_selfloops and is_negatively_weighted;
    # test_recognition is_tree, is_forest, is_branching and is_arborescence; test_unweighted
    # bidirectional_shortest_path, test_weighted the all-pairs Dijkstra and Bellman-Ford
    # generators; test_link_prediction the link-prediction scores, test_eigenvector_centrality
    # and test_katz_centrality those two, test_voterank voterank, test_ego ego_graph,
    # test_unary complement and reverse, test_connectivity and test_neighbor_degree the
    # assortativity pair, test_cluster square_clustering, test_function is_empty)
    assert missing == "[]", tail
    # the weighted betweenness tests (both functions, k sampled too) answered by gunpy
    weighted = [line for line in out.stdout.splitlines() if line.startswith("GUNPY_WEIGHTED")]
    import ast
    counts = ast.literal_eval(weighted[-1].split(maxsplit=1)[1])
    assert counts.get("betweenness_centrality", 0) >= 10, tail
    assert counts.get("edge_betweenness_centrality", 0) >= 6, tail
    assert int(functions) == len(_FUNCTIONS) >= 60 and int(total) > 500, tail


def test_result_conversions(backend):
    g = nx.relabel_nodes(nx.path_graph(4), {0: "a", 1: "b", 2: "c", 3: "d"})
    G = gunpy.Graph.from_networkx(g)
    r = gunpy.bfs(G, 0, backend=backend)
    assert r.to_dict() == {"a": 0, "b": 1, "c": 2, "d": 3}
    h = r.to_networkx(g.copy(), name="hops")
    assert nx.get_node_attributes(h, "hops") == {"a": 0, "b": 1, "c": 2, "d": 3}
    pd = pytest.importorskip("pandas")
    df = r.to_dataframe()
    assert list(df.columns) == ["vertex", "distance", "predecessor"]
    assert df["vertex"].tolist() == ["a", "b", "c", "d"]
    assert isinstance(df, pd.DataFrame)
    assert df["distance"].tolist() == [0, 1, 2, 3]
    assert df["predecessor"].tolist() == ["a", "a", "b", "c"]  # labels, as cuGraph's
    lonely = g.copy()
    lonely.add_node("e")  # unreached: no predecessor
    df = gunpy.bfs(gunpy.Graph.from_networkx(lonely), 0, backend=backend).to_dataframe()
    assert df["predecessor"].tolist()[:4] == ["a", "a", "b", "c"]
    assert pd.isna(df["predecessor"].iloc[4])  # missing (pandas' own marker for it)
    assert gunpy.bfs(gunpy.Graph.from_edges([0], [1], num_vertices=3), 0,
                     backend=backend).to_dataframe()["predecessor"].tolist() == [0, 0, -1]
    df = gunpy.sssp(G, 0, backend=backend).to_dataframe()
    assert list(df.columns) == ["vertex", "distance", "predecessor"]
    assert df["distance"].tolist() == [0.0, 1.0, 2.0, 3.0]
    df = gunpy.bc(G, backend=backend).to_dataframe()
    assert list(df.columns) == ["vertex", "betweenness_centrality"]
    assert df["betweenness_centrality"].tolist() == \
        pytest.approx([nx.betweenness_centrality(g, normalized=False)[v] for v in "abcd"])
    df = gunpy.cc(G, backend=backend).to_dataframe()
    assert list(df.columns) == ["vertex", "labels"] and df["labels"].nunique() == 1
    df = gunpy.pagerank(G, backend=backend).to_dataframe()
    assert list(df.columns) == ["vertex", "pagerank"]
    assert df["pagerank"].tolist() == pytest.approx([nx.pagerank(g)[v] for v in "abcd"],
                                                    rel=1e-5)


def test_dispatch_runs_on_the_chosen_gunpy_backend(backend, monkeypatch):
    """The networkx backend on the mode's gunpy backend (GUNPY_NX_BACKEND), on a small graph
    with two components, isolated vertices and a directed self-loop."""
    monkeypatch.setenv("GUNPY_NX_BACKEND", backend)
    g = GRAPHS["parts"]
    assert list(nx.bfs_edges(g, 0, backend="gunpy")) == list(nx.bfs_edges(g, 0))
    assert nx.single_source_shortest_path_length(g, 7, backend="gunpy") == \
        nx.single_source_shortest_path_length(g, 7)
    assert list(nx.connected_components(g, backend="gunpy")) == \
        list(nx.connected_components(g))
    d = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 3)])
    d.add_node(4)
    assert nx.pagerank(d, backend="gunpy") == pytest.approx(nx.pagerank(d), rel=1e-6)
    assert nx.betweenness_centrality(d, backend="gunpy") == \
        pytest.approx(nx.betweenness_centrality(d), abs=1e-12)


def test_clustering_dispatches_equal_values_and_types():
    from gunpy.nx_backend import can_run
    g = nx.karate_club_graph()
    g.add_edge(0, 0)  # a self-loop: ignored by both
    g.add_node("lonely")
    calls = []
    import gunpy.nx_backend as nb
    real = nb.gunpy.lcc

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)
    nb.gunpy.lcc = spy
    try:
        got = nx.clustering(g, backend="gunpy")
        want = nx.clustering(g)
        assert got == want and list(got) == list(want)
        assert [type(x) for x in got.values()] == [type(x) for x in want.values()]
        assert type(got["lonely"]) is int  # networkx's zero is the int 0
        assert nx.clustering(g, 0, backend="gunpy") == nx.clustering(g, 0)
        assert nx.clustering(g, [3, 1, "x"], backend="gunpy") == nx.clustering(g, [3, 1, "x"])
        for zeros in (True, False):
            assert nx.average_clustering(g, count_zeros=zeros, backend="gunpy") == \
                nx.average_clustering(g, count_zeros=zeros)
    finally:
        nb.gunpy.lcc = real
    assert len(calls) == 5
    assert can_run("clustering", (nx.DiGraph(g),), {}) is not True
    assert can_run("clustering", (g,), {"weight": "weight"}) is not True
    assert can_run("average_clustering", (nx.MultiGraph(g),), {}) is not True
    assert can_run("average_clustering", (g,), {}) is True


def test_louvain_dispatches_seeded_with_networkx_s_modularity():
    from gunpy.nx_backend import can_run
    g = nx.relabel_nodes(nx.karate_club_graph(), {0: "zero"})  # weighted, a label not an id
    g.add_node("lonely")
    got = nx.community.louvain_communities(g, seed=3, backend="gunpy")
    assert nx.community.is_partition(g, got) and {"lonely"} in got
    assert got == nx.community.louvain_communities(g, seed=3, backend="gunpy")
    q = nx.community.modularity(g, got)
    assert q >= nx.community.modularity(g, nx.community.louvain_communities(g, seed=3)) - 0.01
    G = gunpy.Graph.from_networkx(g)
    r = gunpy.louvain(G, resolution=2.0, seed=5, backend="cpu")
    assert abs(r.modularity - nx.community.modularity(g, r.communities(), resolution=2.0)) < 1e-9
    # a multigraph's parallel edges add up: the same partition as their sums' graph
    m = nx.MultiGraph([(0, 1), (0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (2, 3)])
    s = nx.Graph()
    s.add_weighted_edges_from([(u, v, m.number_of_edges(u, v)) for u, v in set(m.edges())])
    parts = [sorted(map(sorted, nx.community.louvain_communities(h, seed=1, backend="gunpy")))
             for h in (m, s)]
    assert parts[0] == parts[1] == [[0, 1, 2], [3, 4, 5]]
    assert can_run("louvain_communities", (g,), {}) is True
    assert can_run("louvain_communities", (nx.DiGraph(g),), {}) is not True
    assert can_run("louvain_communities", (g,), {"weight": None}) is not True
    assert can_run("louvain_communities", (g,), {"max_level": 2}) is not True
    with pytest.raises(NotImplementedError):
        nx.community.louvain_communities(nx.DiGraph(g), backend="gunpy")


def test_cores_dispatch_equal_graphs_and_decline_self_loops(monkeypatch):
    from gunpy.nx_backend import can_run
    import gunpy.nx_backend as nb
    calls = []
    real = nb.gunpy.kcore
    monkeypatch.setattr(nb.gunpy, "kcore", lambda *a, **k: calls.append(1) or real(*a, **k))
    g = nx.les_miserables_graph()
    nx.set_node_attributes(g, "x", "tag")
    assert nx.core_number(g, backend="gunpy") == nx.core_number(g)
    for name, k in (("k_core", 4), ("k_shell", 3), ("k_crust", 2), ("k_corona", 2),
                    ("k_core", None), ("k_shell", None), ("k_crust", None)):
        got = getattr(nx, name)(g, k, backend="gunpy")
        want = getattr(nx, name)(g, k)
        assert list(got.nodes(data=True)) == list(want.nodes(data=True)), name
        assert list(got.edges(data=True)) == list(want.edges(data=True)), name
    assert len(calls) == 8
    d = nx.gnp_random_graph(60, 0.08, directed=True, seed=3)
    assert nx.core_number(d, backend="gunpy") == nx.core_number(d)
    assert list(nx.k_corona(d, 2, backend="gunpy")) == list(nx.k_corona(d, 2))  # successors
    loops = nx.Graph([(0, 1), (1, 1)])
    assert "self-loops" in can_run("core_number", (loops,), {})
    assert "core_number=" in can_run("k_core", (g,), {"core_number": {}})
    with pytest.raises(NotImplementedError, match="core_number"):  # declined: networkx
        nx.core_number(loops, backend="gunpy")                     # itself refuses it


def test_hits_dispatches_networkx_s_values_and_declines_what_it_lacks(monkeypatch):
    from gunpy.nx_backend import can_run, dispatch
    calls = []
    real = gunpy.hits
    monkeypatch.setattr(gunpy, "hits", lambda *a, **k: calls.append(1) or real(*a, **k))
    g = nx.gnp_random_graph(80, 0.06, directed=True, seed=5)
    for i, (u, v) in enumerate(g.edges):
        g[u][v]["weight"] = 1 + i % 3
    hubs, auths = nx.hits(g, backend="gunpy")
    want_h, want_a = nx.hits(g)
    assert list(hubs) == list(want_h) and list(auths) == list(want_a)
    assert max(abs(hubs[v] - want_h[v]) + abs(auths[v] - want_a[v]) for v in g) < 1e-6
    # not converged: left to networkx's ARPACK, which converges faster (here it fails too)
    with pytest.raises(NotImplementedError):
        nx.hits(nx.path_graph(50), max_iter=1, backend="gunpy")
    monkeypatch.setitem(dispatch.MIN_EDGES, "other", (0, 0))  # gunpy asked on small graphs
    with nx.config(backend_priority=["gunpy"]), pytest.raises(nx.PowerIterationFailedConvergence):
        nx.hits(nx.path_graph(50), max_iter=1)
    assert len(calls) == 3  # gunpy ran each time
    bad = g.copy()
    for x, why in ((-1, "negative"), (float("nan"), "NaN"), ("2", "non-numeric")):
        bad[0][next(iter(bad[0]))]["weight"] = x
        nx._clear_cache(bad)
        assert why in can_run("hits", (bad,), {})  # networkx reads "weight", unasked
    assert "nstart" in can_run("hits", (g,), {"nstart": {0: 1}})
    assert "normalized" in can_run("hits", (g,), {"normalized": False})
    assert "without edges" in can_run("hits", (nx.empty_graph(3),), {})
    assert can_run("hits", (g,), {}) is True


def test_personalised_pagerank_dispatches_networkx_s_values():
    g = nx.gnp_random_graph(70, 0.05, directed=True, seed=8)
    g.add_node("island")
    for kw in ({"personalization": {0: 1}}, {"personalization": {3: 2, 9: 1, "zz": 5}},
               {"personalization": {1: 1}, "dangling": {4: 1, 5: 3}}, {"dangling": {7: 1}}):
        got, want = nx.pagerank(g, backend="gunpy", **kw), nx.pagerank(g, **kw)
        assert list(got) == list(want)
        assert max(abs(got[v] - want[v]) for v in g) < 1e-12, kw
    with pytest.raises(ZeroDivisionError):
        nx.pagerank(g, personalization={"zz": 1}, backend="gunpy")
