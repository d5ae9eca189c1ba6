"""BFS against networkx depths and Graph500's parent-tree checks."""

import numpy as np
import pytest

import gunpy
from gunpy.testing import check_bfs_tree, nasty_graphs, reference_depths

GRAPHS = nasty_graphs()


def sources(G):
    n = G.num_vertices
    picks = {0, n // 2, n - 1}
    deg = G.out_degrees()
    if n:
        picks.add(int(np.argmax(deg)))  # the hub
    return sorted(picks)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_bfs_matches_networkx(name, backend):
    G = GRAPHS[name]
    for s in sources(G):
        r = gunpy.bfs(G, s, backend=backend)
        check_bfs_tree(G, s, r.depth, r.parent, reference=reference_depths(G, s))
        assert r.depth.dtype == np.int32 and r.parent.dtype == np.int32


def test_bfs_stats(backend):
    G = GRAPHS["path_undirected"]
    r = gunpy.bfs(G, 0, backend=backend, direction="push")
    st = r.stats
    assert st.iterations == G.num_vertices  # one level per vertex, then an empty frontier
    assert st.backend == backend
    # every vertex's out-edges are visited once: 2 per edge of an undirected path
    assert st.edges_visited == G.num_edges
    assert [it["frontier"] for it in st.per_iteration] == [1] * G.num_vertices
    assert r.to_dict() == {v: v for v in range(G.num_vertices)}


def test_bfs_to_dict_leaves_out_unreachable(backend):
    G = GRAPHS["disconnected"]
    d = gunpy.bfs(G, 0, backend=backend).to_dict()
    assert d == {0: 0, 1: 1, 4: 1, 2: 2, 3: 2}


def test_bfs_node_labels_from_networkx(backend):
    import networkx as nx
    g = nx.Graph([("a", "b"), ("b", "c"), ("x", "y")])
    G = gunpy.Graph.from_networkx(g)
    r = gunpy.bfs(G, 0, backend=backend)
    assert r.to_dict() == nx.single_source_shortest_path_length(g, "a")


@pytest.mark.parametrize("bad", [-1, 60, 10**12])
def test_bfs_source_out_of_range(bad, backend):
    with pytest.raises(IndexError, match="out of range"):
        gunpy.bfs(GRAPHS["path_directed"], bad, backend=backend)


def test_bfs_bad_options():
    G = GRAPHS["path_directed"]
    with pytest.raises(ValueError, match="load_balance"):
        gunpy.bfs(G, 0, load_balance="nope", backend="cpu")
    with pytest.raises(ValueError, match="direction"):
        gunpy.bfs(G, 0, direction="sideways", backend="cpu")
    with pytest.raises(ValueError, match="backend"):
        gunpy.bfs(G, 0, backend="tpu")
    with pytest.raises(TypeError, match="source"):
        gunpy.bfs(G, 1.5, backend="cpu")


def test_bfs_repeatable_on_one_graph(backend):
    # device copies of the graph are cached; a second run must start clean
    G = GRAPHS["random_directed"]
    a = gunpy.bfs(G, 3, backend=backend)
    b = gunpy.bfs(G, 3, backend=backend)
    assert np.array_equal(a.depth, b.depth)
    assert G._device.get(gunpy.backends.resolve(backend)) is not None


@pytest.mark.ptx
def test_bfs_compiles_to_ptx(ptx_backend):
    G = GRAPHS["star_hub"]
    gunpy.bfs(G, 0, backend=ptx_backend)
    names = ptx_backend.kernel_names()
    # BFS's filter keeps everything (cond_vertex is the default): it is bypassed
    assert any(n.endswith("advance") for n in names), names
    assert any("tile_sums" in n for n in names), names  # the frontier's edge count
    for (func, types), ptx in ptx_backend.compiled.items():
        assert ".target sm_90" in ptx, func.__qualname__
