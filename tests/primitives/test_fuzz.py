"""Differential fuzzing: every primitive x option against networkx on random graphs.

Hypothesis draws graphs (directed or not, weighted or not, with self-loops,
duplicate edges, isolated vertices, several components, stars and paths mixed
in) and checks each primitive against networkx, and the options against each
other where results are defined exactly (depths, distances, labels).

Profiles (``tests/conftest.py``): ``ci`` (default: a few dozen examples, the
simulator fewer and smaller) and ``fuzz`` (``pytest --fuzz`` or
``GUNPY_FUZZ=1``: thousands of examples per test, for unattended runs). A
failing example is also written to ``tests/primitives/regressions/`` as JSON, once, as
hypothesis reports it after shrinking (not at every shrink step), and
``test_regressions.py`` replays every file there from then on.

Two input classes need no primitive: raw CSR arrays of every dtype with hostile
values (wrapped, truncated, parsed, out of range) given to ``gunpy.Graph``, and
edge-list files with hostile tokens, bytes and lines given to
``read_edgelist``; each is either refused (a ``ValueError`` naming a line that
is bad) or read exactly as a plain-Python reading of the same input.
"""

import hashlib
import json
import os
import sys

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import gunpy
from gunpy.operators.advance import STRATEGIES
from gunpy.testing import (ON_CUDASIM, check_bfs_tree, check_sssp_tree, reference_depths,
                           reference_distances, to_nx)

REGRESSIONS = os.path.join(os.path.dirname(__file__), "regressions")
MAX_N = 12 if ON_CUDASIM else 40
#: PageRank's tolerance: the simulator stops early (stars alternate for ~60 iterations at
#: 1e-6), compared with networkx at the same tolerance
PAGERANK_TOL = 1e-4 if ON_CUDASIM else 1e-6


@st.composite
def graph_specs(draw, weighted=None):
    """A random edge list with the shapes that break traversals, as a JSON-able dict."""
    n = draw(st.integers(1, MAX_N))
    directed = draw(st.booleans())
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                          max_size=3 * n))
    shape = draw(st.sampled_from(["none", "star", "path"]))
    if shape != "none" and n > 2:
        k = draw(st.integers(2, n))
        if shape == "star":
            edges += [(0, v) for v in range(1, k)]
        else:
            edges += [(v, v + 1) for v in range(k - 1)]
    if weighted is None:
        weighted = draw(st.booleans())
    weights = None
    if weighted:
        weights = draw(st.lists(st.one_of(st.integers(0, 9).map(float),
                                          st.floats(0.01, 100, allow_nan=False)),
                                min_size=len(edges), max_size=len(edges)))
    return {"n": n, "directed": directed, "edges": edges, "weights": weights}


def build(spec):
    """The spec's graph; ``"raw": true`` (saved cases only) keeps self-loops and repeated edges
    in the CSR instead of dropping them the way ``from_edges`` does by default."""
    e = np.array(spec["edges"], dtype=np.int64).reshape(-1, 2)
    raw = spec.get("raw", False)
    return gunpy.Graph.from_edges(e[:, 0], e[:, 1], spec["weights"], num_vertices=spec["n"],
                                  directed=spec["directed"], remove_self_loops=not raw,
                                  remove_duplicates=not raw)


def record_failure(kind, spec, params):
    """Save a failing example so that test_regressions replays it for good."""
    os.makedirs(REGRESSIONS, exist_ok=True)
    blob = json.dumps({"kind": kind, "spec": spec, "params": params}, sort_keys=True)
    name = hashlib.sha1(blob.encode()).hexdigest()[:12]
    with open(os.path.join(REGRESSIONS, f"{kind}-{name}.json"), "w") as f:
        f.write(blob)


def _final_example():
    """True only in hypothesis's last run of a failing example, the shrunk one it reports
    (where ``note`` prints); False in every shrink attempt and outside hypothesis (a replay)."""
    from hypothesis.control import current_build_context, currently_in_test_context
    return currently_in_test_context() and current_build_context().is_final


def checked(kind):
    """Run a property; on failure save the reported example before re-raising."""
    def wrap(fn):
        def run(spec, backend, **params):
            try:
                fn(spec, backend, **params)
            except Exception:
                if _final_example():
                    record_failure(kind, spec, params)
                raise
        run.__name__ = fn.__name__
        return run
    return wrap


# ----------------------------------------------------------------------------- properties
@checked("bfs")
def check_bfs(spec, backend):
    G = build(spec)
    s = spec["n"] // 2
    ref = reference_depths(G, s)
    for lb in sorted(STRATEGIES):
        for direction in ("push", "pull", "auto"):
            if ON_CUDASIM and direction == "pull" and lb != min(STRATEGIES):
                continue  # CUDA's pull is one kernel (pull-thread) whatever the load balance
            for idem in (False, True):
                r = gunpy.bfs(G, s, load_balance=lb, direction=direction, idempotent=idem,
                              backend=backend)
                check_bfs_tree(G, s, r.depth, r.parent, reference=ref)


@checked("sssp")
def check_sssp(spec, backend):
    G = build(spec)
    s = 0
    ref = reference_distances(G, s)
    dists = []
    for method in ("near_far", "bellman_ford"):
        for lb in ("thread_mapped", "merge_path"):
            r = gunpy.sssp(G, s, method=method, load_balance=lb, backend=backend)
            check_sssp_tree(G, s, r.distance, r.parent, reference=ref, rtol=1e-12)
            dists.append(r.distance)
    for d in dists[1:]:
        np.testing.assert_allclose(d, dists[0], rtol=1e-12)


@checked("cc")
def check_cc(spec, backend):
    G = build(spec)
    g = to_nx(G)
    comps = nx.weakly_connected_components(g) if G.directed else nx.connected_components(g)
    expect = np.empty(G.num_vertices, dtype=np.int64)
    for c in comps:
        expect[list(c)] = min(c)
    for sample in (0, 2):
        assert np.array_equal(gunpy.cc(G, sample=sample, backend=backend).labels, expect)


@checked("pagerank")
def check_pagerank(spec, backend):
    G = build(spec)
    g = to_nx(G)
    tol = PAGERANK_TOL
    expect = np.array([nx.pagerank(g, max_iter=1000, tol=tol)[v] for v in range(G.num_vertices)])
    for direction in ("pull", "push"):
        r = gunpy.pagerank(G, direction=direction, tol=tol, max_iter=1000, backend=backend)
        np.testing.assert_allclose(r.rank, expect, rtol=1e-8, atol=1e-12)


@checked("bc")
def check_bc(spec, backend):
    G = build(spec)
    g = to_nx(G)
    expect = nx.betweenness_centrality(g, normalized=True)
    r = gunpy.bc(G, normalized=True, backend=backend)
    np.testing.assert_allclose(r.centrality, [expect[v] for v in range(G.num_vertices)],
                               rtol=1e-9, atol=1e-12)


CHECKS = {"bfs": check_bfs, "sssp": check_sssp, "cc": check_cc, "pagerank": check_pagerank,
          "bc": check_bc}


# ----------------------------------------------------------------------------- tests
COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                    HealthCheck.data_too_large])


@settings(**COMMON)
@given(spec=graph_specs(weighted=False))
def test_fuzz_bfs(spec, backend):
    check_bfs(spec, backend)


@settings(**COMMON)
@given(spec=graph_specs(weighted=True))
def test_fuzz_sssp(spec, backend):
    check_sssp(spec, backend)


@settings(**COMMON)
@given(spec=graph_specs())
def test_fuzz_cc(spec, backend):
    check_cc(spec, backend)


@settings(**COMMON)
@given(spec=graph_specs())
def test_fuzz_pagerank(spec, backend):
    assume(spec["n"] > 0)
    check_pagerank(spec, backend)


@settings(**COMMON)
@given(spec=graph_specs(weighted=False))
def test_fuzz_bc(spec, backend):
    check_bc(spec, backend)


# ----------------------------------------------------------------------------- the recorder
def test_a_failure_is_saved_once_as_its_shrunk_example(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "REGRESSIONS", str(tmp_path))
    seen = []

    @checked("probe")
    def probe(spec, backend):
        seen.append(spec["n"])
        assert spec["n"] < 5, "too many vertices"

    @settings(max_examples=200, derandomize=True, database=None, deadline=None,
              print_blob=False)
    @given(spec=graph_specs(weighted=False))
    def run(spec):
        probe(spec, "cpu")

    with pytest.raises(AssertionError, match="too many vertices"):
        run()
    assert sum(n >= 5 for n in seen) > 2  # shrinking ran the property on failing examples
    files = list(tmp_path.iterdir())
    assert len(files) == 1, files  # ... and only the reported one was saved
    case = json.loads(files[0].read_text())
    assert case == {"kind": "probe", "params": {},
                    "spec": {"n": 5, "directed": False, "edges": [], "weights": None}}
    # a replay (no hypothesis) that fails again writes nothing new
    with pytest.raises(AssertionError):
        probe(case["spec"], "cpu")
    assert len(list(tmp_path.iterdir())) == 1


# ----------------------------------------------------------------------------- hostile input
# Raw CSR arrays and edge-list files with hostile values: the constructor or reader either
# refuses them with ValueError / GraphFormatError (naming a line that is bad) or builds
# exactly the graph a plain-Python reading of the same input gives. Cheap: no primitive.
INPUT = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

_DTYPES = ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float64", "bool",
           "str", "object"]


@st.composite
def raw_csr(draw):
    """Row offsets and column ids as some dtype, often nearly valid, sometimes hostile."""
    n = draw(st.integers(0, 6))
    degs = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    ro = [0] + list(np.cumsum(degs, dtype=np.int64).tolist())
    ci = [draw(st.integers(0, max(n - 1, 0))) for _ in range(ro[-1])] if n else []
    hostile = st.one_of(st.integers(-3, 8), st.sampled_from([2**31, 2**32 + 1, 2**53 + 1,
                                                             2**63 - 1, 2**64 - 1]))
    for arr in (ro, ci):
        if arr and draw(st.booleans()):
            arr[draw(st.integers(0, len(arr) - 1))] = draw(hostile)
    kinds = (draw(st.sampled_from(_DTYPES)), draw(st.sampled_from(_DTYPES)))
    return ro, ci, kinds


def _as(values, kind):
    """``values`` as an array of ``kind``, or None where NumPy itself cannot hold them."""
    if kind == "str":
        return np.array([str(v) for v in values], dtype=str)
    if kind == "object":
        return np.array(values + [None], dtype=object)[:-1] if values else np.array(
            [], dtype=object)
    try:
        with np.errstate(all="ignore"):
            a = np.array(values, dtype=np.int64 if kind != "uint64" else np.uint64)
            return a.astype(kind) if kind != "bool" else a.astype(bool)
    except OverflowError:
        return None


@settings(**INPUT)
@given(case=raw_csr())
def test_fuzz_raw_csr_arrays(case):
    ro, ci, (kro, kci) = case
    a_ro, a_ci = _as(ro, kro), _as(ci, kci)
    if a_ro is None or a_ci is None:
        return
    n = len(ro) - 1
    # the reference: the values the caller's arrays really hold, as Python ints
    exact = lambda a: a.dtype.kind in "iu" or (a.size == 0 and a.dtype.kind in "fbOU")
    vals_ro, vals_ci = [int(x) for x in a_ro] if exact(a_ro) else None, \
        [int(x) for x in a_ci] if exact(a_ci) and a_ci.size else []
    valid = (vals_ro is not None and exact(a_ci) and vals_ro[0] == 0
             and all(b >= a for a, b in zip(vals_ro, vals_ro[1:])) and vals_ro[-1] == len(ci)
             and all(0 <= c < n for c in vals_ci) and a_ro.dtype.kind in "iu")
    before = (a_ro.copy(), a_ci.copy())
    if valid:
        G = gunpy.Graph(a_ro, a_ci)
        assert G.row_offsets.tolist() == vals_ro and G.column_indices.tolist() == vals_ci
    else:
        with pytest.raises(ValueError):
            gunpy.Graph(a_ro, a_ci)
    assert np.array_equal(a_ro, before[0]) and np.array_equal(a_ci, before[1])


_TOKENS = ["0", "1", "2", "3", "7", "+4", "007", "-1", "1.5", "2.0", "1e3", "nan", "inf",
           "x", "1-2", "9007199254740993", "18446744073709551616", "123456789012", "\x00",
           "\x0b", "\u00e9", ""]


@st.composite
def edge_list_bytes(draw):
    """An edge-list file mostly valid, with a few hostile tokens, bytes and lines."""
    width = draw(st.sampled_from([2, 3]))
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["edge"] * 6 + ["hostile", "comment", "blank", "ragged"]))
        if kind == "comment":
            lines.append(draw(st.sampled_from(["# c", "% z\u00e9", "  # x 1 2"])))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", "  ", "\t\r"])))
        else:
            toks = [str(draw(st.integers(0, 9))) for _ in range(2)]
            if width == 3:
                toks.append(draw(st.sampled_from(["0.5", "2", "1e-3", "7.25"])))
            if kind == "hostile":
                toks[draw(st.integers(0, width - 1))] = draw(st.sampled_from(_TOKENS))
            if kind == "ragged":
                toks = toks[:1] if draw(st.booleans()) else toks + ["1"]
            sep = draw(st.sampled_from([" ", "\t", "  ", " \t"]))
            lines.append(sep.join(toks) + draw(st.sampled_from(["", "\r", " "])))
    return "\n".join(lines).encode("utf-8") + draw(st.sampled_from([b"", b"\n"]))


def _reference_edgelist(data):
    """Plain Python's reading: ("graph", n, {(u, v): w}) or ("error", {bad line numbers})."""
    import re
    bad, rows, width = set(), [], None
    for i, raw in enumerate(data.split(b"\n"), 1):
        text = raw.strip(b" \t\r")
        comment = text[:1] in (b"#", b"%")
        if any(c < 32 and c not in (9, 13) for c in raw) or (
                not comment and any(c > 127 for c in raw)):
            bad.add(i)
            continue
        if not text or comment:
            continue
        toks = text.split()
        if width is None:
            width = len(toks)
            if width not in (2, 3):
                bad.add(i)
                continue
        if len(toks) != width or width not in (2, 3):
            bad.add(i)
            continue
        ok = all(re.fullmatch(rb"[+-]?[0-9]+", t) and 0 <= int(t) < 2**63 - 1
                 for t in toks[:2])
        w = 1.0
        if ok and width == 3:
            try:
                w = float(toks[2])
                ok = np.isfinite(w)
            except ValueError:
                ok = False
        if not ok:
            bad.add(i)
            continue
        rows.append((int(toks[0]), int(toks[1]), w, i))
    if bad:
        return "error", bad
    if not rows:
        return "graph", 0, {}
    top = max(max(u, v) for u, v, _, _ in rows)
    if top + 1 > max(2**24, 16 * len(rows)):
        return "error", {i for u, v, _, i in rows if top in (u, v)}
    edges = {}
    for u, v, w, _ in rows:
        if u != v:
            edges[(u, v)] = min(edges.get((u, v), np.inf), w)
    return "graph", top + 1, edges


@settings(**INPUT)
@given(data=edge_list_bytes())
def test_fuzz_hostile_edge_list_files(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "g.txt"
    path.write_bytes(data)
    ref = _reference_edgelist(data)
    if ref[0] == "error":
        with pytest.raises(gunpy.GraphFormatError) as err:
            gunpy.read_edgelist(str(path), format="edgelist")
        msg = str(err.value)
        assert "\n" not in msg and len(msg) < len(str(path)) + 300, msg
        assert err.value.line in ref[1], (msg, ref[1])
        return
    G = gunpy.read_edgelist(str(path), format="edgelist")
    A = G.to_scipy().tocoo()
    got = {(int(u), int(v)): float(w) for u, v, w in zip(A.row, A.col, A.data)}
    expect = {k: (w if G.weighted else 1.0) for k, w in ref[2].items()}
    assert G.num_vertices == ref[1] and got == expect
