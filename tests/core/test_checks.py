"""The validators must catch broken trees: a checker that cannot fail proves nothing."""

import numpy as np
import pytest

import gunpy
from gunpy.testing import check_bfs_tree, check_sssp_tree, reference_depths, reference_distances

# 0-1-2-3 path plus a chord 0-2 and a separate edge 4-5
UND = gunpy.Graph.from_edges([0, 1, 2, 0, 4], [1, 2, 3, 2, 5], num_vertices=7, directed=False)
DEPTH = np.array([0, 1, 1, 2, -1, -1, -1], dtype=np.int32)
PARENT = np.array([0, 0, 0, 2, -1, -1, -1], dtype=np.int32)


def test_a_correct_tree_passes():
    check_bfs_tree(UND, 0, DEPTH, PARENT)
    check_bfs_tree(UND, 0, DEPTH, PARENT, reference=reference_depths(UND, 0))


@pytest.mark.parametrize("change, message", [
    (lambda d, p: p.__setitem__(0, 1), "parent\\[source\\]"),
    (lambda d, p: d.__setitem__(0, 1), "depth\\[source\\]"),
    (lambda d, p: p.__setitem__(3, -1), "disagree"),
    (lambda d, p: p.__setitem__(3, 1), "not in the graph"),      # 1 -> 3: right depths, no edge
    (lambda d, p: (d.__setitem__(3, 3), p.__setitem__(3, 2)), "joins depths"),
    (lambda d, p: (d.__setitem__(2, 2), p.__setitem__(2, 1)), "joins depths"),  # chord 0-2 skips
    (lambda d, p: (d.__setitem__(3, -1), p.__setitem__(3, -1)), "not reached"),
    (lambda d, p: (d.__setitem__(6, 1), p.__setitem__(6, 0)), "not in the graph"),
])
def test_bfs_checker_catches(change, message):
    _assert_caught(check_bfs_tree, UND, DEPTH, PARENT, change, message)


def _assert_caught(check, G, values, parent, change, message):
    """``check`` (a tree checker) fails with ``message`` once ``change`` has spoilt the tree."""
    values, parent = values.copy(), parent.copy()
    change(values, parent)
    with pytest.raises(AssertionError, match=message):
        check(G, 0, values, parent)


def test_bfs_checker_catches_a_wrong_reference_depth():
    ref = reference_depths(UND, 0)
    ref[3] = 5
    with pytest.raises(AssertionError, match="reference at vertex 3"):
        check_bfs_tree(UND, 0, DEPTH, PARENT, reference=ref)


def test_directed_edges_count_one_way():
    G = gunpy.Graph.from_edges([0, 2], [1, 1], num_vertices=3, directed=True)
    check_bfs_tree(G, 0, np.array([0, 1, -1]), np.array([0, 0, -1]))
    with pytest.raises(AssertionError, match="not in the graph"):  # 1 -> 2 does not exist
        check_bfs_tree(G, 0, np.array([0, 1, 2]), np.array([0, 0, 1]))


W = gunpy.Graph.from_edges([0, 0, 1, 3], [1, 2, 2, 4], [4.0, 1.0, 1.0, 0.0], num_vertices=5,
                           directed=True)
DIST = np.array([0.0, 4.0, 1.0, np.inf, np.inf])
WPARENT = np.array([0, 0, 0, -1, -1], dtype=np.int32)


def test_a_correct_sssp_tree_passes():
    check_sssp_tree(W, 0, DIST, WPARENT, reference=reference_distances(W, 0))


@pytest.mark.parametrize("change, message", [
    (lambda d, p: d.__setitem__(1, 3.0), "realise"),
    (lambda d, p: d.__setitem__(2, 3.0), "relax"),
    (lambda d, p: p.__setitem__(1, 2), "not in the graph"),
    (lambda d, p: p.__setitem__(2, -1), "disagree"),
    (lambda d, p: (d.__setitem__(1, 1.0), d.__setitem__(2, 1.0), p.__setitem__(1, 2),
                   p.__setitem__(2, 1)), "cycle"),
])
def test_sssp_checker_catches(change, message):
    _assert_caught(check_sssp_tree, W, DIST, WPARENT, change, message)


def test_sssp_checker_catches_a_zero_weight_cycle_of_parents():
    # 1 <-0-> 2 both at distance 1: parents pointing at each other form a cycle
    G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 1], [1.0, 0.0, 0.0], directed=True)
    check_sssp_tree(G, 0, np.array([0.0, 1.0, 1.0]), np.array([0, 0, 1]))
    with pytest.raises(AssertionError, match="cycle"):
        check_sssp_tree(G, 0, np.array([0.0, 1.0, 1.0]), np.array([0, 2, 1]))


def _serial_first_bad_bfs_edge(rows, cols, depth, directed):
    """The checks' first failure, as a plain serial scan over the CSR would find it."""
    for u in range(len(rows) - 1):
        if depth[u] < 0:
            continue
        for v in cols[rows[u]:rows[u + 1]]:
            if depth[v] < 0:
                return 1, u, v
            if depth[v] > depth[u] + 1 or (not directed and depth[u] > depth[v] + 1):
                return 2, u, v
    return 0, -1, -1


@pytest.mark.parametrize("directed", [True, False])
def test_the_parallel_checks_name_the_first_failure_of_a_serial_scan(directed):
    # many chunks, failures planted in several of them: the first in vertex order is named
    import scipy.sparse as sp
    from gunpy.testing import oracles
    rng = np.random.default_rng(3)
    n, m = 5000, 40000
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    A = sp.csr_array((np.ones(m), (src, dst)), shape=(n, n))
    if not directed:
        A = A + A.T
    A.sum_duplicates()
    A.sort_indices()
    rows, cols = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    G = gunpy.Graph(rows, cols, directed=directed)
    depth = np.full(n, -1, np.int64)  # networkx-free: BFS levels by scipy
    order, pred = sp.csgraph.breadth_first_order(A, 0, directed=directed)
    parent = np.asarray(pred, np.int64)
    parent[0] = 0
    for v in order:
        depth[v] = 0 if v == 0 else depth[parent[v]] + 1
    parent[depth < 0] = -1
    check_bfs_tree(G, 0, depth, parent)
    assert oracles._rows_sorted(rows, cols)
    for planted in ([4321, 77, 2500], [4999], [1, 3000]):
        bad = depth.copy()
        bad[planted] += 2  # each now sits two levels below a neighbour
        want = _serial_first_bad_bfs_edge(rows, cols, bad, directed)
        assert want[0] and oracles._first_bad_bfs_edge(rows, cols, bad, directed) == want
    shuffled = cols.copy()
    u = 3777
    shuffled[rows[u]:rows[u + 1]] = shuffled[rows[u]:rows[u + 1]][::-1]
    assert not oracles._rows_sorted(rows, shuffled)
    assert oracles._first_missing_tree_edge(rows, shuffled, False, parent, 0) == -1
    cut = parent.copy()
    targets = [v for v in range(n) if depth[v] > 1][-3:]
    for v in targets:  # a parent with no edge to v
        cut[v] = next(p for p in range(n) if v not in cols[rows[p]:rows[p + 1]])
    assert oracles._first_missing_tree_edge(rows, cols, True, cut, 0) == targets[0]
