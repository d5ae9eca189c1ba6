"""A new load-balancing strategy registered from a test file runs BFS (issues 8 and 13:
one registry, one dispatch path).

``reverse_mapped`` gives each frontier vertex's list to one thread, walking the
frontier from its end: built only from gunpy's public pieces (the inline
``accept``/``emit``/``visit`` helpers every push strategy shares, and the one emit
contract: ``emit`` returns what it appended's out-degree, ``cuda_count_edges`` sums
it), with a CUDA implementation and a CPU one, registered per backend: neither
tests which backend it is on.
"""

import functools
import types

import pytest
from numba import cuda

import gunpy
from gunpy.operators import advance
from gunpy.operators.advance.common import (cpu_visit, cuda_accept, cuda_count_edges,
                                           cuda_emit, cuda_weight)
from gunpy.testing import check_bfs_tree, nasty_graphs, reference_depths

calls = []


@functools.lru_cache(maxsize=None)
def _cuda_kernel(hooks, spec):
    from gunpy.backends.cuda import kernel
    accept = cuda_accept(hooks, spec)
    weight = cuda_weight(spec.weighted)
    emit = cuda_emit(spec.output, spec.mark_visited)

    def reverse_advance(row_offsets, column_indices, values, in_queue, in_length, out_queue,
                        out_length, visited, data):
        n = in_length[0]
        found = 0
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            src = in_queue[n - 1 - i]
            for e in range(row_offsets[src], row_offsets[src + 1]):
                dst = column_indices[e]
                if accept(src, dst, e, weight(values, e), visited, data):
                    found += emit(out_queue, out_length, visited, dst, e, row_offsets)
        cuda_count_edges(out_length, found)

    return kernel(reverse_advance)


@functools.lru_cache(maxsize=None)
def _cpu_kernel(hooks, spec):
    from gunpy.backends.cpu import serial_kernel
    visit = cpu_visit(hooks, spec)

    def reverse_advance(row_offsets, column_indices, values, in_queue, n, out, visited, data):
        pos = 0
        for i in range(n - 1, -1, -1):
            src = in_queue[i]
            pos = visit(src, row_offsets[src], row_offsets[src + 1], column_indices, values,
                        out, pos, visited, data, True)
        return pos

    return serial_kernel(reverse_advance)


def cuda_execute(ctx, dg, frontier, out, hooks, data, *, edges, spec):
    calls.append(frontier.size)
    out.clear()
    ctx.backend.run(_cuda_kernel(hooks, spec), frontier.size, dg.row_offsets, dg.column_indices,
                    dg.values, frontier.queue, frontier.length, out.queue, out.length,
                    ctx.visited_words(), data)
    out.touched(counted=spec.output == "vertex", bound=edges)


def cpu_execute(ctx, dg, frontier, out, hooks, data, *, edges, spec):
    calls.append(frontier.size)
    out.set_size(_cpu_kernel(hooks, spec)(dg.row_offsets, dg.column_indices, dg.values,
                                          frontier.queue, frontier.size, out.queue,
                                          ctx.visited_words(), data))


reverse_mapped = types.SimpleNamespace(cuda_execute=cuda_execute, cpu_execute=cpu_execute)


@pytest.fixture
def registered():
    advance.register_strategy("reverse_mapped", reverse_mapped)
    calls.clear()
    yield
    advance.unregister_strategy("reverse_mapped")


@pytest.mark.parametrize("direction", ["push", "auto"])
@pytest.mark.parametrize("name", ["star_hub", "random_directed", "disconnected"])
def test_bfs_with_a_registered_strategy(registered, backend, cpu_split, direction, name):
    G = nasty_graphs()[name]
    r = gunpy.bfs(G, 0, load_balance="reverse_mapped", direction=direction, backend=backend)
    check_bfs_tree(G, 0, r.depth, r.parent, reference=reference_depths(G, 0))
    if direction == "push" and (backend == "cuda" or cpu_split == "chunked"):
        assert calls, "the registered strategy never ran"  # (auto may pull every level)
    assert "reverse_mapped" in advance.load_balance_options()


def test_registry_validates(registered):
    with pytest.raises(ValueError, match="already registered"):
        advance.register_strategy("reverse_mapped", reverse_mapped)
    with pytest.raises(ValueError, match="identifier"):
        advance.register_strategy("auto", reverse_mapped)
    with pytest.raises(TypeError, match="execute"):
        advance.register_strategy("nothing", types.SimpleNamespace())
    with pytest.raises(TypeError, match="edges, spec"):
        advance.register_strategy("wrong", types.SimpleNamespace(execute=lambda ctx: None))
    with pytest.raises(TypeError, match="edges, spec"):
        advance.register_strategy("wrong", cpu=lambda ctx, dg: None)
    with pytest.raises(ValueError, match="no backend called rocm"):
        advance.register_strategy("wrong", rocm=cpu_execute)
    assert "wrong" not in advance.load_balance_options()
    with pytest.raises(ValueError, match="reverse_mapped"):  # the error lists it
        gunpy.bfs(gunpy.Graph.from_edges([0], [1]), 0, load_balance="nope", backend="cpu")


def test_unregistered_names_are_refused():
    with pytest.raises(ValueError, match="unknown load_balance 'reverse_mapped'"):
        gunpy.bfs(gunpy.Graph.from_edges([0], [1]), 0, load_balance="reverse_mapped",
                  backend="cpu")


# -- pull mappings share the registry --------------------------------------------------------
pulls = []


def _pull_execute(ctx, dg, visited, input_bits, next_bits, hooks, data, *, mapping, early_exit):
    """A pull mapping that counts its calls and runs the built-in thread-per-vertex kernels."""
    from gunpy.operators.advance import pull
    pulls.append(mapping)
    examined, found, found_edges, _ = pull.execute(ctx, dg, visited, input_bits, next_bits,
                                                   hooks, data, mapping="thread",
                                                   early_exit=early_exit)
    return examined, found, found_edges, "counted"


@pytest.fixture
def registered_pull():
    advance.register_strategy("counted", types.SimpleNamespace(execute=_pull_execute),
                              kind="pull")
    pulls.clear()
    yield
    advance.unregister_strategy("counted", kind="pull")


@pytest.mark.parametrize("name", ["star_hub", "random_directed", "disconnected"])
def test_bfs_with_a_registered_pull_mapping(registered_pull, backend, name):
    from gunpy.enactor import DirectionPolicy
    G = nasty_graphs()[name]
    r = gunpy.bfs(G, 0, direction="pull", backend=backend,
                  direction_policy=DirectionPolicy(pull_mapping="counted"))
    check_bfs_tree(G, 0, r.depth, r.parent, reference=reference_depths(G, 0))
    assert pulls and set(pulls) == {"counted"}
    assert {it["strategy"] for it in r.stats.per_iteration} == {"pull-counted"}


def test_pull_registry_validates(registered_pull):
    from gunpy.enactor import DirectionPolicy
    with pytest.raises(TypeError, match="mapping, early_exit"):
        advance.register_strategy("bad", types.SimpleNamespace(execute=cpu_execute), kind="pull")
    with pytest.raises(ValueError, match="kind"):
        advance.register_strategy("bad", reverse_mapped, kind="sideways")
    with pytest.raises(ValueError, match="counted"):  # the error lists it
        DirectionPolicy(pull_mapping="nope")


def test_a_strategy_replaced_mid_traversal_runs_at_once(backend, cpu_split):
    # a Traversal binds its push advance once; registering again must not leave it stale
    if backend == "cpu" and cpu_split == "serial":
        pytest.skip("thin CPU frontiers run as one pass whatever the strategy")
    from gunpy.primitives.bfs import BFSFunctor, BFSProblem
    from gunpy.operators.traversal import Traversal
    G = nasty_graphs()["random_directed"]
    advance.register_strategy("reverse_mapped", cpu=cpu_execute, cuda=cuda_execute)
    try:
        problem = BFSProblem(G, backend=backend)
        problem.reset(0)
        t = Traversal(problem, load_balance="reverse_mapped")
        frontier = t.start_frontier().push(0)
        calls.clear()
        frontier = t.advance(frontier, BFSFunctor)
        assert calls == [1]

        def counted(*args, **kwargs):
            calls.append("replaced")
            return (cuda_execute if backend == "cuda" else cpu_execute)(*args, **kwargs)
        advance.register_strategy("reverse_mapped", replace=True, **{backend: counted})
        if frontier.size:
            t.advance(frontier, BFSFunctor)
            assert "replaced" in calls
    finally:
        advance.unregister_strategy("reverse_mapped")
