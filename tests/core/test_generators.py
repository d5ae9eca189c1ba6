"""Graph500 Kronecker generator and the grid / path / star generators."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp
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
    # unscrambled, vertex 0 (every level in quadrant a) is the largest hub
    H = generators.rmat(12, seed=1, permute=False)
    assert H.out_degrees().argmax() == 0 and H.out_degrees()[0] == deg.max()


def test_kronecker_edges_follow_the_initiator():
    src, dst = generators.kronecker_edges(14, permute=False, seed=2)
    assert src.dtype == dst.dtype == np.int64 and src.shape[0] == 16 * 2 ** 14
    for bit in (0, 6, 13):  # every level draws its quadrant with the initiator's law
        i, j = (src >> bit) & 1, (dst >> bit) & 1
        freq = [np.mean((i == a) & (j == b)) for a, b in [(0, 0), (0, 1), (1, 0), (1, 1)]]
        np.testing.assert_allclose(freq, [0.57, 0.19, 0.19, 0.05], atol=0.005)
    src, dst = generators.kronecker_edges(14, seed=2, a=0.25, b=0.25, c=0.25)
    assert abs(np.mean(src & 1) - 0.5) < 0.005   # uniform initiator: an Erdos-Renyi graph


def test_scrambled_labels_are_a_bijection_of_the_unscrambled():
    raw = generators.kronecker_edges(10, 4, seed=7, permute=False)
    perm = generators.kronecker_edges(10, 4, seed=7)
    label = {}
    for r, p in zip(np.concatenate(raw).tolist(), np.concatenate(perm).tolist()):
        assert label.setdefault(r, p) == p      # one label per vertex
    assert len(set(label.values())) == len(label)   # never two vertices on one label
    assert max(label.values()) < 2 ** 10
    # the hubs are scattered: the ten largest raw ids do not keep their order
    assert sorted(label)[:10] != sorted(label[v] for v in sorted(label)[:10])


def test_rmat_is_the_graph_of_its_edge_list():
    # oracle: scipy's CSR of the raw tuples and their reverses, loops dropped
    for scale, kw in [(9, {}), (15, {}), (9, {"directed": True}), (9, {"edge_factor": 3})]:
        ef = kw.get("edge_factor", 16)
        src, dst = generators.kronecker_edges(scale, ef, seed=5)
        if not kw.get("directed"):
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        keep = src != dst
        n = 2 ** scale
        A = sp.coo_array((np.ones(keep.sum()), (src[keep], dst[keep])), shape=(n, n)).tocsr()
        A.sum_duplicates()
        G = generators.rmat(scale, seed=5, **kw)
        assert G.directed == bool(kw.get("directed"))
        assert np.array_equal(G.row_offsets, A.indptr)
        assert np.array_equal(G.column_indices, A.indices)


@pytest.mark.parametrize("scale", [8, 15])
def test_rmat_weights(scale):
    G = generators.rmat(scale, weighted=True, seed=0)
    assert G.weighted and (G.values >= 0).all() and (G.values < 1).all()
    H = generators.rmat(scale, weight_range=(1, 64), seed=0)
    assert H.values.min() >= 1 and H.values.max() <= 64
    assert np.array_equal(H.values, np.round(H.values))
    A = H.to_scipy()
    assert (A != A.T).nnz == 0  # an undirected edge has one weight both ways
    # a duplicate keeps the least weight of its tuples (oracle: the raw tuples)
    src, dst = generators.kronecker_edges(scale, seed=0)
    w = generators._stream_weights(0, src.shape[0], False, (1, 64))
    assert w.shape == src.shape and set(np.unique(w)) <= set(range(1, 65))
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    keep = lo != hi
    key = lo[keep] * 2 ** scale + hi[keep]
    order = np.lexsort((w[keep], key))       # by pair, then by weight
    first = np.r_[True, key[order][1:] != key[order][:-1]]
    pairs, best = key[order][first], w[keep][order][first]
    u = np.repeat(np.arange(H.num_vertices), H.out_degrees())
    v = H.column_indices.astype(np.int64)
    stored = np.minimum(u, v) * 2 ** scale + np.maximum(u, v)
    at = np.searchsorted(pairs, stored)
    assert np.array_equal(pairs[at], stored) and np.array_equal(H.values, best[at])
    assert np.unique(stored).size == pairs.size   # every pair stored (both ways)


@pytest.mark.parametrize("first", [0, 3, 2**31 - 2, 2**33 + 5, 2**40])
def test_numpy_and_numba_generators_agree(first):
    # the same stream either way, and tuple i the same whatever block holds it: the
    # index arithmetic (uint64, past 2**32) is exact
    for scale, permute in [(1, True), (7, False), (20, True), (33, True)]:
        args = (scale, 2, 11, 0.57, 0.19, 0.19, permute, np.int64)
        a = generators._kronecker(*args, first=first, count=700, _impl="numpy")
        b = generators._kronecker(*args, first=first, count=700, _impl="numba")
        c = generators._kronecker(*args, first=first + 200, count=100, _impl="numba")
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        assert np.array_equal(a[0][200:300], c[0]) and np.array_equal(a[1][200:300], c[1])
        assert a[0].min() >= 0 and max(a[0].max(), a[1].max()) < 2 ** scale
    for wr in (None, (1, 64), (3, 3), (0, 2**40)):
        x = generators._stream_weights(2, 500, True, wr, first=first, _impl="numpy")
        y = generators._stream_weights(2, 500, True, wr, first=first, _impl="numba")
        assert np.array_equal(x, y)


def test_same_graph_on_any_number_of_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread")
    before = numba.get_num_threads()
    out = []
    try:
        for t in (1, 2):
            numba.set_num_threads(t)
            G = generators.rmat(15, seed=9, weighted=True)
            e = generators._kronecker(15, 16, 9, 0.57, 0.19, 0.19, True, np.int32,
                                      _impl="numba")
            out.append((G.row_offsets, G.column_indices, G.values) + e)
    finally:
        numba.set_num_threads(before)
    assert all(np.array_equal(x, y) for x, y in zip(*out))


@pytest.mark.parametrize("kw", [{"scale": 0}, {"scale": 41}, {"scale": 2.5},
                                {"scale": 4, "edge_factor": 0}, {"scale": 4, "a": 1.2},
                                {"scale": 4, "a": 0.6, "b": 0.3, "c": 0.3},
                                {"scale": 4, "seed": -1},
                                {"scale": 4, "weight_range": (5, 2)}])
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
