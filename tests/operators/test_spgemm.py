"""General SpGEMM: the ``spgemm`` operator and gunpy.blas's unmasked / complemented-mask
``A @ B``, against python-graphblas (SuiteSparse: structure exactly, zeros kept) and scipy."""

from collections import namedtuple

import numpy as np
import pytest

import gunpy
from gunpy import Functor, blas
from gunpy.operators import Context, spgemm
from gunpy.testing import ON_CUDASIM, graph_names, nasty_graphs, weighted_copy
from doc_examples import check_docstring_examples

# (semiring, dtype of A and B): every kind of multiply and monoid gunpy.blas runs
SEMIRINGS = [("plus_times", "FP64"), ("plus_times", "INT64"), ("min_plus", "FP64"),
             ("plus_pair", "FP64"), ("any_pair", "BOOL"), ("lor_land", "BOOL"),
             ("max_secondi1", "FP64"), ("plus_firsti", "INT64"), ("min_firstj", "FP64")]
SIM_SEMIRINGS = {("plus_times", "FP64"), ("any_pair", "BOOL"), ("max_secondi1", "FP64")}
DT = {"FP64": np.float64, "INT64": np.int64, "BOOL": np.bool_}


def _random(n, density, dt, seed):
    """Random cells with values in {-1, 0, 1, 2} (explicit zeros included)."""
    rng = np.random.default_rng(seed)
    dense = rng.random((n, n)) < density
    r, c = np.nonzero(dense)
    vals = rng.integers(-1, 3, r.size).astype(DT[dt])
    return r, c, vals


def _pair(gb, n, dt, seed, backend):
    """A, B and M as gunpy.blas and python-graphblas matrices."""
    out = []
    for s, density in ((seed, 0.35), (seed + 1, 0.3), (seed + 2, 0.25)):
        r, c, v = _random(n, density, dt if s != seed + 2 else "FP64", s)
        kw = dict(nrows=n, ncols=n)
        out.append((blas.Matrix.from_coo(r, c, v, dtype=v.dtype, backend=backend, **kw),
                    gb.Matrix.from_coo(r, c, v, dtype=v.dtype, **kw)))
    return out


def _gb_semiring(gb, name):
    return getattr(gb.semiring.ss, name, None) or getattr(gb.semiring, name)


def _same(C, gC, what):
    r, c, v = C.to_coo()
    gr, gcol, gv = gC.to_coo()
    assert r.tolist() == gr.tolist() and c.tolist() == gcol.tolist(), f"{what}: structure"
    np.testing.assert_allclose(v.astype(np.float64), gv.astype(np.float64), rtol=1e-12,
                               err_msg=what)


@pytest.mark.parametrize("name, dt", [s for s in SEMIRINGS
                                      if not ON_CUDASIM or s in SIM_SEMIRINGS])
def test_mxm_equals_graphblas(name, dt, backend):
    """Unmasked, ~M.S and ~M.V, square; A @ B and A @ A.T (a transposed operand)."""
    gb = pytest.importorskip("graphblas")
    n = 7 if ON_CUDASIM else 23
    (A, gA), (B, gB), (M, gM) = _pair(gb, n, dt, 5, backend)
    sr, gsr = getattr(blas.semiring, name), _gb_semiring(gb, name)
    for (X, gX), (Y, gY) in (((A, gA), (B, gB)), ((A, gA), (A.T, gA.T.new()))):
        _same(sr(X @ Y).new(), gsr(gX @ gY).new(), f"{name} unmasked")
        _same(sr(X @ Y).new(mask=~M.S), gsr(gX @ gY).new(mask=~gM.S), f"{name} ~S")
        _same(sr(X @ Y).new(mask=~M.V), gsr(gX @ gY).new(mask=~gM.V), f"{name} ~V")
    assert sr(A @ B).new().dtype == gsr(gA @ gB).new().dtype.np_type


@pytest.mark.parametrize("name", graph_names(nasty_graphs(small=True)))
def test_plus_times_equals_scipy_on_nasty_graphs(name, backend, small):
    G = weighted_copy(nasty_graphs(small=small)[name])
    A = blas.Matrix.from_graph(G, backend=backend)
    C = blas.semiring.plus_times(A @ A).new()
    S = G.to_scipy()
    R = (S @ S).tocsr()
    R.sum_duplicates()
    rows, cols, vals = C.to_coo()
    D = np.zeros(S.shape)
    D[rows, cols] = vals
    np.testing.assert_allclose(D, R.toarray(), rtol=1e-12, atol=1e-12)
    # every structural product is kept (scipy drops the values that sum to zero)
    P = ((S != 0).astype(np.int64) @ (S != 0).astype(np.int64)).tocsr()
    assert C.nvals == P.nnz


def test_complemented_mask_wedges_on_a_dataset():
    """Triangle-free wedges: plus_pair(A @ A)<~A.S> minus the diagonal, = scipy's."""
    G = gunpy.datasets.load("karate")
    A = blas.Matrix.from_graph(G, backend="cpu")
    C = blas.semiring.plus_pair(A @ A).new(mask=~A.S)
    S = (G.to_scipy() != 0).astype(np.int64)
    R = (S @ S).toarray()
    R[S.toarray() != 0] = 0
    rows, cols, vals = C.to_coo()
    D = np.zeros_like(R)
    D[rows, cols] = vals
    assert np.array_equal(D, R) and C.nvals == np.count_nonzero(R)


Data = namedtuple("Data", "w out")


class _Times(Functor):
    @staticmethod
    def apply_intersection(i, j, e, k, p, q, data):
        data.out[e] += data.w[p] * data.w[q]


def test_operator_structure_exclude_and_masked_pattern(backend):
    """structure() leaves out exclude's entries; spgemm over a mask's own pattern is the
    masked product; terms counted; bad operands raise."""
    G = gunpy.Graph.from_edges([0, 0, 1, 2, 3], [1, 2, 3, 3, 0], [2.0, 3.0, 5.0, 7.0, 11.0])
    C = spgemm.structure(G, G, context=Context(G, backend=backend))
    assert C.row_offsets.tolist() == [0, 1, 2, 3, 5]
    assert C.column_indices.tolist() == [3, 0, 0, 1, 2]
    X = gunpy.Graph.from_edges([0, 3], [3, 2], num_vertices=4)
    Cx = spgemm.structure(G, G, exclude=X, context=Context(G, backend=backend))
    assert Cx.row_offsets.tolist() == [0, 0, 1, 2, 3] and Cx.column_indices.tolist() == [0, 0, 1]
    ctx = Context(C, backend=backend)
    data = Data(ctx.backend.asarray(G.values), ctx.backend.zeros(C.num_edges, np.float64))
    assert spgemm(C, _Times, data, left=G, right=G, context=ctx) == 6
    S = G.to_scipy()
    expect = (S @ S).tocsr()
    expect.sort_indices()
    np.testing.assert_array_equal(ctx.backend.to_host(data.out), expect.data)
    # a mask's pattern: only its entries' terms
    ctx = Context(X, backend=backend)
    data = Data(ctx.backend.asarray(G.values), ctx.backend.zeros(2, np.float64))
    assert spgemm(X, _Times, data, left=G, right=G, context=ctx) == 3
    assert ctx.backend.to_host(data.out).tolist() == [2 * 5.0 + 3 * 7.0, 11.0 * 3.0]
    # product(): the pattern and the folded terms in one call, data made for its size
    made = []
    P, terms = spgemm.product(G, G, _Times, lambda m: made.append(m) or Data(
        ctx.backend.asarray(G.values), ctx.backend.zeros(max(m, 1), np.float64)),
        exclude=X, context=Context(G, backend=backend))
    assert made == [3] and terms == 3
    assert P.row_offsets.tolist() == [0, 0, 1, 2, 3] and P.column_indices.tolist() == [0, 0, 1]
    H = gunpy.Graph.from_edges([0], [1], num_vertices=3)
    with pytest.raises(ValueError, match="vertices"):
        spgemm.product(G, H, _Times, None, context=Context(G, backend=backend))
    with pytest.raises(ValueError, match="vertices"):
        spgemm.structure(G, H, context=Context(G, backend=backend))
    with pytest.raises(TypeError, match="gunpy.Graph"):
        spgemm.structure(G, S)


def test_errors(backend):
    A = blas.Matrix.from_coo([0, 1], [1, 2], [1.0, 2.0], nrows=3, ncols=3, backend=backend)
    B = blas.Matrix.from_coo([0], [1], [1.0], nrows=4, ncols=4, backend=backend)
    u = blas.Vector.from_coo([0], [1.0], size=3, backend=backend)
    with pytest.raises(ValueError, match="shape"):
        blas.semiring.plus_times(A @ B)
    with pytest.raises(TypeError, match="mask"):
        blas.semiring.plus_times(A @ A).new(mask=~u.S)


def test_product_rmat_dense_and_sparse_rows_under_a_mask():
    """The CPU's fused pass (spgemm.product under blas's A @ B) over many chunks (slots),
    rows read off the bitmap (dense) and sorted (sparse), a complemented mask's columns
    skipped: = scipy."""
    G = gunpy.generators.rmat(9, 8, seed=2, weighted=True)
    X = gunpy.generators.rmat(9, 4, seed=3)
    A, M = (blas.Matrix.from_graph(H, backend="cpu") for H in (G, X))
    C = blas.semiring.plus_times(A @ A).new(mask=~M.S)
    S = G.to_scipy().tocsr()
    full = (S @ S).tocsr()
    expect = (full - full.multiply(X.to_scipy() != 0)).tocsr()
    expect.eliminate_zeros()  # weights are positive: only the masked entries are zeros
    expect.sort_indices()
    got = C._G
    assert np.array_equal(got.row_offsets, expect.indptr)
    assert np.array_equal(got.column_indices, expect.indices)
    np.testing.assert_allclose(got.values, expect.data, rtol=1e-12)
    lens = np.diff(got.row_offsets)
    assert lens.max() * 32 > (G.num_vertices + 31) // 32 and ((lens > 0) & (lens < 16)).any()


@pytest.mark.large
def test_rmat_equals_scipy_and_graphblas():
    gb = pytest.importorskip("graphblas")
    G = gunpy.generators.rmat(10, 8, seed=4, weighted=True)
    A = blas.Matrix.from_graph(G, backend="cpu")
    C = blas.semiring.plus_times(A @ A).new()
    S = G.to_scipy().tocsr()
    r, c = S.nonzero()
    gA = gb.Matrix.from_coo(r, c, np.asarray(S[r, c]).ravel(), nrows=S.shape[0],
                            ncols=S.shape[0])
    _same(C, gb.semiring.plus_times(gA @ gA).new(), "rmat plus_times")
    _same(blas.semiring.plus_pair(A @ A).new(mask=~A.S),
          gb.semiring.plus_pair(gA @ gA).new(mask=~gA.S), "rmat plus_pair ~S")


@pytest.mark.ptx
def test_spgemm_compiles_to_ptx(ptx_backend):
    from gunpy.blas import _kernels as K
    from gunpy.blas.ops import binary
    G = weighted_copy(nasty_graphs(small=True)["preferential_hubs"])
    X = nasty_graphs(small=True)["preferential_hubs"]
    spgemm.structure(G, G, exclude=X, context=Context(G, backend=ptx_backend))
    F = K.mxm_functor(ptx_backend, binary.times.func, None, binary.plus.func, np.float64,
                      np.float64, True, True)
    data = K.MxmData(G.values, G.values, np.zeros(G.num_edges), np.zeros(G.num_edges,
                                                                          np.uint8))
    spgemm(G, F, data, left=G, right=G, context=Context(G, backend=ptx_backend))
    before = len(ptx_backend.compiled)
    # product(): the same kernels, one after the other (nothing new to compile)
    spgemm.product(G, G, F, lambda m: K.MxmData(G.values, G.values, np.zeros(max(m, 1)),
                                                np.zeros(max(m, 1), np.uint8)),
                   exclude=X, context=Context(G, backend=ptx_backend))
    assert len(ptx_backend.compiled) == before
    names = ptx_backend.kernel_names()
    for k in ("bound", "count", "fill", "products"):
        assert any(k in name for name in names), (k, names)


@pytest.mark.parametrize("name", ["gunpy.operators.spgemm",
                                  "gunpy.blas.matrix"])  # matrix: C(~M) << ...
def test_docstring_examples(name):
    check_docstring_examples(name, 2)


@pytest.mark.parametrize("style", ["free", "deprecated"])
def test_enactor_methods(backend, style):
    """spgemm.structure / spgemm in a primitive, with the enactor's context: paths of
    length two. ``deprecated``: the former Enactor wrappers, which warn."""
    from gunpy import Enactor, Problem
    from gunpy import operators as ops
    G = gunpy.Graph.from_edges([0, 0, 1, 2], [1, 2, 3, 3])

    class Paths(Problem):
        Data = namedtuple("PathsData", "out")

        def init(self):
            self.out = None

    class Count(Functor):
        @staticmethod
        def apply_intersection(i, j, e, k, p, q, data):
            data.out[e] += 1

    class PathsEnactor(Enactor):
        def prepare_frontier(self, frontier):
            G = self.graph
            if style == "free":
                self.pattern = ops.spgemm.structure(G, G, context=self.context)
            else:
                with pytest.warns(DeprecationWarning, match="spgemm_structure"):
                    self.pattern = self.spgemm_structure()
            self.problem.out = self.backend.zeros(self.pattern.num_edges, np.int64)
            if style == "free":
                self.terms = ops.spgemm(self.pattern, Count, self.problem, left=G, right=G,
                                        context=ops.Context(self.pattern, self.backend))
            else:
                with pytest.warns(DeprecationWarning, match="spgemm"):
                    self.terms = self.spgemm(self.pattern, Count)

        def loop(self, frontier):
            return frontier

    problem = Paths(G, backend=backend)
    enactor = PathsEnactor(problem)
    enactor.enact()
    assert enactor.pattern.column_indices.tolist() == [3] and enactor.terms == 2
    assert problem.backend.to_host(problem.out).tolist() == [2]


@pytest.mark.parametrize("mask", ["~V"] if ON_CUDASIM else ["~S", "~V", "S", None])
def test_matrix_assignment_equals_graphblas(mask, backend):
    """``C(mask, accum, replace) << semiring(A @ B)`` (and a Matrix source): GraphBLAS's
    write rule, against python-graphblas; A.T follows C; a transpose refuses a write."""
    gb = pytest.importorskip("graphblas")
    n = 6 if ON_CUDASIM else 11
    (A, gA), (B, gB), (M, gM) = _pair(gb, n, "FP64", 9, backend)
    pick = {None: lambda m: None, "S": lambda m: m.S, "~S": lambda m: ~m.S,
            "~V": lambda m: ~m.V}[mask]
    for accum, replace in ((None, False), ("plus", False), ("min", True)):
        C, gC = blas.Matrix.from_coo(*B.to_coo(), nrows=n, ncols=n, backend=backend), gB.dup()
        C.T.to_coo()  # a transpose made before the write must follow it
        acc = None if accum is None else getattr(blas.binary, accum)
        gacc = None if accum is None else getattr(gb.binary, accum)
        C(pick(M), accum=acc, replace=replace) << blas.semiring.plus_times(A @ B)
        gC(mask=pick(gM), accum=gacc, replace=replace and mask is not None) << \
            gb.semiring.plus_times(gA @ gB)
        _same(C, gC, f"{mask} {accum} {replace}")
        _same(C.T, gC.T.new(), "transpose")
    C(pick(M)) << A
    gC(mask=pick(gM)) << gA
    _same(C, gC, "a Matrix source")
    with pytest.raises(TypeError, match="view"):
        A.T(~M.S) << blas.semiring.plus_times(A @ B)


def test_every_row_form_on_the_cpu():
    """Rows sorted by insertion (short), by numba's sort (longer) and read off a bitmap
    (dense) on the CPU: rows 0, 2 and 4 of A @ A hold 5, 35 and 2000 columns of 40,000."""
    from gunpy.operators.spgemm import DENSE_ROW, INSERTION_BELOW
    rng = np.random.default_rng(11)
    n = 40_000
    wide = [(1, 5), (3, 35), (5, 2000)]  # vertex v -> this many vertices from 100 on
    assert 5 < INSERTION_BELOW <= 35 and 35 * DENSE_ROW <= n // 32 < 2000 * DENSE_ROW
    src = [0, 2, 4] + [v for v, k in wide for _ in range(k)] + rng.integers(6, n, n).tolist()
    dst = [1, 3, 5] + [100 + 7 * t for _, k in wide for t in range(k)] + \
        rng.integers(6, n, n).tolist()
    G = gunpy.Graph.from_edges(src, dst, rng.random(len(src)), num_vertices=n)
    C = spgemm.structure(G, G, context=Context(G, backend="cpu"))
    assert np.diff(C.row_offsets)[[0, 2, 4]].tolist() == [5, 35, 2000]
    S = G.to_scipy()
    P = ((S != 0).astype(np.int64) @ (S != 0).astype(np.int64)).tocsr()
    P.sort_indices()
    assert np.array_equal(C.row_offsets, P.indptr) and np.array_equal(C.column_indices,
                                                                       P.indices)
    A = blas.Matrix.from_graph(G, backend="cpu")
    R = (S @ S).tocsr()
    R.sort_indices()
    np.testing.assert_allclose(blas.semiring.plus_times(A @ A).new().to_coo()[2], R.data,
                               rtol=1e-12)
