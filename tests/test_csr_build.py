"""CSR construction: the NumPy builders give exactly the numba kernels' arrays, and both
give what a plain-Python reading of the documented rules gives (rows sorted by column,
self-loops dropped, duplicates keep their minimum weight, the first of equal minima)."""

import itertools

import numpy as np
import pytest

from gunpy import _csr
from gunpy._csr import build_csr, transpose_csr
from gunpy.graph import Graph

FLAGS = list(itertools.product([True, False], [True, False]))  # self-loops, duplicates


def _same(a, b):
    """Equal arrays of equal dtype; float arrays compared bit for bit (NaN, -0.0)."""
    if a is None or b is None:
        return a is None and b is None
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return a.tobytes() == b.tobytes()
    return np.array_equal(a, b)


def _edge_lists(seed, count):
    """Random edge lists: duplicates, self-loops, isolated vertices, n = 0 and 1."""
    rng = np.random.default_rng(seed)
    yield np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    yield np.zeros(0, np.int64), np.zeros(0, np.int64), 5
    yield np.zeros(3, np.int64), np.zeros(3, np.int64), 1   # n = 1: three self-loops
    yield np.array([0, 0, 0, 1]), np.array([1, 1, 1, 0]), 4  # duplicates, isolated 2, 3
    for _ in range(count):
        n = int(rng.integers(1, 40))
        m = int(rng.integers(0, 120))
        used = int(rng.integers(1, n + 1))  # vertices past `used` stay isolated
        src = rng.integers(0, used, m)
        dst = rng.integers(0, used, m)
        if m and rng.random() < 0.5:  # many exact duplicates
            pick = rng.integers(0, m, m)
            src, dst = src[pick], dst[pick]
        yield src.astype(np.int64), dst.astype(np.int64), n


def _weights(rng, m, kind):
    if kind == "none":
        return None
    if kind == "ints":  # many ties among duplicate edges
        return rng.integers(-3, 4, m).astype(np.float64)
    if kind == "special":  # NaN first or later, signed zeros
        return rng.choice(np.array([1.0, 2.0, 0.0, -0.0, np.nan, -1.0, np.inf]), m)
    return rng.standard_normal(m)


WKINDS = ["none", "floats", "ints", "special"]


def _python_csr(src, dst, w, n, remove_self_loops, remove_duplicates):
    """The documented CSR of an edge list, in plain Python (no NumPy sort, no numba)."""
    rows = [[] for _ in range(n)]
    for i, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        if not (remove_self_loops and u == v):
            rows[u].append((v, i))   # input order breaks ties within a (row, column)
    ro, ci, vals = [0], [], []
    for row in rows:
        last = None
        for v, i in sorted(row):
            x = None if w is None else float(w[i])
            if remove_duplicates and v == last:
                if x is not None and x < vals[-1]:   # NaN never replaces, nor is replaced
                    vals[-1] = x
                continue
            ci.append(v)
            vals.append(x)
            last = v
        ro.append(len(ci))
    return (np.array(ro, dtype=np.int64), np.array(ci, dtype=np.int32),
            None if w is None else np.array(vals, dtype=np.float64))


@pytest.mark.parametrize("wkind", WKINDS)
def test_builds_match_the_documented_rules(wkind):
    rng = np.random.default_rng(17)
    for src, dst, n in _edge_lists(100 + WKINDS.index(wkind), 120):
        w = _weights(rng, src.shape[0], wkind)
        for rs, rd in FLAGS:
            want = _python_csr(src, dst, w, n, rs, rd)
            for impl in ("numpy", "numba"):
                got = build_csr(src, dst, w, n, remove_self_loops=rs, remove_duplicates=rd,
                                _impl=impl)
                assert all(_same(x, y) for x, y in zip(want, got)), (impl, src, dst, w, n, rs, rd)


@pytest.mark.parametrize("wkind", WKINDS)
def test_numpy_build_matches_numba(wkind):
    rng = np.random.default_rng(7)
    for src, dst, n in _edge_lists(WKINDS.index(wkind), 300):
        w = _weights(rng, src.shape[0], wkind)
        copies = [a.copy() for a in (src, dst) + ((w,) if w is not None else ())]
        for rs, rd in FLAGS:
            kw = dict(remove_self_loops=rs, remove_duplicates=rd, index_dtype=np.int32)
            ref = build_csr(src, dst, w, n, _impl="numba", **kw)
            got = build_csr(src, dst, w, n, _impl="numpy", **kw)
            lex = _csr._build_csr_numpy_lexsort(src, dst, w, n, rs, rd, np.int32)
            for impl in (got, lex):
                assert len(impl) == 3
                assert all(_same(x, y) for x, y in zip(ref, impl)), (src, dst, w, n, rs, rd)
            assert got[0].dtype == np.int64 and got[1].dtype == np.int32
            assert (got[2] is None) == (w is None)
        # the inputs are never modified
        for before, after in zip(copies, (src, dst, w)):
            assert before.tobytes() == after.tobytes()


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_index_dtype(index_dtype):
    src = np.array([9, 0, 9, 5, 9, 5], dtype=np.int64)
    dst = np.array([0, 9, 0, 5, 3, 5], dtype=np.int64)
    w = np.array([3.0, 1.0, 2.0, 4.0, 5.0, 1.0])
    for rs, rd in FLAGS:
        kw = dict(remove_self_loops=rs, remove_duplicates=rd, index_dtype=index_dtype)
        ref = build_csr(src, dst, w, 12, _impl="numba", **kw)
        got = build_csr(src, dst, w, 12, _impl="numpy", **kw)
        assert all(_same(x, y) for x, y in zip(ref, got))
        assert got[1].dtype == index_dtype


def test_packed_key_limit():
    # unweighted: up to 2**31 vertices fit (2 * 31 bits); weighted adds bits(m)
    assert _csr._packed_fits(10**9, 2**31, False)
    assert not _csr._packed_fits(1, 2**31 + 1, False)
    assert _csr._packed_fits(2**22, 2**20, True)
    assert not _csr._packed_fits(2**22 + 1, 2**20, True)


def test_min_weight_and_order_semantics():
    src = np.array([1, 0, 0, 1, 0, 1])
    dst = np.array([0, 2, 2, 0, 2, 1])
    w = np.array([4.0, 7.0, 1.0, 2.0, 1.0, 9.0])
    ro, ci, vals = build_csr(src, dst, w, 3, _impl="numpy")
    assert ro.tolist() == [0, 1, 2, 2] and ci.tolist() == [2, 0] and vals.tolist() == [1.0, 2.0]
    # without dedupe the duplicates stay, in input order within a (row, column)
    ro, ci, vals = build_csr(src, dst, w, 3, remove_duplicates=False, _impl="numpy")
    assert ci.tolist() == [2, 2, 2, 0, 0] and vals.tolist() == [7.0, 1.0, 1.0, 4.0, 2.0]
    ro, ci, vals = build_csr(src, dst, w, 3, remove_self_loops=False, _impl="numpy")
    assert ro.tolist() == [0, 1, 3, 3] and ci.tolist() == [2, 0, 1]
    # the numba kernel keeps a NaN first copy and the first of equal zeros
    _, _, v = build_csr(np.zeros(3, np.int64), np.ones(3, np.int64),
                        np.array([np.nan, 1.0, 0.5]), 2, _impl="numpy")
    assert np.isnan(v[0])
    _, _, v = build_csr(np.zeros(3, np.int64), np.ones(3, np.int64),
                        np.array([0.0, -0.0, 1.0]), 2, _impl="numpy")
    assert v[0] == 0 and not np.signbit(v[0])


def test_transpose_numpy_matches_numba():
    for src, dst, n in _edge_lists(3, 300):
        for rs, rd in FLAGS:
            ro, ci, _ = build_csr(src, dst, None, n, remove_self_loops=rs, remove_duplicates=rd)
            ref = transpose_csr(ro, ci, n, _impl="numba")
            got = transpose_csr(ro, ci, n, _impl="numpy")
            assert all(_same(x, y) for x, y in zip(ref, got))
            assert got[1].dtype == ci.dtype and got[2].dtype == np.int64


@pytest.mark.parametrize("impl", ["numpy", "numba"])
def test_unknown_impl(impl):
    with pytest.raises(ValueError, match="unknown"):
        build_csr(np.zeros(1, np.int64), np.ones(1, np.int64), None, 2, _impl=impl + "x")
    with pytest.raises(ValueError, match="unknown"):
        transpose_csr(np.array([0, 1, 1]), np.array([1], np.int32), 2, _impl=impl + "x")


def test_thresholds_pick_the_implementation(monkeypatch):
    calls = []
    real_np, real_nb = _csr._build_csr_numpy, _csr._build_csr_numba
    monkeypatch.setattr(_csr, "_build_csr_numpy",
                        lambda *a, **k: calls.append("numpy") or real_np(*a, **k))
    monkeypatch.setattr(_csr, "_build_csr_numba",
                        lambda *a, **k: calls.append("numba") or real_nb(*a, **k))
    s, d = np.array([0, 1, 2]), np.array([1, 2, 0])
    w = np.ones(3)
    build_csr(s, d, None, 3)
    build_csr(s, d, w, 3)
    assert calls == ["numpy", "numpy"]
    calls.clear()
    monkeypatch.setattr(_csr, "NUMPY_MAX_EDGES", 2)
    build_csr(s, d, None, 3)
    build_csr(s, d, w, 3)
    monkeypatch.setattr(_csr, "NUMPY_MAX_WEIGHTED_EDGES", 2)
    build_csr(s, d, w, 3)
    assert calls == ["numba", "numpy", "numba"]
    calls.clear()
    # a key that does not fit in 62 bits: lexsort for small graphs, numba for large
    monkeypatch.setattr(_csr, "_packed_fits", lambda m, n, weighted: False)
    build_csr(s, d, None, 3)
    monkeypatch.setattr(_csr, "NUMPY_MAX_LEXSORT_EDGES", 2)
    build_csr(s, d, None, 3)
    assert calls == ["numpy", "numba"]


def test_numpy_falls_back_to_lexsort(monkeypatch):
    s, d = np.array([2, 0, 2, 1, 1]), np.array([0, 1, 0, 1, 2])
    w = np.array([5.0, 1.0, 4.0, 2.0, 3.0])
    ref = build_csr(s, d, w, 3, _impl="numpy")
    monkeypatch.setattr(_csr, "_packed_fits", lambda m, n, weighted: False)
    called = []
    real = _csr._build_csr_numpy_lexsort
    monkeypatch.setattr(_csr, "_build_csr_numpy_lexsort",
                        lambda *a: called.append(1) or real(*a))
    got = build_csr(s, d, w, 3, _impl="numpy")
    assert called and all(_same(x, y) for x, y in zip(ref, got))


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_from_edges_same_graph_either_way(monkeypatch, directed, weighted):
    rng = np.random.default_rng(11)
    src = rng.integers(0, 50, 400)
    dst = rng.integers(0, 50, 400)
    w = rng.integers(1, 5, 400).astype(float) if weighted else None
    graphs = []
    for limit in (10**9, -1):  # NumPy, then numba
        monkeypatch.setattr(_csr, "NUMPY_MAX_EDGES", limit)
        monkeypatch.setattr(_csr, "NUMPY_MAX_WEIGHTED_EDGES", limit)
        G = Graph.from_edges(src, dst, w, num_vertices=60, directed=directed)
        graphs.append((G.row_offsets, G.column_indices, G.values) + tuple(G.csc()))
    assert all(_same(x, y) for x, y in zip(*graphs))
