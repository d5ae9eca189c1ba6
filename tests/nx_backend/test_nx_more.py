"""The networkx backend's strongly connected components, single-target and all-pairs paths,
predecessors, average path length, efficiency and degree centralities: networkx's values,
types and order (networkx's own tests for them run in tests/nx_backend/test_nx_backend.py)."""

import networkx as nx
import pytest

from gunpy.nx_backend import can_run

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def graphs():
    d = nx.gnp_random_graph(50, 0.05, directed=True, seed=4)
    d.add_edge(7, 7)
    nx.add_cycle(d, [50, 51, 52])  # a cycle, then a chain into it and a node hanging off
    d.add_edges_from([(53, 54), (54, 50), (52, "tail")])
    u = nx.relabel_nodes(nx.les_miserables_graph(), lambda s: s.lower())
    parts = nx.disjoint_union(nx.path_graph(6, nx.DiGraph), nx.cycle_graph(5, nx.DiGraph))
    parts.add_node("iso")
    return {"directed": d, "undirected": u, "parts": parts, "karate": nx.karate_club_graph()}


GRAPHS = graphs()


def same(a, b):
    """Equal, keys in the same order, values of the same types."""
    assert a == b and list(a) == list(b)
    assert [type(x) for x in a.values()] == [type(x) for x in b.values()]


@pytest.mark.parametrize("name", ["directed", "parts"])
def test_strongly_connected_components(name):
    g = GRAPHS[name]
    got = list(nx.strongly_connected_components(g, backend="gunpy"))
    assert set(map(frozenset, got)) == set(map(frozenset, nx.strongly_connected_components(g)))
    assert nx.number_strongly_connected_components(g, backend="gunpy") == len(got) > 5
    assert nx.is_strongly_connected(g, backend="gunpy") is False
    assert nx.is_strongly_connected(nx.cycle_graph(4, nx.DiGraph), backend="gunpy") is True
    # networkx's order is a reverse topological one: each component after those it reaches
    c = nx.condensation(g, backend="gunpy")
    assert all(u > v for u, v in c.edges) and c.number_of_nodes() == len(got)
    want = nx.condensation(g, got)  # networkx's own, numbered in gunpy's order
    assert list(c.edges) == list(want.edges) and c.graph["mapping"] == want.graph["mapping"]
    assert dict(c.nodes(data="members")) == dict(want.nodes(data="members"))
    with pytest.raises(nx.NetworkXNotImplemented):
        next(nx.strongly_connected_components(GRAPHS["karate"], backend="gunpy"))
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_strongly_connected(nx.DiGraph(), backend="gunpy")


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_single_target_and_all_pairs_paths(name):
    g = GRAPHS[name]
    t = list(g)[3]
    for cutoff in (None, 2):
        same(nx.single_target_shortest_path_length(g, t, cutoff, backend="gunpy"),
             nx.single_target_shortest_path_length(g, t, cutoff))
        same(nx.single_target_shortest_path(g, t, cutoff, backend="gunpy"),
             nx.single_target_shortest_path(g, t, cutoff))
    got = nx.all_pairs_shortest_path_length(g, cutoff=3, backend="gunpy")
    want = nx.all_pairs_shortest_path_length(g, cutoff=3)
    for (u, a), (v, b) in zip(got, want, strict=True):
        assert u == v
        same(a, b)
    paths = dict(nx.all_pairs_shortest_path(g, backend="gunpy"))
    assert list(paths) == list(g) and paths == dict(nx.all_pairs_shortest_path(g))
    with pytest.raises(nx.NodeNotFound):
        nx.single_target_shortest_path_length(g, "nowhere", backend="gunpy")


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_predecessor(name):
    g = GRAPHS[name]
    s = list(g)[1]
    for kw in ({}, {"cutoff": 2}, {"cutoff": 0}, {"return_seen": True},
               {"target": list(g)[-1]}, {"target": list(g)[-1], "return_seen": True}):
        got, want = nx.predecessor(g, s, backend="gunpy", **kw), nx.predecessor(g, s, **kw)
        assert got == want, kw
        if isinstance(want, dict):
            assert list(got) == list(want) and list(map(list, got.values())) == \
                list(map(list, want.values()))
    with pytest.raises(nx.NodeNotFound):
        nx.predecessor(g, "nowhere", backend="gunpy")


def test_average_shortest_path_length_and_efficiency():
    g = GRAPHS["karate"]  # weighted: its "weight" attribute
    for kw in ({}, {"weight": "weight"}, {"weight": "weight", "method": "dijkstra"}):
        got, want = (nx.average_shortest_path_length(g, backend="gunpy", **kw),
                     nx.average_shortest_path_length(g, **kw))
        assert got == want and type(got) is type(want)
    cyc = nx.cycle_graph(6, nx.DiGraph)
    assert nx.average_shortest_path_length(cyc, backend="gunpy") == 3.0
    with pytest.raises(nx.NetworkXError, match="strongly"):
        nx.average_shortest_path_length(GRAPHS["directed"], backend="gunpy")
    with pytest.raises(nx.NetworkXError, match="not connected"):
        nx.average_shortest_path_length(GRAPHS["parts"].to_undirected(), backend="gunpy")
    assert "floyd" in can_run("average_shortest_path_length", (g,),
                              {"method": "floyd-warshall"})
    kw = {"weight": "weight", "method": "bellman-ford"}  # int weights: an exact total
    assert nx.average_shortest_path_length(g, backend="gunpy", **kw) == \
        nx.average_shortest_path_length(g, **kw)
    tenths = nx.Graph([(0, 1, {"weight": 0.1}), (1, 2, {"weight": 0.2})])
    assert "may round" in can_run("average_shortest_path_length", (tenths,), kw)
    for h in (g, GRAPHS["undirected"], nx.empty_graph(1)):
        assert nx.global_efficiency(h, backend="gunpy") == nx.global_efficiency(h)
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.global_efficiency(GRAPHS["directed"], backend="gunpy")


def test_degree_centralities():
    loops = nx.Graph([(0, 1), (1, 1), (1, 2)])
    for g in (*GRAPHS.values(), loops, nx.empty_graph(1)):
        same(nx.degree_centrality(g, backend="gunpy"), nx.degree_centrality(g))
        if g.is_directed():
            same(nx.in_degree_centrality(g, backend="gunpy"), nx.in_degree_centrality(g))
            same(nx.out_degree_centrality(g, backend="gunpy"), nx.out_degree_centrality(g))
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.in_degree_centrality(loops, backend="gunpy")
    assert "multigraph" in can_run("degree_centrality", (nx.MultiGraph(loops),), {})


@pytest.mark.parametrize("name", ["karate", "directed"])
def test_betweenness_samples_networkx_s_sources(name):
    import random
    g = GRAPHS[name]
    for k, normalized in ((1, True), (5, False), (12, True)):
        got = nx.betweenness_centrality(g, k=k, normalized=normalized, seed=3, backend="gunpy")
        want = nx.betweenness_centrality(g, k=k, normalized=normalized, seed=3)
        assert list(got) == list(want)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12, nan_ok=True)
    a, b = random.Random(9), random.Random(9)  # the seed's state moves on as networkx's
    nx.betweenness_centrality(g, k=4, seed=a, backend="gunpy")
    nx.betweenness_centrality(g, k=4, seed=b)
    assert a.random() == b.random()
    assert can_run("betweenness_centrality", (g,), {"k": 4, "seed": 1}) is True


@pytest.mark.parametrize("name", ["directed", "undirected"])
def test_generic_bfs_edges(name):
    g = GRAPHS[name]
    s = list(g)[2]
    for neighbors in (None, g.neighbors, getattr(g, "successors", g.neighbors),
                      getattr(g, "predecessors", g.neighbors)):
        for limit in (None, 0, 2, -1):
            got = list(nx.generic_bfs_edges(g, s, neighbors, limit, backend="gunpy"))
            assert got == list(nx.generic_bfs_edges(g, s, neighbors, limit))
    assert len(list(nx.generic_bfs_edges(g, s, backend="gunpy"))) > 30
    assert "neighbors" in can_run("generic_bfs_edges", (g, s), {"neighbors": sorted})
    assert "neighbors" in can_run("generic_bfs_edges", (g, s, g.copy().neighbors), {})
    with pytest.raises(nx.NetworkXError):
        next(nx.generic_bfs_edges(g, "nowhere", backend="gunpy"))


@pytest.mark.parametrize("name", ["directed", "undirected", "karate"])
def test_bellman_ford_paths_on_equal_weights(name):
    g = GRAPHS[name].copy()
    nx.set_edge_attributes(g, 0.1, "w")  # float sums along each path, as networkx's
    s, t = list(g)[2], list(g)[-1]
    a, b = nx.single_source_bellman_ford(g, s, weight="w", backend="gunpy"), \
        nx.single_source_bellman_ford(g, s, weight="w")
    same(a[0], b[0])
    same(a[1], b[1])
    assert len(a[1]) > 20
    same(nx.single_source_bellman_ford_path(g, s, "w", backend="gunpy"),
         nx.single_source_bellman_ford_path(g, s, "w"))
    same(nx.shortest_path(g, s, weight="w", method="bellman-ford", backend="gunpy"),
         nx.shortest_path(g, s, weight="w", method="bellman-ford"))
    a, b = nx.bellman_ford_predecessor_and_distance(g, s, weight="w", backend="gunpy"), \
        nx.bellman_ford_predecessor_and_distance(g, s, weight="w")
    same(a[0], b[0])
    same(a[1], b[1])
    for target in (t, s, "nowhere"):
        try:
            want = nx.bellman_ford_path(g, s, target, "w")
        except nx.NetworkXNoPath:
            with pytest.raises(nx.NetworkXNoPath, match="cannot be reached"):
                nx.bellman_ford_path(g, s, target, "w", backend="gunpy")
        else:
            assert nx.bellman_ford_path(g, s, target, "w", backend="gunpy") == want
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_bellman_ford(g, "nowhere", weight="w", backend="gunpy")
    assert can_run("bellman_ford_path", (GRAPHS["karate"], 0, 5), {}) is True  # exact sums


@pytest.mark.parametrize("name", ["directed", "undirected", "parts"])
def test_edge_betweenness(name):
    g = GRAPHS[name]
    for kw in ({}, {"normalized": False}, {"k": 5, "seed": 3}, {"k": 1, "seed": 2}):
        got = nx.edge_betweenness_centrality(g, backend="gunpy", **kw)
        want = nx.edge_betweenness_centrality(g, **kw)
        assert list(got) == list(want) and got == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert max(nx.edge_betweenness_centrality(g, backend="gunpy").values()) > 0.01


def _weighted(name):
    """The graph with its own weights (les miserables and karate: integers, many ties) or,
    where it has none, random floats (every distance distinct)."""
    import random
    g = GRAPHS[name].copy()
    rng = random.Random(5)
    if not nx.get_edge_attributes(g, "weight"):
        for u, v in g.edges:
            g[u][v]["weight"] = rng.uniform(0.1, 3.0)
    return g


@pytest.mark.parametrize("name", ["directed", "undirected", "parts", "karate"])
def test_weighted_betweenness(name):
    from gunpy.nx_backend import _FUNCTIONS  # noqa: F401  (the backend is installed)
    g = _weighted(name)
    for kw in ({}, {"normalized": False}, {"k": 5, "seed": 3}, {"k": 1, "seed": 2}):
        for f in (nx.betweenness_centrality, nx.edge_betweenness_centrality):
            assert can_run(f.__name__, (g,), {"weight": "weight", **kw}) is True
            got = f(g, weight="weight", backend="gunpy", **kw)
            want = f(g, weight="weight", **kw)
            assert list(got) == list(want)
            assert got == pytest.approx(want, rel=1e-10, abs=1e-13, nan_ok=True)
    if name != "parts":  # a path and a cycle: one path between two nodes, whatever the weights
        unweighted = nx.betweenness_centrality(g, backend="gunpy")
        assert nx.betweenness_centrality(g, weight="weight", backend="gunpy") != \
            pytest.approx(unweighted)


def test_weighted_betweenness_declines_weights_not_positive_or_finite():
    import math
    for bad, why in ((0, "zero"), (-1.0, "negative"), (math.nan, "NaN"), (math.inf, "infinite"),
                     ("x", "non-numeric")):
        g = nx.path_graph(4)
        g[1][2]["weight"] = bad
        for name in ("betweenness_centrality", "edge_betweenness_centrality"):
            assert why in can_run(name, (g,), {"weight": "weight"})
            assert why in can_run(name, (g,), {"weight": "weight", "k": 2, "seed": 1})
    import numpy as np
    for narrow in (np.float32(2), np.int8(2)):  # networkx sums these in their own width
        g = nx.path_graph(4)
        g[1][2]["weight"] = narrow
        assert "NumPy" in can_run("betweenness_centrality", (g,), {"weight": "weight"})
    g = nx.path_graph(4)
    g[1][2]["weight"] = 2 ** 52  # exact in networkx's ints, rounded in float64 sums
    assert "2**53" in can_run("betweenness_centrality", (g,), {"weight": "weight"})
    g = nx.path_graph(4)  # a new graph: networkx's cache keeps what was read of the old
    g[1][2]["weight"], g[2][3]["weight"] = np.int64(3), np.float64(0.5)
    assert can_run("edge_betweenness_centrality", (g,), {"weight": "weight"}) is True
    g = nx.path_graph(4)
    assert "function" in can_run("betweenness_centrality", (g,), {"weight": lambda u, v, d: 1})
    assert "parallel" in can_run("betweenness_centrality", (nx.MultiGraph(g),),
                                 {"weight": "weight"})


def test_pagerank_start_vector():
    # nstart= reaches gunpy.pagerank: networkx's iterates from that start (a loose tol keeps
    # the start visible), missing nodes 0
    g = nx.gnp_random_graph(80, 0.06, seed=5, directed=True)
    start = {v: 1.0 + v % 4 for v in g if v != 3}
    with nx.config.backend_priority(algos=[]):
        want = nx.pagerank(g, nstart=start, tol=1e-3)
    got = nx.pagerank(g, nstart=start, tol=1e-3, backend="gunpy")
    assert list(got) == list(want)
    assert max(abs(got[v] - want[v]) for v in g) < 1e-12
    assert max(abs(got[v] - nx.pagerank(g, tol=1e-3)[v]) for v in g) > 1e-5


def test_structure_functions_equal_networkx_on_random_graphs():
    import random
    for seed in range(20):
        r = random.Random(seed)
        for directed in (False, True):
            g = nx.gnm_random_graph(r.randint(0, 12), r.randint(0, 20), seed=seed,
                                    directed=directed)
            for u, v in list(g.edges)[:3]:
                g[u][v]["weight"] = r.choice([-1, 2, 0.5])
            if g and r.random() < 0.5:
                n = r.choice(list(g))
                g.add_edge(n, n)
            for f in ("isolates", "number_of_isolates", "number_of_selfloops",
                      "is_negatively_weighted"):
                want, got = getattr(nx, f)(g), getattr(nx, f)(g, backend="gunpy")
                if f == "isolates":
                    want, got = list(want), list(got)
                assert want == got, (f, seed)
            assert [nx.is_isolate(g, n) for n in g] == \
                [nx.is_isolate(g, n, backend="gunpy") for n in g]
            if directed:
                if g.number_of_edges():
                    assert nx.overall_reciprocity(g) == nx.overall_reciprocity(g, backend="gunpy")
                some = list(g)[:5]
                assert nx.reciprocity(g, some) == nx.reciprocity(g, some, backend="gunpy")


def _forests():
    """Trees, forests and near misses: ``{name: graph}``."""
    tree = nx.random_labeled_tree(30, seed=3)
    forest = nx.disjoint_union_all([tree, nx.path_graph(4), nx.empty_graph(2)])
    cycle = tree.copy()
    cycle.add_edge(0, 29) if not tree.has_edge(0, 29) else cycle.add_edge(1, 28)
    loop = tree.copy()
    loop.add_edge(5, 5)
    out = nx.bfs_tree(tree, 0)  # an arborescence
    polytree = out.copy()
    polytree.add_edge(*next(iter(out.edges))[::-1])  # an edge back: a 2-cycle underneath
    into = out.reverse()  # a polytree with in-degrees above 1
    return {"tree": tree, "forest": forest, "cycle": cycle, "self-loop": loop,
            "one node": nx.empty_graph(1), "one self-loop": nx.Graph([(0, 0)]),
            "isolated": nx.empty_graph(3), "arborescence": out,
            "branching": nx.disjoint_union(out, nx.bfs_tree(nx.path_graph(5), 2)),
            "two-cycle": polytree, "in-tree": into,
            "directed cycle": nx.cycle_graph(4, nx.DiGraph),
            "directed self-loop": nx.DiGraph([(0, 1), (1, 1)]),
            "labels": nx.relabel_nodes(tree, lambda v: f"n{v}"),
            **{name: GRAPHS[name] for name in ("directed", "parts", "karate")}}


FORESTS = _forests()


@pytest.mark.parametrize("name", sorted(FORESTS))
def test_tree_recognition(name):
    g = FORESTS[name]
    fs = [nx.is_tree, nx.is_forest]
    if g.is_directed():
        fs += [nx.is_branching, nx.is_arborescence]
    for f in fs:
        got, want = f(g, backend="gunpy"), f(g)
        assert got is want, f.__name__


def test_tree_recognition_answers_and_errors():
    directed_only = (nx.is_branching, nx.is_arborescence)
    for f in (nx.is_tree, nx.is_forest, *directed_only):  # the cases give both answers
        assert {f(g) for g in FORESTS.values()
                if g.is_directed() or f not in directed_only} == {True, False}
    for f in (nx.is_tree, nx.is_forest, nx.is_branching, nx.is_arborescence):
        with pytest.raises(nx.NetworkXPointlessConcept):
            f(nx.DiGraph(), backend="gunpy")
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_forest(nx.Graph(), backend="gunpy")
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.is_branching(FORESTS["tree"], backend="gunpy")
    multi = nx.MultiGraph([(0, 1), (0, 1)])  # a cycle gunpy's graph would hold as one edge
    assert can_run("is_forest", (multi,), {}) is not True
    assert nx.is_forest(multi) is False


def _same_path(f, g, s, t):
    """gunpy's answer to ``f(g, s, t)`` is networkx's: the same path, or NetworkXNoPath."""
    try:
        want = f(g, s, t)
    except nx.NetworkXNoPath:
        with pytest.raises(nx.NetworkXNoPath):
            f(g, s, t, backend="gunpy")
        return
    assert f(g, s, t, backend="gunpy") == want, (s, t)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_bidirectional_shortest_path(name):
    import random
    g = GRAPHS[name]
    r, nodes = random.Random(1), list(g)
    pairs = [(r.choice(nodes), r.choice(nodes)) for _ in range(40)] + [(nodes[0], nodes[0])]
    for s, t in pairs:
        _same_path(nx.bidirectional_shortest_path, g, s, t)
    for s, t in ((nodes[0], "nowhere"), ("nowhere", nodes[0])):
        with pytest.raises(nx.NodeNotFound):
            nx.bidirectional_shortest_path(g, s, t, backend="gunpy")


@pytest.mark.parametrize("name", ["directed", "karate"])
def test_all_pairs_dijkstra_path_length(name):
    g = _weighted(name)
    for kw in ({}, {"cutoff": 3}):
        got = nx.all_pairs_dijkstra_path_length(g, backend="gunpy", **kw)
        for (u, a), (v, b) in zip(got, nx.all_pairs_dijkstra_path_length(g, **kw), strict=True):
            assert u == v
            same(a, b)
    assert list(nx.all_pairs_dijkstra_path_length(nx.Graph(), backend="gunpy")) == []


def _power_weights(g, seed):
    """Distinct powers of two: every path sum distinct (one shortest path to each node) and
    exact, so Bellman-Ford's paths are networkx's whatever its queue does."""
    import random
    g = g.copy()
    exponents = random.Random(seed).sample(range(g.number_of_edges()),
                                           g.number_of_edges())
    for (u, v), k in zip(g.edges, exponents):
        g[u][v]["weight"] = 2 ** k
    return g


def _pairs(got, want):
    got, want = list(got), list(want)
    assert [u for u, _ in got] == [u for u, _ in want]
    return zip((x for _, x in got), (x for _, x in want))


@pytest.mark.parametrize("name", ["directed", "karate", "parts"])
def test_all_pairs_dijkstra_and_bellman_ford(name):
    g = _weighted(name)
    for kw in ({}, {"cutoff": 2.5}):
        for a, b in _pairs(nx.all_pairs_dijkstra(g, backend="gunpy", **kw),
                           nx.all_pairs_dijkstra(g, **kw)):
            same(a[0], b[0])
            same(a[1], b[1])
        for a, b in _pairs(nx.all_pairs_dijkstra_path(g, backend="gunpy", **kw),
                           nx.all_pairs_dijkstra_path(g, **kw)):
            same(a, b)
    small = nx.gnm_random_graph(12, 24, seed=2, directed=g.is_directed())
    small.add_edge(3, 3)
    for h in (_power_weights(small, 1), nx.relabel_nodes(small, str), GRAPHS[name]):
        if h is GRAPHS[name] and nx.get_edge_attributes(h, "weight"):
            continue  # karate's integer weights tie: left to networkx
        for f in ("all_pairs_bellman_ford_path_length", "all_pairs_bellman_ford_path"):
            for a, b in _pairs(getattr(nx, f)(h, backend="gunpy"), getattr(nx, f)(h)):
                assert a == b and {k: type(x) for k, x in a.items()} == \
                    {k: type(x) for k, x in b.items()}


def test_all_pairs_bellman_ford_ties_are_networkx_s_at_the_call():
    # equal paths (unequal weights): gunpy declines at the call, never half-way through
    g = nx.cycle_graph(4)  # from 0, two paths of length 2 to node 2
    g.add_edge(0, 4, weight=3)
    with pytest.raises(NotImplementedError):
        nx.all_pairs_bellman_ford_path(g, backend="gunpy")
    with nx.config.backend_priority(algos=["gunpy"]):
        assert list(nx.all_pairs_bellman_ford_path(g)) == \
            list(nx.all_pairs_bellman_ford_path(g, backend="networkx"))
    mixed = nx.path_graph(4)  # int and float weights: the lengths' types need the paths
    mixed[1][2]["weight"] = 0.5
    for a, b in _pairs(nx.all_pairs_bellman_ford_path_length(mixed, backend="gunpy"),
                       nx.all_pairs_bellman_ford_path_length(mixed)):
        # keys in distance order (networkx's are its queue's), values and types its
        assert a == b and {k: type(x) for k, x in a.items()} == \
            {k: type(x) for k, x in b.items()}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_shortest_path_to_a_target(name):
    import random
    g = GRAPHS[name]
    r, nodes = random.Random(3), list(g)
    for s, t in [(r.choice(nodes), r.choice(nodes)) for _ in range(25)]:
        _same_path(nx.shortest_path, g, s, t)
    h = _power_weights(nx.gnm_random_graph(12, 24, seed=4, directed=g.is_directed()), 2)
    for t in h:
        kw = {"weight": "weight", "method": "bellman-ford"}
        if nx.has_path(h, 0, t):
            assert nx.shortest_path(h, 0, t, backend="gunpy", **kw) == \
                nx.shortest_path(h, 0, t, **kw)
    with pytest.raises(nx.NodeNotFound):
        nx.shortest_path(g, nodes[0], "nowhere", backend="gunpy")
    assert "bidirectional" in can_run("shortest_path", (g, nodes[0], nodes[1]),
                                      {"weight": "weight"})


def _truss_graphs():
    """Cliques sharing a node, a hub wider than a CTA with triangles around it, labels that
    are strings, isolated nodes and random graphs: k-truss's answers differ on each."""
    cliques = nx.disjoint_union(nx.complete_graph(6), nx.complete_graph(4))
    cliques.add_edges_from([(0, 6), (0, 7), (6, 20)])
    hub = nx.star_graph(300)
    hub.add_edges_from((v, v + 1) for v in range(1, 300, 2))  # a fan: 150 triangles
    hub.add_edges_from([(1, 3), (3, 5)])
    named = nx.relabel_nodes(nx.les_miserables_graph(), lambda s: s.lower())
    named.add_node("alone")
    named.graph["title"] = "les mis"
    return [cliques, hub, named, nx.karate_club_graph(),
            *(nx.gnm_random_graph(40, 160, seed=s) for s in range(3))]


@pytest.mark.parametrize("k", [-1, 2, 3, 4, 5, 6, 9])
def test_k_truss_is_networkx_s_subgraph(k):
    for g in _truss_graphs():
        want = nx.k_truss(g, k)
        got = nx.k_truss(g, k, backend="gunpy")
        assert type(got) is type(want) and got.graph == want.graph
        assert list(got.nodes(data=True)) == list(want.nodes(data=True))
        assert list(got.edges(data=True)) == list(want.edges(data=True))
        assert got is not g and got.edges(data=True) is not g.edges(data=True)


def test_k_truss_declines_what_networkx_refuses():
    loop = nx.complete_graph(4)
    loop.add_edge(0, 0)
    for g in (nx.complete_graph(4, nx.DiGraph), nx.MultiGraph(nx.complete_graph(4)), loop):
        assert can_run("k_truss", (g, 3), {}) is not True
        with pytest.raises(nx.NetworkXNotImplemented):
            nx.k_truss(g, 3)
    assert can_run("k_truss", (nx.complete_graph(4), 3), {}) is True


def _dags():
    """Random DAGs (edges from smaller to larger ids), one with string labels, a diamond
    with two lowest common ancestors, and a forest of two roots."""
    dags = []
    for seed in range(6):
        g = nx.gnp_random_graph(25, 0.15, directed=True, seed=seed)
        dag = nx.DiGraph([(u, v) for u, v in g.edges if u < v])
        dag.add_nodes_from(range(25))
        dags.append(dag)
    dags.append(nx.relabel_nodes(dags[0], {v: f"n{(v * 37) % 101}" for v in dags[0]}))
    dags.append(nx.DiGraph([("a", "c"), ("b", "c"), ("a", "d"), ("b", "d")]))
    dags.append(nx.DiGraph([(0, 1), (0, 2), (3, 4)]))
    return dags


def test_lowest_common_ancestor_is_networkx_s():
    for g in _dags():
        nodes = list(g)
        pairs = [(u, v) for u in nodes[::3] for v in nodes[1::4]] + [(nodes[0], nodes[0])]
        for u, v in pairs:
            want = nx.lowest_common_ancestor(g, u, v, default="none")
            assert nx.lowest_common_ancestor(g, u, v, default="none", backend="gunpy") == want


def test_lowest_common_ancestor_errors_are_networkx_s():
    cyclic = nx.DiGraph([(0, 1), (1, 2), (2, 0)])
    looped = nx.DiGraph([(0, 1), (1, 1)])
    for g in (cyclic, looped):
        with pytest.raises(nx.NetworkXError, match="LCA only defined on directed acyclic"):
            nx.lowest_common_ancestor(g, 0, 1, backend="gunpy")
    with pytest.raises(nx.NodeNotFound, match=r"Node\(s\) \{9\} from pair \(0, 9\) not in G"):
        nx.lowest_common_ancestor(nx.DiGraph([(0, 1)]), 0, 9, backend="gunpy")
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.lowest_common_ancestor(nx.DiGraph(), 0, 1, backend="gunpy")
    assert can_run("lowest_common_ancestor", (nx.path_graph(3), 0, 1), {}) is not True
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.lowest_common_ancestor(nx.path_graph(3), 0, 1)


def _bridged_graphs():
    """Bridges of every kind: a barbell's, a path's (every edge), a tree hanging off a
    cycle, a hub of 300 leaves (every spoke a bridge) with a few spokes closed into
    triangles, isolated nodes, self-loops, string labels and random sparse graphs."""
    barbell = nx.barbell_graph(5, 3)
    path = nx.path_graph(40)
    lollipop = nx.cycle_graph(6)
    lollipop.add_edges_from([(5, 6), (6, 7), (6, 8), (8, 9), (9, 8)])
    hub = nx.star_graph(300)
    hub.add_edges_from([(1, 2), (3, 4), (4, 5)])
    hub.add_nodes_from(["alone", "too"])
    hub.add_edge(7, 7)
    named = nx.relabel_nodes(nx.les_miserables_graph(), lambda s: s.lower())
    return [barbell, path, lollipop, hub, named,
            *(nx.gnm_random_graph(60, m, seed=m) for m in (40, 70, 120))]


@pytest.mark.parametrize("k", [1, 2])
def test_k_edge_components_are_networkx_s(k):
    for g in _bridged_graphs():
        assert list(nx.k_edge_components(g, k, backend="gunpy")) == \
            list(nx.k_edge_components(g, k))
    d = nx.gnp_random_graph(40, 0.06, directed=True, seed=2)
    if k == 1:  # directed: the strongly connected components (in a reverse topological
        # order, not necessarily Tarjan's: test_strongly_connected_components)
        assert set(map(frozenset, nx.k_edge_components(d, 1, backend="gunpy"))) == \
            set(map(frozenset, nx.k_edge_components(d, 1)))


def test_k_edge_components_declines_the_auxiliary_graph_cases():
    g, d = nx.barbell_graph(4, 0), nx.DiGraph(nx.barbell_graph(4, 0))
    for graph, k in ((g, 3), (d, 2), (nx.MultiGraph(g), 1)):
        assert can_run("k_edge_components", (graph, k), {}) is not True
    with pytest.raises(ValueError, match="k cannot be less than 1"):
        nx.k_edge_components(g, 0, backend="gunpy")


def test_the_bridges_are_networkx_s():
    """The bridges themselves (a wrongly found bridge need not change the components)."""
    import numpy as np

    from gunpy.nx_backend import convert_from_nx
    from gunpy.nx_backend.components import _bridges
    for g in _bridged_graphs() + [nx.complete_graph(3), nx.cycle_graph(5), nx.Graph()]:
        G = convert_from_nx(g)
        n = G.graph.num_vertices
        src = np.repeat(np.arange(n), np.diff(G.graph.row_offsets))
        found = _bridges(G.graph, src)
        got = {frozenset((G.nodes[u], G.nodes[v])) for u, v in
               zip(src[found].tolist(), G.graph.column_indices[found].tolist())}
        assert got == {frozenset(e) for e in nx.bridges(g)}
