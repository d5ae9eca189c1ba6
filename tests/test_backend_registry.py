"""One dispatch mechanism (issue 13): backends are registered, declare their operators in one
table with one calling convention, and strategies file their per-backend implementations
in the same tables."""

import numpy as np
import pytest

import gunpy
from gunpy import backends
from gunpy.backends.base import OPERATORS, check_implementation, implement, operator_args
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
    """gunpy's strategies are registered like a user's: per-backend functions in the tables."""
    cpu = backends.get_backend("cpu")
    for name in ("thread_mapped", "twc", "merge_path"):
        s = advance.STRATEGIES[name]
        assert s.op == f"advance.push.{name}"
        assert set(s.backends) == {"cuda", "cpu"}
    assert cpu.operator("advance.push.thread_mapped") is thread_mapped.cpu_execute
    assert cpu.operator("advance.push.twc") is twc.cpu_execute
    assert set(advance.PULL_MAPPINGS) == {"thread", "warp", "auto"}
    # the old operator names are gone: one name per strategy
    assert not any(k.startswith("advance.") and k.count(".") == 1 and k != "advance.thin"
                   and k != "advance.levels" for k in OPERATORS)


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
    with pytest.raises(NotImplementedError, match="advance.push.mine"):
        backends.get_backend("cpu").operator("advance.push.mine")


def test_one_signature_convention_is_checked():
    assert operator_args("filter.cull") == "ctx, frontier, out, hooks, data, visited"
    assert operator_args("advance.push.anything").endswith("*, edges, spec")
    with pytest.raises(ValueError, match="unknown operator 'nope'"):
        operator_args("nope")
    check_implementation("bitmap.or_into", lambda backend, dst, src: None)
    with pytest.raises(TypeError, match=r"must take \(backend, dst, src\)"):
        check_implementation("bitmap.or_into", lambda backend, dst: None)
    with pytest.raises(TypeError, match="edges, spec"):
        implement("cpu", "advance.push.broken", lambda ctx, dg, frontier, out, hooks, data: 0)

    class WrongTable(CpuBackend):
        name = "wrong_table"
        operators = {"bitmap.popcount": "gunpy.operators.bitmap:cpu_or_into"}

    with pytest.raises(TypeError, match="bitmap.popcount.*cpu_or_into"):
        WrongTable().operator("bitmap.popcount")


def test_every_builtin_implementation_fits_its_operator():
    for backend in ("cpu", "cuda"):
        cls = backends.backend_class(backend)
        for name in cls.operators:
            fn = cls().operator(name) if backend == "cpu" else _resolve(cls, name)
            check_implementation(name, fn)


def _resolve(cls, name):
    from gunpy.backends.base import _import
    return _import(cls.operators[name], name)
