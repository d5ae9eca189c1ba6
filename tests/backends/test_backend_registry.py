"""One dispatch mechanism: backends are registered; each operator is an object holding its
implementation per backend under one calling convention, and strategies are operators too."""

import numpy as np
import pytest

import gunpy
from gunpy import backends
from gunpy.operators.operator import check_implementation, operator, operators
from gunpy.backends.cpu import CpuBackend
from gunpy.operators import advance
from gunpy.operators.advance import thread_mapped, twc
from gunpy.testing import nasty_graphs, reference_depths


class OneCore(CpuBackend):
    """Every step as one thin pass (a CPU backend with different settings)."""
    name = "one_core"
    serial_below = 1 << 62


class Chunked(CpuBackend):
    """No thin passes and no fused levels: every level runs the chosen strategy (an
    unregistered subclass: it finds the "cpu" implementations through its class)."""
    fuse_below = 0
    serial_below = 0
    force_min_chunk = 1


@pytest.fixture
def one_core():
    backends.register_backend("one_core", OneCore)
    yield
    backends.unregister_backend("one_core")


def test_a_registered_backend_runs_the_primitives(one_core):
    assert backends.names()[-1] == "one_core" and "one_core" in backends.BACKENDS
    assert backends.resolve("auto") != "one_core"  # registered last: not auto's choice
    G = nasty_graphs()["star_hub"]
    r = gunpy.bfs(G, 0, backend="one_core")
    assert r.stats.backend == "one_core"
    assert np.array_equal(r.depth, reference_depths(G, 0))
    assert isinstance(backends.get_backend("one_core"), OneCore)
    sssp = gunpy.sssp(G, 0, backend="one_core").distance
    assert np.array_equal(sssp, gunpy.sssp(G, 0, backend="cpu").distance)


def test_first_and_usable_decide_auto():
    backends.register_backend("one_core", OneCore, first=True)
    try:
        assert backends.names()[0] == "one_core"
        assert backends.resolve("auto") == "one_core"
        backends.register_backend("one_core", OneCore, replace=True,
                                  usable=lambda: (False, "switched off for the test"))
        assert backends.names()[0] == "one_core"  # a replacement keeps its place
        assert "one_core" not in backends.available()
        assert backends.resolve("auto") != "one_core"
        with pytest.raises(RuntimeError, match="switched off for the test"):
            gunpy.bfs(gunpy.generators.path(3), 0, backend="one_core")
    finally:
        backends.unregister_backend("one_core")
    assert "one_core" not in backends.names()


def test_register_backend_validates(one_core):
    with pytest.raises(ValueError, match="already registered"):
        backends.register_backend("one_core", OneCore)
    with pytest.raises(ValueError, match="other than 'auto'"):
        backends.register_backend("auto", OneCore)
    with pytest.raises(ValueError, match="identifier"):
        backends.register_backend("two words", OneCore)
    with pytest.raises(TypeError, match="not a gunpy.backends.base.Backend"):
        backends.register_backend("plain", object)
    with pytest.raises(ValueError, match="name = 'one_core'"):
        backends.register_backend("other", OneCore)
    with pytest.raises(ValueError, match="unknown backend 'nope'.*'one_core'"):
        gunpy.bfs(gunpy.generators.path(3), 0, backend="nope")


def test_builtin_strategies_take_the_path_a_users_does():
    """gunpy's strategies are registered like a user's: an operator per strategy."""
    cpu = backends.get_backend("cpu")
    for name in ("thread_mapped", "twc", "merge_path"):
        s = advance.STRATEGIES[name]
        assert s.op is operator(f"advance.push.{name}")
        assert set(s.backends) == {"cuda", "cpu"}
    assert operator("advance.push.thread_mapped").on(cpu) is thread_mapped.cpu_execute
    assert advance.STRATEGIES["twc"].op.on(cpu) is twc.cpu_execute
    assert set(advance.PULL_MAPPINGS) == {"thread", "warp", "auto"}
    # one name per strategy
    assert not any(k.startswith("advance.") and k.count(".") == 1 and k != "advance.thin"
                   and k != "advance.levels" for k in operators())


def test_auto_is_a_predicate_per_strategy():
    assert advance.choose("auto", 10, 10) == "thread_mapped"
    assert advance.choose("auto", 100_000, 10) == "merge_path"
    assert advance.choose("auto", 100_000, 60_000) == "thread_mapped"  # even: no set-up
    # twc claims a frontier whose largest degree (when a kernel counted it) is a hub's
    assert advance.choose("auto", 100, 10, largest=advance.AUTO_HUB_DEGREE) == "twc"
    assert advance.choose("auto", 100, 10, largest=advance.AUTO_HUB_DEGREE - 1) \
        == "thread_mapped"
    assert advance.choose("auto", 100, 10, largest=None) == "thread_mapped"

    seen = []

    def claims_all(edges, frontier_size, threshold):
        seen.append((edges, frontier_size))
        return True

    advance.register_strategy("mine", twc, auto=claims_all)
    try:
        assert advance.choose("auto", 10, 10) == "mine"
        assert seen == [(10, 10)]
        G = nasty_graphs()["random_directed"]
        r = gunpy.bfs(G, 0, direction="push", backend=Chunked())
        assert np.array_equal(r.depth, reference_depths(G, 0))
        assert {it["strategy"] for it in r.stats.per_iteration} == {"mine"}
    finally:
        advance.unregister_strategy("mine")
    assert advance.choose("auto", 10, 10) == "thread_mapped"
    assert "mine" not in advance.load_balance_options()
    with pytest.raises(ValueError, match="unknown operator 'advance.push.mine'"):
        operator("advance.push.mine")


def test_one_signature_convention_is_checked():
    assert operator("filter.cull").args == "ctx, frontier, out, hooks, data, visited"
    assert operator("advance.push.twc").args.endswith("*, edges, spec")
    with pytest.raises(ValueError, match="unknown operator 'nope'"):
        operator("nope")
    check_implementation("bitmap.or_into", lambda backend, dst, src: None)
    with pytest.raises(TypeError, match=r"must take \(backend, dst, src\)"):
        check_implementation("bitmap.or_into", lambda backend, dst: None)
    with pytest.raises(TypeError, match="strategy 'broken'.*edges, spec"):
        advance.register_strategy("broken", cpu=lambda ctx, dg, frontier, out, hooks, data: 0)
    assert "broken" not in advance.STRATEGIES
    with pytest.raises(ValueError, match="unknown operator"):
        operator("advance.push.broken")  # a refused strategy leaves nothing behind

    class WrongTable(CpuBackend):
        name = "wrong_table"
        operators = {"bitmap.popcount": "gunpy.operators.bitmap:cpu_or_into"}

    with pytest.raises(TypeError, match="bitmap.popcount.*cpu_or_into"):
        operator("bitmap.popcount").on(WrongTable())


#: the CPU's own shortcuts, which a backend may lack: their callers pass what runs then
#: (one thin pass of a push advance; the near/far queue's refill from its bins, which the
#: CUDA backend does by splitting its far pile: test_sssp checks both ways)
CPU_SHORTCUTS = {"advance.thin", "near_far.refill"}


def test_every_builtin_implementation_fits_its_operator():
    for name, op in operators().items():
        for backend in ("cpu", "cuda"):
            fn = op._resolve(backends.backend_class(backend))
            if fn is not None:
                check_implementation(op, fn)
        assert op._resolve(backends.backend_class("cuda")) is not None or name in CPU_SHORTCUTS
        assert op._resolve(CpuBackend) is not None


def test_a_backend_implements_an_operator_by_name():
    """``op.implement(name, f)`` reaches the backend registered as ``name`` and its
    subclasses; a class table overrides it; the deprecated module names still work."""
    import warnings

    from gunpy.backends import base
    op = operator("bitmap.popcount")
    calls = []

    def counting(backend, words):
        calls.append(len(words))
        return 7

    class Counting(CpuBackend):
        name = "counting"

    class Below(Counting):  # inherits "counting"'s implementation
        pass

    class Hidden(Counting):
        operators = {"bitmap.popcount": None}

    op.implement("counting", counting)
    try:
        words = np.zeros(3, dtype=np.uint32)
        assert op(Counting(), words) == 7 and op(Below(), words) == 7 and calls == [3, 3]
        assert op(CpuBackend(), words) == 0  # the cpu backend keeps its own
        with pytest.raises(NotImplementedError, match="'counting' backend does not implement "
                                                       "operator 'bitmap.popcount'"):
            op(Hidden(), words)
    finally:
        op.retract("counting")
    assert op(Counting(), words) == 0  # back to the inherited cpu implementation
    op.implement("cpu", counting)  # ahead of the one it was made with ...
    try:
        assert op(CpuBackend(), words) == 7
    finally:
        op.retract("cpu")
    assert op(CpuBackend(), words) == 0  # ... which a retract leaves in place
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert base.operator_args("bitmap.or_into") == "backend, dst, src"
        assert base.OPERATORS["compute"] == operator("compute").args
        assert CpuBackend().operator("compute") is operator("compute").on(CpuBackend())
    assert len(caught) == 3 and all(w.category is DeprecationWarning for w in caught)
