"""Fused BFS levels follow the push-pull rule past its pull floor (issue 14).

With ``direction="auto"`` the fused levels carry Beamer's rule
(:data:`gunpy.operators.levels.PushRule`) and decide it one level at a time:
they run on while the rule would push, also above the pull floor, and hand
back the level it would pull. The directions, sizes and depths must be those
of the unfused operators (``fuse_below=0``), which ask the rule between calls.
"""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import operators as ops
from gunpy.direction import DirectionPolicy, PushPull
from gunpy.operators.fusion import FusionPolicy, LevelsPlan
from gunpy.operators.levels import PushRule, level_cap
from _helpers import fused_levels_from_0


def binary_tree(depth):
    """A complete binary tree (2**depth - 1 vertices), both directions: level d of a BFS
    from the root has 2**d vertices and 3 * 2**d out-edges (2 at the root, 1 a leaf)."""
    child = np.arange(1, 2 ** depth - 1)
    parent = (child - 1) // 2
    return gunpy.Graph.from_edges(np.concatenate([parent, child]),
                                  np.concatenate([child, parent]),
                                  num_vertices=2 ** depth - 1, directed=True)


def test_the_plan_carries_beamers_rule():
    be = gunpy.backends.get_backend("cpu")
    G = binary_tree(6)
    pp = PushPull(DirectionPolicy(), G.num_vertices, G.num_edges)
    pp.account(10)
    pp.prev_edges = 7
    plan = FusionPolicy(be, direction="auto", push_pull=pp).levels(fuse=True,
                                                                   load_balance="auto")
    assert plan == LevelsPlan(be.fuse_levels_below, level_cap(be),
                              PushRule(pp.pull_floor, 15.0, G.num_edges - 10, 7))
    ratio = PushPull(DirectionPolicy(heuristic="ratio"), G.num_vertices, G.num_edges)
    plan = FusionPolicy(be, direction="auto", push_pull=ratio).levels(fuse=True,
                                                                      load_balance="auto")
    assert plan == LevelsPlan(min(be.fuse_levels_below, ratio.pull_floor), level_cap(be), None)
    assert FusionPolicy(be).levels(fuse=True, load_balance="auto").rule is None  # push


@pytest.mark.parametrize("rule", [None, PushRule(16, 15.0, 1020, 0)])
def test_levels_stop_before_the_level_the_rule_pulls(rule, backend):
    """Tree of depth 9 (1,020 edges), floor 16: levels 3 and 4 (24, 48 edges) reach the
    floor but push (under the unvisited edges / 15); level 5 (96 > 832 / 15, grown) pulls."""
    G = binary_tree(9)
    ctx, run, out, data = fused_levels_from_0(G, backend, limit=1 << 20, rule=rule)
    sizes = [[2 ** d, 3 * 2 ** d - (d == 0) - 2 ** (d + 1) * (d == 8)] for d in range(9)]
    if rule is None:  # every level, to the empty one after the leaves
        assert np.asarray(run).tolist() == sizes and out.size == 0
    else:
        assert np.asarray(run).tolist() == sizes[:5]
        assert sorted(out.to_numpy().tolist()) == list(range(31, 63))  # level 5, whole
        assert out.known_edges == 96
    got = ctx.backend.to_host(data.depth)
    reached = np.floor(np.log2(np.arange(G.num_vertices) + 1)).astype(int)
    last = 8 if rule is None else 5
    assert np.array_equal(got, np.where(reached <= last, reached, -1))


@pytest.mark.parametrize("name", ["tree", "grid"])
def test_fused_auto_bfs_takes_the_unfused_directions(name, backend, monkeypatch):
    """Fused (any fuse_below) and unfused auto BFS: the same levels, directions and
    depths (networkx's); fused levels run above the pull floor where the rule pushes."""
    from gunpy.backends import get_backend
    nxg = nx.balanced_tree(2, 7) if name == "tree" else nx.grid_2d_graph(12, 12)
    nxg = nx.convert_node_labels_to_integers(nxg)
    G = gunpy.Graph.from_networkx(nxg)
    ref = nx.single_source_shortest_path_length(nxg, 0)
    policy = DirectionPolicy(min_pull=1.0 / 64)
    runs = {}
    for fuse_below in (0, 1 << 30):
        monkeypatch.setattr(type(get_backend(backend)), "fuse_below", fuse_below)
        r = gunpy.bfs(G, 0, direction="auto", direction_policy=policy, backend=backend)
        assert {v: int(d) for v, d in enumerate(r.depth) if d >= 0} == ref
        runs[fuse_below] = r.stats.per_iteration
    plain, fused = runs[0], runs[1 << 30]
    assert [(it["frontier"], it["direction"]) for it in fused] == \
        [(it["frontier"], it["direction"]) for it in plain]
    floor = G.num_vertices / 64
    above = [it for it in fused if it["strategy"] == "fused" and it["edges"] >= floor]
    assert above  # the old fusion stopped at the floor
    if name == "tree":  # level 5 of 255 vertices: 96 out-edges > 314 / 15, grown: pull
        assert "pull" in {it["direction"] for it in fused}


# --------------------------------------------------------------------- one-core atomics
def _all_ops(a, f):
    return (gunpy.atomics.cas(a, 0, a[0], a[1]), gunpy.atomics.cas(a, 1, a[0] + 1, a[2]),
            gunpy.atomics.min(a, 2, a[3]), gunpy.atomics.max(a, 3, a[4]),
            gunpy.atomics.add(a, 4, a[5]), gunpy.atomics.or_(a, 5, a[6]),
            gunpy.atomics.and_(a, 6, a[7]), gunpy.atomics.exch(a, 7, a[0]),
            gunpy.atomics.min(f, 0, f[1]), gunpy.atomics.max(f, 1, f[2]),
            gunpy.atomics.add(f, 2, f[0]), gunpy.atomics.min(f, 3, f[0]))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_one_core_atomics_are_plain_and_equal(dtype):
    """Compiled without NRT (gunpy's one-core builds), the atomics are plain loads and
    stores with the same results and return values as the hardware atomics."""
    import numba
    if not numba.config.DISABLE_JIT:
        rng = np.random.default_rng(4)
        # each build compiled once (a dispatcher made in the loop recompiled every time)
        builds = {True: numba.njit(_all_ops), False: numba.njit(_nrt=False)(_all_ops)}
        for _ in range(20):
            a = rng.integers(0, 50, 8).astype(dtype)
            f = np.append(rng.normal(size=3), np.nan)
            got = {}
            for nrt, build in builds.items():
                aa, ff = a.copy(), f.copy()
                ret = build(aa, ff)
                got[nrt] = (aa.tolist(), ff.tolist(), [float(r) for r in ret[:-1]])
                assert ff[3] == ff[0] and np.isnan(ret[-1])  # a NaN loses, as LLVM's fmin
            assert got[True] == got[False]
        atomic, plain = builds[True], builds[False]
        assert not any(w in plain.inspect_llvm(plain.signatures[0]) for w in
                       ("cmpxchg", "atomicrmw"))
        llvm = atomic.inspect_llvm(atomic.signatures[0])
        assert "cmpxchg" in llvm and "atomicrmw" in llvm


def test_a_prange_without_nrt_stays_atomic():
    """numba compiles a prange body with reference counting, so its atomics stay real:
    every increment lands (two threads or more race on plain stores)."""
    import numba

    @numba.njit(parallel=True, _nrt=False)
    def count(a, n):
        for i in numba.prange(n):
            gunpy.atomics.add(a, 0, 1)

    a = np.zeros(1, np.int64)
    count(a, 1 << 20)
    assert a[0] == 1 << 20


def test_cpu_levels_fuse_up_to_serial_below(monkeypatch):
    """On the CPU a level under serial_below edges runs on one core fused or not, so fused
    levels go up to it (fuse_below still turns fusion off at 0)."""
    from gunpy.backends.cpu import CpuBackend
    monkeypatch.setattr(CpuBackend, "fuse_below", 8)
    monkeypatch.setattr(CpuBackend, "serial_below", 40)
    nxg = nx.convert_node_labels_to_integers(nx.grid_2d_graph(12, 12))
    G = gunpy.Graph.from_networkx(nxg)
    r = gunpy.bfs(G, 0, direction="push", backend="cpu")
    assert {v: int(d) for v, d in enumerate(r.depth) if d >= 0} == \
        nx.single_source_shortest_path_length(nxg, 0)
    its = r.stats.per_iteration
    assert {it["strategy"] for it in its if it["edges"] < 40} == {"fused"}
    assert "fused" not in {it["strategy"] for it in its if it["edges"] >= 40}
    assert any(8 <= it["edges"] < 40 for it in its)
    monkeypatch.setattr(CpuBackend, "fuse_below", 0)
    assert gunpy.backends.get_backend("cpu").fuse_levels_below == 0


@pytest.mark.parametrize("cap", [8192, 7])
def test_fused_level_records_count_each_levels_out_edges(cap, monkeypatch):
    """The CPU levels count a level's out-edges while running it (a bound on the frontier
    settles the limit and the pull rule before it where it can): every record must still
    be the level's vertices and their out-degree sum, over one call or many (``cap``)."""
    from gunpy.backends.cpu import CpuBackend
    monkeypatch.setattr(CpuBackend, "fuse_max_levels", cap)
    star = nx.star_graph(300)  # a hub: ncur * largest degree passes the pull floor
    long = nx.grid_2d_graph(4, 40)  # thin levels the bound settles
    for nxg in (nx.convert_node_labels_to_integers(long), nx.disjoint_union(star, long)):
        G = gunpy.Graph.from_networkx(nxg)
        deg = np.diff(G.row_offsets)
        for direction in ("push", "auto"):
            r = gunpy.bfs(G, 1, direction=direction, backend="cpu")
            its = r.stats.per_iteration
            assert len(its) == r.depth.max() + 1
            fused = [d for d, it in enumerate(its) if it["strategy"] == "fused"]
            # push: every level fused; auto pulls at the hub's level (past n / 4 edges)
            assert len(fused) == len(its) if direction == "push" else len(fused) >= 1
            for d in fused:
                level = np.flatnonzero(r.depth == d)
                assert (its[d]["frontier"], its[d]["edges"]) == (len(level), deg[level].sum())
