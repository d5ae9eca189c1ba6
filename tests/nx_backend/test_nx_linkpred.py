"""The networkx backend's link prediction, eigenvector and Katz centrality, VoteRank, ego
graphs, complements and reverses, the assortativity pair and square clustering: networkx's
values, types and order on graphs its own tests miss (self-loops, isolated nodes, string
labels, disconnected and directed graphs); networkx's own tests for them run in
tests/nx_backend/test_nx_backend.py."""

import math

import networkx as nx
import pytest

from gunpy.nx_backend import can_run, linkpred

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def graphs():
    u = nx.karate_club_graph()
    u.add_edges_from([(0, 0), (40, 41)])  # a self-loop, and a second component
    u.add_node("iso")
    d = nx.gnp_random_graph(40, 0.08, directed=True, seed=3)
    d.add_edges_from([(5, 5), (0, "tail")])
    labels = nx.relabel_nodes(nx.les_miserables_graph(), lambda s: s.lower())
    labels.add_edge("myriel", "myriel")
    return {"undirected": u, "directed": d, "labels": labels}


GRAPHS = graphs()
UNDIRECTED = ["undirected", "labels"]


def same(a, b, tol=0.0):
    """Equal keys in the same order, values of the same types (floats within ``tol``)."""
    assert list(a) == list(b)
    for k in a:
        assert type(a[k]) is type(b[k]), k
        assert a[k] == b[k] if tol == 0 or not isinstance(a[k], float) else \
            math.isclose(a[k], b[k], rel_tol=tol, abs_tol=tol), k


def outcome(f, *args, **kwargs):
    try:
        result = f(*args, **kwargs)
        return list(result) if not isinstance(result, dict | list | float | int) else result
    except Exception as e:  # noqa: BLE001 (compared by type)
        return type(e)


PREDICTORS = ["jaccard_coefficient", "resource_allocation_index", "adamic_adar_index",
              "preferential_attachment", "common_neighbor_centrality"]


@pytest.mark.parametrize("name", UNDIRECTED)
@pytest.mark.parametrize("f", PREDICTORS)
def test_link_prediction(f, name, monkeypatch):
    monkeypatch.setattr(linkpred, "CHUNK", 97)  # several chunks: the generator's seams
    g, f = GRAPHS[name], getattr(nx, f)
    nodes = list(g)
    ebunch = [(nodes[1], nodes[2]), (nodes[2], nodes[1]), (nodes[0], nodes[-1]),
              (nodes[1], nodes[2]), (nodes[0], nodes[3])]
    for args in ((), (ebunch,), (iter(ebunch),)):
        got, want = list(f(g, *args, backend="gunpy")), list(f(g, *args))
        assert [p[:2] for p in got] == [p[:2] for p in want]
        assert [type(p[2]) for p in got] == [type(p[2]) for p in want]
        assert all(math.isclose(a[2], b[2], rel_tol=1e-12) for a, b in zip(got, want))
    for bad in ([(nodes[0], "nowhere")], [(nodes[0], nodes[0])]):
        assert outcome(f, g, bad, backend="gunpy") == outcome(f, g, bad)
    with pytest.raises(nx.NetworkXNotImplemented):
        f(GRAPHS["directed"], backend="gunpy")


def test_link_prediction_exceptions_come_where_networkx_s_do():
    g = nx.path_graph(3)  # node 0's neighbour 1 has degree 2; node 2's degree 1 ...
    g.add_edge(3, 2)
    pairs = [(0, 3), (1, 1), (0, 2)]  # ... so (1, 1) meets 1 / log(1)
    got = nx.adamic_adar_index(g, pairs, backend="gunpy")
    assert next(got) == next(nx.adamic_adar_index(g, pairs))
    with pytest.raises(ZeroDivisionError):
        next(got)
    got = nx.common_neighbor_centrality(g, pairs, backend="gunpy")
    assert next(got) == next(nx.common_neighbor_centrality(g, pairs))
    with pytest.raises(nx.NetworkXAlgorithmError):
        next(got)
    assert list(nx.common_neighbor_centrality(g, [(0, 3)], alpha=1, backend="gunpy")) == \
        [(0, 3, 0)]


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_eigenvector_and_katz_centrality(name):
    g = GRAPHS[name].copy()
    for i, (u, v) in enumerate(g.edges):
        g[u][v]["w"] = 1 + i % 3
    start = {v: 1 + i % 2 for i, v in enumerate(reversed(list(g)))}
    for kw in ({}, {"weight": "w"}, {"nstart": start}):
        for f, extra in ((nx.eigenvector_centrality, {"max_iter": 1000}),
                         (nx.katz_centrality, {"alpha": 0.05})):
            got, want = outcome(f, g, **kw, **extra, backend="gunpy"), outcome(f, g, **kw, **extra)
            if isinstance(want, dict):
                same(got, want, 1e-9)
            else:
                assert got is want
    beta = {v: 0.5 + i % 3 for i, v in enumerate(g)}
    for kw in ({"beta": beta}, {"normalized": False}):
        same(nx.katz_centrality(g, 0.05, **kw, backend="gunpy"), nx.katz_centrality(g, 0.05, **kw),
             1e-9)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.eigenvector_centrality(g, max_iter=2, backend="gunpy")
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.katz_centrality(g, alpha=0.9, max_iter=20, backend="gunpy")
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.eigenvector_centrality(nx.Graph(), backend="gunpy")
    with pytest.raises(nx.NetworkXError):
        nx.katz_centrality(g, beta={0: 1}, backend="gunpy")
    assert "every node" in can_run("eigenvector_centrality", (g,), {"nstart": {0: 1}})


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_voterank_and_square_clustering(name):
    g = GRAPHS[name]
    for k in (None, 3, 0):
        assert nx.voterank(g, k, backend="gunpy") == nx.voterank(g, k)
    ties = nx.cycle_graph(7)  # every vote equal in the first round
    assert nx.voterank(ties, backend="gunpy") == nx.voterank(ties)
    if not g.is_directed():
        same(nx.square_clustering(g, backend="gunpy"), nx.square_clustering(g))
        some = list(g)[:6] + ["nowhere"]
        same(nx.square_clustering(g, some, backend="gunpy"), nx.square_clustering(g, some))
        v = list(g)[2]
        assert nx.square_clustering(g, v, backend="gunpy") == nx.square_clustering(g, v)


def _graph_state(h):
    return (type(h), list(h.nodes(data=True)), list(h.edges(data=True)), h.graph,
            [list(nbrs) for nbrs in h.adj.values()])


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_ego_graph_complement_reverse(name):
    g = GRAPHS[name].copy()
    g.graph["name"] = "g"
    for i, (u, v) in enumerate(g.edges):
        g[u][v]["d"] = 1 + i % 4
    center = list(g)[1]
    for kw in ({}, {"radius": 2, "center": False}, {"radius": 1.5, "undirected": True},
               {"radius": 3, "distance": "d"}, {"radius": None}, {"radius": -1}):
        assert _graph_state(nx.ego_graph(g, center, **kw, backend="gunpy")) == \
            _graph_state(nx.ego_graph(g, center, **kw))
    with pytest.raises(nx.NodeNotFound):
        nx.ego_graph(g, "nowhere", backend="gunpy")
    assert _graph_state(nx.complement(g, backend="gunpy")) == _graph_state(nx.complement(g))
    if g.is_directed():
        assert _graph_state(nx.reverse(g, backend="gunpy")) == _graph_state(nx.reverse(g))
        assert "copy=False" in can_run("reverse", (g,), {"copy": False})
    else:
        with pytest.raises(nx.NetworkXError):
            nx.reverse(g, backend="gunpy")
    assert "multigraphs" in can_run("complement", (nx.MultiGraph(g),), {})
    assert "undirected=True" in can_run("ego_graph", (g, center),
                                        {"distance": "d", "undirected": True})


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_average_neighbor_degree_and_degree_connectivity(name):
    g = GRAPHS[name].copy()
    for i, (u, v) in enumerate(g.edges):
        g[u][v]["w"] = 1 + i % 3
    ends = ("in", "out", "in+out") if g.is_directed() else (None,)
    for source in ends:
        for target in ends:
            st = {} if source is None else {"source": source, "target": target}
            for kw in ({}, {"weight": "w"}, {"nodes": list(g)[:5][::-1]}):
                same(nx.average_neighbor_degree(g, **st, **kw, backend="gunpy"),
                     nx.average_neighbor_degree(g, **st, **kw), 1e-12)
                same(nx.average_degree_connectivity(g, **st, **kw, backend="gunpy"),
                     nx.average_degree_connectivity(g, **st, **kw))
    with pytest.raises(nx.NetworkXError):
        nx.average_neighbor_degree(g, source="sideways", backend="gunpy")
    g = g.copy()  # a new graph: networkx's cache keeps what was read of the old one's weights
    u, v = next(iter(g.edges))
    g[u][v]["w"] = 0.5
    assert "non-integer" in can_run("average_degree_connectivity", (g,), {"weight": "w"})
    assert can_run("average_neighbor_degree", (g,), {"weight": "w"}) is True
    assert "single node" in can_run("average_neighbor_degree", (g,), {"nodes": list(g)[0]})
