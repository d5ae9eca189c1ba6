"""The networkx backend's BFS family, reachability and shortest paths (issue 17).

Every result is compared with networkx's own: values, types, and the order of dict keys,
lists and generators (networkx's Dijkstra pops and its BFS queue are rebuilt from gunpy's
distances), except Bellman-Ford's keys on unequal weights (distance order, documented). Host glue over gunpy.bfs / gunpy.sssp / gunpy.cc: CPU mode only.
"""

import random

import networkx as nx
import pytest

from gunpy.nx_backend import can_run
from _helpers import ROOT

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def graphs():
    rng = random.Random(1)
    d = nx.gnp_random_graph(60, 0.06, directed=True, seed=3)
    d.add_edge(5, 5)
    parts = nx.disjoint_union(nx.path_graph(7), nx.star_graph(5))
    parts.add_nodes_from(["iso-a", "iso-b"])
    grid = nx.grid_2d_graph(8, 8)  # weights 1 and 2: many equal distances, many equal paths
    for u, v in grid.edges:
        grid[u][v]["weight"] = rng.choice([1, 2])
    floats = nx.gnm_random_graph(80, 300, seed=2, directed=True)
    for u, v in floats.edges:
        floats[u][v]["weight"] = rng.random()
    multi = nx.MultiDiGraph(floats)  # parallel edges: the least weight counts
    for u, v in list(floats.edges)[:40]:
        multi.add_edge(u, v, weight=rng.choice([0.05, 3]))
    les = nx.les_miserables_graph()
    return {"karate": nx.karate_club_graph(), "directed": d, "parts": parts, "grid": grid,
            "floats": floats, "multi": multi,
            "labelled": nx.relabel_nodes(les, {n: f"<{n}>" for n in les})}


GRAPHS = graphs()


def same(got, want):
    """Equal values of equal types, dict keys and items in the same order."""
    if isinstance(want, dict):
        assert list(got.items()) == list(want.items())
        assert [type(x) for x in got.values()] == [type(x) for x in want.values()]
    elif isinstance(want, tuple):
        for a, b in zip(got, want, strict=True):
            same(a, b)
    else:
        assert got == want and type(got) is type(want)


def outcome(f, *args, **kwargs):
    try:
        return f(*args, **kwargs)
    except nx.NetworkXException as e:
        return type(e), str(e)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_shortest_paths_in_networkx_s_order(name):
    g = GRAPHS[name]
    for s in list(g)[:3]:
        for f, kw in [(nx.single_source_shortest_path, {}),
                      (nx.single_source_shortest_path, {"cutoff": 2}),
                      (nx.single_source_dijkstra_path_length, {}),
                      (nx.single_source_dijkstra_path, {"cutoff": 2.5}),
                      (nx.single_source_dijkstra, {}),
                      (nx.shortest_path_length, {}),
                      (nx.shortest_path_length, {"weight": "weight"}),
                      (nx.shortest_path, {"weight": "weight"}), (nx.shortest_path, {})]:
            same(f(g, s, backend="gunpy", **kw), f(g, s, **kw))
        same(nx.multi_source_dijkstra(g, [s], backend="gunpy"), nx.multi_source_dijkstra(g, [s]))
        same(nx.multi_source_dijkstra_path_length(g, {s}, cutoff=3, backend="gunpy"),
             nx.multi_source_dijkstra_path_length(g, {s}, cutoff=3))
        for t in list(g)[-3:]:
            for f in (nx.dijkstra_path, nx.dijkstra_path_length, nx.has_path,
                      nx.shortest_path_length):
                same(outcome(f, g, s, t, backend="gunpy"), outcome(f, g, s, t))
            same(outcome(nx.single_source_dijkstra, g, s, t, backend="gunpy"),
                 outcome(nx.single_source_dijkstra, g, s, t))


def test_weighted_ties_follow_networkx_s_heap():
    # a diamond's two equal paths and two equal-distance vertices: networkx's pops and
    # parents come from its neighbour order, which the sorted CSR does not keep
    g = nx.DiGraph()
    g.add_weighted_edges_from([(0, 3, 1), (0, 2, 1), (3, 1, 1), (2, 1, 1), (2, 4, 2), (3, 4, 2)])
    got = nx.single_source_dijkstra(g, 0, backend="gunpy")
    assert list(got[0].items()) == [(0, 0), (3, 1), (2, 1), (1, 2), (4, 3)]
    assert got[1] == {0: [0], 3: [0, 3], 2: [0, 2], 1: [0, 3, 1], 4: [0, 3, 4]}
    assert list(got[1]) == [0, 3, 2, 1, 4]
    same(got, nx.single_source_dijkstra(g, 0))
    g[0][3]["weight"] = 1.0  # a float on one path: networkx's sums become floats there only
    nx._clear_cache(g)  # an attribute changed in place: networkx's rule for cached conversions
    got = nx.single_source_dijkstra_path_length(g, 0, backend="gunpy")
    assert [type(x) for x in got.values()] == [int, float, int, float, float]
    same(got, nx.single_source_dijkstra_path_length(g, 0))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_bfs_family_and_reachability(name):
    g = GRAPHS[name]
    for s in list(g)[:3]:
        for f, kw in [(nx.bfs_predecessors, {}), (nx.bfs_successors, {}),
                      (nx.bfs_successors, {"depth_limit": 1}), (nx.bfs_edges, {"reverse": True})]:
            assert list(f(g, s, backend="gunpy", **kw)) == list(f(g, s, **kw))
        got = nx.bfs_tree(g, s, depth_limit=2, backend="gunpy")
        want = nx.bfs_tree(g, s, depth_limit=2)
        assert list(got.nodes) == list(want.nodes) and list(got.edges) == list(want.edges)
        for k in (-1, 0, 1, 2, 5):
            assert nx.descendants_at_distance(g, s, k, backend="gunpy") == \
                nx.descendants_at_distance(g, s, k)
        assert nx.descendants(g, s, backend="gunpy") == nx.descendants(g, s)
        assert nx.ancestors(g, s, backend="gunpy") == nx.ancestors(g, s)
        if not g.is_directed():
            assert nx.node_connected_component(g, s, backend="gunpy") == \
                nx.node_connected_component(g, s)
    weak = g.is_directed()
    for f in ((nx.is_weakly_connected, nx.number_weakly_connected_components) if weak else
              (nx.is_connected, nx.number_connected_components)):
        same(f(g, backend="gunpy"), f(g))
    assert nx.number_connected_components(GRAPHS["parts"], backend="gunpy") == 4


def test_errors_are_networkx_s():
    g, d = GRAPHS["parts"], GRAPHS["directed"]
    for graph in (g, d):
        for f in (nx.descendants, nx.ancestors, nx.descendants_at_distance):
            args = (graph, "nope") + ((1,) if f is nx.descendants_at_distance else ())
            with pytest.raises(nx.NetworkXError, match="not in the"):
                f(*args, backend="gunpy")
        with pytest.raises(nx.NetworkXError, match="The node nope is not in the"):
            list(nx.bfs_predecessors(graph, "nope", backend="gunpy"))  # when first advanced
    for f in (nx.single_source_shortest_path, nx.single_source_dijkstra,
              nx.single_source_bellman_ford_path_length):
        same(outcome(f, g, "nope", backend="gunpy"), outcome(f, g, "nope"))
    for f in (nx.has_path, nx.dijkstra_path_length, nx.dijkstra_path, nx.shortest_path_length):
        for s, t in (("nope", 0), (0, "nope"), (0, "iso-a")):
            same(outcome(f, g, s, t, backend="gunpy"), outcome(f, g, s, t))
    with pytest.raises(ValueError, match="sources must not be empty"):
        nx.multi_source_dijkstra(g, [], backend="gunpy")
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_connected(nx.Graph(), backend="gunpy")
    with pytest.raises(KeyError):
        nx.node_connected_component(g, "nope", backend="gunpy")
    assert nx.multi_source_dijkstra(g, {0}, target=0, backend="gunpy") == (0, [0])


def test_what_gunpy_leaves_to_networkx():
    g = GRAPHS["karate"]
    zero = nx.Graph([(0, 1, {"weight": 0}), (1, 2, {"weight": 1})])
    assert "zero" in can_run("dijkstra_path", (zero, 0, 2), {})
    assert "weight functions" in can_run("single_source_dijkstra", (g, 0),
                                         {"weight": lambda u, v, d: 1})
    assert "several sources" in can_run("multi_source_dijkstra", (g, [0, 1]), {})
    assert "iterator" in can_run("multi_source_dijkstra_path", (g, iter([0])), {})
    assert "bidirectional" in can_run("shortest_path", (g, 0, 5), {"weight": "weight"})
    assert "all pairs" in can_run("shortest_path_length", (g,), {})
    floats = GRAPHS["floats"]
    assert "may round" in can_run("shortest_path", (floats, 0), {"weight": "weight",
                                                                 "method": "bellman-ford"})
    assert "may round" in can_run("single_source_bellman_ford_path_length", (floats, 0), {})
    assert "sort_neighbors" in can_run("bfs_tree", (g, 0), {"sort_neighbors": sorted})
    assert can_run("shortest_path_length", (g, 0, 5), {"weight": "weight"}) is True
    assert can_run("single_source_bellman_ford_path_length", (nx.path_graph(3), 0), {}) is True
    # unweighted Bellman-Ford: networkx's FIFO queue is BFS, keys in its order
    p = nx.path_graph(6)
    same(nx.single_source_bellman_ford_path_length(p, 2, backend="gunpy"),
         nx.single_source_bellman_ford_path_length(p, 2))
    with pytest.raises(NotImplementedError):
        nx.shortest_path(g, 0, 5, weight="weight", backend="gunpy")


def test_the_networkx_page_runs_and_lists_every_dispatched_function():
    import doctest
    import os
    import re

    from gunpy.nx_backend import _FUNCTIONS
    path = str(ROOT / "docs" / "networkx.md")
    result = doctest.testfile(path, module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 8
    rows = [line.split("|")[1] for line in open(path) if line.startswith("| `")]
    listed = {name for row in rows for name in re.findall(r"`(\w+)`", row)}
    assert listed == set(_FUNCTIONS)


#: the algorithms nx-cugraph dispatches (its _nx_cugraph/__init__.py function list, less its
#: graph generators and conversions)
NX_CUGRAPH = {
    "all_pairs_bellman_ford_path", "all_pairs_bellman_ford_path_length", "all_pairs_dijkstra",
    "all_pairs_dijkstra_path", "all_pairs_dijkstra_path_length", "all_pairs_shortest_path",
    "all_pairs_shortest_path_length", "ancestors", "average_clustering", "bellman_ford_path",
    "bellman_ford_path_length", "betweenness_centrality", "bfs_edges", "bfs_layers",
    "bfs_predecessors", "bfs_successors", "bfs_tree", "bidirectional_shortest_path",
    "clustering", "complement", "connected_components", "core_number", "degree_centrality",
    "descendants", "descendants_at_distance", "dijkstra_path", "dijkstra_path_length",
    "edge_betweenness_centrality", "ego_graph", "eigenvector_centrality", "generic_bfs_edges",
    "has_path", "hits", "in_degree_centrality", "is_arborescence", "is_branching",
    "is_connected", "is_forest", "is_isolate", "is_negatively_weighted", "is_tree",
    "is_weakly_connected", "isolates", "k_truss", "katz_centrality", "louvain_communities",
    "lowest_common_ancestor", "node_connected_component", "number_connected_components",
    "number_of_isolates", "number_of_selfloops", "number_weakly_connected_components",
    "out_degree_centrality", "overall_reciprocity", "pagerank", "reciprocity", "reverse",
    "shortest_path", "shortest_path_length", "single_source_bellman_ford",
    "single_source_bellman_ford_path", "single_source_bellman_ford_path_length",
    "single_source_dijkstra", "single_source_dijkstra_path",
    "single_source_dijkstra_path_length", "single_source_shortest_path",
    "single_source_shortest_path_length", "single_target_shortest_path",
    "single_target_shortest_path_length", "transitivity", "triangles",
    "weakly_connected_components",
}


def test_the_networkx_page_says_which_functions_nx_cugraph_has():
    import os
    import re

    from gunpy.nx_backend import _FUNCTIONS
    path = str(ROOT / "docs" / "networkx.md")
    table = open(path).read().split("## Functions", 1)[1].split("\n\n")[1]
    rows = [line.split("|") for line in table.splitlines()[2:]]
    assert len(rows) > 50
    for row in rows:
        names = re.findall(r"`(\w+)`", row[1])
        has = [n for n in names if n in NX_CUGRAPH]
        want = "yes" if has == names else "no" if not has else ", ".join(f"`{n}`" for n in has)
        assert row[-2].strip() == want, row[1]
    assert NX_CUGRAPH - set(_FUNCTIONS) == set()  # every one of nx-cugraph's
    assert len(set(_FUNCTIONS) - NX_CUGRAPH) == 31


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_closeness_harmonic_eccentricity_to_the_bit(name):
    # networkx's loops over gunpy's path-length dicts: sums in networkx's order, so the
    # floats are equal, not close
    g = GRAPHS[name]
    for kw in ({}, {"distance": "weight"}, {"wf_improved": False}, {"u": list(g)[1]}):
        same(nx.closeness_centrality(g, backend="gunpy", **kw), nx.closeness_centrality(g, **kw))
    for kw in ({}, {"distance": "weight"}, {"nbunch": list(g)[:3]}, {"sources": list(g)[:4]}):
        same(nx.harmonic_centrality(g, backend="gunpy", **kw), nx.harmonic_centrality(g, **kw))
    for kw in ({}, {"weight": "weight"}, {"v": list(g)[2]}, {"v": list(g)[:2]}):
        same(outcome(nx.eccentricity, g, backend="gunpy", **kw), outcome(nx.eccentricity, g, **kw))
    assert "sp=" in can_run("eccentricity", (g,), {"sp": {}})
    zero = nx.Graph([(0, 1, {"weight": 0})])
    assert "zero" in can_run("closeness_centrality", (zero,), {"distance": "weight"})
    assert can_run("closeness_centrality", (zero,), {}) is True


def test_closeness_of_a_known_graph():
    g = nx.path_graph(4)
    got = nx.closeness_centrality(g, backend="gunpy")
    assert got == {0: 0.5, 1: 0.75, 2: 0.75, 3: 0.5}
    assert nx.eccentricity(g, backend="gunpy") == {0: 3, 1: 2, 2: 2, 3: 3}


def test_weight_checks_are_cached_until_the_graph_changes():
    g = nx.path_graph(5)
    nx.set_edge_attributes(g, 2, "weight")
    assert can_run("dijkstra_path_length", (g, 0, 4), {}) is True
    assert ("gunpy", "weight facts", "weight") in g.__networkx_cache__
    assert nx.dijkstra_path_length(g, 0, 4, backend="gunpy") == 8
    g.add_edge(4, 5, weight=0)  # networkx clears its cache: the new zero weight is seen
    assert "zero" in can_run("dijkstra_path_length", (g, 0, 4), {})
    with pytest.raises(nx.NetworkXNoPath, match="Node 9 not reachable from 0"):
        nx.dijkstra_path_length(nx.path_graph(3), 0, 9, backend="gunpy")
    assert nx.single_source_dijkstra(nx.path_graph(4), 0, 3, backend="gunpy") == (3, [0, 1, 2, 3])


# ----------------------------------------------------------------------------- Bellman-Ford
BELLMAN_FORD = (nx.single_source_bellman_ford_path_length, nx.single_source_bellman_ford,
                nx.single_source_bellman_ford_path, nx.bellman_ford_predecessor_and_distance)


def typed(result):
    """A result with every number tagged by its type: == then checks types too (dict key
    order aside: networkx does not define Bellman-Ford's, gunpy's is distance order)."""
    if isinstance(result, dict):
        return {k: typed(v) for k, v in result.items()}
    if isinstance(result, tuple | list):
        return type(result)(map(typed, result))
    return (result, type(result)) if isinstance(result, int | float) else result


def unique_paths_graphs():
    # weights drawn from a million: no two paths of one length (seeded); exact dyadic
    # floats with int ones (types follow each path); zero weights on a tree edge
    out = []
    for directed in (False, True):
        g = nx.gnm_random_graph(50, 160, seed=5, directed=directed)
        rng = random.Random(directed)
        for u, v in g.edges:
            g[u][v]["weight"] = rng.randint(1, 10 ** 6)
        g.add_node("lone")
        out.append(g)
    d = nx.DiGraph()
    d.add_weighted_edges_from([(0, 1, 0.5), (1, 2, 0.25), (0, 2, 1.125), (2, 3, 2), (0, 3, 3),
                               (3, 4, 0), (4, 5, 1.5), (1, 5, 7), (5, 0, 1)])
    out.append(d)
    return out


@pytest.mark.parametrize("g", unique_paths_graphs(), ids=["undirected", "directed", "dyadic"])
def test_bellman_ford_on_unequal_weights_is_networkx_s(g):
    nodes = list(g)
    for s in nodes[:2] + nodes[-2:]:
        for f in BELLMAN_FORD:
            got = f(g, s, backend="gunpy")
            assert typed(got) == typed(f(g, s))
        for t in (nodes[3], nodes[-1], nodes[-2], "nope"):
            for f in (nx.bellman_ford_path, nx.bellman_ford_path_length,
                      nx.single_source_bellman_ford):
                args = (g, s, t)
                same(outcome(f, *args, backend="gunpy"), outcome(f, *args))
        kw = {"weight": "weight", "method": "bellman-ford"}
        assert typed(nx.shortest_path_length(g, s, backend="gunpy", **kw)) == \
            typed(nx.shortest_path_length(g, s, **kw))
        same(outcome(nx.shortest_path_length, g, s, nodes[4], backend="gunpy", **kw),
             outcome(nx.shortest_path_length, g, s, nodes[4], **kw))
        got = nx.single_source_bellman_ford_path_length(g, s, backend="gunpy")
        assert list(got.values()) == sorted(got.values())  # keys in distance order
    got = nx.shortest_path(g, nodes[0], weight="weight", method="bellman-ford",
                           backend="gunpy")
    assert got == nx.shortest_path(g, nodes[0], weight="weight", method="bellman-ford")
    if g.is_directed() and nx.is_strongly_connected(g):
        kw = {"weight": "weight", "method": "bellman-ford"}
        got = nx.average_shortest_path_length(g, backend="gunpy", **kw)
        assert got == nx.average_shortest_path_length(g, **kw)


def test_bellman_ford_ties_are_left_to_networkx(monkeypatch):
    from gunpy.nx_backend import BackendInterface, convert_from_nx, dispatch
    g = nx.DiGraph()  # two equal paths to 3: networkx's queue orders pred[3] and picks one
    g.add_weighted_edges_from([(0, 1, 2), (0, 2, 1), (2, 1, 1), (1, 3, 1), (2, 3, 5)])
    assert nx.single_source_bellman_ford_path_length(g, 0, backend="gunpy") == \
        {0: 0, 2: 1, 1: 2, 3: 3}  # ints: the lengths alone do not depend on the path
    assert nx.bellman_ford_path(g, 0, 2, backend="gunpy") == [0, 2]  # no tie on its path
    for f, args in ((nx.single_source_bellman_ford, (g, 0)), (nx.bellman_ford_path, (g, 0, 3)),
                    (nx.bellman_ford_predecessor_and_distance, (g, 0))):
        with pytest.raises(NotImplementedError):
            f(*args, backend="gunpy")
    mixed = g.copy()
    mixed[0][1]["weight"] = 2.0  # one of the equal paths sums to a float: the type is the path's
    with pytest.raises(NotImplementedError):
        nx.single_source_bellman_ford_path_length(mixed, 0, backend="gunpy")
    # chosen by networkx itself (backend_priority): gunpy tries, raises, networkx answers
    calls = []
    for name in ("single_source_bellman_ford", "single_source_bellman_ford_path_length"):
        f = getattr(BackendInterface, name)
        monkeypatch.setattr(BackendInterface, name,
                            lambda *a, f=f, **k: calls.append(f) or f(*a, **k))
    monkeypatch.setitem(dispatch.MIN_EDGES, "shortest paths", (0, 0))
    with nx.config(backend_priority=["gunpy"]):
        assert nx.single_source_bellman_ford(g, 0) == (
            {0: 0, 1: 2, 2: 1, 3: 3}, {0: [0], 1: [0, 1], 2: [0, 2], 3: [0, 1, 3]})
        got = nx.single_source_bellman_ford_path_length(mixed, 0)
        assert [type(got[v]) for v in (2, 1, 3)] == [int, float, float]
    assert len(calls) == 2
    # a graph already gunpy's: networkx runs the call where fallback_to_nx says so
    converted = convert_from_nx(g, edge_attrs={"weight": 1})
    with pytest.raises(NotImplementedError):
        nx.single_source_bellman_ford(converted, 0)
    with nx.config(fallback_to_nx=True):
        assert nx.single_source_bellman_ford(converted, 0) == nx.single_source_bellman_ford(g, 0)


def test_bellman_ford_zero_weights_and_what_is_declined():
    g = nx.Graph([(0, 1, {"weight": 0}), (1, 2, {"weight": 3}), (0, 2, {"weight": 5})])
    # the source's zero edge makes 1 its tight predecessor: networkx lists it, paths agree
    want = ({0: 0, 1: 0, 2: 3}, {0: [0], 1: [0, 1], 2: [0, 1, 2]})
    assert nx.single_source_bellman_ford(g, 0, backend="gunpy") == want == \
        nx.single_source_bellman_ford(g, 0)
    with pytest.raises(NotImplementedError):
        nx.bellman_ford_predecessor_and_distance(g, 0, backend="gunpy")
    assert nx.bellman_ford_predecessor_and_distance(g, 0) == ({0: [1], 1: [0], 2: [1]},
                                                              {0: 0, 1: 0, 2: 3})
    loop = nx.DiGraph([(0, 1, {"weight": 1}), (1, 1, {"weight": 0})])  # a tight self-loop
    with pytest.raises(NotImplementedError):
        nx.single_source_bellman_ford_path(loop, 0, backend="gunpy")
    for f, args in ((nx.single_source_bellman_ford_path_length, (g, "nope")),
                    (nx.bellman_ford_path_length, (g, "nope", 0)),
                    (nx.bellman_ford_path, (g, 0, "nope")),
                    (nx.bellman_ford_predecessor_and_distance, (g, "nope"))):
        same(outcome(f, *args, backend="gunpy"), outcome(f, *args))
    # 0.1 + 0.2 rounds; networkx's queue may then stop short of the fixpoint: here it never
    # reaches t (p's better distance rounds u's to the same sum, so u is not requeued)
    a = nx.DiGraph()
    a.add_weighted_edges_from([("s", "p", 0.7500000000000001), ("s", "x", 0.5), ("x", "p", 0.25),
                               ("p", "u", 1.0), ("u", "t", 1.0)])
    assert "t" not in nx.single_source_bellman_ford_path_length(a, "s")
    for h in (a, nx.Graph([(0, 1, {"weight": 0.1}), (1, 2, {"weight": 0.2})])):
        assert "may round" in can_run("single_source_bellman_ford_path_length", (h, 0), {})
    assert "negative" in can_run("bellman_ford_path", (nx.DiGraph([(0, 1, {"weight": -1})]),
                                                       0, 1), {})
    assert "weight functions" in can_run("bellman_ford_path_length", (g, 0, 2),
                                         {"weight": lambda u, v, d: 1})
    assert can_run("average_shortest_path_length", (g,), {"weight": "weight",
                                                          "method": "bellman-ford"}) is True
