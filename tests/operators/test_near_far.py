"""The near/far package: one band rule, a typed fused state, the fusion rule, one stats path."""

import ast
import inspect
import pathlib

import numpy as np
import pytest

import gunpy
from gunpy.direction import DirectionPolicy, PushPull
from gunpy.operators.fusion import FusionPolicy, LevelsPlan
from gunpy.operators.levels import PushRule, level_cap
from gunpy.operators.near_far import NearFarQueue, band, fused, queue, split
from gunpy.testing import nasty_graphs
from _helpers import KeepEven, Reach

GRAPHS = nasty_graphs(small=True)
NEAR_FAR = pathlib.Path(band.__file__).parent


def _calls(module):
    """The names every function of ``module`` calls."""
    tree = ast.parse(inspect.getsource(module))
    return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr
            for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(n.func, (ast.Name, ast.Attribute))}


def test_every_kernel_classifies_and_raises_through_the_band_rule():
    """No near/far module compares a priority with the level or floors it itself: the
    kernels call band() / raise_level() (CUDA and CPU builds), the queue raise_level()."""
    for module in (split, fused, queue):
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                names = {n.id for n in sides if isinstance(n, ast.Name)}
                assert not names & {"level", "floor"}, (module.__name__, ast.unparse(node))
            if isinstance(node, ast.Attribute):
                assert node.attr != "floor", (module.__name__, ast.unparse(node))
    assert {"cuda_band", "cpu_band"} <= _calls(split)
    assert {"cuda_band", "cpu_band", "cuda_raise_level", "cpu_raise_level"} <= _calls(fused)
    assert "raise_level" in _calls(queue)


def test_band_rule():
    assert band.band(0.5, 2.0, 1.0) == band.STALE
    assert band.band(1.0, 2.0, 1.0) == band.NEAR
    assert band.band(2.0, 2.0, 1.0) == band.FAR
    p = np.array([0.5, 1.0, 2.5])
    assert list(band.band(p, 2.0, 1.0)) == [band.STALE, band.NEAR, band.FAR]
    assert band.raise_level(2.0, 4.5) == 5.0 and band.raise_level(7.0, 4.5) == 7.0


def test_the_fused_state_is_a_typed_record():
    names = ("level", "far_size", "refills", "edges", "expanded", "near_size", "epoch",
             "round", "swapped", "near_edges")
    assert fused.STATE.names == names
    assert fused.STATE["level"] == np.float64
    assert all(fused.STATE[n] == np.int64 for n in names[1:])  # integers are integers


def test_the_queue_swaps_its_piles_through_its_own_methods():
    G = GRAPHS["grid"]
    q = NearFarQueue(gunpy.operators.Context(G, backend="cpu"))
    far, other = q.far, q.other_pile()
    assert other is not far and q.swap_piles() is other and q.far is other
    assert q.other_pile() is far
    made = []
    arrays = q.work_arrays(lambda: made.append(1) or ("work",))
    assert arrays == ("work",) and q.work_arrays(lambda: made.append(1)) == ("work",)
    assert made == [1]  # made once, kept


def test_the_fusion_rule():
    be = gunpy.backends.get_backend("cpu")
    G = GRAPHS["grid"]
    pp = PushPull(DirectionPolicy(), G.num_vertices, G.num_edges)
    push = FusionPolicy(be, direction="push")
    assert push.levels(fuse=True, load_balance="auto") == LevelsPlan(be.fuse_levels_below,
                                                                     level_cap(be))
    assert push.levels(fuse=True, load_balance="auto", iterations_left=3).max_levels == 3
    assert push.levels(fuse=True, load_balance="auto", iterations_left=0) is None
    assert push.levels(fuse=False, load_balance="auto") is None
    assert push.levels(fuse=True, load_balance="twc") is None
    assert FusionPolicy(be, idempotent=True).levels(fuse=True, load_balance="auto") is None
    assert FusionPolicy(be, direction="pull").levels(fuse=True, load_balance="auto") is None
    auto = FusionPolicy(be, direction="auto", push_pull=pp)
    plan = auto.levels(fuse=True, load_balance="auto")
    # past the pull floor: the levels decide the push-pull rule themselves, level by level
    assert plan.limit == be.fuse_levels_below
    assert plan.rule == PushRule(pp.pull_floor, pp.policy.alpha, pp.unvisited_edges,
                                 pp.prev_edges)
    pp.current = "pull"
    assert auto.levels(fuse=True, load_balance="auto") is None
    assert push.near_far(fuse=True, load_balance="auto", track_visited=False) == be.fuse_below
    assert push.near_far(fuse=True, load_balance="auto", track_visited=True) is None
    assert push.near_far(fuse=False, load_balance="auto", track_visited=False) is None


@pytest.mark.parametrize("primitive", ["bfs", "sssp"])
def test_fused_and_unfused_work_reach_the_stats_by_one_path(primitive, backend):
    """Every iteration record is logged once: the edges add up to edges_visited, the
    iterations are numbered in order, and no operator record is left behind."""
    G = GRAPHS["grid"]
    kw = {"direction": "push"} if primitive == "bfs" else {}
    run = getattr(gunpy, primitive)
    fused_run = run(G, 0, backend=backend, **kw)
    plain = run(G, 0, backend=backend, load_balance="thread_mapped", **kw)
    for st in (fused_run.stats, plain.stats):
        its = st.per_iteration
        assert st.edges_visited == sum(it["edges"] for it in its)
        assert [it["iteration"] for it in its] == list(range(st.iterations))
        assert all("then" not in it for it in its)
    if primitive == "bfs":
        # one record per level either way, the same work
        assert fused_run.stats.edges_visited == plain.stats.edges_visited
        assert len(fused_run.stats.per_iteration) == len(plain.stats.per_iteration)
        assert {it["strategy"] for it in fused_run.stats.per_iteration} == {"fused"}
        assert [it["frontier"] for it in fused_run.stats.per_iteration] == \
            [it["frontier"] for it in plain.stats.per_iteration]


class _EvenBFS(Reach, KeepEven):
    """BFS whose filter keeps only even vertices (and marks them): the fused levels'
    predicated-filter path."""


class _EvenProblem(gunpy.Problem):
    from collections import namedtuple
    Data = namedtuple("EvenData", "depth kept")

    def init(self):
        self.depth = self.vertex_array(np.int32)
        self.kept = self.vertex_array(np.int32)

    def reset(self, source):
        self.backend.fill(self.depth, gunpy.INVALID)
        self.backend.fill(self.kept, 0)
        self.backend.write(self.depth, source, 0)
        self.source = source


class _EvenEnactor(gunpy.Enactor):
    fuse = True

    def prepare_frontier(self, frontier):
        frontier.push(self.problem.source)

    def loop(self, frontier):
        return self.advance_filter(frontier, _EvenBFS, fuse=self.fuse)


@pytest.mark.parametrize("name", ["grid", "preferential_hubs", "random_undirected"])
def test_fused_levels_run_the_filter_as_the_operators_do(name, backend):
    G = GRAPHS[name]
    out = []
    for fuse in (True, False):
        problem = _EvenProblem(G, backend=backend)
        problem.reset(0)
        enactor = _EvenEnactor(problem, direction="push")
        enactor.fuse = fuse
        st = enactor.enact()
        out.append((problem.to_host(problem.depth), problem.to_host(problem.kept),
                    [(it["frontier"], it["edges"]) for it in st.per_iteration]))
        assert fuse == ({it["strategy"] for it in st.per_iteration} == {"fused"})
    (d1, k1, it1), (d2, k2, it2) = out
    assert np.array_equal(d1, d2) and np.array_equal(k1, k2) and it1 == it2
