"""Local clustering coefficient (gunpy.lcc) against LDBC's validation data and networkx.

The oracles: LDBC Graphalytics' own test graphs and expected outputs (bundled in
tests/data/ldbc with their source; LDBC's rule ``|r - s| <= 1e-4 |r|``), networkx's
``clustering`` and ``average_clustering`` on undirected graphs, and on directed ones a
brute-force reference written from LDBC's definition here: ``N(v)`` ignores direction
and counts each neighbour once, edges between neighbours keep theirs.
"""

import os

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.testing import nasty_graphs, to_nx
from doc_examples import check_docstring_examples, run_user_guide_section
from _helpers import TESTS

LDBC = str(TESTS / "data" / "ldbc")


def read_adjacency(name, directed):
    """An LDBC adjacency-list file (``v n1 n2 ...``): the graph on ids 0..max (the file's
    ids are kept, so unused ids are isolated vertices) and the ids the file names."""
    src, dst, ids = [], [], set()
    with open(os.path.join(LDBC, name)) as f:
        for line in f:
            if not line.strip():
                continue
            v, *nbrs = (int(x) for x in line.split())
            ids.add(v)
            ids.update(nbrs)
            src += [v] * len(nbrs)
            dst += nbrs
    return gunpy.Graph.from_edges(src, dst, num_vertices=max(ids) + 1, directed=directed), ids


def read_example(name, directed):
    """An LDBC example graph (``.v`` vertex list, ``.e`` edges ``src dst weight``)."""
    ids = [int(x) for x in open(os.path.join(LDBC, name + ".v")).read().split()]
    e = np.loadtxt(os.path.join(LDBC, name + ".e"), ndmin=2)
    G = gunpy.Graph.from_edges(e[:, 0].astype(np.int64), e[:, 1].astype(np.int64),
                               num_vertices=max(ids) + 1, directed=directed)
    return G, set(ids)


def read_output(name, kind=float):
    out = {}
    with open(os.path.join(LDBC, name)) as f:
        for line in f:
            if line.strip():
                v, x = line.split()
                out[int(v)] = kind(x)
    return out


def ldbc_reference(G):
    """LCC by LDBC's definition, in plain Python over the raw edge set."""
    g = to_nx(G)
    out = {v: set() for v in range(G.num_vertices)}
    edges = set()
    for u, w in g.edges():
        if u != w:
            out[u].add(w)
            edges.add((u, w))
            if not g.is_directed():
                edges.add((w, u))
    nbrs = {v: set() for v in range(G.num_vertices)}
    for u, w in edges:
        nbrs[u].add(w)
        nbrs[w].add(u)
    ref = np.zeros(G.num_vertices)
    for v, N in nbrs.items():
        d = len(N)
        if d > 1:
            ref[v] = sum((u, w) in edges for u in N for w in N if u != w) / (d * (d - 1))
    return ref


def assert_ldbc_close(got, expected):
    for v, r in expected.items():
        assert abs(got[v] - r) <= 1e-4 * abs(r) + (0.0 if r else 1e-12), (v, got[v], r)


@pytest.mark.parametrize("directed", [True, False])
def test_ldbc_validation_graphs(backend, directed):
    kind = "dir" if directed else "undir"
    G, ids = read_adjacency(f"lcc-{kind}-input", directed)
    expected = read_output(f"lcc-{kind}-output")
    assert set(expected) == ids
    r = gunpy.lcc(G, backend=backend)
    assert_ldbc_close(r.lcc, expected)
    assert max(expected.values()) > 0 and min(expected.values()) == 0.0


@pytest.mark.parametrize("directed", [True, False])
def test_ldbc_example_graphs(backend, directed):
    name = "example-directed" if directed else "example-undirected"
    G, ids = read_example(name, directed)
    expected = read_output(name + "-LCC")
    assert set(expected) == ids
    assert_ldbc_close(gunpy.lcc(G, backend=backend).lcc, expected)


@pytest.mark.parametrize("name", sorted(nasty_graphs(small=True)))
def test_nasty_graphs_equal_the_definition_and_networkx(backend, cpu_split, small, name):
    G = nasty_graphs(small=small)[name]
    if small and G.directed and name != "self_loops_duplicates":
        # the simulator's time: the directed kernels run in the LDBC and directed tests
        pytest.skip("directed graphs: the LDBC graphs and the directed test, in the simulator")
    r = gunpy.lcc(G, backend=backend)
    assert r.lcc.dtype == np.float64 and r.lcc.shape == (G.num_vertices,)
    np.testing.assert_allclose(r.lcc, ldbc_reference(G), rtol=1e-12, atol=1e-15)
    g = to_nx(G)
    if not g.is_directed():
        c = nx.clustering(g)
        np.testing.assert_allclose(r.lcc, [c[v] for v in range(G.num_vertices)],
                                   rtol=1e-12, atol=1e-15)
        if G.num_vertices:
            assert r.average == pytest.approx(nx.average_clustering(g), rel=1e-12, abs=1e-15)
    if G.num_vertices == 0:
        assert np.isnan(r.average)


def test_dense_and_hub_graphs(backend, cpu_split, small):
    # a wheel's hub (more neighbours than a warp), a clique, and both in one graph
    k = 40 if small else 300
    g = nx.compose(nx.wheel_graph(k + 1), nx.complete_graph(range(k + 1, k + 21)))
    G = gunpy.Graph.from_networkx(g)
    r = gunpy.lcc(G, backend=backend)
    c = nx.clustering(g)
    np.testing.assert_allclose(r.lcc, [c[v] for v in range(G.num_vertices)], rtol=1e-12)
    assert r.lcc[0] == pytest.approx(2 * k / (k * (k - 1)))  # the hub: the rim's k edges
    assert r.lcc[k + 1] == 1.0
    assert r.average == pytest.approx(nx.average_clustering(g), rel=1e-12)


def test_directed_counts_each_direction_and_each_neighbour_once(backend):
    # 0 -> 1 and 1 -> 0 make 1 one neighbour of 0; 1 -> 2 and 2 -> 1 between 0's
    # neighbours are two edges: N(0) = {1, 2}, 2 of 2 ordered pairs. N(1) = {0, 2}: only
    # 0 -> 2. N(2) = {0, 1} (its self-loop ignored): 0 -> 1 and 1 -> 0
    G = gunpy.Graph.from_edges([0, 1, 0, 1, 2, 2], [1, 0, 2, 2, 1, 2], remove_self_loops=False)
    r = gunpy.lcc(G, backend=backend)
    assert r.lcc.tolist() == [1.0, 0.5, 1.0]


@pytest.mark.large
def test_rmat_and_a_dataset_equal_networkx(backend):
    G = gunpy.generators.rmat(12, 8, seed=3, directed=False)
    g = G.to_networkx()
    c = nx.clustering(g)
    r = gunpy.lcc(G, backend=backend)
    np.testing.assert_allclose(r.lcc, [c[v] for v in range(G.num_vertices)], rtol=1e-12)
    assert r.average == pytest.approx(nx.average_clustering(g), rel=1e-12)
    # a directed RMAT graph, against the definition
    D = gunpy.generators.rmat(10, 8, seed=5, directed=True)
    np.testing.assert_allclose(gunpy.lcc(D, backend=backend).lcc, ldbc_reference(D),
                               rtol=1e-12, atol=1e-15)


def test_bad_input_is_a_clear_error():
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.lcc(nx.path_graph(3))
    with pytest.raises(ValueError, match="backend"):
        gunpy.lcc(gunpy.Graph.from_edges([0], [1]), backend="tpu")


def test_registered():
    from gunpy.registry import primitive
    assert primitive("lcc").function is gunpy.lcc


@pytest.mark.ptx
def test_lcc_compiles_to_ptx(ptx_backend):
    G = nasty_graphs(small=True)["preferential_hubs"]
    gunpy.lcc(G, backend=ptx_backend)
    names = " ".join(ptx_backend.kernel_names())
    # the intersections, then neighbor_reduce (a thread or a warp a vertex) with its apply step
    assert "intersect" in names and ("by_thread" in names or "by_warp" in names), names


# -- documentation ------------------------------------------------------------------------
def test_docstring_examples():
    check_docstring_examples("gunpy.primitives.lcc", 5)


def test_user_guide_lcc_section_runs():
    run_user_guide_section("## Local clustering coefficient", 4)
