"""Graph500 Kronecker generator and the grid / path / star generators."""

import numpy as np
import pytest
import scipy.sparse.csgraph as csg

from gunpy import generators


def test_rmat_is_seeded_and_sized():
    a = generators.rmat(10, seed=3)
    b = generators.rmat(10, seed=3)
    c = generators.rmat(10, seed=4)
    assert a.num_vertices == 1024 and not a.directed
    assert np.array_equal(a.column_indices, b.column_indices)
    assert not np.array_equal(a.column_indices, c.column_indices)
    # at most edge_factor * n undirected pairs survive dedup and self-loop removal
    assert 0.5 * 16 * 1024 < a.num_edges // 2 <= 16 * 1024


def test_rmat_degree_skew_and_symmetry():
    G = generators.rmat(12, seed=1)
    deg = G.out_degrees()
    assert deg.max() > 20 * deg.mean()          # scale-free: hubs
    assert (deg == 0).sum() > 0.1 * G.num_vertices   # and many isolated vertices
    A = G.to_scipy()
    assert (A != A.T).nnz == 0


def test_kronecker_edges_follow_the_initiator():
    src, dst = generators.kronecker_edges(14, permute=False, seed=2)
    top = 13
    i, j = (src >> top) & 1, (dst >> top) & 1
    freq = [np.mean((i == a) & (j == b)) for a, b in [(0, 0), (0, 1), (1, 0), (1, 1)]]
    np.testing.assert_allclose(freq, [0.57, 0.19, 0.19, 0.05], atol=0.01)
    assert src.shape[0] == 16 * 2 ** 14


def test_rmat_weights():
    G = generators.rmat(8, weighted=True, seed=0)
    assert G.weighted and (G.values >= 0).all() and (G.values < 1).all()
    H = generators.rmat(8, weight_range=(1, 64), seed=0)
    assert H.values.min() >= 1 and H.values.max() <= 64
    assert np.array_equal(H.values, np.round(H.values))
    A = H.to_scipy()
    assert (A != A.T).nnz == 0  # an undirected edge has one weight both ways


@pytest.mark.parametrize("kw", [{"scale": 0}, {"scale": 41}, {"scale": 2.5},
                                {"scale": 4, "edge_factor": 0}, {"scale": 4, "a": 1.2},
                                {"scale": 4, "a": 0.6, "b": 0.3, "c": 0.3}])
def test_rmat_validates(kw):
    with pytest.raises(ValueError):
        generators.rmat(**kw)


def test_grid_counts_and_diameter():
    G = generators.grid_2d(7, 9)
    assert G.num_vertices == 63
    assert G.num_edges // 2 == 7 * 8 + 6 * 9
    d = csg.shortest_path(G.to_scipy(), unweighted=True, indices=0)
    assert d.max() == 7 + 9 - 2
    H = generators.grid_2d(30, 30, drop=0.2, seed=1)
    assert H.num_edges < G.num_edges * 30 * 30 / 63


def test_path_and_star():
    assert generators.path(5).num_edges == 8
    S = generators.star(300)
    assert S.out_degrees()[0] == 300 and S.num_vertices == 301
