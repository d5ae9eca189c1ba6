"""The differential test matrix of gunpy.blas: every operation against a dense reference.

``tests/blas_reference.py`` is the oracle (plain loops over the GraphBLAS
definitions); the first tests here check it against python-graphblas itself
(skipped where graphblas is not installed), so that the rest can trust it.
Then gunpy.blas is compared with the reference on hypothesis-drawn matrices
and vectors (empty, n = 1, self-loops, explicit zeros) for each semiring x
mask kind (None, S, V, ~S, ~V) x replace x accum (None, plus, min) x
direction (push, pull, auto), plus element-wise ops, apply, select,
reductions, user-defined ops, descriptor options, element access and bad
input.

Modes: the CPU backend by default; ``--cuda-mode=sim`` runs the same tests on
the CUDA backend under numba's simulator with tiny sizes, few examples and a
sample of the option combinations (the ``ci`` profile has 6 examples there).
Numba compiles each new (op, dtype, direction) specialisation once per
process, so each semiring is tested on one dtype combination.
"""

import itertools
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import blas_reference as ref
from gunpy import blas
from gunpy.testing import ON_CUDASIM

MAX_N = 5 if ON_CUDASIM else 9
COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                    HealthCheck.data_too_large,
                                                    HealthCheck.filter_too_much])


def _examples(div):
    """A share of the profile's examples (the heavy tests loop over many options per example)."""
    return max(2, settings().max_examples // div)


# ----------------------------------------------------------------------------- data
VALUE = {
    # quarters: exact in floating point, so sums in any order agree; 0 is an explicit zero
    "FP64": st.integers(-8, 12).map(lambda k: k / 4),
    "INT64": st.integers(-3, 5),
    "BOOL": st.booleans(),
}
DT = {"FP64": np.float64, "INT64": np.int64, "BOOL": np.bool_}


DENSITY = st.sampled_from([0, 2, 4, 7, 10])   # tenths: empty ... full


def _some(draw, items):
    """A random subset of ``items`` at a drawn density (so that dense cases come up often)."""
    density = draw(DENSITY)
    if density in (0, 10):
        return list(items) if density else []
    return [x for x in items if draw(st.integers(0, 9)) < density]


@st.composite
def vector_specs(draw, n, dtype):
    idx = _some(draw, draw(st.permutations(range(n))))
    vals = draw(st.lists(VALUE[dtype], min_size=len(idx), max_size=len(idx)))
    return {"n": n, "dtype": dtype, "idx": idx, "vals": vals}


@st.composite
def matrix_specs(draw, n, dtype):
    cells = _some(draw, [(i, j) for i in range(n) for j in range(n)])
    if n and draw(st.booleans()):          # self-loops
        cells = list(dict.fromkeys(cells + [(i, i) for i in range(0, n, 2)]))
    vals = draw(st.lists(VALUE[dtype], min_size=len(cells), max_size=len(cells)))
    return {"n": n, "dtype": dtype, "cells": cells, "vals": vals}


MASK_VALUE = st.sampled_from([0.0, 1.0, 2.5])


@st.composite
def problems(draw, u_dtype="FP64", a_dtype="FP64", w_dtype=None, min_n=1):
    """A matrix A, an input vector u, an output vector w, a mask vector m (FP64 with zeros)."""
    n = draw(st.integers(min_n, MAX_N))
    A = draw(matrix_specs(n, a_dtype))
    u = draw(vector_specs(n, u_dtype))
    w = draw(vector_specs(n, w_dtype or u_dtype))
    midx = _some(draw, range(n))
    m = {"n": n, "dtype": "FP64", "idx": midx,
         "vals": draw(st.lists(MASK_VALUE, min_size=len(midx), max_size=len(midx)))}
    return {"n": n, "A": A, "u": u, "w": w, "m": m}


def g_vec(spec, backend, dtype=None):
    dt = DT[dtype or spec["dtype"]]
    return blas.Vector.from_coo(np.array(spec["idx"], dtype=np.int64),
                                np.array(spec["vals"], dtype=dt), dtype=dt, size=spec["n"],
                                backend=backend)


def r_vec(spec, dtype=None):
    return ref.vector_from_coo(spec["idx"], spec["vals"], spec["n"], DT[dtype or spec["dtype"]])


def _cells(spec):
    c = np.array(spec["cells"], dtype=np.int64).reshape(-1, 2)
    return c[:, 0], c[:, 1]


def g_mat(spec, backend):
    r, c = _cells(spec)
    dt = DT[spec["dtype"]]
    return blas.Matrix.from_coo(r, c, np.array(spec["vals"], dtype=dt), dtype=dt,
                                nrows=spec["n"], ncols=spec["n"], backend=backend)


def r_mat(spec):
    r, c = _cells(spec)
    return ref.matrix_from_coo(r.tolist(), c.tolist(), spec["vals"], spec["n"],
                               DT[spec["dtype"]])


def g_mask(m, kind):
    return {None: None, "S": m.S, "V": m.V, "~S": ~m.S, "~V": ~m.V}[kind]


def check(vec, expect, what):
    idx, vals = vec.to_coo()
    ref.check_vector(idx, vals, expect, what)


# ----------------------------------------------------------------------------- graphblas
def _gb():
    gb = pytest.importorskip("graphblas")
    return gb


def gb_semiring(gb, name):
    """python-graphblas's semiring (SuiteSparse-specific ones live under ``ss``)."""
    if hasattr(gb.semiring.ss, name):
        return getattr(gb.semiring.ss, name)
    return getattr(gb.semiring, name)


def gb_binary(gb, name):
    if hasattr(gb.binary.ss, name):
        return getattr(gb.binary.ss, name)
    return getattr(gb.binary, name)


def gb_vec(gb, spec, dtype=None):
    dt = DT[dtype or spec["dtype"]]
    return gb.Vector.from_coo(np.array(spec["idx"], dtype=np.int64),
                              np.array(spec["vals"], dtype=dt), dtype=dt, size=spec["n"])


def gb_mat(gb, spec):
    r, c = _cells(spec)
    dt = DT[spec["dtype"]]
    return gb.Matrix.from_coo(r, c, np.array(spec["vals"], dtype=dt), dtype=dt,
                              nrows=spec["n"], ncols=spec["n"])


def gb_mask(m, kind):
    return {None: None, "S": m.S, "V": m.V, "~S": ~m.S, "~V": ~m.V}[kind]


# ----------------------------------------------------------------------------- the semirings
# (name, u dtype, A dtype): one dtype combination each (each is a numba specialisation)
SEMIRINGS = [
    ("min_plus", "FP64", "FP64"),
    ("plus_times", "INT64", "INT64"),
    ("plus_pair", "FP64", "FP64"),
    ("plus_first", "FP64", "FP64"),
    ("plus_second", "INT64", "INT64"),
    ("any_pair", "BOOL", "BOOL"),
    ("any_secondi", "FP64", "FP64"),
    ("lor_land", "BOOL", "BOOL"),
    ("land_lor", "BOOL", "BOOL"),
    ("min_first", "INT64", "INT64"),
    ("min_second", "FP64", "FP64"),
    ("max_plus", "INT64", "INT64"),
    ("plus_min", "FP64", "FP64"),
    ("times_times", "INT64", "INT64"),
    ("plus_firsti", "FP64", "FP64"),
    ("min_secondj", "FP64", "FP64"),
    ("max_firstj1", "INT64", "INT64"),
]
# the core set runs by default (numba compiles ~6 kernels per semiring: vxm / mxv x push /
# pull, about a second each); the others are ``large`` and run with ``--fuzz`` (GUNPY_FUZZ=1)
CORE = {"min_plus", "plus_times", "any_secondi", "lor_land", "times_times", "plus_firsti"}
ACCUMS = [None, "plus", "min"]
MASKS = [None, "S", "V", "~S", "~V"]
DIRECTIONS = ["push", "pull", "auto"]
KINDS = ["vxm", "mxv"]
COMBOS = [(kind, mk, rep, acc, d) for kind in KINDS for mk in MASKS
          for rep in ((False, True) if mk else (False,)) for acc in ACCUMS for d in DIRECTIONS]


def _sr_params():
    out = []
    for name, udt, adt in SEMIRINGS:
        marks = [] if name in CORE else [pytest.mark.large]
        out.append(pytest.param(name, udt, adt, marks=marks, id=name))
    return out


@pytest.fixture(scope="session")
def full(request):
    """The whole matrix (every semiring, every option combination): ``--fuzz`` / GUNPY_FUZZ."""
    return bool(request.config.getoption("--fuzz") or os.environ.get("GUNPY_FUZZ"))


def _need_full(full, what):
    if not full:
        pytest.skip(f"{what}: part of the extended matrix, run with --fuzz (or GUNPY_FUZZ=1)")


def _out_dtype(name, udt, adt):
    sr = ref.semiring(name)
    return ref.product_types(sr, DT[udt], DT[adt])[1]


def _dtname(dt):
    return {np.dtype(np.float64): "FP64", np.dtype(np.int64): "INT64",
            np.dtype(np.bool_): "BOOL"}[np.dtype(dt)]


def _expr(sr, kind, u, A, direction=None):
    e = u @ A if kind == "vxm" else A @ u
    return sr(e) if direction is None else sr(e, direction=direction)


# ----------------------------------------------------------------------------- 1. the oracle
@settings(max_examples=_examples(3), **COMMON)
@given(data=st.data())
def test_reference_products_match_graphblas(data):
    """vxm / mxv under every semiring of the matrix, with masks, accum and replace."""
    gb = _gb()
    name, udt, adt = data.draw(st.sampled_from(SEMIRINGS))
    odt = _dtname(_out_dtype(name, udt, adt))
    p = data.draw(problems(udt, adt, odt))
    A, gA = r_mat(p["A"]), gb_mat(gb, p["A"])
    u, gu = r_vec(p["u"]), gb_vec(gb, p["u"])
    m, gm = r_vec(p["m"]), gb_vec(gb, p["m"])
    w, gw = r_vec(p["w"]), gb_vec(gb, p["w"])
    sr, gsr = ref.semiring(name), gb_semiring(gb, name)
    for kind in KINDS:
        t = ref.vxm(u, A, sr) if kind == "vxm" else ref.mxv(A, u, sr)
        gexpr = gsr(gu @ gA) if kind == "vxm" else gsr(gA @ gu)
        gt = gexpr.new()
        ref.check_vector(*gt.to_coo(), t, f"{name} {kind}")
        for mk, acc in itertools.product(MASKS, ACCUMS):
            for rep in ((False, True) if mk else (False,)):
                gw2 = gw.dup()
                gw2(mask=gb_mask(gm, mk), accum=None if acc is None else getattr(gb.binary, acc),
                    replace=rep) << gexpr
                expect = ref.write(w, t, m, mk, acc, rep)
                ref.check_vector(*gw2.to_coo(), expect, f"{name} {kind} {mk} {acc} {rep}")


@settings(max_examples=_examples(3), **COMMON)
@given(p=problems("FP64", "FP64"), name=st.sampled_from(["plus_times", "min_plus", "plus_pair",
                                                        "plus_firsti", "min_secondj",
                                                        "max_secondi1", "plus_firstj"]))
def test_reference_mxm_matches_graphblas(p, name):
    gb = _gb()
    A, gA = r_mat(p["A"]), gb_mat(gb, p["A"])
    B = ref.transpose(A)
    gB = gA.T.new()
    M, gM = A, gA   # the mask: A's own structure / nonzero values
    for kind in ("S", "V"):
        expect, _ = ref.mxm(A, B, ref.semiring(name), M, kind)
        gC = gb_semiring(gb, name)(gA @ gB).new(mask=gM.S if kind == "S" else gM.V)
        ref.check_matrix_entries(*gC.to_coo(), expect, f"{name} {kind}")
    full, _ = ref.mxm(A, B, ref.semiring(name))
    gC = gb_semiring(gb, name)(gA @ gB).new()
    ref.check_matrix_entries(*gC.to_coo(), full, f"{name} unmasked")


EWISE_OPS = ["plus", "minus", "times", "min", "max", "first", "second", "pair", "eq", "lt",
             "lor", "land", "lxor"]


@settings(max_examples=_examples(3), **COMMON)
@given(p=problems("INT64", "INT64", "FP64"), op=st.sampled_from(EWISE_OPS))
def test_reference_ewise_apply_select_reduce_match_graphblas(p, op):
    gb = _gb()
    # the logical ops on BOOL (on numbers SuiteSparse types them in the numeric type)
    b = "BOOL" if op in ref.LOGICAL else None
    ue, gue = r_vec(p["u"], b), gb_vec(gb, p["u"], b)
    ve, gve = r_vec(p["w"], b), gb_vec(gb, p["w"], b)
    ref.check_vector(*gue.ewise_add(gve, gb_binary(gb, op)).new().to_coo(),
                     ref.ewise_add(ue, ve, op), f"ewise_add {op}")
    ref.check_vector(*gue.ewise_mult(gve, gb_binary(gb, op)).new().to_coo(),
                     ref.ewise_mult(ue, ve, op), f"ewise_mult {op}")
    u, gu = r_vec(p["u"]), gb_vec(gb, p["u"])
    # on FP64 (gb's minv / lnot on integers keep the integer type; gunpy's give FP64 / BOOL)
    uf, guf = r_vec(p["u"], "FP64"), gb_vec(gb, p["u"], "FP64")
    for un in ("abs", "ainv", "minv", "lnot", "one", "identity"):
        ref.check_vector(*guf.apply(getattr(gb.unary, un)).new().to_coo(),
                         ref.apply_unary(uf, un), f"apply {un}")
    ref.check_vector(*gu.apply(gb_binary(gb, op), right=2).new().to_coo(),
                     ref.apply_bind(u, op, 2, np.int64, "right"), f"apply {op} right")
    ref.check_vector(*gu.apply(gb_binary(gb, op), left=2.5).new().to_coo(),
                     ref.apply_bind(u, op, 2.5, np.float64, "left"), f"apply {op} left")
    for sel in ("valueeq", "valuene", "valuelt", "valuele", "valuegt", "valuege", "indexle",
                "indexgt"):
        ref.check_vector(*gu.select(getattr(gb.select, sel), 1).new().to_coo(),
                         ref.select(u, sel, 1), f"select {sel}")
    for mon in ("plus", "times", "min", "max", "any"):
        s = gu.reduce(getattr(gb.monoid, mon)).new()
        expect = ref.reduce(u, ref.monoid(mon))
        assert (s.value is None) == (expect is None)
        if expect is not None:
            assert any(ref.same_value(s.value, c) for c in expect), (mon, s.value, expect)
    ub = r_vec(p["u"], "BOOL")
    gub = gb_vec(gb, p["u"], "BOOL")
    for mon in ("lor", "land", "lxor", "eq"):   # gb has no plus/min/max/times on BOOL
        s = gub.reduce(getattr(gb.monoid, mon)).new()
        expect = ref.reduce(ub, ref.monoid(mon))
        assert (s.value is None) == (expect is None)
        if expect is not None:
            assert s.value in expect, (mon, s.value, expect)
    A, gA = r_mat({**p["A"], "dtype": "INT64"}), gb_mat(gb, {**p["A"], "dtype": "INT64"})
    for mon in ("plus", "min", "max", "times"):
        ref.check_vector(*gA.reduce_rowwise(getattr(gb.monoid, mon)).new().to_coo(),
                         ref.reduce_rows(A, ref.monoid(mon)), f"rowwise {mon}")
        ref.check_vector(*gA.reduce_columnwise(getattr(gb.monoid, mon)).new().to_coo(),
                         ref.reduce_rows(ref.transpose(A), ref.monoid(mon)), f"colwise {mon}")


def test_reference_positional_conventions_match_graphblas():
    """The positional conventions of the brief, spelled out on a 3 x 3 example."""
    gb = _gb()
    spec = {"n": 3, "dtype": "FP64", "cells": [(0, 1), (1, 2), (2, 0), (2, 2)],
            "vals": [1.0, 2.0, 3.0, 4.0]}
    uspec = {"n": 3, "dtype": "FP64", "idx": [0, 1, 2], "vals": [1.0, 1.0, 1.0]}
    A, gA = r_mat(spec), gb_mat(gb, spec)
    u, gu = r_vec(uspec), gb_vec(gb, uspec)
    for pos in sorted(ref.POSITIONAL):
        for mon in ("min", "max"):
            name = f"{mon}_{pos}"
            sr, gsr = ref.semiring(name), gb_semiring(gb, name)
            ref.check_vector(*gsr(gu @ gA).new().to_coo(), ref.vxm(u, A, sr), f"vxm {name}")
            ref.check_vector(*gsr(gA @ gu).new().to_coo(), ref.mxv(A, u, sr), f"mxv {name}")
    # vxm secondj = j, mxv firsti = i, their firsti / secondj = 0
    assert ref.vxm(u, A, ref.semiring("min_secondj")).values == [(0,), (1,), (2,)]
    assert ref.mxv(A, u, ref.semiring("max_firsti1")).values == [(1,), (2,), (3,)]
    assert ref.vxm(u, A, ref.semiring("max_firsti")).values == [(0,), (0,), (0,)]
    assert ref.mxv(A, u, ref.semiring("max_secondj")).values == [(0,), (0,), (0,)]


# ----------------------------------------------------------------------------- 2. gunpy.blas
def _combos(data, full):
    """The option combinations of one example: all of them with ``--fuzz``; in the simulator
    three; else every (kind, mask, direction) with accum and replace drawn for each."""
    if full:
        return COMBOS
    if ON_CUDASIM:
        return data.draw(st.lists(st.sampled_from(COMBOS), min_size=3, max_size=3, unique=True))
    out = []
    for kind, mk, d in itertools.product(KINDS, MASKS, DIRECTIONS):
        acc = data.draw(st.sampled_from(ACCUMS))
        out.append((kind, mk, mk is not None and data.draw(st.booleans()), acc, d))
    return out


def _check_products(name, udt, adt, p, backend, combos):
    odt = _out_dtype(name, udt, adt)
    A, gA = r_mat(p["A"]), g_mat(p["A"], backend)
    u, gu = r_vec(p["u"]), g_vec(p["u"], backend)
    m, gm = r_vec(p["m"]), g_vec(p["m"], backend)
    w, gw = r_vec(p["w"], _dtname(odt)), g_vec(p["w"], backend, _dtname(odt))
    sr, gsr = ref.semiring(name), getattr(blas.semiring, name)
    ts = {"vxm": ref.vxm(u, A, sr), "mxv": ref.mxv(A, u, sr)}
    for n, (kind, mk, rep, acc, d) in enumerate(combos):
        t = ts[kind]
        what = f"{name} {kind} mask={mk} replace={rep} accum={acc} direction={d}"
        gacc = None if acc is None else getattr(blas.binary, acc)
        out = gw.dup()
        if n % 2:
            out(g_mask(gm, mk), accum=gacc, replace=rep, direction=d) << _expr(gsr, kind, gu, gA)
        else:
            out(g_mask(gm, mk), accum=gacc, replace=rep) << _expr(gsr, kind, gu, gA, d)
        check(out, ref.write(w, t, m, mk, acc, rep), what)
        if acc is None and not rep:
            res = _expr(gsr, kind, gu, gA).new(mask=g_mask(gm, mk), direction=d)
            assert res.dtype == odt, (what, res.dtype)
            check(res, ref.write(ref.empty_vector(p["n"], odt), t, m, mk), what + " .new")
    check(gw, w, "w is untouched (the outputs were copies)")
    check(gu, u, "u is untouched")


@pytest.mark.parametrize("name, udt, adt", _sr_params())
@settings(max_examples=_examples(3) if not ON_CUDASIM else 2, **COMMON)
@given(data=st.data())
def test_products(name, udt, adt, data, backend, full):
    """vxm and mxv: semiring x mask kind x replace x accum x direction against the reference."""
    if name not in CORE:
        _need_full(full, name)
    odt = _dtname(_out_dtype(name, udt, adt))
    p = data.draw(problems(udt, adt, odt))
    _check_products(name, udt, adt, p, backend, _combos(data, full))



def _tiny_problem(udt, adt, odt):
    """n = 6: a self-loop, an empty row and column, repeated and zero values, u at 4 of 6."""
    val = {"FP64": [1.5, -0.25, 0.0, 2.0, -3.0, 0.75, 1.0, 2.0, -1.5, 0.5],
           "INT64": [2, -1, 0, 3, -2, 1, 1, 4, -3, 2],
           "BOOL": [True, False, True, True, False, True, True, False, True, True]}
    cells = [(0, 1), (0, 3), (1, 1), (1, 4), (2, 0), (2, 1), (2, 5), (4, 0), (4, 3), (5, 3)]
    A = {"n": 6, "dtype": adt, "cells": cells, "vals": val[adt]}
    u = {"n": 6, "dtype": udt, "idx": [5, 0, 2, 4], "vals": val[udt][3:7]}
    empty = {"n": 6, "dtype": odt, "idx": [], "vals": []}
    return {"n": 6, "A": A, "u": u, "w": empty, "m": {**empty, "dtype": "FP64"}}


@pytest.mark.parametrize("name, udt, adt", [pytest.param(*s, id=s[0]) for s in SEMIRINGS
                                            if s[0] not in CORE])
def test_every_semiring_on_a_tiny_matrix(name, udt, adt, backend):
    """The semirings outside the core set (whose full matrix runs with ``--fuzz``): a vxm
    push and an mxv pull each, against the reference, in the default CPU and simulator runs."""
    odt = _dtname(_out_dtype(name, udt, adt))
    p = _tiny_problem(udt, adt, odt)
    _check_products(name, udt, adt, p, backend,
                    [("vxm", None, False, None, "push"), ("mxv", None, False, None, "pull")])
    t = ref.mxv(r_mat(p["A"]), r_vec(p["u"]), ref.semiring(name))
    assert t.present.sum() >= 3  # the product is not trivially empty


@pytest.mark.parametrize("density", ["dense", "sparse"])
def test_pull_mxv_without_early_exit(density, backend):
    """plus_times has no terminal value, so its pull reads every in-edge: the warp pull
    without early exit on CUDA, chosen by itself at average in-degree 16 (``dense``) or
    asked for (``sparse``), against NumPy."""
    rng = np.random.default_rng(4)
    n = 24
    keep = rng.random((n, n)) < (0.75 if density == "dense" else 0.15)
    keep[3] = False  # an empty row
    rows, cols = np.nonzero(keep)
    vals = rng.integers(-4, 6, rows.size)
    A = blas.Matrix.from_coo(rows, cols, vals, dtype=np.int64, nrows=n, ncols=n,
                             backend=backend)
    if density == "dense":
        assert rows.size / n >= 16
    u_idx = np.flatnonzero(rng.random(n) < 0.6)
    u_vals = rng.integers(-3, 4, u_idx.size)
    u = blas.Vector.from_coo(u_idx, u_vals, dtype=np.int64, size=n, backend=backend)
    opts = {"direction": "pull"} if density == "dense" else \
        {"direction": "pull", "pull_mapping": "warp"}
    res = blas.semiring.plus_times(A @ u).new(**opts)
    dense_a = np.zeros((n, n), dtype=np.int64)
    dense_a[rows, cols] = vals
    dense_u = np.zeros(n, dtype=np.int64)
    dense_u[u_idx] = u_vals
    has_u = np.zeros(n, dtype=bool)
    has_u[u_idx] = True
    present = (keep & has_u[None, :]).any(axis=1)
    idx, got = res.to_coo()
    assert idx.tolist() == np.flatnonzero(present).tolist()
    assert got.tolist() == (dense_a @ dense_u)[present].tolist()
    assert A.last_stats["strategy"] == ("pull-warp" if backend == "cuda" else "pull-cpu")

@st.composite
def wide_problems(draw, udt, adt, odt):
    """Sizes around the 32-bit words of the bitmaps, sparse and dense inputs."""
    n = draw(st.sampled_from([31, 33, 64, 65]))
    density = draw(st.sampled_from([1, 5, 30, 90]))   # percent

    def some(items):
        return [x for x in items if draw(st.integers(0, 99)) < density] if density < 90 \
            else list(items)
    cells = [(i, j) for i in range(n) for j in range(n)
             if (i * 7919 + j * 104729 + density) % 100 < max(density // 4, 1)]
    spec = lambda idx, dt: {"n": n, "dtype": dt, "idx": idx,   # noqa: E731
                            "vals": draw(st.lists(VALUE[dt], min_size=len(idx),
                                                  max_size=len(idx)))}
    A = {"n": n, "dtype": adt, "cells": cells,
         "vals": draw(st.lists(VALUE[adt], min_size=len(cells), max_size=len(cells)))}
    m = spec(some(range(n)), "FP64")
    m["vals"] = draw(st.lists(MASK_VALUE, min_size=len(m["idx"]), max_size=len(m["idx"])))
    return {"n": n, "A": A, "u": spec(some(range(n)), udt), "w": spec(some(range(n)), odt),
            "m": m}


@pytest.mark.large
@pytest.mark.parametrize("name, udt, adt", [s for s in SEMIRINGS if s[0] in
                                            ("min_plus", "any_secondi", "lor_land")])
@settings(max_examples=_examples(15), **{**COMMON, "suppress_health_check": list(HealthCheck)})
@given(data=st.data())
def test_products_word_boundaries(name, udt, adt, data, backend, cpu_split, full):
    """n around 32 / 64 (the bitmaps' words), with the CPU's work cut into chunks or not."""
    if cpu_split == "serial" or name == "lor_land":
        _need_full(full, "serial / lor_land at the word boundaries")
    odt = _dtname(_out_dtype(name, udt, adt))
    p = data.draw(wide_problems(udt, adt, odt))
    _check_products(name, udt, adt, p, backend, _combos(data, full))


@pytest.mark.parametrize("name, udt, adt", [s for s in SEMIRINGS if s[0] in
                                            ("min_plus", "any_secondi", "lor_land")])
def test_products_edge_shapes(name, udt, adt, backend):
    """n = 0, n = 1 with a self-loop, an empty matrix, an empty input."""
    odt = _dtname(_out_dtype(name, udt, adt))
    one = {"n": 1, "dtype": udt, "idx": [0], "vals": [True if udt == "BOOL" else 2]}
    nothing = {"n": 1, "dtype": udt, "idx": [], "vals": []}
    loop = {"n": 1, "dtype": adt, "cells": [(0, 0)], "vals": [True if adt == "BOOL" else 3]}
    bare = {"n": 1, "dtype": adt, "cells": [], "vals": []}
    mask = {"n": 1, "dtype": "FP64", "idx": [0], "vals": [0.0]}
    combos = [c for c in COMBOS if c[3] is None and c[4] != "auto" and
              (not ON_CUDASIM or c[1] in (None, "~S"))]
    for A, u in ((loop, one), (loop, nothing), (bare, one)):
        p = {"n": 1, "A": A, "u": u, "w": {**one, "dtype": odt}, "m": mask}
        _check_products(name, udt, adt, p, backend, combos)
    z = {"n": 0, "dtype": udt, "idx": [], "vals": []}
    p0 = {"n": 0, "A": {"n": 0, "dtype": adt, "cells": [], "vals": []}, "u": z,
          "w": {**z, "dtype": odt}, "m": {**z, "dtype": "FP64"}}
    _check_products(name, udt, adt, p0, backend,
                    [c for c in COMBOS if c[1] in (None, "S") and c[3] != "min"])


@settings(max_examples=_examples(3) if not ON_CUDASIM else 2, **COMMON)
@given(p=problems("FP64", "FP64", "INT64"), mk=st.sampled_from(MASKS),
       acc=st.sampled_from(ACCUMS), rep=st.booleans())
def test_products_cast_into_w(p, mk, acc, rep, backend):
    """The result written into a w of another type (FP64 -> INT64 truncates), ``.new(dtype=)``,
    and a BOOL mask vector."""
    rep = rep and mk is not None
    A, gA = r_mat(p["A"]), g_mat(p["A"], backend)
    u, gu = r_vec(p["u"]), g_vec(p["u"], backend)
    w, gw = r_vec(p["w"]), g_vec(p["w"], backend)
    m, gm = r_vec(p["m"], "BOOL"), g_vec(p["m"], backend, "BOOL")
    t = ref.vxm(u, A, ref.semiring("min_plus"))
    out = gw.dup()
    out(g_mask(gm, mk), accum=None if acc is None else getattr(blas.binary, acc),
        replace=rep) << blas.semiring.min_plus(gu @ gA)
    check(out, ref.write(w, t, m, mk, acc, rep), f"FP64 into INT64 {mk} {acc} {rep}")
    res = blas.semiring.min_plus(gu @ gA).new(dtype="INT64", mask=g_mask(gm, mk))
    assert res.dtype == np.int64
    check(res, ref.write(ref.empty_vector(p["n"], np.int64), t, m, mk), "new(dtype=INT64)")


def test_matrix_constructors(backend):
    """An iso value (structure only when 1.0), from_graph (unweighted: 1.0), explicit zeros."""
    import gunpy
    r, c = [0, 0, 1, 2], [1, 2, 2, 2]
    u = blas.Vector.from_coo([0, 1], [1.0, 10.0], size=3, backend=backend)
    for value, expect in ((1.0, [2.0, 2.0]), (2.5, [3.5, 3.5]), (0.0, [1.0, 1.0])):
        A = blas.Matrix.from_coo(r, c, value, nrows=3, ncols=3, backend=backend)
        assert A.nvals == 4
        res = blas.semiring.min_plus(u @ A).new(direction="push")
        assert res.to_coo()[0].tolist() == [1, 2] and res.to_coo()[1].tolist() == expect, value
    G = gunpy.Graph.from_edges(np.array(r), np.array(c), num_vertices=3, directed=True,
                               remove_self_loops=False)
    A = blas.Matrix.from_graph(G, backend=backend)
    assert A.to_coo()[2].tolist() == [1.0] * 4
    res = blas.semiring.plus_times(A @ u).new()
    assert res.to_coo()[0].tolist() == [0] and res.to_coo()[1].tolist() == [10.0]


# ----------------------------------------------------------------------------- masked mxm
MXM = [("plus_pair", "FP64"), ("plus_times", "INT64"), ("min_plus", "FP64"),
       ("any_pair", "BOOL"), ("max_secondi1", "FP64")]


def _mxm_or_skip(fn):
    try:
        return fn()
    except NotImplementedError as e:
        pytest.skip(f"gunpy.blas: {e}")


@pytest.mark.parametrize("name, dt", [pytest.param(*x, marks=[] if x[0] in ("plus_pair",
                                                                           "plus_times")
                                                   else [pytest.mark.large], id=x[0])
                                      for x in MXM])
@settings(max_examples=_examples(3) if not ON_CUDASIM else 2, **COMMON)
@given(data=st.data())
def test_masked_mxm(name, dt, data, backend):
    """``semiring(A @ B).new(mask=M.S / M.V)`` against the reference (B = A.T: triangles'
    shape, and a second random B)."""
    n = data.draw(st.integers(1, MAX_N))
    Aspec = data.draw(matrix_specs(n, dt))
    Bspec = data.draw(matrix_specs(n, dt))
    Mspec = data.draw(matrix_specs(n, "FP64"))
    A, B, M = r_mat(Aspec), r_mat(Bspec), r_mat(Mspec)
    gA, gB, gM = g_mat(Aspec, backend), g_mat(Bspec, backend), g_mat(Mspec, backend)
    sr, gsr = ref.semiring(name), getattr(blas.semiring, name)
    for (X, gX), (Y, gY) in (((A, gA), (B, gB)), ((A, gA), (ref.transpose(A), gA.T))):
        for kind in ("S", "V"):
            for (mask, gmask) in ((M, gM), (A, gA)):
                expect, _ = ref.mxm(X, Y, sr, mask, kind)
                gm = gmask.S if kind == "S" else gmask.V
                C = _mxm_or_skip(lambda: gsr(gX @ gY).new(mask=gm))
                ref.check_matrix_entries(*C.to_coo(), expect, f"{name} mask {kind}")


def test_mxm_unmasked_and_complemented(backend):
    """General SpGEMM (Gustavson; tests/operators/test_spgemm.py checks it against SuiteSparse)."""
    A = blas.Matrix.from_coo([0, 1, 1], [1, 2, 0], [1.0, 2.0, 3.0], nrows=3, ncols=3,
                             backend=backend)
    C = blas.semiring.plus_pair(A @ A).new()
    assert [x.tolist() for x in C.to_coo()] == [[0, 0, 1], [0, 2, 1], [1, 1, 1]]
    C = blas.semiring.plus_times(A @ A).new(mask=~A.S)
    assert [x.tolist() for x in C.to_coo()] == [[0, 0, 1], [0, 2, 1], [3.0, 2.0, 3.0]]
    M = blas.Matrix.from_coo([0, 1], [2, 1], [1.0, 0.0], nrows=3, ncols=3, backend=backend)
    C = blas.semiring.plus_times(A @ A).new(mask=~M.S)
    assert [x.tolist() for x in C.to_coo()] == [[0], [0], [3.0]]
    C = blas.semiring.plus_times(A @ A).new(mask=~M.V)   # M(1, 1) = 0 does not block
    assert [x.tolist() for x in C.to_coo()] == [[0, 1], [0, 1], [3.0, 3.0]]


# ----------------------------------------------------------------------------- element-wise
@settings(max_examples=_examples(2) if not ON_CUDASIM else 3, **COMMON)
@given(p=problems("FP64", "FP64", "FP64"),
       op=st.sampled_from(["plus", "minus", "lt", "times", "min", "max", "first", "second"]),
       mk=st.sampled_from(MASKS), acc=st.sampled_from(ACCUMS), rep=st.booleans())
def test_ewise(p, op, mk, acc, rep, backend, full):
    """Union and intersection (plus, minus: non-commutative, lt: a bool result; the others
    with --fuzz), then written through mask / accum / replace."""
    if op not in ("plus", "minus", "lt") and not full:
        op = "plus"
    rep = rep and mk is not None
    u, gu = r_vec(p["u"]), g_vec(p["u"], backend)
    v, gv = r_vec(p["w"]), g_vec(p["w"], backend)
    m, gm = r_vec(p["m"]), g_vec(p["m"], backend)
    gop = getattr(blas.binary, op)
    for union in (True, False):
        t = ref.ewise_add(u, v, op) if union else ref.ewise_mult(u, v, op)
        expr = gu.ewise_add(gv, gop) if union else gu.ewise_mult(gv, gop)
        check(expr.new(), t, f"ewise {'add' if union else 'mult'} {op}")
        if t.dtype == np.float64:
            out = gv.dup()
            out(g_mask(gm, mk), accum=None if acc is None else getattr(blas.binary, acc),
                replace=rep) << expr
            check(out, ref.write(v, t, m, mk, acc, rep), f"ewise {op} {mk} {acc} {rep}")


@settings(max_examples=_examples(2) if not ON_CUDASIM else 3, **COMMON)
@given(p=problems("INT64", "INT64", "INT64"))
def test_ewise_int_and_bool(p, backend):
    u, gu = r_vec(p["u"]), g_vec(p["u"], backend)
    v, gv = r_vec(p["w"]), g_vec(p["w"], backend)
    check(gu.ewise_add(gv, blas.binary.plus).new(), ref.ewise_add(u, v, "plus"), "int plus")
    check(gu.ewise_mult(gv, blas.binary.min).new(), ref.ewise_mult(u, v, "min"), "int min")
    ub, gub = r_vec(p["u"], "BOOL"), g_vec(p["u"], backend, "BOOL")
    vb, gvb = r_vec(p["w"], "BOOL"), g_vec(p["w"], backend, "BOOL")
    check(gub.ewise_add(gvb, blas.binary.lor).new(), ref.ewise_add(ub, vb, "lor"), "lor")
    check(gub.ewise_mult(gvb, blas.binary.lxor).new(), ref.ewise_mult(ub, vb, "lxor"), "lxor")


@settings(max_examples=_examples(2) if not ON_CUDASIM else 3, **COMMON)
@given(p=problems("FP64", "FP64", "FP64"), mk=st.sampled_from(MASKS),
       acc=st.sampled_from(ACCUMS), rep=st.booleans())
def test_apply_and_select(p, mk, acc, rep, backend, full):
    rep = rep and mk is not None
    u, gu = r_vec(p["u"]), g_vec(p["u"], backend)
    w, gw = r_vec(p["w"]), g_vec(p["w"], backend)
    m, gm = r_vec(p["m"]), g_vec(p["m"], backend)
    for un in ("abs", "ainv", "one", "lnot") + (("identity",) if full else ()):
        check(gu.apply(getattr(blas.unary, un)).new(), ref.apply_unary(u, un), f"apply {un}")
    nz = u.present & np.array([x != (0.0,) for x in u.values], dtype=bool)
    u_nz = ref.RefVector([x if nz[i] else () for i, x in enumerate(u.values)], nz, u.dtype)
    check(gu.select("!=", 0.0).new().apply(blas.unary.minv).new(), ref.apply_unary(u_nz, "minv"),
          "apply minv (nonzero entries; minv(0) is test_apply_minv_of_zero)")
    check(gu.apply(blas.binary.minus, right=1.5).new(),
          ref.apply_bind(u, "minus", 1.5, np.float64, "right"), "apply minus right")
    check(gu.apply(blas.binary.minus, left=1.5).new(),
          ref.apply_bind(u, "minus", 1.5, np.float64, "left"), "apply minus left")
    check(gu.apply(blas.binary.max, right=blas.Scalar(float, 0.5)).new(),
          ref.apply_bind(u, "max", 0.5, np.float64, "right"), "apply max Scalar")
    check(gu.apply(blas.monoid.plus, left=2.0).new(),
          ref.apply_bind(u, "plus", 2.0, np.float64, "left"), "apply monoid")
    sels = (("valueeq", "=="), ("valuene", "!="), ("valuelt", "<"), ("valuele", "<="),
            ("valuegt", ">"), ("valuege", ">="))
    for sel, alias in sels if full else sels[::2]:
        check(gu.select(alias, 0.5).new(), ref.select(u, sel, 0.5), f"select {alias}")
        check(gu.select(getattr(blas.select, sel), 0.0).new(), ref.select(u, sel, 0.0), sel)
    for sel in ("indexle", "indexgt") if full else ("indexle",):
        check(gu.select(getattr(blas.select, sel), 2).new(), ref.select(u, sel, 2), sel)
    t = ref.apply_unary(u, "ainv")
    out = gw.dup()
    out(g_mask(gm, mk), accum=None if acc is None else getattr(blas.binary, acc),
        replace=rep) << gu.apply(blas.unary.ainv)
    check(out, ref.write(w, t, m, mk, acc, rep), f"apply ainv {mk} {acc} {rep}")
    t = ref.select(u, "valuegt", 0.0)
    out = gw.dup()
    out(g_mask(gm, mk), accum=None if acc is None else getattr(blas.binary, acc),
        replace=rep) << gu.select(">", 0.0)
    check(out, ref.write(w, t, m, mk, acc, rep), f"select {mk} {acc} {rep}")


def test_apply_minv_of_zero(backend):
    """minv(0.0) is inf (IEEE division, as in SuiteSparse and on CUDA), and so is x / 0."""
    u = blas.Vector.from_coo([0, 1], [0.0, 2.0], size=2, backend=backend)
    assert u.apply(blas.unary.minv).new().to_coo()[1].tolist() == [np.inf, 0.5]
    A = blas.Matrix.from_coo([0, 1], [1, 1], [0.0, 4.0], nrows=2, ncols=2, backend=backend)
    res = blas.semiring.plus_truediv(u @ A).new(direction="pull")
    assert np.isnan(res.to_coo()[1]).tolist() == [True]   # 0/0 + 2/4: nan, no exception
    v = blas.Vector.from_coo([0], [1.0], size=2, backend=backend)
    assert blas.semiring.plus_truediv(v @ A).new().to_coo()[1].tolist() == [np.inf]


def test_failed_product_leaves_no_stale_workspace(backend):
    """An op that raises mid-product must not poison later products (the shared workspace
    must hold the identity again)."""
    if backend != "cpu":
        pytest.skip("device code cannot raise on the CUDA target")

    def picky(x, y):
        if y == 0.0:
            raise ValueError("picky: zero")
        return x * y

    sr = blas.semiring.register_anonymous(blas.monoid.plus, picky)
    A = blas.Matrix.from_coo([0, 1, 2], [1, 2, 2], [2.0, 4.0, 0.0], nrows=4, ncols=4,
                             backend=backend)
    u = blas.Vector.from_coo([0, 1, 2], [1.0, 1.0, 1.0], size=4, backend=backend)
    with pytest.raises(ValueError, match="picky"):
        sr(u @ A).new(direction="push")
    res = blas.semiring.plus_times(u @ A).new(direction="push")
    assert res.to_coo()[0].tolist() == [1, 2] and res.to_coo()[1].tolist() == [2.0, 4.0]


@settings(max_examples=_examples(2) if not ON_CUDASIM else 3, **COMMON)
@given(p=problems("FP64", "FP64", "FP64"), mk=st.sampled_from(MASKS),
       acc=st.sampled_from(ACCUMS), rep=st.booleans())
def test_assign_vector_and_scalar(p, mk, acc, rep, backend):
    """``w(mask, accum, replace) << v`` and ``<< scalar``: the write rule on its own."""
    rep = rep and mk is not None
    u, gu = r_vec(p["u"]), g_vec(p["u"], backend)
    w, gw = r_vec(p["w"]), g_vec(p["w"], backend)
    m, gm = r_vec(p["m"]), g_vec(p["m"], backend)
    gacc = None if acc is None else getattr(blas.binary, acc)
    out = gw.dup()
    out(g_mask(gm, mk), accum=gacc, replace=rep) << gu
    check(out, ref.write(w, u, m, mk, acc, rep), f"<< v {mk} {acc} {rep}")
    check(gu, u, "the assigned vector is untouched")
    n = p["n"]
    full = ref.vector([1.5] * n, [True] * n, np.float64)
    out = gw.dup()
    out(g_mask(gm, mk), accum=gacc, replace=rep) << 1.5
    check(out, ref.write(w, full, m, mk, acc, rep), f"<< 1.5 {mk} {acc} {rep}")


# ----------------------------------------------------------------------------- reductions
@settings(max_examples=_examples(2) if not ON_CUDASIM else 3, **COMMON)
@given(p=problems("INT64", "INT64", "FP64"))
def test_vector_reduce_each_monoid(p, backend):
    for dtype, monoids in (("INT64", ("plus", "times", "min", "max", "any")),
                           ("FP64", ("plus", "times", "min", "max", "any")),
                           ("BOOL", ("lor", "land", "lxor", "eq", "any", "plus", "min",
                                     "max", "times"))):
        u, gu = r_vec(p["u"], dtype), g_vec(p["u"], backend, dtype)
        for mon in monoids:
            s = gu.reduce(getattr(blas.monoid, mon)).new()
            expect = ref.reduce(u, ref.monoid(mon))
            assert (s.value is None) == (expect is None), (dtype, mon, s, expect)
            if expect is not None:
                assert any(ref.same_value(s.value, c) for c in expect), (dtype, mon, s, expect)
            assert gu.reduce(getattr(blas.monoid, mon)).value == s.value or mon == "any"
    u, gu = r_vec(p["u"]), g_vec(p["u"], backend)
    default = gu.reduce().new()
    expect = ref.reduce(u, ref.monoid("plus"))
    assert default.value == (None if expect is None else expect[0])


@settings(max_examples=_examples(3) if not ON_CUDASIM else 2, **COMMON)
@given(p=problems("FP64", "INT64"))
def test_matrix_reduce_rowwise_columnwise(p, backend, full):
    A, gA = r_mat(p["A"]), g_mat(p["A"], backend)
    for mon, rows in (("plus", False), ("min", True), ("max", False)) + \
            ((("plus", True), ("min", False), ("max", True), ("times", True)) if full else ()):
        gm = getattr(blas.monoid, mon)
        if rows:
            check(gA.reduce_rowwise(gm).new(), ref.reduce_rows(A, ref.monoid(mon)),
                  f"rows {mon}")
        else:
            check(gA.reduce_columnwise(gm).new(),
                  ref.reduce_rows(ref.transpose(A), ref.monoid(mon)), f"columns {mon}")
    check(gA.reduce_rowwise().new(), ref.reduce_rows(A, ref.monoid("plus")), "rows default")
    vals = [A.values[i, j] for i in range(A.n) for j in range(A.n) if A.present[i, j]]
    assert gA.reduce_scalar(blas.monoid.max).value == (max(vals) if vals else None)


# ----------------------------------------------------------------------------- user-defined
def _absdiff(x, y):
    return abs(x - y)


def _maxish(x, y):
    return x if x >= y else y


def _mul(x, y):
    return x * y


USER_BIN = blas.binary.register_anonymous(_absdiff, name="absdiff_t")
# a max monoid without a terminal; a times monoid whose terminal 0 is its annihilator
USER_MON = blas.monoid.register_anonymous(blas.binary.register_anonymous(_maxish, "maxish"),
                                          -np.inf)
USER_MON_T = blas.monoid.register_anonymous(blas.binary.register_anonymous(_mul, "mul_t"),
                                            1.0, terminal=0.0)
USER_SR = blas.semiring.register_anonymous(USER_MON, USER_BIN)
USER_SR_T = blas.semiring.register_anonymous(USER_MON_T, USER_BIN)
USER_SR_BUILTIN_MUL = blas.semiring.register_anonymous(USER_MON_T, blas.binary.plus)


def _ref_user(key):
    if key == "max_absdiff":
        return ref.RefSemiring(ref.monoid("user", fn=_maxish), "user", fn=_absdiff)
    mon = ref.monoid("user", fn=_mul)
    if key == "times_plus":
        return ref.RefSemiring(mon, "plus")
    return ref.RefSemiring(mon, "user", fn=_absdiff)


@settings(max_examples=_examples(3) if not ON_CUDASIM else 2, **COMMON)
@given(p=problems("FP64", "FP64"), mk=st.sampled_from(MASKS))
def test_user_defined_ops(p, mk, backend, full):
    """A user binary op, monoids with and without a terminal (a times monoid's annihilator 0:
    early exit must not change the answer), semirings of them, accum, reduce."""
    A, gA = r_mat(p["A"]), g_mat(p["A"], backend)
    u, gu = r_vec(p["u"]), g_vec(p["u"], backend)
    v, gv = r_vec(p["w"]), g_vec(p["w"], backend)
    m, gm = r_vec(p["m"]), g_vec(p["m"], backend)
    cases = [(USER_SR, "max_absdiff", "vxm"), (USER_SR_T, "times_absdiff", "mxv")]
    if full:
        cases += [(USER_SR, "max_absdiff", "mxv"), (USER_SR_T, "times_absdiff", "vxm"),
                  (USER_SR_BUILTIN_MUL, "times_plus", "vxm"),
                  (USER_SR_BUILTIN_MUL, "times_plus", "mxv")]
    for gsr, key, kind in cases:
        t = ref.vxm(u, A, _ref_user(key)) if kind == "vxm" else ref.mxv(A, u, _ref_user(key))
        # no atomic for a user monoid: push runs as pull (one writer per row)
        for d, early in itertools.product(("push", "pull"), (True, False)):
            res = _expr(gsr, kind, gu, gA).new(mask=g_mask(gm, mk), direction=d,
                                                early_exit=early)
            check(res, ref.write(ref.empty_vector(p["n"], np.float64), t, m, mk),
                  f"{gsr.name} {kind} {d} early_exit={early}")
    check(gu.ewise_add(gv, USER_BIN).new(), ref.ewise_add(u, v, "user", _absdiff), "ewise_add")
    check(gu.ewise_mult(gv, USER_BIN).new(), ref.ewise_mult(u, v, "user", _absdiff),
          "ewise_mult")
    out = gv.dup()
    out(g_mask(gm, mk), accum=USER_BIN) << gu
    check(out, ref.write(v, u, m, mk, "user", accum_fn=_absdiff), "user accum")
    s = gu.reduce(USER_MON).new()
    expect = ref.reduce(u, ref.monoid("user", fn=_maxish))
    assert s.value == (None if expect is None else expect[0])


# ----------------------------------------------------------------------------- descriptors
@st.composite
def reuse_problems(draw, kind):
    """A BFS-like step: frontier q inside visited set v, and every masked (visited)
    in-neighbour of an unvisited row is in q, the promise ``operand_reuse`` relies on."""
    n = draw(st.integers(1, MAX_N))
    Aspec = draw(matrix_specs(n, "BOOL"))
    A = r_mat(Aspec)
    P = A.present if kind == "vxm" else A.present.T    # P[k, j]: k feeds row j
    q = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    visited = set(q)
    for x in draw(st.permutations(range(n))):
        if x in visited or not draw(st.booleans()):
            continue
        # x may join v only if it feeds no row outside v (then it is never read)
        if all(P[x, j] == 0 or j in visited or j == x for j in range(n)):
            visited.add(x)
    # v only grows, so the rows outside it only shrink: earlier members stay safe
    return n, Aspec, sorted(q), sorted(visited)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=_examples(3) if not ON_CUDASIM else 3, **COMMON)
@given(data=st.data())
def test_operand_reuse(kind, data, backend, full):
    n, Aspec, q, visited = data.draw(reuse_problems(kind))
    A, gA = r_mat(Aspec), g_mat(Aspec, backend)
    u = ref.vector_from_coo(q, [True] * len(q), n, np.bool_)
    gu = blas.Vector.from_coo(q, np.ones(len(q), dtype=bool), size=n, backend=backend)
    vis = ref.vector_from_coo(visited, [True] * len(visited), n, np.bool_)
    gvis = blas.Vector.from_coo(visited, np.ones(len(visited), dtype=bool), size=n,
                                backend=backend)
    for name in ("any_secondi", "lor_land") + (("any_pair",) if full else ()):
        sr, gsr = ref.semiring(name), getattr(blas.semiring, name)
        t = ref.vxm(u, A, sr) if kind == "vxm" else ref.mxv(A, u, sr)
        expect = ref.write(ref.empty_vector(n, t.dtype), t, vis, "~S")
        for mk in ("~S", "~V"):
            for d in ("pull", "auto"):
                res = _expr(gsr, kind, gu, gA).new(mask=g_mask(gvis, mk), direction=d,
                                                    operand_reuse=True)
                check(res, expect, f"{name} {kind} {mk} {d} operand_reuse")


def test_operand_reuse_needs_a_complemented_mask(backend):
    A = blas.Matrix.from_coo([0, 1], [1, 2], [1.0, 1.0], nrows=3, ncols=3, backend=backend)
    u = blas.Vector.from_coo([0], [1.0], size=3, backend=backend)
    with pytest.raises(ValueError):
        blas.semiring.any_pair(A @ u).new(mask=u.S, direction="pull", operand_reuse=True)
    with pytest.raises(ValueError):
        blas.semiring.any_pair(A @ u).new(direction="pull", operand_reuse=True)


@settings(max_examples=_examples(3) if not ON_CUDASIM else 2, **COMMON)
@given(p=problems("INT64", "INT64"), mk=st.sampled_from(MASKS))
def test_early_exit_off_is_the_same(p, mk, backend, full):
    """``early_exit=False`` computes what the early-exit pull does (and the reference)."""
    gA, gu, gm = g_mat(p["A"], backend), g_vec(p["u"], backend), g_vec(p["m"], backend)
    A, u, m = r_mat(p["A"]), r_vec(p["u"]), r_vec(p["m"])
    for name, kinds in (("times_times", KINDS), ("plus_times", ("mxv",))) + \
            ((("max_plus", KINDS), ("min_first", KINDS)) if full else ()):
        sr, gsr = ref.semiring(name), getattr(blas.semiring, name)
        for kind in kinds:
            t = ref.vxm(u, A, sr) if kind == "vxm" else ref.mxv(A, u, sr)
            expect = ref.write(ref.empty_vector(p["n"], t.dtype), t, m, mk)
            for early in (True, False):
                res = _expr(gsr, kind, gu, gA).new(mask=g_mask(gm, mk), direction="pull",
                                                    early_exit=early)
                check(res, expect, f"{name} {kind} {mk} early_exit={early}")


def test_options_context_manager(backend):
    A = blas.Matrix.from_coo([0, 0, 1, 2], [1, 2, 2, 0], [1.0, 4.0, 2.0, 1.0], nrows=3,
                             ncols=3, backend=backend)
    u = blas.Vector.from_coo([0], [0.0], size=3, backend=backend)
    expect = blas.semiring.min_plus(u @ A).new().to_coo()
    before = blas.descriptor.current()
    with blas.options(direction="pull", early_exit=False) as d:
        assert d.direction == "pull" and d.early_exit is False
        got = blas.semiring.min_plus(u @ A).new().to_coo()
        with blas.options(direction="push") as d2:
            assert d2.direction == "push" and d2.early_exit is False
        assert blas.descriptor.current().direction == "pull"
    assert blas.descriptor.current() == before
    assert all(np.array_equal(a, b) for a, b in zip(expect, got))
    with pytest.raises(TypeError):
        with blas.options(directoin="pull"):
            pass
    assert blas.descriptor.current() == before
    with pytest.raises(ValueError):
        with blas.options(direction="sideways"):
            pass
    with pytest.raises(RuntimeError):
        with blas.options(direction="push"):
            raise RuntimeError("boom")
    assert blas.descriptor.current() == before


# ----------------------------------------------------------------------------- elements
def test_element_get_set_delete(backend):
    v = blas.Vector.from_coo([4, 1], [2.5, -1.0], size=6, backend=backend)
    assert v.nvals == 2 and v[1].value == -1.0 and v[4].value == 2.5 and v[0].value is None
    assert v[-2].value == 2.5 and v.get(0, 7) == 7 and v.get(1) == -1.0
    v[0] = 3
    v[4] = 9.0
    assert v.nvals == 3 and v[0].value == 3.0 and v[4].value == 9.0
    del v[1]
    del v[1]          # absent: nothing happens
    assert v.nvals == 2 and v[1].value is None
    v[1] = blas.Scalar(float)   # an empty scalar deletes
    assert v.nvals == 2
    v[5] = blas.Scalar(float, 0.0)
    idx, vals = v.to_coo()
    assert idx.tolist() == [0, 4, 5] and vals.tolist() == [3.0, 9.0, 0.0]
    # a dense (bitmap) structure: set/delete after an operation that leaves a bitmap
    d = v.ewise_add(blas.Vector.from_coo([2], [1.0], size=6, backend=backend)).new()
    d[3] = 4.0
    del d[0]
    assert d.to_coo()[0].tolist() == [2, 3, 4, 5]
    assert d.to_coo()[1].tolist() == [1.0, 4.0, 9.0, 0.0]


def test_dup_clear_to_coo(backend):
    v = blas.Vector.from_coo([5, 0, 3], [1, 2, 3], size=7, backend=backend)
    assert v.dtype == np.int64
    idx, vals = v.to_coo()
    assert idx.tolist() == [0, 3, 5] and vals.tolist() == [2, 3, 1]
    c = v.dup()
    c[1] = 10
    del c[5]
    assert v.to_coo()[0].tolist() == [0, 3, 5] and v[1].value is None
    assert c.to_coo()[0].tolist() == [0, 1, 3]
    f = v.dup(dtype=float)
    assert f.dtype == np.float64 and f.to_coo()[1].tolist() == [2.0, 3.0, 1.0]
    v.clear()
    assert v.nvals == 0 and v.to_coo()[0].size == 0 and c.nvals == 3
    v[2] = 4
    assert v.to_coo()[0].tolist() == [2]
    e = blas.Vector(blas.DTYPES["FP64"], 4, backend=backend)
    assert e.nvals == 0 and e.size == 4 and e.reduce().value is None


def test_from_coo_dup_op(backend):
    idx = [3, 1, 3, 3, 1, 0]
    vals = [1.0, 5.0, 4.0, 2.0, 7.0, 0.0]
    with pytest.raises(ValueError):
        blas.Vector.from_coo(idx, vals, size=5, backend=backend)
    expect = {"plus": [0.0, 12.0, 7.0], "min": [0.0, 5.0, 1.0], "max": [0.0, 7.0, 4.0],
              "first": [0.0, 5.0, 1.0], "second": [0.0, 7.0, 2.0], "times": [0.0, 35.0, 8.0]}
    for op, out in expect.items():
        v = blas.Vector.from_coo(idx, vals, size=5, dup_op=getattr(blas.binary, op),
                                 backend=backend)
        assert v.to_coo()[0].tolist() == [0, 1, 3] and v.to_coo()[1].tolist() == out, op
    v = blas.Vector.from_coo(idx, vals, size=5, dup_op=USER_BIN, backend=backend)
    assert v.to_coo()[1].tolist() == [0.0, 2.0, abs(abs(1.0 - 4.0) - 2.0)]
    A = blas.Matrix.from_coo([0, 0, 1], [1, 1, 0], [2.0, 3.0, 1.0], nrows=2, ncols=2,
                             dup_op=blas.binary.plus, backend=backend)
    r, c, x = A.to_coo()
    assert r.tolist() == [0, 1] and c.tolist() == [1, 0] and x.tolist() == [5.0, 1.0]
    with pytest.raises(ValueError):
        blas.Matrix.from_coo([0, 0], [1, 1], [2.0, 3.0], nrows=2, ncols=2, backend=backend)


@settings(max_examples=_examples(3) if not ON_CUDASIM else 3, **COMMON)
@given(p=problems("FP64", "FP64"))
def test_matrix_coo_and_transpose(p, backend):
    A, gA = r_mat(p["A"]), g_mat(p["A"], backend)
    rows, cols, vals = gA.to_coo()
    order = np.lexsort((cols, rows))
    assert np.array_equal(order, np.arange(rows.size)), "to_coo is sorted by row, column"
    ref.check_matrix_entries(rows, cols, vals,
                             {(i, j): (A.values[i, j],) for i in range(A.n)
                              for j in range(A.n) if A.present[i, j]}, "to_coo")
    assert gA.nvals == int(A.present.sum()) and gA.shape == (A.n, A.n)
    T = ref.transpose(A)
    tr, tc, tv = gA.T.to_coo()
    assert np.array_equal(np.lexsort((tc, tr)), np.arange(tr.size))
    ref.check_matrix_entries(tr, tc, tv, {(i, j): (T.values[i, j],) for i in range(A.n)
                                          for j in range(A.n) if T.present[i, j]}, "A.T")
    assert gA.T.T.isequal(gA)
    u, gu = r_vec(p["u"]), g_vec(p["u"], backend)
    # (u @ A.T) is (A @ u) for a commutative multiply
    check(blas.semiring.min_plus(gu @ gA.T).new(), ref.mxv(A, u, ref.semiring("min_plus")),
          "u @ A.T")


# ----------------------------------------------------------------------------- bad input
def test_bad_input(backend):
    A = blas.Matrix.from_coo([0, 1], [1, 2], [1.0, 1.0], nrows=3, ncols=3, backend=backend)
    u = blas.Vector.from_coo([0], [1.0], size=3, backend=backend)
    u4 = blas.Vector.from_coo([0], [1.0], size=4, backend=backend)
    sr = blas.semiring.min_plus
    with pytest.raises(ValueError):
        sr(u4 @ A)
    with pytest.raises(ValueError):
        sr(A @ u4)
    with pytest.raises(ValueError):
        u.ewise_add(u4).new()
    with pytest.raises(ValueError):
        u.ewise_mult(u4, blas.binary.times).new()
    with pytest.raises(ValueError):
        sr(u @ A).new(mask=u4.S)
    w = blas.Vector(float, 4, backend=backend)
    with pytest.raises(ValueError):
        w << sr(u @ A)
    with pytest.raises(ValueError):
        w(accum=blas.binary.plus) << u
    with pytest.raises(ValueError):
        u(replace=True) << sr(u @ A)          # replace needs a mask
    # unknown options
    with pytest.raises(TypeError):
        sr(u @ A).new(directoin="push")
    with pytest.raises(TypeError):
        u(u.S, bogus=1) << sr(u @ A)
    with pytest.raises(ValueError):
        sr(u @ A).new(direction="sideways")
    # bad masks
    with pytest.raises(TypeError):
        sr(u @ A).new(mask=u)
    with pytest.raises(TypeError):
        sr(u @ A).new(mask=3)
    with pytest.raises(TypeError):
        u(np.ones(3, dtype=bool)) << sr(u @ A)
    with pytest.raises(TypeError):
        sr(u.ewise_add(u))          # a semiring applies to products
    with pytest.raises(TypeError):
        u.ewise_add(A)
    with pytest.raises(TypeError):
        u.apply(blas.binary.plus)   # needs left= or right=
    with pytest.raises(TypeError):
        u.reduce(blas.binary.minus)  # not a monoid
    # out of range
    for i in (3, -4, 100):
        with pytest.raises(IndexError):
            u[i]
        with pytest.raises(IndexError):
            u[i] = 1.0
        with pytest.raises(IndexError):
            del u[i]
    with pytest.raises(TypeError):
        u[1.5]
    with pytest.raises(IndexError):
        blas.Vector.from_coo([0, 3], [1.0, 2.0], size=3, backend=backend)
    with pytest.raises(IndexError):
        blas.Vector.from_coo([-1], [1.0], size=3, backend=backend)
    with pytest.raises(IndexError):
        blas.Matrix.from_coo([0, 3], [1, 1], [1.0, 1.0], nrows=3, ncols=3, backend=backend)
    with pytest.raises(ValueError):
        blas.Matrix.from_coo([0], [1], [1.0], nrows=3, ncols=4, backend=backend)
    with pytest.raises(ValueError):
        blas.Vector(float, -1, backend=backend)
    with pytest.raises(ValueError):
        blas.Vector("FP16", 3, backend=backend)
    with pytest.raises(ValueError):
        blas.Vector.from_coo([0, 1], [1.0], size=3, backend=backend)


def test_backend_mismatch(backend):
    """Operands on different backends: another backend instance on the CPU, and the CPU
    against CUDA where the mode runs CUDA."""
    from gunpy.backends.cpu import CpuBackend
    other = CpuBackend() if backend == "cpu" else "cpu"
    A = blas.Matrix.from_coo([0, 1], [1, 2], [1.0, 1.0], nrows=3, ncols=3, backend=backend)
    u = blas.Vector.from_coo([0], [1.0], size=3, backend=backend)
    x = blas.Vector.from_coo([0], [1.0], size=3, backend=other)
    assert x.backend is not u.backend
    with pytest.raises(ValueError):
        blas.semiring.min_plus(x @ A)
    with pytest.raises(ValueError):
        blas.semiring.min_plus(A @ x)
    with pytest.raises(ValueError):
        u.ewise_add(x).new()
    with pytest.raises(ValueError):
        blas.semiring.min_plus(u @ A).new(mask=x.S)
    with pytest.raises(ValueError):
        u(u.S) << x


# ----------------------------------------------------------------------------- vs graphblas
@pytest.mark.parametrize("name, udt, adt", [s for s in SEMIRINGS if s[0] in
                                            ("min_plus", "any_secondi", "lor_land",
                                             "plus_firsti")])
@settings(max_examples=_examples(6) if not ON_CUDASIM else 2, **COMMON)
@given(data=st.data())
def test_products_match_graphblas(name, udt, adt, data, backend, full):
    """gunpy.blas next to python-graphblas itself (any_*: the same structure; values the
    reference's candidates)."""
    gb = _gb()
    odt = _dtname(_out_dtype(name, udt, adt))
    p = data.draw(problems(udt, adt, odt))
    gA, gu, gm, gw = (gb_mat(gb, p["A"]), gb_vec(gb, p["u"]), gb_vec(gb, p["m"]),
                      gb_vec(gb, p["w"]))
    A, u, m = g_mat(p["A"], backend), g_vec(p["u"], backend), g_vec(p["m"], backend)
    w = g_vec(p["w"], backend)
    gsr, sr = gb_semiring(gb, name), getattr(blas.semiring, name)
    for kind, mk, rep, acc, d in _combos(data, full)[::3]:
        ge = gsr(gu @ gA) if kind == "vxm" else gsr(gA @ gu)
        e = _expr(sr, kind, u, A)
        exp = gw.dup()
        exp(mask=gb_mask(gm, mk), accum=None if acc is None else getattr(gb.binary, acc),
            replace=rep) << ge
        out = w.dup()
        out(g_mask(m, mk), accum=None if acc is None else getattr(blas.binary, acc),
            replace=rep, direction=d) << e
        ei, ev = exp.to_coo()
        oi, ov = out.to_coo()
        what = f"{name} {kind} {mk} {rep} {acc} {d}"
        assert np.array_equal(ei, oi), what
        if name.startswith("any"):
            continue
        assert np.allclose(ev.astype(float), ov.astype(float)), (what, ev, ov)


def test_no_warnings_from_graphblas_names():
    gb = _gb()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, _, _ in SEMIRINGS:
            gb_semiring(gb, name)


# ----------------------------------------------------------------------------- the package
SPLIT_MODULES = ["gunpy.blas.vector", "gunpy.blas.matrix", "gunpy.blas.scalar",
                 "gunpy.blas.mask", "gunpy.blas.descriptor", "gunpy.blas.structure",
                 "gunpy.blas.assign", "gunpy.blas.expr"]


@pytest.mark.parametrize("name", SPLIT_MODULES)
def test_split_module_examples(name):
    """The docstring examples of the modules gunpy.blas is split into (test_docs runs
    gunpy.blas.core's, which now only re-exports them)."""
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_core_keeps_its_names():
    from gunpy.blas import core
    for name in core.__all__:
        assert getattr(core, name) is not None
    assert core.Vector is blas.Vector and core.Matrix is blas.Matrix
    from gunpy.blas.expr import cast_into
    assert callable(cast_into)


def test_vector_data_is_checked_on_assignment(backend):
    v = blas.Vector.from_coo([1, 3], [1.0, 2.0], size=5, backend=backend)
    w = blas.Vector(float, 5, backend=backend)
    w.data = v.data.copy()
    v[1] = 9.0                      # a copy: w keeps its own arrays
    assert w.to_coo()[1].tolist() == [1.0, 2.0]
    with pytest.raises(TypeError):
        w.data = (v.data.values, v.data.structure)
    with pytest.raises(ValueError):
        blas.Vector(float, 4, backend=backend).data = v.data
    with pytest.raises(ValueError):
        blas.Vector(int, 5, backend=backend).data = v.data


def test_every_write_goes_through_assign(backend, monkeypatch):
    """``w(...) << x``, ``w << x`` and ``expr.new()`` all write through one function."""
    from gunpy.blas import assign as writer
    calls = []
    real = writer._write
    monkeypatch.setattr(writer, "_write", lambda *a, **k: calls.append(1) or real(*a, **k))
    u = blas.Vector.from_coo([0, 2], [1.0, 2.0], size=4, backend=backend)
    w = blas.Vector(float, 4, backend=backend)
    w << u
    w(u.S, accum=blas.binary.plus) << u
    u.apply(blas.unary.ainv).new()
    w(~u.S) << 5.0
    assert len(calls) == 4
    assert w.to_coo()[1].tolist() == [2.0, 5.0, 4.0, 5.0]
