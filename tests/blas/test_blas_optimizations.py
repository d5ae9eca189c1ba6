"""The push-pull paper's optimisations in gunpy.blas, each shown by what it saves."""

import numpy as np
import pytest

import gunpy
from gunpy import blas
from gunpy.testing import ON_CUDASIM

N = 24 if ON_CUDASIM else 200


def _dense_graph():
    # every vertex has many in-neighbours: early exit has something to skip
    rng = np.random.default_rng(4)
    m = N * 12
    return gunpy.Graph.from_edges(rng.integers(0, N, m), rng.integers(0, N, m),
                                  rng.random(m) + 0.5, num_vertices=N, directed=True)


def _vec(idx, n=N, backend="cpu", dtype=np.int64):
    return blas.Vector.from_coo(idx, np.asarray(idx, dtype=dtype), size=n, backend=backend)


def test_early_exit_stops_a_row_at_the_first_parent(backend):
    A = blas.Matrix.from_graph(_dense_graph(), backend=backend)
    u = _vec(np.arange(0, N, 2), backend=backend)
    fast = blas.semiring.any_pair(u @ A).new(direction="pull")
    examined_fast = A.last_stats["edges"]
    slow = blas.semiring.any_pair(u @ A).new(direction="pull", early_exit=False)
    examined_slow = A.last_stats["edges"]
    assert fast.isequal(slow)
    assert examined_fast < examined_slow


def test_a_terminal_value_ends_a_row_early(backend):
    A = blas.Matrix.from_graph(_dense_graph(), backend=backend)
    u = blas.Vector.from_coo(np.arange(N), np.ones(N, dtype=bool), size=N, backend=backend)
    fast = blas.semiring.lor_land(u @ A).new(direction="pull")
    examined_fast = A.last_stats["edges"]
    slow = blas.semiring.lor_land(u @ A).new(direction="pull", early_exit=False)
    assert fast.isequal(slow)
    assert examined_fast < A.last_stats["edges"]


def test_a_complemented_mask_skips_masked_rows_in_pull(backend):
    G = _dense_graph()
    A = blas.Matrix.from_graph(G, backend=backend)
    u = _vec(np.arange(N), backend=backend)
    done = _vec(np.arange(N - 3), backend=backend)       # all but three rows masked out
    t = blas.semiring.plus_pair(u @ A).new(mask=~done.S, direction="pull")
    free = G.in_degrees()[N - 3:].sum()
    assert A.last_stats["edges"] <= free            # only the unmasked rows' in-edges
    assert set(t.to_coo()[0].tolist()) <= {N - 3, N - 2, N - 1}


def test_operand_reuse_reads_the_mask_not_the_input(backend):
    # BFS's promise: every visited in-neighbour of an unvisited vertex is in the frontier
    G = gunpy.generators.path(N)
    A = blas.Matrix.from_graph(G, backend=backend)
    q = _vec([5], backend=backend)
    visited = _vec(np.arange(6), backend=backend)
    plain = blas.semiring.any_secondi(q @ A).new(mask=~visited.S, direction="pull")
    assert q.data.structure.has_bitmap        # the input was converted to a bitmap
    q = _vec([5], backend=backend)
    reused = blas.semiring.any_secondi(q @ A).new(mask=~visited.S, direction="pull",
                                                  operand_reuse=True)
    assert not q.data.structure.has_bitmap    # ... and with reuse it never is
    assert reused.isequal(plain) and reused.to_coo()[0].tolist() == [6]
    with pytest.raises(ValueError, match="complemented mask"):
        blas.semiring.any_pair(q @ A).new(operand_reuse=True)


def test_structure_only_leaves_the_values_unread(backend):
    A = blas.Matrix.from_graph(_dense_graph(), backend=backend)
    u = _vec([0, 1, 2], backend=backend)
    blas.semiring.plus_pair(u @ A).new(direction="push")
    assert A.last_stats["structure_only"]
    blas.semiring.plus_times(u @ A).new(direction="push")
    assert not A.last_stats["structure_only"]


def test_push_output_has_no_duplicates(backend):
    # many frontier vertices reach the same hub: the hub is emitted once
    G = gunpy.generators.star(N - 1, directed=False)
    A = blas.Matrix.from_graph(G, backend=backend)
    u = _vec(np.arange(1, N), backend=backend)
    t = blas.semiring.plus_pair(u @ A).new(direction="push")
    assert A.last_stats["direction"] == "push"
    assert t.nvals == 1 and t.data.structure.size == 1 and t[0].value == N - 1


def test_auto_direction_follows_the_ratio_rule(backend):
    A = blas.Matrix.from_graph(_dense_graph(), backend=backend)
    with blas.options(ratio=0.1):    # the default is 1 % of the vertices
        blas.semiring.any_pair(_vec([0], backend=backend) @ A).new()
        assert A.last_stats["direction"] == "push"
        blas.semiring.any_pair(_vec(np.arange(N // 2), backend=backend) @ A).new()
        assert A.last_stats["direction"] == "pull"
    with blas.options(ratio=0.9):
        blas.semiring.any_pair(_vec(np.arange(N // 2), backend=backend) @ A).new()
    assert A.last_stats["direction"] == "push"
    # no atomic for times: always one writer per row
    blas.semiring.times_plus(_vec([0], dtype=float, backend=backend) @ A).new(direction="push")
    assert A.last_stats["direction"] == "pull"
