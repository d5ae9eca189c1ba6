"""CSR construction: the NumPy builders give exactly the numba kernels' arrays, and both
give what a plain-Python reading of the documented rules gives (rows sorted by column,
self-loops dropped, duplicates keep their minimum weight, the first of equal minima) and
what scipy's ``coo -> csr`` gives from the raw edge list; the parallel kernels give the
same arrays on any number of threads and chunks, and index edges with int64."""

import itertools

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from gunpy import _csr
from gunpy._csr import build_csr, reverse_edge_ids, transpose_csr
from gunpy.graph import Graph

FLAGS = list(itertools.product([True, False], [True, False]))  # self-loops, duplicates


@pytest.fixture(autouse=True)
def one_thread():
    """Hundreds of tiny builds: one thread each (on a busy machine every parallel region
    of a tiny build waits for a second thread's turn); the chunked code still runs (the
    ``chunks`` fixture), and two threads run in the thread-count test."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(before)


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


def _python_csr(src, dst, w, n, remove_self_loops, remove_duplicates, mirror=False):
    """The documented CSR of an edge list, in plain Python (no NumPy sort, no numba).
    ``mirror``: the list followed by its reversed copy, self-loops not repeated."""
    edges = list(zip(src.tolist(), dst.tolist(), range(len(src))))
    if mirror:
        edges += [(v, u, i) for u, v, i in edges if u != v]
    rows = [[] for _ in range(n)]
    for k, (u, v, i) in enumerate(edges):
        if not (remove_self_loops and u == v):
            rows[u].append((v, k, i))   # list order breaks ties within a (row, column)
    ro, ci, vals = [0], [], []
    for row in rows:
        last = None
        for v, _, i in sorted(row):
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
@pytest.mark.parametrize("mirror", [False, True])
def test_builds_match_the_documented_rules(monkeypatch, wkind, mirror):
    # numba: the rows packed with the columns unless mirrored (both ways are tested)
    monkeypatch.setattr(_csr, "_PACK_ROWS", not mirror)
    rng = np.random.default_rng(17)
    for src, dst, n in _edge_lists(100 + WKINDS.index(wkind), 60):
        w = _weights(rng, src.shape[0], wkind)
        for rs, rd in FLAGS:
            want = _python_csr(src, dst, w, n, rs, rd, mirror)
            for impl in ("numpy", "numba"):
                got = build_csr(src, dst, w, n, remove_self_loops=rs, remove_duplicates=rd,
                                mirror=mirror, _impl=impl)
                assert all(_same(x, y) for x, y in zip(want, got)), (impl, src, dst, w, n, rs, rd)


def _scipy_csr(src, dst, n, remove_self_loops, mirror):
    """scipy's CSR of the raw list: (indptr, indices, multiplicity of each entry)."""
    if mirror:
        off = src != dst
        src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
    if remove_self_loops:
        keep = src != dst
        src, dst = src[keep], dst[keep]
    A = sp.coo_array((np.ones(src.shape[0]), (src, dst)), shape=(n, n)).tocsr()
    A.sum_duplicates()
    return A.indptr, A.indices, A.data.astype(np.int64)


def _big_rows(rng, n, m):
    """An edge list whose rows are long (the radix sort), skewed and full of duplicates."""
    src = np.minimum(rng.zipf(1.6, m) - 1, n - 1)
    dst = rng.integers(0, n, m)
    return src.astype(np.int64), dst.astype(np.int64)


@pytest.mark.parametrize("mirror", [False, True])
@pytest.mark.parametrize("block, pack", [(16, True), (1 << 16, True), (16, False)])
def test_builds_match_scipy(monkeypatch, mirror, block, pack):
    monkeypatch.setattr(_csr, "_BLOCK_EDGES", block)  # many blocks of rows, or one
    monkeypatch.setattr(_csr, "_PACK_ROWS", pack)  # rows above the columns, or apart
    rng = np.random.default_rng(5)
    lists = list(_edge_lists(41, 40)) + [(*_big_rows(rng, 700, 20_000), 800)]
    for src, dst, n in lists:
        for rs, rd in FLAGS:
            ptr, idx, mult = _scipy_csr(src, dst, n, rs, mirror)
            for impl in ("numpy", "numba"):
                ro, ci, _ = build_csr(src, dst, None, n, remove_self_loops=rs,
                                      remove_duplicates=rd, mirror=mirror, _impl=impl)
                if rd:
                    assert np.array_equal(ro, ptr) and np.array_equal(ci, idx), (impl, n, rs)
                else:  # every copy kept, next to its twins
                    rows = np.repeat(np.arange(n), np.diff(ptr))
                    deg = np.bincount(rows, weights=mult, minlength=n).astype(np.int64)
                    assert np.array_equal(np.diff(ro), deg), (impl, n, rs)
                    assert np.array_equal(ci, np.repeat(idx, mult)), (impl, n, rs)


@pytest.mark.parametrize("wkind", WKINDS)
def test_numpy_build_matches_numba(wkind):
    rng = np.random.default_rng(7)
    for src, dst, n in _edge_lists(WKINDS.index(wkind), 150):
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
    for src, dst, n in _edge_lists(3, 150):
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


@pytest.mark.parametrize("block", [16, 1 << 16])
def test_transpose_matches_scipy(monkeypatch, block):
    monkeypatch.setattr(_csr, "_BLOCK_EDGES", block)
    rng = np.random.default_rng(8)
    lists = list(_edge_lists(9, 30)) + [(*_big_rows(rng, 500, 8_000), 500)]
    for src, dst, n in lists:
        ro, ci, _ = build_csr(src, dst, None, n, remove_duplicates=False)
        A = sp.csr_array((np.arange(1, ci.size + 1), ci, ro), shape=(n, n))
        At = A.tocsc()  # column v: its in-edges by source, the data their CSR id + 1
        for impl in ("numpy", "numba"):
            io, ii, eid = transpose_csr(ro, ci, n, _impl=impl)
            assert np.array_equal(io, At.indptr) and np.array_equal(ii, At.indices)
            assert np.array_equal(eid, At.data - 1)


def _twin_oracle(ro, ci):
    """The k-th copy of u in row v pairs with the k-th copy of v in row u (by position)."""
    seen = {}
    for v in range(ro.shape[0] - 1):
        for e in range(ro[v], ro[v + 1]):
            seen.setdefault((v, int(ci[e])), []).append(e)
    rev = np.empty(ci.shape[0], dtype=np.int64)
    for (v, u), es in seen.items():
        rev[es] = seen[(u, v)]
    return rev


@pytest.mark.parametrize("impl", ["numpy", "numba"])
def test_reverse_edge_ids(impl):
    rng = np.random.default_rng(3)
    for src, dst, n in _edge_lists(12, 60):
        for rs, rd in FLAGS:
            ro, ci, _ = build_csr(src, dst, None, n, remove_self_loops=rs,
                                  remove_duplicates=rd, mirror=True)
            ci = ci.copy()
            if rng.random() < 0.5:  # rows out of order
                for v in range(n):
                    rng.shuffle(ci[ro[v]:ro[v + 1]])
            rev = reverse_edge_ids(ro, ci, n, _impl=impl)
            assert rev.dtype == np.int64 and np.array_equal(rev, _twin_oracle(ro, ci))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_twin_cursors_of_either_width(dtype):
    # int64 cursors serve graphs past 2**31 edges: the same kernel, the other type
    rng = np.random.default_rng(2)
    src, dst = _big_rows(rng, 400, 6_000)
    ro, ci, _ = build_csr(src, dst, None, 400, mirror=True, remove_duplicates=False)
    bounds = _csr._row_bounds(ro, 3)
    rev = np.empty(ci.shape[0], dtype=np.int64)
    unsorted = np.empty(3, dtype=np.bool_)
    _csr._twins(bounds, ro, ci, rev, np.empty((3, 400), dtype=dtype), unsorted)
    assert not unsorted.any() and np.array_equal(rev, _twin_oracle(ro, ci))


@pytest.mark.parametrize("impl", ["numpy", "numba"])
def test_reverse_edge_ids_refuse_an_asymmetric_graph(impl):
    ro = np.array([0, 1, 2, 3])  # 0 -> 1 -> 2 -> 0: degrees match, twins do not
    with pytest.raises(ValueError, match="symmetric"):
        reverse_edge_ids(ro, np.array([1, 2, 0], np.int32), 3, _impl=impl)
    with pytest.raises(ValueError, match="vertex 0 has 2 out-edges but 0 in-edges"):
        reverse_edge_ids(np.array([0, 2, 2, 2]), np.array([1, 2], np.int32), 3, _impl=impl)


@pytest.mark.parametrize("impl", ["numpy", "numba"])
def test_twins_of_a_graph_known_symmetric(monkeypatch, impl):
    # symmetric=True (gunpy mirrored the edges) skips the symmetry hash, not the twins:
    # the same map, checked against the oracle from the raw edge list, hubs included
    rng = np.random.default_rng(5)
    lists = list(_edge_lists(13, 40)) + [(*_big_rows(rng, 300, 6_000), 300)]
    called = []
    real = _csr._symmetry
    monkeypatch.setattr(_csr, "_symmetry", lambda *a: called.append(1) or real(*a))
    for src, dst, n in lists:
        for rs, rd in FLAGS:
            ro, ci, _ = build_csr(src, dst, None, n, remove_self_loops=rs,
                                  remove_duplicates=rd, mirror=True)
            oracle = _twin_oracle(ro, ci)
            del called[:]
            rev = reverse_edge_ids(ro, ci, n, symmetric=True, _impl=impl)
            assert np.array_equal(rev, oracle) and not called
            if impl == "numba" and ci.size:
                assert np.array_equal(reverse_edge_ids(ro, ci, n, _impl=impl), oracle)
                assert called  # without the promise the hash runs


def test_a_mirrored_graph_skips_the_symmetry_check(monkeypatch):
    monkeypatch.setattr(_csr, "NUMPY_MAX_EDGES", 0)  # the parallel build, on a small graph
    monkeypatch.setattr(_csr, "_symmetry", lambda *a: pytest.fail("symmetry hash ran"))
    rng = np.random.default_rng(6)
    src, dst = _big_rows(rng, 300, 5_000)  # a hub of thousands of edges
    G = Graph.from_edges(src, dst, num_vertices=300, directed=False)
    assert np.array_equal(G.csc().in_edge_ids, _twin_oracle(G.row_offsets, G.column_indices))


def test_graphs_not_built_symmetric_are_still_checked(monkeypatch):
    monkeypatch.setattr(_csr, "NUMPY_MAX_EDGES", 0)
    ro = np.array([0, 1, 2, 3])  # 0 -> 1 -> 2 -> 0 marked undirected: refused
    with pytest.raises(ValueError, match="symmetric"):
        Graph(ro, np.array([1, 2, 0]), directed=False).csc()
    # a mirrored graph whose structure is rebound loses the promise
    G = Graph.from_edges([0, 1], [1, 2], directed=False)
    assert G._symmetric
    G.column_indices = np.array([1, 2, 0, 0])  # rows 0: {1}, 1: {2, 0}, 2: {0}
    assert not G._symmetric
    G2 = Graph.from_edges([0, 1], [1, 2], directed=False)
    G2.row_offsets = np.array([0, 1, 3, 4])
    assert not G2._symmetric and not Graph.from_edges([0], [1])._symmetric


def test_an_undirected_graph_without_edge_ids_builds_nothing(monkeypatch):
    import gunpy.graph as graph_mod
    monkeypatch.setattr(graph_mod, "reverse_edge_ids",
                        lambda *a, **k: pytest.fail("twins built"))
    G = Graph.from_edges([0, 1, 2], [1, 2, 0], directed=False)
    c = G.csc(edge_ids=False)
    assert c.in_offsets is G.row_offsets and c.in_indices is G.column_indices
    assert c.in_edge_ids is None and G._csc is None
    # a directed graph's transpose comes with its ids either way
    D = Graph.from_edges([0, 1, 2], [1, 2, 0])
    assert np.array_equal(D.csc(edge_ids=False).in_edge_ids, [2, 0, 1])


def test_an_undirected_graph_is_its_own_reverse():
    rng = np.random.default_rng(4)
    src, dst = _big_rows(rng, 300, 5_000)
    G = Graph.from_edges(src, dst, num_vertices=300, directed=False)
    c = G.csc()
    assert c.in_offsets is G.row_offsets and c.in_indices is G.column_indices
    assert np.array_equal(c.in_edge_ids, _twin_oracle(G.row_offsets, G.column_indices))


@pytest.fixture
def chunks(monkeypatch):
    """Run the kernels as if on ``k`` threads (k chunks, whatever numba runs them on),
    with blocks of about ``block`` edges, rows packed with columns or apart."""
    def use(k, block=1 << 16, pack=True):
        monkeypatch.setattr(_csr, "_threads", lambda: k)
        monkeypatch.setattr(_csr, "_BLOCK_EDGES", block)
        monkeypatch.setattr(_csr, "_PACK_ROWS", pack)
    return use


@pytest.mark.parametrize("weighted", [False, True])
def test_same_arrays_on_any_number_of_threads(chunks, weighted):
    rng = np.random.default_rng(6)
    src, dst = _big_rows(rng, 3_000, 60_000)
    w = rng.integers(0, 3, src.shape[0]).astype(np.float64) if weighted else None
    threads = [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1]
    before = numba.get_num_threads()
    results = []
    try:
        for t, k, block, pack in itertools.product(threads, [1, 2, 3, 16], [64, 1 << 16],
                                                   [True, False]):
            numba.set_num_threads(t)
            chunks(k, block, pack)
            out = []
            for mirror in (False, True):
                ro, ci, vals = build_csr(src, dst, w, 3_000, mirror=mirror, _impl="numba")
                out += [ro, ci, vals]
                out += list(transpose_csr(ro, ci, 3_000, _impl="numba"))
            out.append(reverse_edge_ids(ro, ci, 3_000, _impl="numba"))
            results.append(out)
    finally:
        numba.set_num_threads(before)
    for other in results[1:]:
        assert all(_same(x, y) for x, y in zip(results[0], other))


# -------------------------------------------------------------- edge ids past 2**31
def test_chunk_bounds_past_2_31():
    big = 3 * 2**31 + 5
    b = _csr._even_bounds(big, 7)
    assert b.dtype == np.int64 and b[0] == 0 and b[-1] == big
    assert set(np.diff(b).tolist()) <= {big // 7, big // 7 + 1}
    offsets = np.array([0, 2**31, 2**31, 2**31 + 1, 3 * 2**31, 2**33], dtype=np.int64)
    rb = _csr._row_bounds(offsets, 3)
    assert rb[0] == 0 and rb[-1] == 5 and np.all(np.diff(rb) >= 0)
    # a chunk ends after the row holding its share's last edge (2**33 / 3 and twice
    # that both fall in row 3)
    assert rb.tolist() == [0, 4, 4, 5]


def test_block_heads_past_2_31():
    # three chunks' counts in four blocks, blocks and chunks holding more than 2**31 edges
    counts = [[2**31 - 1, 5, 0, 2**31],
              [2**31, 7, 1, 3],
              [1, 2**32, 0, 2**31 + 9]]
    starts, heads = _csr._block_heads(np.array(counts, dtype=np.int64))
    sizes = [sum(c[b] for c in counts) for b in range(4)]
    want = [0]
    for x in sizes:
        want.append(want[-1] + x)
    assert starts.dtype == heads.dtype == np.int64 and starts.tolist() == want
    # each chunk writes a block from where the chunks before it stop
    for k in range(3):
        for b in range(4):
            assert heads[k, b] == want[b] + sum(counts[j][b] for j in range(k))


def test_block_shape():
    # about 2**16 edges a block, at most 2**16 rows (a uint16 row), at least one row
    assert _csr._block_shift(32 * 2**20, 2**20) == 11
    assert _csr._block_shift(10, 2**30) == 16
    assert _csr._block_shift(2**40, 2**10) == 0
    assert _csr._block_shift(3 * 2**31, 2**26) == 9  # 96 edges a row: 682 -> 512 rows


def test_parallel_scan_past_2_32():
    x = np.array([2**40, 3, 2**33, 0, 2**31 + 1, 7, 2**62 - 2**41] * 3, dtype=np.int64)
    want = np.cumsum([int(a) for a in x.tolist()])
    for k in (1, 2, 5, 21):
        y = x.copy()
        _csr._prefix_sum(y, _csr._even_bounds(y.shape[0], k))
        assert y.tolist() == want.tolist()


@pytest.mark.parametrize("loops, dups", list(itertools.product([True, False], repeat=2)))
def test_in_place_build_equals_the_documented_csr(loops, dups):
    """An unweighted directed edge list built inside its own buffer: the same arrays as
    the plain-Python CSR of the list, for every edge list the other builds are checked on
    and for a hub larger than any row the others sort in one block."""
    rng = np.random.default_rng(7)
    lists = list(_edge_lists(3, 60))
    hub = rng.integers(0, 5000, 70_000)
    lists.append((np.concatenate([np.zeros(60_000, np.int64), hub[:10_000]]), hub, 5000))
    for src, dst, n in lists:
        pairs = np.empty((src.size, 2), dtype=np.int32)
        pairs[:, 0], pairs[:, 1] = dst, src
        ro, ci = _csr.build_csr_in_place(pairs, n, remove_self_loops=loops,
                                         remove_duplicates=dups)
        want_ro, want_ci, _ = _python_csr(src, dst, None, n, loops, dups)
        assert _same(ro, want_ro) and _same(ci, want_ci), (n, src.size)


def test_in_place_build_refuses_what_it_cannot_build_in_place():
    good = np.zeros((3, 2), dtype=np.int32)
    for bad in (good.astype(np.int64), good[:2], good.T.copy(), good.reshape(-1)):
        with pytest.raises(ValueError, match="owned \\(m, 2\\) int32"):
            _csr.build_csr_in_place(bad, 4)
    over = np.array([[0, 1], [5, 0]], dtype=np.int32)    # a target id 5 in a 4-vertex graph
    with pytest.raises(ValueError, match="an id is not below n=4"):
        _csr.build_csr_in_place(over, 4)
