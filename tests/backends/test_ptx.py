"""Every kernel x functor combination compiles to PTX for sm_90, with no GPU or driver.

Each primitive is driven through :class:`gunpy.testing.PtxBackend` with every
option that selects a different kernel (load-balancing strategy, direction,
pull mapping, idempotence, SSSP method, PageRank direction), and the generic
operators are driven directly with a test functor. Kernels are compiled by
``numba.cuda.compile_ptx(..., cc=(9, 0))`` with the argument types a real launch
would have.
"""

import numpy as np
import pytest

import gunpy
from gunpy.enactor import DirectionPolicy
from gunpy.operators.advance import STRATEGIES
from gunpy.testing import nasty_graphs

pytestmark = pytest.mark.ptx

GRAPHS = nasty_graphs(hub=40, random_n=40)
G = GRAPHS["preferential_hubs"]
W = gunpy.Graph.from_edges(np.repeat(np.arange(G.num_vertices), G.out_degrees()),
                           G.column_indices, np.linspace(1, 2, G.num_edges),
                           num_vertices=G.num_vertices, directed=True)


def fresh(cc=(9, 0)):
    from gunpy.testing import PtxBackend
    return PtxBackend(cc=cc)


@pytest.mark.parametrize("lb", sorted(STRATEGIES))
@pytest.mark.parametrize("direction,mapping", [("push", "auto"), ("pull", "thread"),
                                               ("pull", "warp")])
@pytest.mark.parametrize("idempotent", [False, True])
def test_bfs_variants(lb, direction, mapping, idempotent):
    be = fresh()
    gunpy.bfs(G, 0, load_balance=lb, direction=direction, idempotent=idempotent,
              direction_policy=DirectionPolicy(pull_mapping=mapping), backend=be)
    names = " ".join(be.kernel_names())
    if direction == "pull":
        assert f"pull_{mapping}" in names
    else:
        assert "advance" in names or "expand" in names
    if idempotent and direction == "push":
        assert "cull" in names


@pytest.mark.parametrize("lb", sorted(STRATEGIES))
@pytest.mark.parametrize("graph", [G, W], ids=["unweighted", "weighted"])
def test_sssp_bc_cc_pagerank_per_strategy(lb, graph):
    be = fresh()
    gunpy.sssp(graph, 0, load_balance=lb, backend=be)
    gunpy.sssp(graph, 0, method="bellman_ford", load_balance=lb, backend=be)
    gunpy.bc(graph, [0], load_balance=lb, backend=be)
    gunpy.cc(graph, backend=be)
    gunpy.pagerank(graph, direction="push", max_iter=2, load_balance=lb, backend=be)
    gunpy.pagerank(graph, direction="pull", max_iter=2, backend=be)
    assert len(be.compiled) >= 10


def test_other_compute_capabilities():
    # the same kernels build for Ampere and Blackwell too
    for cc in [(8, 0), (10, 0)]:
        be = fresh(cc)
        gunpy.bfs(G, 0, direction="auto", backend=be)
        ptx = next(iter(be.compiled.values()))
        assert f".target sm_{cc[0]}{cc[1]}" in ptx


def test_resource_usage_report(capsys):
    """Registers and spills per kernel, linked with nvJitLink (no driver needed)."""
    try:
        from cuda.core import Linker, LinkerOptions, ObjectCode
    except Exception:
        pytest.skip("cuda.core / nvJitLink not installed")
    import re
    be = fresh()
    gunpy.bfs(G, 0, direction="pull", backend=be)
    gunpy.sssp(W, 0, backend=be)
    rows = []
    for (func, types), ptx in be.compiled.items():
        lk = Linker(ObjectCode.from_ptx(ptx.encode()),
                    options=LinkerOptions(arch="sm_90", verbose=True))
        lk.link("cubin")
        log = lk.get_info_log()
        regs = [int(x) for x in re.findall(r"Used (\d+) registers", log)]
        spills = re.findall(r"(\d+) bytes spill stores", log)
        rows.append((func.__qualname__, max(regs or [0]), max(map(int, spills or ["0"]))))
    with capsys.disabled():
        print()
        for name, regs, spill in sorted(rows):
            print(f"  {name:45s} {regs:3d} registers, {spill} B spilled")
    assert all(r[1] <= 255 for r in rows)


def test_every_cuda_kernel_has_a_persistent_cache_key():
    """Each kernel a primitive launches carries gunpy's disk cache with a stable fingerprint
    (on a GPU it is compiled once per machine; here nothing launches, so the key is checked)."""
    from gunpy import _jitcache
    seen = {}

    class Recording(type(fresh())):
        def run(self, kernel, items, *args, **kw):  # recorded, not compiled: the keys matter
            seen[kernel.py_func.__qualname__] = kernel

    be = Recording.__new__(Recording)
    be._setup((9, 0))
    gunpy.bfs(G, 0, direction="auto", backend=be)
    gunpy.bfs(G, 0, direction="push", load_balance="twc", idempotent=True, backend=be)
    gunpy.sssp(W, 0, backend=be)
    gunpy.cc(G, backend=be)
    gunpy.pagerank(G, max_iter=2, backend=be)
    gunpy.triangles(G, backend=be)
    assert len(seen) >= 10
    assert any("intersect" in name for name in seen)
    for name, k in seen.items():
        assert isinstance(k._cache, _jitcache._KernelCache), name
        assert len(k._cache._base_key()) > 0, name  # fingerprintable: no Uncacheable


def test_near_far_refill_kernel_compiles():
    """The far pile's minimum (a refill) is reached only when the near slice runs dry,
    which a compile-only run never sees: drive the queue directly."""
    from collections import namedtuple

    from gunpy import Functor
    from gunpy.functor import compile_functor
    from gunpy.operators import Context
    from gunpy.operators.near_far import NearFarQueue

    class Prio(Functor):
        @staticmethod
        def priority(v, data):
            return data.dist[v]

    be = fresh()
    ctx = Context(W, be)
    data = namedtuple("Data", "dist")(np.zeros(W.num_vertices))
    pq = NearFarQueue(ctx)
    pq.far.push([1, 2])
    pq.min_far_priority(compile_functor(Prio, be), data)
    assert "min_priority" in " ".join(be.kernel_names())


def test_intersect_kernels_compile():
    """intersect: triangle counting's hooks (atomic adds, none) over lower triangles and
    over all of an oriented graph, and a weighted mask whose cond_edge filters by weight,
    with left and right graphs other than the mask."""
    from collections import namedtuple

    from gunpy import Functor
    from gunpy import operators as ops

    class Heavy(Functor):
        @staticmethod
        def cond_edge(src, dst, edge, weight, data):
            return weight > 1.5

        @staticmethod
        def apply_intersection(src, dst, edge, common, src_edge, dst_edge, data):
            # one writer per mask edge: a plain store
            data.out[edge] += data.a[src_edge] * data.b[dst_edge]

    be = fresh()
    for graph in (G, W):  # read in place (lower triangles), and through an oriented copy
        gunpy.triangles(graph, backend=be)
        gunpy.triangle_count(graph, backend=be)
    data = namedtuple("Data", "out a b")(np.zeros(W.num_edges), np.ones(G.num_edges),
                                         np.ones(G.num_edges))
    ops.intersect(W, Heavy, data, left=G, right=G, context=ops.Context(W, be))
    kernels = [k for k in be.compiled if k[0].__qualname__.endswith("intersect")]
    assert len(kernels) == 5
    assert all(".target sm_90" in be.compiled[k] for k in kernels)


def test_nx_link_prediction_functor_compiles():
    """The networkx backend's link-prediction scores: intersect with per-edge counters and
    sums (one writer per mask edge) and the operator's own intersection counts."""
    from gunpy import operators as ops
    from gunpy.nx_backend.linkpred import _Data, _Scores
    be = fresh()
    n, m = G.num_vertices, W.num_edges
    data = _Data(np.ones(n, np.int64), np.ones(n), np.ones(n), np.zeros(m, np.int64),
                 np.zeros(m), np.zeros(m), np.zeros(m, np.int64))
    ops.intersect(W, _Scores, data, left=G, right=G, counts=np.zeros(m, np.int64),
                  context=ops.Context(W, be))
    kernels = [k for k in be.compiled if k[0].__qualname__.endswith("intersect")]
    assert kernels and all(".target sm_90" in be.compiled[k] for k in kernels)


# -- gunpy.blas: the functors behind every GraphBLAS operation --------------------------
BLAS_SEMIRINGS = ["min_plus", "plus_times", "plus_pair", "any_secondi", "any_pair", "lor_land",
                  "max_first", "min_second", "plus_min", "times_plus"]


@pytest.mark.parametrize("name", BLAS_SEMIRINGS)
def test_blas_products(name):
    from gunpy import blas
    be = fresh()
    A = blas.Matrix.from_graph(W, backend=be)
    n = A.nrows
    u = blas.Vector.from_coo([0, 3], [1.0, 2.0], size=n, backend=be)
    m = blas.Vector.from_coo([1, 2, 5], [1, 0, 1], size=n, backend=be)
    sr = getattr(blas.semiring, name)
    for direction in ("push", "pull"):
        for mask in (None, m.S, ~m.V):
            sr(u @ A).new(mask=mask, direction=direction)
            sr(A @ u).new(mask=mask, direction=direction)
    names = " ".join(be.kernel_names())
    if not name.startswith("times"):   # times has no atomic: it always pulls
        assert "advance" in names or "expand" in names
    assert "pull_" in names


def test_blas_elementwise_and_user_ops():
    from gunpy import blas
    be = fresh()
    n = W.num_vertices
    u = blas.Vector.from_coo([0, 3, 4], [1.0, 2.0, 3.0], size=n, backend=be)
    v = blas.Vector.from_coo([3, 5], [1, 7], size=n, backend=be)
    u.ewise_add(v, blas.binary.max).new()
    u.ewise_mult(v, blas.monoid.plus).new()
    u.apply(blas.unary.ainv).new()
    u.apply(blas.binary.times, right=2).new()
    u.select(">", 1.5).new()
    u.reduce(blas.monoid.max).new()
    w = u.dup()
    w(v.S, accum=blas.binary.plus) << v
    w(~v.V, replace=True) << 3
    top = blas.monoid.register_anonymous(blas.binary.max, 0.0, terminal=10.0)
    sr = blas.semiring.register_anonymous(top, lambda x, y: abs(x - y))
    sr(u @ blas.Matrix.from_graph(W, backend=be)).new(direction="pull")
    assert len(be.compiled) >= 10


def test_blas_algorithms():
    from gunpy.blas import algorithms as al
    be = fresh()
    al.bfs(G, 0, backend=be)
    al.bfs(G, 0, direction="pull", backend=be)
    al.bfs_sigma(G, 0, backend=be)
    al.sssp(W, 0, backend=be)
    al.pagerank(W, max_iter=2, backend=be)
    al.triangle_count(G, backend=be)
    names = " ".join(be.kernel_names())
    assert "intersect" in names and "pull_" in names


def test_device_graph_kernels_compile():
    """Graphs given in GPU memory: the CSR check and conversion, the edge-list build,
    the reverse view and the personalisation check (gunpy.backends.interop,
    gunpy.backends.device_build), compiled for
    the argument types users hand over."""
    from gunpy.backends.interop import check_csr_kernel, convert_kernel

    be = fresh()
    out = np.zeros(4, dtype=np.int64)
    for ro_t, ci_t in [(np.int64, np.int64), (np.int32, np.int32), (np.int64, np.uint32)]:
        ro, ci = np.array([0, 1, 2], dtype=ro_t), np.array([1, 0], dtype=ci_t)
        be.run(check_csr_kernel, 2, ro, ci, np.int64(2), np.int64(2), out)
    for src_t, dst_t in [(np.int32, np.int64), (np.int64, np.int32), (np.float32, np.float64),
                         (np.int64, np.int64)]:
        be.run(convert_kernel, 2, np.zeros(2, src_t), np.zeros(2, dst_t), 2)
    from gunpy.backends import device_build as db
    from gunpy.backends.interop import first_outside_kernel
    i8, i4 = np.zeros(4, np.int64), np.zeros(4, np.int32)
    flags, f8, n = np.zeros(4, np.int8), np.zeros(4), np.int64(4)
    for ids_t in (i4, i8):
        be.run(first_outside_kernel, 4, ids_t, n, n, i8)
        be.run(db.edge_keys_kernel, 4, ids_t, ids_t, n, n, True, True, i8, i8, n)
        be.run(db.reverse_keys_kernel, 4, i8, ids_t, n, n, i8, i8, n)
        be.run(db.emit_kernel, 4, i8, i8, flags, i8, n, n, f8, True, True, ids_t, f8)
        be.run(db.split_kernel, 4, i8, i8, n, n, ids_t, i8)
        be.run(db.first_difference_kernel, 4, ids_t, ids_t, n, i8)
    for labels in (i4, i8):
        be.run(db.label_keys_kernel, 4, labels, labels, n, i8, i8, n)
    be.run(db.ranks_kernel, 4, i8, i8, flags, i8, n, i8, i8)
    be.run(db.bitonic_step_kernel, 4, i8, i8, n, n, n)
    be.run(db.mark_first_kernel, 4, i8, n, True, flags)
    be.run(db.row_starts_kernel, 4, i8, n, i8, True, n, n, i8)
    be.run(db.no_in_edges_kernel, 1, i8, n, np.int64(1), np.zeros(1, np.uint32))
    from gunpy.backends.interop import divide_kernel, first_not_weight_kernel
    from gunpy.backends.interop import reached_edges_kernel
    be.run(first_not_weight_kernel, 4, f8, n, i8)
    be.run(divide_kernel, 4, f8, np.float64(2.0), n)
    for ids_t in (i4, i8):
        be.run(reached_edges_kernel, 4, i8, ids_t, n, i8)
    names = " ".join(be.kernel_names())
    for name in ("_first_not_weight", "_divide", "_reached_edges",
                 "_check_csr", "_convert", "_first_outside", "_bitonic_step", "_edge_keys",
                 "_reverse_keys", "_mark_first", "_emit", "_row_starts", "_split",
                 "_first_difference", "_no_in_edges", "_label_keys", "_ranks"):
        assert name in names, name
