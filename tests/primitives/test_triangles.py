"""Triangle counting (gunpy.triangles / gunpy.triangle_count) against networkx.

networkx is the oracle: ``nx.triangles`` per vertex on the undirected graph
(a directed graph's edges taken both ways, self-loops ignored), and the total
``sum(...) // 3``. The graphs are small and nasty: complete graphs, a wheel
whose hub is in more triangles than a CTA has threads, stars, paths,
disconnected pieces with isolated vertices, self-loops, reciprocal directed
edges, RMAT graphs and bundled datasets (the bigger ones marked ``large``).
Also: networkx dispatching ``triangles`` and ``transitivity`` to gunpy.
"""

import re

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.primitives import triangles as triangles_module
from gunpy.primitives.triangles import orient
from gunpy.testing import ON_CUDASIM, nasty_graphs, to_nx
from doc_examples import check_docstring_examples, run_user_guide_section


def reference(G):
    """nx.triangles on G's undirected simple view, as an int64 array."""
    g = to_nx(G)
    if g.is_directed():
        g = g.to_undirected()
    tri = nx.triangles(g)
    return np.array([tri[v] for v in range(G.num_vertices)], dtype=np.int64)


def wheel(rim):
    """A hub joined to every vertex of a cycle: the hub is in ``rim`` triangles."""
    g = nx.wheel_graph(rim + 1)
    return gunpy.Graph.from_networkx(g)


def _graphs():
    small = ON_CUDASIM
    out = {f"complete_{k}": gunpy.Graph.from_networkx(nx.complete_graph(k)) for k in (3, 4, 7)}
    out["wheel_hub_300"] = wheel(300)  # > 256 triangles at one vertex
    out["star_300"] = gunpy.generators.star(300)
    out["path"] = gunpy.generators.path(30)
    # a triangle with a pendant, a K4, a lone triangle, isolated vertices in between
    s = [0, 1, 2, 1, 5, 5, 5, 6, 6, 7, 10, 11, 12]
    d = [1, 2, 0, 3, 6, 7, 8, 7, 8, 8, 11, 12, 10]
    out["pieces_and_isolated"] = gunpy.Graph.from_edges(s, d, num_vertices=16, directed=False)
    s3 = np.array(s + [2, 9, 3])
    d3 = np.array(d + [3, 9, 3])  # one more triangle (1, 2, 3), and two self-loops
    out["self_loops_kept"] = gunpy.Graph.from_edges(s3, d3, num_vertices=16, directed=False,
                                                    remove_self_loops=False)
    # directed: a 3-cycle, a transitive triple, reciprocal pairs, a self-loop
    out["directed_mixed"] = gunpy.Graph.from_edges(
        [0, 1, 2, 3, 3, 4, 5, 6, 5, 7, 7], [1, 2, 0, 4, 5, 5, 6, 5, 7, 5, 7], num_vertices=9,
        directed=True, remove_self_loops=False)
    out["karate"] = gunpy.Graph.from_networkx(nx.karate_club_graph())
    out["rmat_6"] = gunpy.generators.rmat(6)
    out["rmat_6_directed_view"] = gunpy.Graph.from_edges(
        *_half(gunpy.generators.rmat(6, seed=3)), directed=True)
    out["barbell_cliques"] = gunpy.Graph.from_networkx(nx.barbell_graph(9, 4))
    for name, G in nasty_graphs().items():
        out["nasty_" + name] = G
    if not small:
        out["rmat_10"] = gunpy.generators.rmat(10)
        out["complete_40"] = gunpy.Graph.from_networkx(nx.complete_graph(40))
    return out


def _half(G):
    """One direction of each undirected edge of G (src < dst): a directed graph."""
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    keep = src < G.column_indices
    return src[keep], G.column_indices[keep]


GRAPHS = _graphs()


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_per_vertex_counts_equal_networkx(name, backend, cpu_split):
    G = GRAPHS[name]
    expect = reference(G)
    r = gunpy.triangles(G, backend=backend)
    assert r.triangles.dtype == np.int64
    assert r.triangles.tolist() == expect.tolist()
    assert r.count == int(expect.sum()) // 3
    assert gunpy.triangle_count(G, backend=backend) == r.count


IN_PLACE = [name for name in sorted(GRAPHS) if triangles_module.in_place(GRAPHS[name])]


@pytest.mark.parametrize("name", IN_PLACE)
def test_graphs_read_in_place_count_the_same_through_an_oriented_copy(name, backend,
                                                                      monkeypatch):
    """The graphs counted in place, by id, counted again through orient(): both equal
    networkx (the other graphs only have the oriented way)."""
    G = GRAPHS[name]
    expect = reference(G).tolist()
    r = gunpy.triangles(G, backend=backend)
    assert r.stats.extra["ordering"] == "id, in place" and "oriented_edges" not in r.stats.extra
    monkeypatch.setattr(triangles_module, "in_place", lambda G: False)
    o = gunpy.triangles(G, backend=backend)
    assert o.stats.extra["ordering"] == "oriented"
    assert r.triangles.tolist() == o.triangles.tolist() == expect


def test_which_graphs_are_read_in_place():
    """In place: undirected, rows strictly increasing, degrees not skewed (GAP's rule)."""
    assert len(IN_PLACE) >= 10 and "karate" in IN_PLACE and "self_loops_kept" in IN_PLACE
    assert "directed_mixed" not in IN_PLACE
    rmat = gunpy.generators.rmat(12)  # a few hubs, 16 edges a vertex
    assert triangles_module.skewed(rmat.row_offsets) and not triangles_module.in_place(rmat)
    twice = gunpy.Graph(np.array([0, 3, 5, 7]), np.array([1, 1, 2, 0, 2, 0, 1]),
                        directed=False)  # 0-1 stored twice in row 0: counted through orient
    assert not triangles_module.in_place(twice)
    assert gunpy.triangles(twice, backend="cpu").triangles.tolist() == [1, 1, 1]


def test_known_totals(backend):
    assert gunpy.triangle_count(GRAPHS["complete_7"], backend=backend) == 35
    assert gunpy.triangle_count(GRAPHS["wheel_hub_300"], backend=backend) == 300
    assert gunpy.triangles(GRAPHS["wheel_hub_300"], backend=backend).triangles[0] == 300
    assert gunpy.triangle_count(GRAPHS["star_300"], backend=backend) == 0
    assert gunpy.triangle_count(GRAPHS["path"], backend=backend) == 0
    assert gunpy.triangle_count(GRAPHS["pieces_and_isolated"], backend=backend) == 1 + 4 + 1
    assert gunpy.triangle_count(GRAPHS["self_loops_kept"], backend=backend) == 7
    # 0->1->2->0, 3->4->5 with 3->5, 5<->7 and 5<->6 without a third edge
    assert gunpy.triangle_count(GRAPHS["directed_mixed"], backend=backend) == 2
    assert gunpy.triangle_count(GRAPHS["karate"], backend=backend) == 45


def test_a_directed_graph_counts_as_its_undirected_view(backend):
    U = gunpy.generators.rmat(6, seed=3)
    D = GRAPHS["rmat_6_directed_view"]
    assert D.directed and D.num_edges * 2 == U.num_edges
    assert gunpy.triangles(D, backend=backend).triangles.tolist() == \
        gunpy.triangles(U, backend=backend).triangles.tolist() == reference(U).tolist()


def test_empty_and_edgeless_graphs(backend):
    E = gunpy.Graph.from_edges([], [], num_vertices=0)
    r = gunpy.triangles(E, backend=backend)
    assert r.count == 0 and r.triangles.shape == (0,) and r.to_dict() == {}
    assert gunpy.triangle_count(E, backend=backend) == 0
    iso = gunpy.Graph.from_edges([], [], num_vertices=5, directed=False)
    r = gunpy.triangles(iso, backend=backend)
    assert r.triangles.tolist() == [0] * 5 and r.count == 0
    loops = gunpy.Graph.from_edges([0, 1], [0, 1], directed=False, remove_self_loops=False)
    assert gunpy.triangle_count(loops, backend=backend) == 0


def test_result_dict_stats_and_labels(backend):
    g = nx.les_miserables_graph()
    G = gunpy.Graph.from_networkx(g)
    r = gunpy.triangles(G, backend=backend)
    assert r.to_dict() == nx.triangles(g)
    s = r.stats
    assert s.iterations == 1 and s.backend == ("cpu" if backend == "cpu" else "cuda")
    assert s.edges_visited > 0 and s.elapsed_ms > 0
    assert s.extra["triangles"] == r.count == sum(nx.triangles(g).values()) // 3
    assert s.extra["ordering"] == "id, in place"  # few edges a vertex: GAP's rule
    D = gunpy.Graph.from_networkx(g.to_directed())
    assert 0 < gunpy.triangles(D, backend=backend).stats.extra["oriented_edges"] == \
        G.num_edges // 2
    assert s.per_iteration[0]["strategy"] == "intersect"


def test_to_dataframe_uses_cugraphs_column_names():
    pd = pytest.importorskip("pandas")
    G = GRAPHS["complete_4"]
    df = gunpy.triangles(G, backend="cpu").to_dataframe()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["vertex", "counts"] and df["counts"].tolist() == [3] * 4


def test_orientation_is_kept_per_graph_and_dropped_with_its_arrays():
    G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=False)
    O = orient(G)
    assert orient(G) is O and O.num_edges == 3 and O.directed
    # every edge goes from lower to higher (degree, id): no vertex reaches itself again
    assert nx.is_directed_acyclic_graph(to_nx(O))
    G.column_indices = [1, 2, 0, 2, 0, 1]  # same structure, a new array: rebuilt
    assert orient(G) is not O
    assert gunpy.triangle_count(G, backend="cpu") == 1


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("loops", [False, True])
@pytest.mark.parametrize("by_degree", [True, False])
def test_orientation_equals_the_order_of_the_raw_edges(seed, loops, by_degree):
    """Each edge once, from the lower (stored degree, id) end, or the lower id, rows
    sorted; the oracle reads the raw edge list (a kept self-loop is stored once and
    counts once in a degree)."""
    from gunpy._csr import orient as orient_csr
    rng = np.random.default_rng(seed)
    n = 300
    src, dst = rng.integers(0, n, 3000), rng.integers(0, n, 3000)
    src[:50] = 7  # a hub
    G = gunpy.Graph.from_edges(src, dst, num_vertices=n, directed=False,
                               remove_self_loops=not loops)
    pairs = {(min(a, b), max(a, b)) for a, b in zip(src.tolist(), dst.tolist())}
    degree = np.zeros(n, dtype=np.int64)
    for a, b in pairs:
        if a != b or loops:
            degree[a] += 1
            degree[b] += 1 if a != b else 0
    key = (lambda v: (degree[v], v)) if by_degree else (lambda v: v)
    want = sorted((a, b) if key(a) < key(b) else (b, a) for a, b in pairs if a != b)
    offsets, cols = orient_csr(G.row_offsets, G.column_indices, by_degree=by_degree)
    rows = np.repeat(np.arange(n), np.diff(offsets))
    assert sorted(zip(rows.tolist(), cols.tolist())) == want
    assert all(np.all(np.diff(cols[offsets[v]:offsets[v + 1]]) > 0) for v in range(n))


def test_hubs_order_by_degree_even_degrees_by_id():
    """GAP's rule: by degree only with 10+ edges a vertex and a sample mean over 1.3x
    the median; both orders give networkx's counts."""
    from gunpy.primitives.triangles import skewed
    rmat = gunpy.generators.rmat(10, edge_factor=16, seed=1)
    grid = gunpy.generators.grid_2d(30, 30)
    dense_even = gunpy.Graph.from_networkx(nx.random_regular_graph(24, 200, seed=1))
    assert skewed(rmat.row_offsets) and not skewed(grid.row_offsets)
    assert not skewed(dense_even.row_offsets)  # many edges, no hubs
    for G in (rmat, grid, dense_even):
        O = orient(G)
        want = sum(nx.triangles(to_nx(G)).values()) // 3
        assert O.num_edges == G.num_edges // 2 and gunpy.triangle_count(G, backend="cpu") == want


def test_unsorted_or_repeated_rows_built_by_hand_are_handled():
    # undirected CSR built directly, rows out of order and a repeated column
    G = gunpy.Graph([0, 3, 5, 8, 9], [2, 1, 1, 2, 0, 1, 0, 3, 2], directed=False)
    assert gunpy.triangles(G, backend="cpu").triangles.tolist() == [1, 1, 1, 0]


def test_bad_input():
    with pytest.raises(TypeError, match="expected a gunpy.Graph"):
        gunpy.triangle_count(nx.complete_graph(3))
    with pytest.raises(TypeError, match="expected a gunpy.Graph"):
        gunpy.triangles(GRAPHS["complete_3"].to_scipy())
    with pytest.raises(ValueError, match="backend"):
        gunpy.triangle_count(GRAPHS["complete_3"], backend="tpu")
    with pytest.raises(TypeError):
        gunpy.triangles(GRAPHS["complete_3"], "cpu")  # backend is keyword-only


SMALL_DATASETS = ["karate", "dolphins", "chesapeake"]
LARGE_DATASETS = ["netscience", "email-Eu-core", "CA-GrQc", "facebook", "Wiki-Vote"]


@pytest.mark.parametrize("name", SMALL_DATASETS)
def test_small_datasets(name, backend):
    G = gunpy.datasets.load(name)
    expect = reference(G)
    r = gunpy.triangles(G, backend=backend)
    assert r.triangles.tolist() == expect.tolist() and r.count == expect.sum() // 3 > 0


@pytest.mark.large
@pytest.mark.parametrize("name", LARGE_DATASETS)
def test_bigger_datasets(name, backend):
    G = gunpy.datasets.load(name)
    expect = reference(G)
    r = gunpy.triangles(G, backend=backend)
    assert np.array_equal(r.triangles, expect) and r.count == expect.sum() // 3 > 0
    assert gunpy.triangle_count(G, backend=backend) == r.count


@pytest.mark.large
@pytest.mark.parametrize("scale", [12, 14])
def test_rmat(scale, backend):
    G = gunpy.generators.rmat(scale, seed=scale)
    expect = reference(G)
    r = gunpy.triangles(G, backend=backend)
    assert np.array_equal(r.triangles, expect)
    assert gunpy.triangle_count(G, backend=backend) == expect.sum() // 3


# -- networkx dispatching to gunpy ---------------------------------------------------------
def nx_graphs():
    parts = nx.disjoint_union(nx.complete_graph(5), nx.wheel_graph(40))
    parts.add_nodes_from(["iso-a", "iso-b"])
    parts.add_edge(3, 3)
    labelled = nx.relabel_nodes(nx.les_miserables_graph(), lambda v: f"<{v}>")
    d = nx.gnp_random_graph(50, 0.12, directed=True, seed=3)
    d.add_edges_from([(5, 5), (1, 2), (2, 1)])
    return {"karate": nx.karate_club_graph(), "parts": parts, "labelled": labelled,
            "empty": nx.Graph(), "edgeless": nx.empty_graph(4), "path": nx.path_graph(6),
            "directed": d, "directed_empty": nx.DiGraph()}


NX_GRAPHS = nx_graphs()


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(NX_GRAPHS))
def test_networkx_dispatch_equals_networkx(name):
    g = NX_GRAPHS[name]
    a, b = nx.transitivity(g, backend="gunpy"), nx.transitivity(g)
    assert a == b and type(a) is type(b)
    if g.is_directed():
        with pytest.raises(nx.NetworkXNotImplemented):
            nx.triangles(g, backend="gunpy")
        return
    got = nx.triangles(g, backend="gunpy")
    assert list(got.items()) == list(nx.triangles(g).items())  # same order too
    nodes = list(g)[:3]
    for v in nodes:
        assert nx.triangles(g, v, backend="gunpy") == nx.triangles(g, v)
    assert nx.triangles(g, nodes + ["missing"], backend="gunpy") == nx.triangles(g, nodes)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_networkx_dispatch_errors_match_networkx():
    m = nx.MultiGraph(nx.karate_club_graph())
    m.add_edge(0, 1)
    assert nx.triangles(m, backend="gunpy") == nx.triangles(m)
    for call in (lambda b: nx.triangles(m, 0, backend=b), lambda b: nx.transitivity(m, backend=b),
                 lambda b: nx.triangles(nx.path_graph(3), 7, backend=b)):
        with pytest.raises(nx.NetworkXException) as ours:
            call("gunpy")
        with pytest.raises(nx.NetworkXException) as theirs:
            call(None)
        assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)
    assert nx.transitivity(nx.complete_graph(6), backend="gunpy") == 1.0


# -- documentation ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gunpy.primitives.triangles", "gunpy.operators.intersect"])
def test_docstring_examples(name):
    check_docstring_examples(name)


def test_user_guide_triangle_section_runs():
    section = run_user_guide_section("## Triangle counting", 4)
    assert re.search(r"gunpy\.triangle_count\(", section)
