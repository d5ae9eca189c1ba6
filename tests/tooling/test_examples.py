"""The example primitives in examples/, against networkx, on every backend the mode tests."""

import os
import sys

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.testing import nasty_graphs, to_nx

from _helpers import ROOT

sys.path.insert(0, str(ROOT / "examples"))
import luby_mis  # noqa: E402
import min_reachable  # noqa: E402
import multi_source_bfs  # noqa: E402

GRAPHS = nasty_graphs()
NAMES = ["path_undirected", "star_hub", "random_directed", "disconnected", "preferential_hubs"]


@pytest.mark.parametrize("name", NAMES)
def test_luby_mis_is_independent_and_maximal(name, backend):
    G = GRAPHS[name]
    if G.directed:
        G = gunpy.Graph.from_scipy(G.to_scipy() + G.to_scipy().T, directed=False)
    chosen = set(np.flatnonzero(luby_mis.mis(G, backend=backend).in_set).tolist())
    g = nx.Graph(to_nx(G))
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    assert all(not (u in chosen and v in chosen) for u, v in g.edges)
    assert all(v in chosen or any(u in chosen for u in g[v]) for v in g)


@pytest.mark.parametrize("name", NAMES)
def test_multi_source_bfs_matches_networkx(name, backend):
    G = GRAPHS[name]
    sources = [0, G.num_vertices - 1, G.num_vertices // 2]
    r = multi_source_bfs.multi_source_bfs(G, sources, backend=backend)
    g = to_nx(G)
    expect = nx.multi_source_dijkstra_path_length(g, set(sources), weight=lambda u, v, d: 1)
    assert r.to_dict() == expect
    for v, s in enumerate(r.nearest):
        if s >= 0:  # the source it names is at the distance it reports
            assert nx.shortest_path_length(g, int(s), v) == r.depth[v]


@pytest.mark.parametrize("name", NAMES)
def test_min_reachable_matches_networkx(name, backend):
    G = GRAPHS[name]
    g = to_nx(G)
    r = min_reachable.min_reachable(G, backend=backend)
    expect = [min(nx.descendants(g, v) | {v}) for v in range(G.num_vertices)]
    assert r.label.tolist() == expect


def test_the_examples_docstrings_run():
    import doctest
    for mod in (luby_mis, multi_source_bfs, min_reachable):
        result = doctest.testmod(mod)
        assert result.attempted > 0 and result.failed == 0, mod.__name__
