"""k-core decomposition (gunpy.kcore) against networkx's core_number.

networkx refuses self-loops and multigraphs; its oracle runs on the simple graph
(self-loops dropped), which is what gunpy peels (self-loops ignored). On a directed
graph both count a vertex's in- plus out-degree.
"""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.testing import graph_names, nasty_graphs
from gunpy.testing.oracles import to_nx
from _helpers import assert_compiled, ptx_set_up
from doc_examples import check_docstring_examples, run_user_guide_section


def reference(G):
    """networkx's core numbers of ``G`` without its self-loops, as an array."""
    g = to_nx(G)
    g = nx.DiGraph(g) if G.directed else nx.Graph(g)
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    core = nx.core_number(g)
    return np.array([core[v] for v in range(G.num_vertices)], dtype=np.int64)


@pytest.mark.parametrize("name", graph_names(nasty_graphs(small=True)))
def test_nasty_graphs_equal_networkx(backend, cpu_split, small, name):
    G = nasty_graphs(small=small)[name]
    r = gunpy.kcore(G, backend=backend)
    expected = reference(G)
    np.testing.assert_array_equal(r.core, expected)
    assert r.core.dtype == np.int32
    assert r.max_core == (int(expected.max()) if expected.size else 0)
    assert r.stats.extra["levels"] == np.unique(expected).size


def test_networkx_examples_directed_and_self_loops(backend):
    # networkx's docstring: havel_hakimi_graph([0, 1, 2, 2, 2, 2, 3]), and its directed one
    H = nx.havel_hakimi_graph([0, 1, 2, 2, 2, 2, 3])
    r = gunpy.kcore(gunpy.Graph.from_networkx(H), backend=backend)
    assert r.to_dict() == nx.core_number(H) == {0: 1, 1: 2, 2: 2, 3: 2, 4: 1, 5: 2, 6: 0}
    D = nx.DiGraph([(1, 2), (2, 1), (2, 3), (2, 4), (3, 4), (4, 3)])
    assert gunpy.kcore(gunpy.Graph.from_networkx(D), backend=backend).to_dict() == \
        {1: 2, 2: 2, 3: 2, 4: 2}
    # kept self-loops are ignored: a triangle with a loop on each corner is still a 2-core
    G = gunpy.Graph.from_edges([0, 1, 2, 0, 1, 2], [1, 2, 0, 0, 1, 2], directed=False,
                               remove_self_loops=False)
    assert gunpy.kcore(G, backend=backend).core.tolist() == [2, 2, 2]
    # repeated edges kept count: 0 and 1 joined twice are a 2-core, 2 hangs on by one
    G = gunpy.Graph.from_edges([0, 0, 1], [1, 1, 2], directed=False, remove_duplicates=False)
    assert gunpy.kcore(G, backend=backend).core.tolist() == [2, 2, 1]


def test_peeling_takes_rounds_within_a_level(backend):
    # a 5-clique with a path of 6 hanging off it: the path peels from its far end, one
    # vertex a round, all at level 1; then the clique goes at level 4
    g = nx.complete_graph(5)
    nx.add_path(g, [4, 5, 6, 7, 8, 9, 10])
    r = gunpy.kcore(gunpy.Graph.from_networkx(g), backend=backend)
    assert r.core.tolist() == [4] * 5 + [1] * 6
    assert r.stats.extra["levels"] == 2
    sizes = [it["frontier"] for it in r.stats.per_iteration]
    assert sizes.count(1) >= 6  # one vertex of the path a round


@pytest.mark.large
@pytest.mark.parametrize("name", ["karate", "dolphins", "netscience", "email-Eu-core",
                                  "Wiki-Vote", "luxembourg_osm"])
def test_bundled_datasets_equal_networkx(backend, name):
    G = gunpy.datasets.load(name)
    np.testing.assert_array_equal(gunpy.kcore(G, backend=backend).core, reference(G))


@pytest.mark.large
@pytest.mark.parametrize("directed", [False, True])
def test_rmat_equals_networkx(backend, directed):
    G = gunpy.generators.rmat(11, 8, seed=5, directed=directed)
    r = gunpy.kcore(G, backend=backend)
    np.testing.assert_array_equal(r.core, reference(G))
    assert r.max_core > 10


def test_rounds_allocate_nothing(backend):
    G = gunpy.generators.grid_2d(5, 5)
    gunpy.kcore(G, backend=backend)
    its = gunpy.kcore(G, backend=backend).stats.per_iteration
    assert len(its) >= 3 and all(it["allocs"] == 0 for it in its)


def test_bad_input():
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.kcore([[0, 1]])
    with pytest.raises(ValueError, match="backend"):
        gunpy.kcore(gunpy.generators.path(3), backend="abacus")


@pytest.mark.ptx
def test_kcore_compiles_to_ptx(ptx_backend):
    from gunpy import operators as ops
    from gunpy.primitives.kcore import Decrement, KCoreProblem, Peel, Remaining, Start
    G, p, ctx, everything = ptx_set_up(KCoreProblem, ptx_backend)
    ops.compute(G, None, Start, p.data(), context=ctx)
    ops.filter(G, everything, Remaining, p.data(), context=ctx)
    ops.filter(G, everything, Peel, p.data(), context=ctx)
    ops.advance(G, everything, Decrement, p.data(), context=ctx)
    assert_compiled(ptx_backend, "compute", "flag", "scatter", "advance")


def test_docstring_examples():
    check_docstring_examples("gunpy.primitives.kcore", 4)


def test_user_guide_kcore_section_runs():
    run_user_guide_section("## k-core decomposition", 3)
