"""Matrix: a square adjacency matrix (a :class:`gunpy.Graph` whose CSR holds the rows),
and ``A @ B``: masked with the ``intersect`` operator, unmasked or under a complemented
mask with the ``spgemm`` operator (Gustavson's row-wise product)."""

import numpy as np

from gunpy.blas import _kernels as K
from gunpy.blas.coo import HOST_UFUNCS, combine_duplicates, values_for
from gunpy.blas.mask import Mask, Maskable
from gunpy.blas.ops import DTYPES, as_binary, as_monoid, binary, lookup_dtype
from gunpy.blas.scalar import Scalar
from gunpy.blas.vector import Vector, as_backend
from gunpy.functor import Functor
from gunpy.graph import CSC, Graph
from gunpy.operators import Context, intersect, spgemm

__all__ = ["Matrix", "as_matrix", "mxm"]


class Matrix(Maskable):
    """A square sparse matrix: the adjacency matrix of a :class:`gunpy.Graph`.

    ``A[i, j]`` is the edge ``i -> j``: ``u @ A`` (vxm) pushes along out-edges,
    ``A @ u`` (mxv) gathers them. Any :class:`gunpy.Graph` is accepted where a
    Matrix is expected (weights are the values; unweighted graphs hold 1.0).

    Examples
    --------
    >>> from gunpy import blas
    >>> A = blas.Matrix.from_coo([0, 0, 1], [1, 2, 2], [5.0, 1.0, 2.0], nrows=3, ncols=3,
    ...                          backend="cpu")
    >>> A.nvals, A.T.to_coo()[1].tolist()
    (3, [0, 0, 1])
    """

    def __init__(self, graph, dtype=None, *, backend="auto", name=None, _transpose_of=None):
        if graph is not None and not isinstance(graph, Graph):
            raise TypeError(f"expected a gunpy.Graph, got {type(graph).__name__}")
        self._graph_obj = graph   # None for a transpose not built yet
        self.dtype = lookup_dtype(dtype or float)
        self.backend = as_backend(backend)
        self.name = name
        self._T = _transpose_of
        self._is_transpose = _transpose_of is not None
        self._contexts = {}
        self._structure = None
        #: derived data algorithms keep with the matrix (LAGraph's "cached properties")
        self.properties = {}
        #: what the last product with this matrix did: ``edges`` (examined), ``direction``,
        #: ``strategy`` (the advance's), ``structure_only`` (values left unread)
        self.last_stats = {}

    @classmethod
    def from_graph(cls, G, *, backend="auto", name=None):
        """The adjacency matrix of ``G`` (no copy: the matrix reads the graph's CSR)."""
        return cls(G, DTYPES["FP64"], backend=backend, name=name)

    @classmethod
    def from_coo(cls, rows, cols, values=1.0, dtype=None, *, nrows=None, ncols=None,
                 dup_op=None, backend="auto", name=None):
        """A matrix with ``values`` at ``(rows[k], cols[k])``; a scalar value is structure only.

        gunpy.blas matrices are square adjacency matrices: ``nrows`` must equal
        ``ncols``. Self-loops and explicit zeros are kept; repeated positions
        raise ``ValueError`` unless ``dup_op`` combines them.
        """
        r = np.asarray(rows)
        c = np.asarray(cols)
        if r.ndim != 1 or c.ndim != 1 or r.shape != c.shape:
            raise ValueError("rows and cols must be 1-D arrays of the same length")
        if r.size and (r.dtype.kind not in "iu" or c.dtype.kind not in "iu"):
            raise ValueError("rows and cols must be integers")
        r, c = r.astype(np.int64), c.astype(np.int64)
        n = max(int(r.max()) + 1 if r.size else 0, int(c.max()) + 1 if c.size else 0)
        nrows = n if nrows is None else int(nrows)
        ncols = nrows if ncols is None else int(ncols)
        if nrows != ncols:
            raise ValueError(f"gunpy.blas matrices are square (adjacency matrices); got "
                             f"{nrows} x {ncols}")
        n = nrows
        if r.size and (min(r.min(), c.min()) < 0 or max(r.max(), c.max()) >= n):
            raise IndexError(f"matrix indices must be in [0, {n})")
        iso = np.isscalar(values) or (isinstance(values, np.ndarray) and values.ndim == 0)
        vals = values_for(values, r.size, dtype)
        dt = lookup_dtype(dtype if dtype is not None else vals.dtype)
        key = r * max(n, 1) + c
        keep, vals = combine_duplicates(np.arange(r.size), vals, dup_op, key=key)
        r, c = r[keep], c[keep]
        weights = None if iso and float(np.asarray(values)) == 1.0 else vals.astype(np.float64)
        G = Graph.from_edges(r, c, weights, num_vertices=n, directed=True,
                             remove_self_loops=False, remove_duplicates=False)
        return cls(G, dt, backend=backend, name=name)

    @classmethod
    def from_csr(cls, indptr, col_indices, values=1.0, dtype=None, *, backend="auto",
                 name=None, check=True):
        """A matrix whose row ``i`` holds ``col_indices[indptr[i]:indptr[i + 1]]``, with
        ``values`` (one per entry, or one scalar for all: 1.0 stores none).

        ``check=False`` takes arrays an algorithm has just built as they are (no copy,
        no validation).
        """
        m = len(col_indices)
        if values is not None and np.ndim(values) == 0:
            values = None if float(values) == 1.0 else np.full(m, float(values))
        G = Graph(np.asarray(indptr, dtype=np.int64), col_indices,
                  None if values is None else np.asarray(values, dtype=np.float64),
                  directed=True, _trusted=not check)
        return cls(G, dtype, backend=backend, name=name)

    @property
    def _G(self):
        if self._graph_obj is None:   # a transpose, built on first use
            G = self._T._G
            self._graph_obj = G if not G.directed else _transpose_graph(G)
        return self._graph_obj

    def _replace(self, G):
        """Hold ``G`` from now on (an assignment): cached derived data goes, and the
        transpose, if made, is rebuilt from ``G`` when next used."""
        self._graph_obj, self._structure, self._contexts = G, None, {}
        self.properties = {}
        if self._T is not None and self._T._T is self:
            self._T._graph_obj, self._T._structure, self._T._contexts = None, None, {}

    def restricted(self, keep, values, dtype=None):
        """The entries of this matrix where ``keep`` (one flag per entry, in CSR order),
        holding ``values`` (one per kept entry)."""
        G = self._G
        rows = np.repeat(np.arange(G.num_vertices, dtype=np.int64), G.out_degrees())
        counts = np.bincount(rows[keep], minlength=G.num_vertices)
        offsets = np.zeros(G.num_vertices + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return Matrix.from_csr(offsets, G.column_indices[keep], values, dtype,
                               backend=self.backend, check=False)

    @property
    def nrows(self):
        if self._graph_obj is None:
            return self._T.nrows
        return self._G.num_vertices

    ncols = nrows

    @property
    def shape(self):
        return (self.nrows, self.nrows)

    @property
    def nvals(self):
        return self._G.num_edges

    @property
    def T(self):
        """The transpose (cached; an undirected graph is its own)."""
        if self._T is None:
            self._T = Matrix(None, self.dtype, backend=self.backend, _transpose_of=self)
        return self._T

    def to_coo(self):
        """``(rows, cols, values)`` sorted by row, then column."""
        G = self._G
        rows = np.repeat(np.arange(G.num_vertices, dtype=np.int64), G.out_degrees())
        cols = G.column_indices.astype(np.int64)
        return rows, cols, self._host_values()

    def _host_values(self):
        G = self._G
        return (G.values if G.values is not None else np.ones(G.num_edges)).astype(self.dtype)

    def to_graph(self):
        """The :class:`gunpy.Graph` behind the matrix."""
        return self._G

    def __call__(self, mask=None, accum=None, replace=False):
        """``C(mask, accum, replace) << expr``: write an ``A @ B`` (or a Matrix) into this
        matrix under GraphBLAS's rule ``C<mask, replace> = accum(C, T)``.

        ``mask``: ``M.S``, ``M.V``, ``~M.S``, ``~M.V`` of a Matrix (the product computes
        only what it allows); outside it ``C`` keeps its entries unless ``replace``;
        ``accum`` (a binary op) folds ``T`` into ``C``'s entries, else ``T`` replaces
        them. The matrix's cached transpose follows it.

        >>> from gunpy import blas
        >>> A = blas.Matrix.from_coo([0, 1], [1, 2], [2.0, 3.0], nrows=3, ncols=3,
        ...                          backend="cpu")
        >>> C = blas.Matrix.from_coo([0, 1], [1, 1], [5.0, 7.0], nrows=3, ncols=3,
        ...                          backend="cpu")
        >>> C(~A.S, accum=blas.binary.plus) << blas.semiring.plus_times(A @ A)
        >>> [x.tolist() for x in C.to_coo()]
        [[0, 0, 1], [1, 2, 1], [5.0, 6.0, 7.0]]
        """
        return _MatrixTarget(self, mask, accum, replace)

    def __matmul__(self, other):
        from gunpy.blas.expr import MatMulExpr
        if isinstance(other, Vector):
            return MatMulExpr(other, self, "mxv")
        return MatMulExpr(self, as_matrix(other, "A @ B"), "mxm")

    def reduce_rowwise(self, op=None):
        """``w(i) = op over A(i, :)`` (rows with no entry get none)."""
        from gunpy.blas.expr import RowReduceExpr
        from gunpy.blas.ops import monoid
        return RowReduceExpr(self, monoid.plus if op is None else as_monoid(op), rows=True)

    def reduce_columnwise(self, op=None):
        from gunpy.blas.expr import RowReduceExpr
        from gunpy.blas.ops import monoid
        return RowReduceExpr(self, monoid.plus if op is None else as_monoid(op), rows=False)

    def reduce_scalar(self, op=None):
        """The monoid over every entry (a :class:`Scalar` expression)."""
        from gunpy.blas.expr import ReduceExpr
        from gunpy.blas.ops import monoid
        op = monoid.plus if op is None else as_monoid(op)
        if self.nvals and op.name in HOST_UFUNCS and op is getattr(monoid, op.name):
            # the values live on the host: one NumPy reduction
            return Scalar(self.dtype, HOST_UFUNCS[op.name].reduce(self._host_values()))
        # otherwise the values, as a dense vector of nvals entries, fold on the backend
        m = self.nvals
        values = Vector.from_coo(np.arange(m), self._host_values(), dtype=self.dtype, size=m,
                                 backend=self.backend)
        return ReduceExpr(values, op)

    def select(self, op, thunk=0):
        """A structural selection: ``"tril"`` / ``"triu"`` (``j <= i + thunk`` / ``j >= i +
        thunk``), ``"offdiag"``, ``"diag"``, or a value test ("==", "!=", "<", "<=", ">", ">=")."""
        rows, cols, vals = self.to_coo()
        tests = {"tril": lambda: cols <= rows + thunk, "triu": lambda: cols >= rows + thunk,
                 "offdiag": lambda: cols != rows, "diag": lambda: cols == rows,
                 "==": lambda: vals == thunk, "!=": lambda: vals != thunk,
                 "<": lambda: vals < thunk, "<=": lambda: vals <= thunk,
                 ">": lambda: vals > thunk, ">=": lambda: vals >= thunk}
        if op not in tests:
            raise ValueError(f"unknown matrix select {op!r}; valid: {sorted(tests)}")
        keep = tests[op]()
        weights = vals[keep] if self._G.values is not None else 1.0
        return Matrix.from_coo(rows[keep], cols[keep], weights, dtype=self.dtype,
                               nrows=self.nrows, ncols=self.ncols, backend=self.backend)

    def isequal(self, other):
        if not isinstance(other, Matrix) or other.nrows != self.nrows:
            return False
        a, b = self.to_coo(), other.to_coo()
        return all(np.array_equal(x, y) for x, y in zip(a, b))

    def __repr__(self):
        return (f"<gunpy.blas.Matrix {self.name or ''} {self.nrows}x{self.ncols} "
                f"nvals={self.nvals} {self.dtype.name} on {self.backend.name}>")

    # ---------------------------------------------------------------- for the operations
    def operand(self, structure_only=False):
        """The :class:`gunpy.Graph` an operator reads for this matrix: its CSR, without the
        values when ``structure_only`` (so a kernel that ignores them never loads them)."""
        if not structure_only or self._G.values is None:
            return self._G
        if self._structure is None:
            G = self._G
            self._structure = Graph(G.row_offsets, G.column_indices, None, directed=G.directed,
                                    _trusted=True)
            self._structure._csc = G._csc
        return self._structure

    def context(self, G=None):
        """The operator :class:`~gunpy.operators.Context` for ``G`` (one of this matrix's
        :meth:`operand` graphs; default its own), kept with the matrix between calls."""
        G = self._G if G is None else G
        ctx = self._contexts.get(id(G))
        if ctx is None or ctx.graph is not G:
            ctx = self._contexts[id(G)] = Context(G, self.backend)
        return ctx


class _MatrixTarget:
    """``C(mask, accum, replace)``, waiting for ``<< expr``."""

    def __init__(self, C, mask, accum, replace):
        if mask is not None and (not isinstance(mask, Mask) or
                                 not isinstance(mask.parent, Matrix)):
            raise TypeError("a matrix's mask must be a matrix's: M.S, M.V, ~M.S or ~M.V")
        if C._is_transpose:
            raise TypeError("A.T is a view of A: assign into a Matrix of its own")
        if mask is not None and mask.parent.nrows != C.nrows:
            raise ValueError("the mask and the matrix have different shapes")
        self.C, self.mask, self.replace = C, mask, bool(replace)
        self.accum = None if accum is None else as_binary(accum, "accum")

    def __lshift__(self, expr):
        from gunpy.blas.expr import MatMulExpr
        C = self.C
        if isinstance(expr, MatMulExpr) and expr.kind == "mxm":
            T = expr.new(mask=self.mask)
        elif isinstance(expr, Matrix):
            T = expr
        else:
            raise TypeError(f"a matrix takes an A @ B or a Matrix, got {type(expr).__name__}")
        if T.nrows != C.nrows:
            raise ValueError(f"shapes differ: {T.shape} and {C.shape}")
        n = C.nrows
        cr, cc, cv = C.to_coo()
        tr, tc, tv = T.to_coo()
        ck, tk = cr * n + cc, tr * n + tc
        c_in, t_in = _allowed(self.mask, ck, n), _allowed(self.mask, tk, n)
        keys, vals = tk[t_in], tv[t_in].astype(C.dtype)
        if self.accum is not None:  # C's entries the mask allows fold with T's
            keys, vals = _union(ck[c_in], cv[c_in], keys, vals, self.accum, C.dtype)
        if not self.replace:  # C's entries outside the mask stay
            keys = np.concatenate([keys, ck[~c_in]])
            vals = np.concatenate([vals, cv[~c_in]])
        order = np.argsort(keys, kind="stable")
        keys, vals = keys[order], vals[order]
        G = Graph.from_edges(keys // max(n, 1), keys % max(n, 1), vals.astype(np.float64),
                             num_vertices=n, directed=True, remove_self_loops=False,
                             remove_duplicates=False)
        C._replace(G)


def _allowed(mask, keys, n):
    """Which of the positions ``keys`` (``i * n + j``) ``mask`` lets a write touch."""
    if mask is None:
        return np.ones(keys.shape, dtype=bool)
    mr, mc, mv = mask.parent.to_coo()
    if not mask.structure:
        keep = mv != 0
        mr, mc = mr[keep], mc[keep]
    return np.isin(keys, mr * n + mc) != mask.complement


def _union(ck, cv, tk, tv, op, dtype):
    """``C`` and ``T``'s entries (sorted keys): ``op(c, t)`` where both are, else the one."""
    both_c = np.isin(ck, tk)
    both_t = np.isin(tk, ck)
    x, y = cv[both_c], tv[both_t]
    if op.name in HOST_UFUNCS and op is getattr(binary, op.name):
        folded = HOST_UFUNCS[op.name](x, y).astype(dtype)
    else:
        folded = np.array([op.func(a, b) for a, b in zip(x, y)], dtype=dtype).reshape(-1)
    keys = np.concatenate([ck[both_c], ck[~both_c], tk[~both_t]])
    vals = np.concatenate([folded, cv[~both_c].astype(dtype), tv[~both_t].astype(dtype)])
    return keys, vals


def as_matrix(obj, where):
    """``obj`` as a Matrix (a Graph becomes its adjacency matrix)."""
    if isinstance(obj, Matrix):
        return obj
    if isinstance(obj, Graph):
        return Matrix.from_graph(obj)
    raise TypeError(f"{where}: expected a gunpy.blas Matrix or a gunpy.Graph, got "
                    f"{type(obj).__name__}")


def _transpose_graph(G):
    """``G``'s reverse as a Graph: the CSC serves as its CSR (values permuted once), and
    ``G``'s CSR as its CSC, so neither direction is ever transposed again."""
    c = G.csc()
    m = G.num_edges
    vals = None if G.values is None else G.values[c.in_edge_ids]
    GT = Graph(c.in_offsets, c.in_indices, vals, directed=True, _trusted=True)
    inv = np.empty(m, dtype=np.int64)
    inv[c.in_edge_ids] = np.arange(m, dtype=np.int64)
    GT._csc = CSC(G.row_offsets, G.column_indices, inv)
    return GT


# --------------------------------------------------------------------------- A @ B
def mxm(A, B, sr, mask, dtype):
    """``C<M> = A sr B``: by sorted-list intersection over the mask's entries (a mask),
    or by Gustavson's row-wise product (no mask, a complemented mask)."""
    if mask is not None and (not isinstance(mask, Mask) or not isinstance(mask.parent, Matrix)):
        raise TypeError("the mask of A @ B must be a matrix's: M.S, M.V, ~M.S or ~M.V")
    mats = (A, B) if mask is None else (A, B, mask.parent)
    if any(X.nrows != A.nrows for X in mats):
        raise ValueError("A, B and the mask must have the same shape")
    if any(X.backend is not A.backend for X in mats):
        raise ValueError("A, B and the mask live on different backends")
    if sr.monoid.binop.kind == "positional":
        raise ValueError("a positional op cannot be a monoid")
    if mask is None or mask.complement:
        return _gustavson(A, B, sr, mask, dtype)
    return _masked(A, B, sr, mask, dtype)


def _masked(A, B, sr, mask, dtype):
    """``C<M> = A sr B`` by intersect over ``M``'s entries (GraphBLAST's masked SpGEMM)."""
    M = mask.parent if mask.structure else mask.parent.select("!=", 0)
    binop, mon = sr.binop, sr.monoid
    in_dt = binop.input_dtype(A.dtype, B.dtype)
    out_dt = binop.output_dtype(A.dtype, B.dtype)
    backend = M.backend
    left = A.operand(not binop.reads_first)
    right = B.T.operand(not binop.reads_second)
    m = M.nvals
    ctx = M.context()
    res_dt = lookup_dtype(dtype) if dtype is not None else out_dt
    if m and mon.binop is binary.plus and binop in (binary.pair, binary.oneb):
        # plus.pair counts the common neighbours: the operator's per-edge counts, with no
        # per-match work at all
        counts = backend.zeros(m, np.int64)
        intersect(M.to_graph(), _Count, None, left=left, right=right, counts=counts,
                  context=ctx)
        vals = backend.to_host(counts)[:m]
        keep = vals > 0
        return M.restricted(keep, vals[keep].astype(res_dt), res_dt)
    out = backend.empty(max(m, 1), out_dt)
    hit = backend.zeros(max(m, 1), np.uint8)
    if m:
        position = binop.position if binop.kind == "positional" else None
        F = K.mxm_functor(backend, binop.func, position, mon.binop.func, in_dt, out_dt,
                          left.values is not None, right.values is not None)
        data = K.MxmData(backend.graph(left).values, backend.graph(right).values, out, hit)
        intersect(M.to_graph(), F, data, left=left, right=right, context=ctx)
    keep = backend.to_host(hit)[:m].astype(bool)
    vals = backend.to_host(out)[:m][keep]
    return M.restricted(keep, vals.astype(res_dt), res_dt)



def _gustavson(A, B, sr, mask, dtype):
    """``C<~M> = A sr B`` (or unmasked) by Gustavson's row-wise product
    (:func:`gunpy.operators.spgemm.product`): the pattern without the mask's entries,
    every term folded into its entry (``k`` increasing)."""
    binop, mon = sr.binop, sr.monoid
    in_dt = binop.input_dtype(A.dtype, B.dtype)
    out_dt = binop.output_dtype(A.dtype, B.dtype)
    res_dt = lookup_dtype(dtype) if dtype is not None else out_dt
    backend = A.backend
    left = A.operand(not binop.reads_first)
    right = B.operand(not binop.reads_second)
    exclude = None
    if mask is not None:
        exclude = (mask.parent if mask.structure else mask.parent.select("!=", 0)).to_graph()
    position = binop.position if binop.kind == "positional" else None
    F = K.mxm_functor(backend, binop.func, position, mon.binop.func, in_dt, out_dt,
                      left.values is not None, right.values is not None)
    # integers and floats folded straight into float64, the matrix's own storage (exact
    # below 2**53, as that storage is): no result-sized copy or conversion afterwards
    store = np.float64 if np.dtype(out_dt).kind in "iuf" else out_dt
    made = []

    def data(m):
        # every entry of the pattern has a term: each is written (hit: reused scratch),
        # none dropped, so the result keeps the entries GraphBLAS keeps, zeros included
        made.append(backend.empty(max(m, 1), store))
        hit = backend.workspace("mxm.hit", max(m, 1), np.uint8)
        backend.fill(hit, 0)
        return K.MxmData(backend.graph(left).values, backend.graph(right).values, made[0],
                         hit)

    # the pattern and its values in one operator call (the CPU fills and folds each row
    # in one pass, the mask's columns never entered)
    C, _ = spgemm.product(left, right, F, data, exclude=exclude, context=A.context(left))
    m, out = C.num_edges, made[0]
    # the CPU's own array as it is (no copy, no cast when the types agree)
    vals = out[:m] if isinstance(out, np.ndarray) else backend.to_host(out)[:m]
    if np.dtype(res_dt) != np.dtype(out_dt) or vals.dtype.kind not in "f":
        vals = np.asarray(np.asarray(vals, dtype=out_dt), dtype=res_dt)
    return Matrix.from_csr(C.row_offsets, C.column_indices, vals, res_dt, backend=backend,
                           check=False)



class _Count(Functor):
    """No per-match work: intersect's per-edge counts are the product."""
