"""The extension story: a brand-new primitive written in a test file, checked against networkx.

k-hop reachability: every vertex within ``k`` hops of a source, with its hop
count. It uses only the public framework API (Problem, Functor, Enactor,
atomics), as docs/tutorial.md walks through.
"""

from collections import namedtuple

import networkx as nx
import numba
import numpy as np
import pytest

import gunpy
from gunpy import INVALID, Enactor, Functor, Problem, atomics
from gunpy.testing import ON_CUDASIM, nasty_graphs, to_nx

KHopData = namedtuple("KHopData", "hops")


class KHopFunctor(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        # the first frontier vertex to reach dst claims it
        return atomics.cas(data.hops, dst, INVALID, data.hops[src] + 1) == INVALID


class KHopProblem(Problem):
    Data = KHopData

    def init(self):
        self.hops = self.vertex_array(np.int32)

    def reset(self, source, k):
        self.source = self.check_source(source)
        self.k = int(k)
        self.backend.fill(self.hops, INVALID)
        self.backend.write(self.hops, self.source, 0)

    def extract(self):
        return self.to_host(self.hops)


class KHopEnactor(Enactor):
    def prepare_frontier(self, frontier):
        frontier.push(self.problem.source)

    def loop(self, frontier):
        return self.advance(frontier, KHopFunctor)

    def is_converged(self, frontier):
        return super().is_converged(frontier) or self.iteration >= self.problem.k


def khop(G, source, k, *, backend="auto"):
    problem = KHopProblem(G, backend=backend)
    problem.reset(source, k)
    KHopEnactor(problem).enact()
    return problem.extract()


# A second primitive exercising filter and compute: BFS that may only pass
# through vertices whose "open" flag is set, and counts how often each vertex
# was kept by the filter.
GateData = namedtuple("GateData", "hops open kept")


class GateFunctor(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return atomics.cas(data.hops, dst, INVALID, data.hops[src] + 1) == INVALID

    @staticmethod
    def cond_vertex(v, data):
        return data.open[v] != 0

    @staticmethod
    def apply_vertex(v, data):
        data.kept[v] += 1


class GateProblem(Problem):
    Data = GateData

    def init(self):
        self.hops = self.vertex_array(np.int32)
        self.kept = self.vertex_array(np.int32)

    def reset(self, source, open_mask):
        self.source = self.check_source(source)
        self.backend.fill(self.hops, INVALID)
        self.backend.fill(self.kept, 0)
        self.backend.write(self.hops, self.source, 0)
        self.open = self.backend.asarray(np.asarray(open_mask, dtype=np.int8))


class GateEnactor(Enactor):
    def prepare_frontier(self, frontier):
        frontier.push(self.problem.source)

    def loop(self, frontier):
        frontier = self.advance(frontier, GateFunctor)
        return self.filter(frontier, GateFunctor)


GRAPHS = nasty_graphs()


@pytest.mark.parametrize("name", ["path_undirected", "star_hub", "random_directed",
                                  "disconnected", "preferential_hubs"])
@pytest.mark.parametrize("k", [1, 5] if ON_CUDASIM else [0, 1, 2, 5])
def test_khop_matches_networkx(name, k, backend, cpu_split):
    G = GRAPHS[name]
    g = to_nx(G)
    for s in (0, G.num_vertices - 1)[: 1 if ON_CUDASIM else 2]:
        hops = khop(G, s, k, backend=backend)
        expect = np.full(G.num_vertices, -1)
        for v, d in nx.single_source_shortest_path_length(g, s, cutoff=k).items():
            expect[v] = d
        assert np.array_equal(hops, expect)


@pytest.mark.parametrize("name", ["random_undirected", "grid", "preferential_hubs"])
def test_filter_and_compute_in_a_user_primitive(name, backend, cpu_split):
    G = GRAPHS[name]
    rng = np.random.default_rng(1)
    open_mask = rng.random(G.num_vertices) < 0.7
    open_mask[0] = True
    p = GateProblem(G, backend=backend)
    p.reset(0, open_mask)
    GateEnactor(p).enact()
    hops, kept = p.to_host(p.hops), p.to_host(p.kept)
    # reference: BFS where closed vertices are reached but never expanded
    g = to_nx(G)
    expect = np.full(G.num_vertices, -1)
    expect[0] = 0
    level = [0]
    d = 0
    while level:
        nxt = []
        for u in level:
            for w in g.successors(u) if G.directed else g.neighbors(u):
                if expect[w] == -1:
                    expect[w] = d + 1
                    if open_mask[w]:
                        nxt.append(w)
        level, d = nxt, d + 1
    assert np.array_equal(hops, expect)
    # apply_vertex ran exactly once for each open vertex the filter kept
    assert np.array_equal(kept, ((expect > 0) & open_mask).astype(np.int32))


def test_compute_over_all_vertices(backend, cpu_split):
    G = GRAPHS["random_directed"]
    DegData = namedtuple("DegData", "out row_offsets")

    class Degree(Functor):
        @staticmethod
        def apply_vertex(v, data):
            data.out[v] = data.row_offsets[v + 1] - data.row_offsets[v]

    class DegreeProblem(Problem):
        Data = DegData

        def init(self):
            self.out = self.vertex_array(np.int64, fill=-1)
            self.row_offsets = self.backend.graph(self.graph).row_offsets

    class DegreeEnactor(Enactor):
        def prepare_frontier(self, frontier):
            pass

        def loop(self, frontier):
            return frontier

    p = DegreeProblem(G, backend=backend)
    DegreeEnactor(p).compute(None, Degree)
    assert np.array_equal(p.to_host(p.out), G.out_degrees())


@numba.njit(inline="always")
def _claim_once(count, owner, v):
    """A helper taking arrays: the last of ``count[v]`` callers claims ``v``."""
    if atomics.add(count, v, -1) == 1:
        owner[v] = _twice(v)


@numba.njit(inline="always")
def _twice(v):
    return 2 * v


def test_hooks_may_call_njit_helpers_that_take_arrays(backend, cpu_split):
    # compiled, the helper is inlined; under the simulator the hook runs as Python and
    # the helpers (and theirs) run as their Python functions
    ClaimData = namedtuple("ClaimData", "count owner")

    class Claim(Functor):
        @staticmethod
        def apply_vertex(v, data):
            _claim_once(data.count, data.owner, v)

    G = GRAPHS["random_directed"]
    n = G.num_vertices
    ctx = gunpy.operators.Context(G, backend)
    count = ctx.backend.asarray(np.where(np.arange(n) % 3 == 0, 1, 2).astype(np.int64))
    owner = ctx.backend.asarray(np.full(n, -1, np.int64))
    gunpy.operators.compute(G, None, Claim, ClaimData(count, owner), context=ctx)
    want = np.where(np.arange(n) % 3 == 0, 2 * np.arange(n), -1)
    assert ctx.backend.to_host(owner).tolist() == want.tolist()


def test_functor_hooks_must_be_staticmethods():
    class Bad(Functor):
        def cond_edge(self, src, dst, edge, weight, data):
            return True

    p = KHopProblem(GRAPHS["path_directed"], backend="cpu")
    p.reset(0, 2)

    class E(KHopEnactor):
        def loop(self, frontier):
            return self.advance(frontier, Bad)

    with pytest.raises(TypeError, match="staticmethod"):
        E(p).enact()


# -- Functor.skip_visited: the framework tests the visited bitmap before the functor --------

CountData = namedtuple("CountData", "hops calls")


class CountingReach(Functor):
    skip_visited = True

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        atomics.add(data.calls, 0, 1)
        return atomics.cas(data.hops, dst, INVALID, data.hops[src] + 1) == INVALID


class CountingReachNoSkip(CountingReach):
    skip_visited = False


class CountProblem(Problem):
    Data = CountData

    def init(self):
        self.hops = self.vertex_array(np.int32, fill=INVALID)
        self.calls = self.backend.zeros(1, np.int64)
        self.backend.write(self.hops, 0, 0)


class CountEnactor(Enactor):
    def prepare_frontier(self, frontier):
        frontier.push(0)

    def loop(self, frontier):
        return self.advance(frontier, self.functor)


@pytest.mark.parametrize("direction,functor,calls", [
    ("auto", CountingReach, "forward"),        # bitmap kept: visited parents are skipped
    ("auto", CountingReachNoSkip, "all"),      # no promise: every edge reaches the functor
    ("push", CountingReach, "all"),            # plain push keeps no bitmap to test
])
def test_skip_visited_keeps_visited_destinations_from_the_functor(direction, functor, calls,
                                                                  backend, cpu_split):
    n = 40
    G = gunpy.Graph.from_edges(np.arange(n - 1), np.arange(1, n), directed=False)
    p = CountProblem(G, backend=backend)
    e = CountEnactor(p, direction=direction,
                     direction_policy=gunpy.enactor.DirectionPolicy(min_pull=1e9))  # never pull
    e.functor = functor
    e.enact()
    assert p.to_host(p.hops).tolist() == list(range(n))
    # the path's n-1 forward edges, plus (without skipping) the n-1 edges back to a parent
    expect = n - 1 if calls == "forward" else 2 * (n - 1)
    assert int(p.to_host(p.calls)[0]) == expect


# The tutorial's "Going further" pull line, on a default (push) enactor: the
# visited set is started on demand at the first pull (before the fix, a pull on
# such an enactor read a one-word placeholder and gave thousands of wrong depths).
class KHopPullEnactor(KHopEnactor):
    def loop(self, frontier):
        return self.advance(frontier, KHopFunctor, direction="pull")


class KHopPushThenPullEnactor(KHopEnactor):
    def loop(self, frontier):
        return self.advance(frontier, KHopFunctor,
                            direction="push" if self.iteration == 0 else "pull")


@pytest.mark.parametrize("k", [1, 3, 50])
def test_tutorial_pull_on_a_push_enactor(backend, k):
    G = gunpy.generators.rmat(5 if ON_CUDASIM else 12, seed=4)
    problem = KHopProblem(G, backend=backend)
    problem.reset(1, k)
    KHopPullEnactor(problem).enact()
    expect = nx.single_source_shortest_path_length(to_nx(G), 1, cutoff=k)
    got = problem.extract()
    assert {v: int(h) for v, h in enumerate(got) if h >= 0} == expect
    # a second run on the same enactor starts from a fresh visited set
    enactor = KHopPullEnactor(problem)
    for _ in range(2):
        problem.reset(1, k)
        enactor.enact()
        assert {v: int(h) for v, h in enumerate(problem.extract()) if h >= 0} == expect


def test_pull_after_untracked_push_levels_is_an_error(backend):
    G = gunpy.generators.rmat(5, seed=4)
    problem = KHopProblem(G, backend=backend)
    problem.reset(1, 5)
    with pytest.raises(ValueError, match="needs the visited set"):
        KHopPushThenPullEnactor(problem).enact()


def test_kernels_go_with_their_functor_class():
    """Compiled hooks and kernels are kept by the functor class, not by a global cache."""
    import gc
    import weakref

    def make():
        class Temporary(Functor):
            @staticmethod
            def cond_edge(src, dst, edge, weight, data):
                return atomics.cas(data.hops, dst, INVALID, data.hops[src] + 1) == INVALID
        return Temporary

    class TempEnactor(KHopEnactor):
        def loop(self, frontier):
            return self.advance(frontier, self.functor)

    G = gunpy.generators.rmat(6, seed=2)
    F = make()
    problem = KHopProblem(G, backend="cpu")
    problem.reset(1, 3)
    e = TempEnactor(problem)
    e.functor = F
    e.enact()
    assert {v: int(h) for v, h in enumerate(problem.extract()) if h >= 0} == \
        nx.single_source_shortest_path_length(to_nx(G), 1, cutoff=3)
    ref = weakref.ref(F)
    del F, e
    gc.collect()
    assert ref() is None


# -- declared hooks: a functor's mistakes are TypeErrors naming the class and the hook --
def _compile(functor):
    from gunpy.backends import get_backend
    from gunpy.functor import compile_functor
    return compile_functor(functor, get_backend("cpu"))


def test_a_misspelt_hook_is_an_error_not_a_default():
    class Reach(gunpy.Functor):
        @staticmethod
        def cond_edges(src, dst, edge, weight, data):
            return True
    with pytest.raises(TypeError, match=r"Reach\.cond_edges .*did you mean 'cond_edge'"):
        _compile(Reach)

    class Near(gunpy.Functor):
        @staticmethod
        def priorty(v, data):
            return 0.0
    with pytest.raises(TypeError, match=r"Near\.priorty .*did you mean 'priority'"):
        _compile(Near)


def test_a_helper_starting_with_underscore_is_allowed():
    class Fine(gunpy.Functor):
        @staticmethod
        def _apply_twice(v, data):
            pass

        @staticmethod
        def cond_vertex(v, data):
            return v > 0
    assert _compile(Fine).functor is Fine


def test_a_cond_hook_without_return_is_an_error():
    class Forgot(gunpy.Functor):
        @staticmethod
        def cond_edge(src, dst, edge, weight, data):
            if dst > src:
                return True
    with pytest.raises(TypeError, match=r"Forgot\.cond_edge can end without returning True "
                                        r"or False"):
        _compile(Forgot)

    class Bare(gunpy.Functor):
        @staticmethod
        def cond_vertex(v, data):
            data.flag[v] = 1
    with pytest.raises(TypeError, match=r"Bare\.cond_vertex"):
        _compile(Bare)

    class Both(gunpy.Functor):  # every path returns: fine
        @staticmethod
        def cond_vertex(v, data):
            if v > 0:
                return True
            else:
                return False
    _compile(Both)


def test_a_hook_with_the_wrong_arguments_is_an_error():
    class Short(gunpy.Functor):
        @staticmethod
        def cond_edge(src, dst, data):
            return True
    with pytest.raises(TypeError, match=r"Short\.cond_edge takes 3 argument\(s\); the "
                                        r"operators call it as cond_edge\(src, dst, edge, "
                                        r"weight, data\)"):
        _compile(Short)


def test_the_hook_table_covers_every_hook_the_base_class_defines():
    from gunpy.functor import HOOKS, Functor
    defined = {n for n, a in vars(Functor).items() if isinstance(a, staticmethod)}
    assert defined <= set(HOOKS)
    assert {"score", "round_of"} <= set(HOOKS)


# -- frontier ownership: an operator never writes into a frontier the caller holds --
# (examples/luby_mis.py keeps two at once: tests/tooling/test_examples.py runs it)
def test_a_frontier_the_loop_holds_is_never_an_operators_output(backend):
    G = gunpy.generators.path(6)
    problem = KHopProblem(G, backend=backend)
    problem.reset(0, 5)
    enactor = KHopEnactor(problem)
    first = enactor.start_frontier().push(0)
    second = enactor.advance(first, KHopFunctor)
    third = enactor.advance(second, KHopFunctor)
    held = {id(first), id(second), id(third)}
    assert len(held) == 3 and first.size == 1 and second.size == 1 and third.size == 1


# -- Result: public, documented, the same conversions for every primitive --
def test_a_user_result_converts_like_a_builtin_one(backend):
    G = GRAPHS["disconnected"]
    builtin = gunpy.bfs(G, 0, backend=backend)
    mine = gunpy.Result(G, builtin.stats, depth=builtin.depth.copy(), parent=builtin.parent,
                        unreached={"depth": -1, "parent": -1})
    assert mine.fields == ("depth", "parent") and mine.main == "depth"
    assert mine.to_dict() == builtin.to_dict()
    assert mine.to_dict("parent") == builtin.to_dict("parent")
    assert -1 in builtin.depth.tolist()  # the graph has unreached vertices to leave out
    assert mine.to_dataframe()["depth"].tolist() == builtin.depth.tolist()


def test_result_mistakes_are_clear():
    G = gunpy.generators.path(3)
    with pytest.raises(TypeError, match="no array given for field"):
        gunpy.Result(G, fields=("depth",), hops=np.zeros(3))
    with pytest.raises(ValueError, match="main='x' is not one of the fields"):
        gunpy.Result(G, main="x", hops=np.zeros(3))
    r = gunpy.Result(G, d=np.array([0.0, np.nan, 1.0]), unreached=float("nan"))
    assert r.to_dict() == {0: 0.0, 2: 1.0}


def test_problem_and_loop_mistakes_name_the_fix(backend):
    class Broken(KHopProblem):
        Data = namedtuple("BrokenData", "hops depth")
    problem = Broken(gunpy.generators.path(3), backend=backend)
    problem.reset(0, 1)
    with pytest.raises(AttributeError, match=r"Broken.Data \(BrokenData\) names 'depth', but "
                                             r"the problem has no such attribute"):
        problem.data()

    class Forgetful(KHopEnactor):
        def loop(self, frontier):
            self.advance(frontier, KHopFunctor)
    problem = KHopProblem(gunpy.generators.path(3), backend=backend)
    problem.reset(0, 1)
    with pytest.raises(TypeError, match=r"Forgetful.loop returned None, not a Frontier"):
        Forgetful(problem).enact()


class _Everything(Functor):
    @staticmethod
    def priority(v, data):
        return 0.0


_WRITERS = {
    "advance": lambda e, f: e.advance(f, _Everything),
    "advance edge output": lambda e, f: e.advance(f, _Everything, output="edge"),
    "advance output none": lambda e, f: e.advance(f, _Everything, output="none"),
    "filter": lambda e, f: e.filter(f, _Everything),
    "advance_filter": lambda e, f: e.advance_filter(f, _Everything),
    "near_far": lambda e, f: e.near_far(f, _Everything),
    "advance_near_far": lambda e, f: e.advance_near_far(f, _Everything),
    "start_frontier": lambda e, f: e.start_frontier(),
}


@pytest.mark.parametrize("op", list(_WRITERS))
def test_no_operator_writes_into_a_frontier_the_caller_holds(op, backend):
    G = gunpy.generators.grid_2d(4, 4)
    problem = KHopProblem(G, backend=backend)
    problem.reset(0, 3)
    enactor = KHopEnactor(problem)
    held = [enactor.start_frontier().push(np.arange(k, 16, 3)) for k in range(3)]
    before = [sorted(h.to_numpy().tolist()) for h in held]
    for h in held:  # each held frontier as the input, the others held beside it
        out = _WRITERS[op](enactor, h)
        # the input itself comes back only from an operator that changed nothing (a
        # filter whose hooks are the defaults: Gunrock's filter bypass)
        assert all(out is not x for x in held if x is not h)
        assert [sorted(x.to_numpy().tolist()) for x in held] == before


def test_hook_integer_arithmetic_is_64_bit_on_every_backend(backend):
    # vertex ids are int32; compiled code widens arithmetic on them to 64 bits, and the
    # simulator's hooks get int64 arguments so it computes the same (neither raises, and
    # neither wraps at 32 bits)
    G = gunpy.generators.path(40, directed=True)
    HashData = namedtuple("HashData", "out")

    class Hash(Functor):
        @staticmethod
        def cond_edge(src, dst, edge, weight, data):
            data.out[dst] = dst * 2654435761 + src * 3 * 1000000000
            return True

    class HashProblem(Problem):
        Data = HashData

        def init(self):
            self.out = self.vertex_array(np.int64, fill=-1)

    class HashEnactor(Enactor):
        def prepare_frontier(self, frontier):
            frontier.push(np.arange(39, dtype=np.int32))

        def loop(self, frontier):
            self.advance(frontier, Hash, output="none")
            frontier.clear()
            return frontier

    p = HashProblem(G, backend=backend)
    HashEnactor(p).enact()
    v = np.arange(40, dtype=np.int64)
    expect = v * 2654435761 + (v - 1) * 3 * 1000000000
    expect[0] = -1
    assert np.array_equal(p.to_host(p.out), expect)


@pytest.mark.parametrize("direction", ["push", "auto"])
def test_a_traversal_runs_without_an_enactor(direction, backend):
    """gunpy.operators.traversal.Traversal: the traversal operators and their state
    (visited set, push-pull rule, frontier pool) with a loop of the caller's own."""
    from gunpy.operators.traversal import Traversal
    from gunpy.primitives.bfs import BFSFunctor, BFSProblem
    G = gunpy.generators.rmat(5 if ON_CUDASIM else 11, seed=6)
    problem = BFSProblem(G, backend=backend)
    problem.reset(0)
    t = Traversal(problem, direction=direction)
    frontier = t.start_frontier().push(0)
    if t.track_visited:
        t.mark_visited(frontier, clear=True)
    levels = 0
    while frontier.size:
        frontier = t.advance_filter(frontier, BFSFunctor)
        levels += 1
    depth, _ = problem.extract()
    expect = nx.single_source_shortest_path_length(to_nx(G), 0)
    assert {v: int(d) for v, d in enumerate(depth) if d >= 0} == expect
    assert levels >= 1


def test_advance_and_filter_write_the_frontier_given_as_out(backend):
    """One call style: the traversal's advance and filter take ``out=`` like the free
    operators, and write that frontier."""
    from gunpy.operators.traversal import Traversal
    from gunpy.primitives.bfs import BFSFunctor, BFSProblem
    G = gunpy.Graph.from_edges([0, 0, 1, 2], [1, 2, 3, 3], num_vertices=5)
    problem = BFSProblem(G, backend=backend)
    problem.reset(0)
    t = Traversal(problem)
    mine, kept = (t.context.frontier(capacity=5) for _ in range(2))
    out = t.advance(t.start_frontier().push(0), BFSFunctor, out=mine)
    assert out is mine and sorted(mine.to_numpy().tolist()) == [1, 2]

    class Two(Functor):
        @staticmethod
        def cond_vertex(v, data):
            return v == 2

    out = t.filter(mine, Two, out=kept)
    assert out is kept and kept.to_numpy().tolist() == [2]
