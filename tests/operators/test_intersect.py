"""The intersect operator (segmented intersection / mask-first masked SpGEMM) on its own.

Every match ``(e, k)`` with its edge ids ``p`` (in ``left``) and ``q`` (in
``right``) is recorded by the functor and compared with a two-pointer merge in
plain Python over the CSR (which pins the edge ids), and the matched vertices with
set intersections over the raw edge lists the graphs were built from (which do not
trust the CSR), on graphs with hubs, isolated vertices, self-loops and directed
edges, with ``left`` / ``right`` different from the mask, with ``cond_edge``
filtering (by weight), on the CPU (thin and chunked) and under the simulator.
Under the simulator the CUDA kernel runs as shipped, with every pair merged by
one thread, and with every pair swept by a warp (``LONG_PAIR``): the hook must
see the merge's calls in the merge's order, one at a time per edge, and the
entries read must be the merge's. Triangle counts on hub graphs are compared
with networkx.
"""

import importlib
from collections import namedtuple

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import Functor, atomics
from gunpy import operators as ops
from gunpy.testing import ON_CUDASIM, graph_from_edges, nasty_graphs, reference_edges

GRAPHS = nasty_graphs()
NAMES = ["star_hub", "disconnected", "directed_cycle", "preferential_hubs", "self_loops_duplicates",
         "random_directed", "random_undirected", "grid", "edgeless", "single_vertex"]

Record = namedtuple("Record", "n src dst edge common p q")


class Recorder(Functor):
    """Writes every match to the next free slot of the record arrays."""

    @staticmethod
    def apply_intersection(src, dst, edge, common, src_edge, dst_edge, data):
        slot = atomics.add(data.n, 0, 1)
        data.src[slot] = src
        data.dst[slot] = dst
        data.edge[slot] = edge
        data.common[slot] = common
        data.p[slot] = src_edge
        data.q[slot] = dst_edge


class HeavyRecorder(Recorder):
    """Only edges of weight above 0.5 (the mask filtered by cond_edge)."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return weight > 0.5


class Heavy(Functor):
    """The mask's edges of weight above 0.5 only, no per-match work."""

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return weight > 0.5


class PerEdge(Functor):
    """One writer per mask edge: plain stores, no atomics (the masked mxm pattern)."""

    @staticmethod
    def apply_intersection(src, dst, edge, common, src_edge, dst_edge, data):
        data.count[edge] += 1


@pytest.fixture(params=["shipped", "merge", "warp"])
def pairs(request, backend, monkeypatch):
    """How the CUDA kernel maps pairs: as shipped (a warp for long pairs), every pair to
    one thread's merge, or every non-empty pair to a warp."""
    if request.param != "shipped":
        if backend != "cuda":
            pytest.skip("the CUDA kernel's pair mapping only")
        module = importlib.import_module("gunpy.operators.intersect")
        monkeypatch.setattr(module, "LONG_PAIR", 0 if request.param == "warp" else 1 << 40)
    return request.param


def _edges(G):
    return np.repeat(np.arange(G.num_vertices), G.out_degrees()), G.column_indices


def reference(G, L, R, keep=None, lower=False):
    """Sorted matches ``(src, dst, e, k, p, q)`` and the list entries a merge reads
    (``lower``: the edges ``i -> j`` with ``j < i``, each list cut below its row)."""
    out, read = [], 0
    src, dst = _edges(G)
    w = G.values if G.values is not None else np.ones(G.num_edges)
    for e, (i, j) in enumerate(zip(src.tolist(), dst.tolist())):
        if keep is not None and not keep(w[e]) or lower and j >= i:
            continue
        p, p_end = int(L.row_offsets[i]), int(L.row_offsets[i + 1])
        q, q_end = int(R.row_offsets[j]), int(R.row_offsets[j + 1])
        if lower:
            p_end = p + int(np.sum(L.column_indices[p:p_end] < i))
            q_end = q + int(np.sum(R.column_indices[q:q_end] < j))
        p0, q0 = p, q
        while p < p_end and q < q_end:
            a, b = int(L.column_indices[p]), int(R.column_indices[q])
            if a == b:
                out.append((i, j, e, a, p, q))
                p, q = p + 1, q + 1
            elif a < b:
                p += 1
            else:
                q += 1
        read += (p - p0) + (q - q0)
    return sorted(out), read


def raw_neighbours(G):
    """Out-neighbour sets from G's raw edge list (reference_edges), not its CSR."""
    out = [set() for _ in range(G.num_vertices)]
    for u, v, _ in reference_edges(G):
        out[u].add(v)
    return out


def raw_matches(G, L, R, keep=None, lower=False):
    """Sorted ``(i, j, k)``: k is an out-neighbour of i in L and of j in R, for each edge
    i->j of G (kept by ``keep(weight)``; ``lower``: only ``k < j < i``)."""
    nl, nr = raw_neighbours(L), raw_neighbours(R)
    return sorted((i, j, k) for i, j, w in reference_edges(G)
                  if (keep is None or keep(1.0 if w is None else w)) and not (lower and j >= i)
                  for k in nl[i] & nr[j] if not (lower and k >= j))


def raw_common_counts(G):
    """|N(i) & N(j)| for each CSR edge i->j of G, the sets from G's raw edge list."""
    nb = raw_neighbours(G)
    src, dst = _edges(G)
    return np.array([len(nb[i] & nb[j]) for i, j in zip(src.tolist(), dst.tolist())],
                    dtype=np.int64)


def run_recorder(G, functor, backend, left=None, right=None, lower=False):
    L = G if left is None else left
    R = G if right is None else right
    src, dst = _edges(G)
    cap = int(np.minimum(np.diff(L.row_offsets)[src], np.diff(R.row_offsets)[dst]).sum()) + 1
    ctx = ops.Context(G, backend)
    be = ctx.backend
    data = Record(be.zeros(1, np.int64), *(be.zeros(cap, np.int64) for _ in range(6)))
    total = ops.intersect(G, functor, data, left=left, right=right, lower=lower, context=ctx)
    n = int(be.to_host(data.n)[0])
    cols = [be.to_host(a)[:n] for a in data[1:]]
    got = sorted(zip(*(c.tolist() for c in cols)))
    return total, got, ctx


def check_matches(G, backend, functor=Recorder, left=None, right=None, keep=None,
                  lower=False):
    """Runs ``functor`` (a Recorder) with run_recorder; checks the count it returns, the
    matches it records and the list entries it reads against the merge (``reference``).
    Returns ``(recorded matches, the merge's, ctx)``."""
    total, got, ctx = run_recorder(G, functor, backend, left=left, right=right, lower=lower)
    expect, read = reference(G, G if left is None else left, G if right is None else right,
                             keep=keep, lower=lower)
    assert total == len(expect) and got == expect
    assert ctx.record["edges"] == read
    return got, expect, ctx


@pytest.mark.parametrize("name", NAMES)
def test_matches_and_edge_ids_equal_a_merge(name, backend, cpu_split, pairs):
    G = GRAPHS[name]
    got, _, ctx = check_matches(G, backend)
    assert sorted((i, j, k) for i, j, _, k, _, _ in got) == raw_matches(G, G, G)
    assert ctx.record["strategy"] == "intersect"


def _random(n, m, seed, directed=True, weighted=False):
    rng = np.random.default_rng(seed)
    s, d = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.random(m) if weighted else None
    return graph_from_edges(s, d, w, num_vertices=n, directed=directed)


LOWER = ["star_hub", "disconnected", "preferential_hubs", "self_loops_duplicates",
         "random_undirected", "grid", "edgeless"]


@pytest.mark.parametrize("name", LOWER)
def test_lower_triangles_read_in_place_equal_a_merge_of_the_cut_lists(name, backend,
                                                                      cpu_split, pairs):
    """``lower=True``: the edges i -> j with j < i, each list cut below its own row; the
    matches, edge ids and entries read are a merge's over the cut lists, and the matched
    vertices ``k < j < i`` the raw edge lists' (each triangle once)."""
    G = GRAPHS[name]
    got, _, _ = check_matches(G, backend, lower=True)
    assert sorted((i, j, k) for i, j, _, k, _, _ in got) == raw_matches(G, G, G, lower=True)


@pytest.mark.parametrize("seed", range(3))
def test_lower_triangles_of_denser_graphs_mark_and_probe(seed, backend, cpu_split, pairs):
    """Lists long enough for the CPU's marking path (and the warp's sweeps), weights and
    cond_edge, per-edge counts: the same as the merge of the cut lists."""
    if ON_CUDASIM and seed:
        pytest.skip("the simulator runs one graph (a warp's sweeps take it ~10 s)")
    n = 30 if ON_CUDASIM else 400
    G = _random(n, 10 * n, seed, directed=False, weighted=True)
    got, expect, _ = check_matches(G, backend, HeavyRecorder, keep=lambda w: w > 0.5,
                                   lower=True)
    assert len(expect) > 0
    ctx = ops.Context(G, backend)
    counts = ctx.backend.full(G.num_edges, -7, np.int64)
    total = ops.intersect(G, Functor, context=ctx, counts=counts, lower=True)
    src, dst = _edges(G)
    nb = raw_neighbours(G)
    want = np.array([len({k for k in nb[i] & nb[j] if k < j}) if j < i else -7
                     for i, j in zip(src.tolist(), dst.tolist())])
    assert np.array_equal(ctx.backend.to_host(counts), want)
    assert total == int(want[want > 0].sum())


def test_lower_needs_a_sorted_mask():
    G = gunpy.Graph(np.array([0, 2, 3, 4]), np.array([2, 1, 0, 0]), directed=True)
    S = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=True)
    ops.intersect(G, Functor, left=S, right=S, context=ops.Context(G, "cpu"))  # any mask
    with pytest.raises(ValueError, match="row 0 of the mask graph"):
        ops.intersect(G, Functor, left=S, right=S, lower=True, context=ops.Context(G, "cpu"))


def test_left_and_right_differ_from_the_mask(backend, cpu_split, pairs):
    n = 40
    G = _random(n, 160, 1)
    L = _random(n, 300, 2, directed=False)
    R = _random(n, 200, 3)
    got, expect, _ = check_matches(G, backend, left=L, right=R)
    assert len(expect) > 20  # the test means something
    assert sorted((i, j, k) for i, j, _, k, _, _ in got) == raw_matches(G, L, R)
    # p indexes left's edges and q right's: the recorded ids point at (i, k) and (j, k)
    for i, j, e, k, p, q in got:
        assert L.column_indices[p] == k and L.row_offsets[i] <= p < L.row_offsets[i + 1]
        assert R.column_indices[q] == k and R.row_offsets[j] <= q < R.row_offsets[j + 1]


def test_only_right_given_left_defaults_to_the_mask(backend):
    G = _random(30, 120, 4, directed=False)
    R = _random(30, 150, 5)
    total, got, _ = run_recorder(G, Recorder, backend, right=R)
    expect, _ = reference(G, G, R)
    assert total == len(expect) > 0 and got == expect
    assert sorted((i, j, k) for i, j, _, k, _, _ in got) == raw_matches(G, G, R)


def test_cond_edge_filters_the_mask_by_weight(backend, cpu_split, pairs):
    G = _random(40, 200, 6, directed=False, weighted=True)
    got, expect, _ = check_matches(G, backend, HeavyRecorder, keep=lambda w: w > 0.5)
    everything, _ = reference(G, G, G)
    assert 0 < len(expect) < len(everything)
    assert sorted((i, j, k) for i, j, _, k, _, _ in got) == raw_matches(G, G, G, lambda w: w > 0.5)


def test_per_edge_counts_are_common_neighbour_counts(backend, pairs):
    G = GRAPHS["preferential_hubs"]
    ctx = ops.Context(G, backend)
    data = namedtuple("Data", "count")(ctx.backend.zeros(G.num_edges, np.int64))
    total = ops.intersect(G, PerEdge, data, context=ctx)
    count = ctx.backend.to_host(data.count)
    expect = raw_common_counts(G)
    assert np.array_equal(count, expect)
    assert expect.sum() == len(raw_matches(G, G, G))
    assert total == int(expect.sum()) > 0


def test_counts_argument_gives_per_edge_counts_without_a_hook(backend, cpu_split, pairs):
    G = GRAPHS["preferential_hubs"]
    ctx = ops.Context(G, backend)
    counts = ctx.backend.full(G.num_edges, -7, np.int64)
    total = ops.intersect(G, Functor, context=ctx, counts=counts)
    expect = raw_common_counts(G)
    assert np.array_equal(ctx.backend.to_host(counts), expect)
    assert total == int(expect.sum()) > 0
    # edges cond_edge drops keep what their slot held
    W = _random(40, 200, 6, directed=False, weighted=True)
    ctx = ops.Context(W, backend)
    counts = ctx.backend.full(W.num_edges, -7, np.int64)
    ops.intersect(W, Heavy, context=ctx, counts=counts)
    got = ctx.backend.to_host(counts)
    assert np.all((got == -7) == (W.values <= 0.5))
    with pytest.raises(ValueError, match="int64"):
        ops.intersect(G, Functor, context=ops.Context(G, backend),
                      counts=np.zeros(G.num_edges, np.int32))


def test_a_functor_with_no_hooks_just_counts(backend):
    G = GRAPHS["grid"]
    assert ops.intersect(G, Functor, context=ops.Context(G, backend)) == 0  # no triangles
    K = gunpy.Graph.from_edges(*np.triu_indices(6, 1), directed=False)
    # every ordered pair of K6 shares the 4 other vertices
    assert ops.intersect(K, Functor, context=ops.Context(K, backend)) == 30 * 4


def test_unsorted_rows_are_refused_with_the_row_named():
    # row 1 lists 2 before 0: a CSR built by hand, never by Graph.from_edges
    U = gunpy.Graph([0, 1, 3, 4], [1, 2, 0, 1])
    with pytest.raises(ValueError, match="sorted by column, but row 1 of the left graph"):
        ops.intersect(U, Functor, context=ops.Context(U, "cpu"))
    S = gunpy.Graph.from_edges([0, 1, 1, 2], [1, 0, 2, 1])
    with pytest.raises(ValueError, match="row 1 of the right graph"):
        ops.intersect(S, Functor, right=U, context=ops.Context(S, "cpu"))
    # the mask itself may be in any order: only the intersected lists must be sorted
    assert ops.intersect(U, Functor, left=S, right=S, context=ops.Context(U, "cpu")) == 0
    # sorted rows with a drop only where a new row starts (and empty rows) pass
    ok = gunpy.Graph([0, 2, 2, 3, 4], [2, 3, 0, 1])
    assert ops.intersect(ok, Functor, context=ops.Context(ok, "cpu")) == 0


def test_the_sortedness_check_is_kept_and_dropped_with_the_arrays():
    G = gunpy.Graph([0, 2, 3, 4], [1, 2, 0, 0])
    ctx = ops.Context(G, "cpu")
    ops.intersect(G, Functor, context=ctx)
    from gunpy.operators.intersect import _SORTED
    assert G._device.knows(_SORTED)
    G.column_indices = [2, 1, 0, 0]  # rebinding drops the verdict: checked again
    with pytest.raises(ValueError, match="row 0"):
        ops.intersect(G, Functor, context=ops.Context(G, "cpu"))


def test_bad_calls_give_clear_errors():
    G = GRAPHS["disconnected"]
    ctx = ops.Context(G, "cpu")
    with pytest.raises(ValueError, match="left graph has 5 vertices"):
        ops.intersect(G, Functor, left=_random(5, 8, 0), context=ctx)
    with pytest.raises(TypeError, match="right must be a gunpy.Graph"):
        ops.intersect(G, Functor, right=G.to_scipy(), context=ctx)
    with pytest.raises(TypeError, match="Functor"):
        ops.intersect(G, object, context=ctx)
    with pytest.raises(ValueError, match="another graph"):
        ops.intersect(GRAPHS["grid"], Functor, context=ctx)


def test_empty_graphs(backend):
    for G in (gunpy.Graph.from_edges([], [], num_vertices=0),
              gunpy.Graph.from_edges([], [], num_vertices=5, directed=False)):
        ctx = ops.Context(G, backend)
        assert ops.intersect(G, Recorder, None, context=ctx) == 0
        assert ctx.record["edges"] == 0


def test_no_context_makes_one():
    G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=False)
    assert ops.intersect(G, Functor) == 6


# ------------------------------------------------------------------ skewed pairs (issue 14)
class Sequence(Functor):
    """Folds each edge's matches into a hash, no atomics: a race or an order other than
    the merge's gives another hash."""

    @staticmethod
    def apply_intersection(src, dst, edge, common, src_edge, dst_edge, data):
        h = data.hash[edge]
        h = (h * 31 + common + 1) % 1000003
        h = (h * 31 + src_edge + 1) % 1000003
        data.hash[edge] = (h * 31 + dst_edge + 1) % 1000003


def sequence_hashes(G, L, R):
    expect = np.zeros(G.num_edges, dtype=np.int64)
    for _, _, e, k, p, q in sorted(reference(G, L, R)[0], key=lambda r: (r[2], r[4], r[5])):
        h = (int(expect[e]) * 31 + k + 1) % 1000003
        h = (h * 31 + p + 1) % 1000003
        expect[e] = (h * 31 + q + 1) % 1000003
    return expect


def check_sequence(G, backend, left=None, right=None):
    """Per edge: the merge's calls in the merge's order, one writer at a time (Sequence's
    hashes equal the merge's)."""
    ctx = ops.Context(G, backend)
    data = namedtuple("Data", "hash")(ctx.backend.zeros(G.num_edges, np.int64))
    ops.intersect(G, Sequence, data, left=left, right=right, context=ctx)
    expect = sequence_hashes(G, G if left is None else left, G if right is None else right)
    assert np.array_equal(ctx.backend.to_host(data.hash), expect)


def wheel(rim):
    """A hub joined to every vertex of a cycle of ``rim``: hub pairs of ``rim + 3`` entries."""
    return gunpy.Graph.from_networkx(nx.wheel_graph(rim + 1))


def repeated_columns():
    """Sorted rows that repeat columns (a CSR built by hand): copies pair up rank by rank."""
    rows = [[1, 1, 2, 3, 3, 3, 5], [0, 3, 3, 5, 5], [0, 1, 3], [0, 0, 1, 1, 5, 5], [],
            [3, 3, 3, 5]]
    return gunpy.Graph(np.cumsum([0] + [len(r) for r in rows]), sum(rows, []))


def star_pairs():
    """A hub of 150 leaves, a leaf list of 1 to 70 entries, and pairs of one entry
    against many: a thread's merge would walk the whole long list."""
    src = [0] * 150 + [1] * 69 + [2, 3]
    dst = list(range(1, 151)) + list(range(150, 219)) + [149, 0]
    return graph_from_edges(np.array(src), np.array(dst), num_vertices=220, directed=True)


SKEWED = {"wheel_100": wheel(100), "repeated_columns": repeated_columns(),
          "star_pairs": star_pairs()}


@pytest.mark.parametrize("name", sorted(SKEWED))
def test_skewed_pairs_call_the_hook_as_the_merge_does(name, backend, pairs, small):
    if small and name == "wheel_100" and pairs == "warp":
        # shipped sends the hub's pairs to the warp; warp runs the rim's short pairs in
        # repeated_columns and star_pairs
        pytest.skip("the simulator's warp runs wheel_100's hub pairs as shipped (~10 s)")
    G = SKEWED[name]
    _, expect, _ = check_matches(G, backend)
    assert len(expect) > 0
    check_sequence(G, backend)


def test_long_pairs_with_other_left_and_right(backend, pairs):
    # left lists of ~60 entries against right lists of 1-10: swept by the warp as shipped
    n = 70
    G = _random(n, 120, 11)
    L = _random(n, 5000, 12, directed=False)
    R = _random(n, 300, 13)
    src, dst = _edges(G)
    assert np.max(np.diff(L.row_offsets)[src] + np.diff(R.row_offsets)[dst]) >= 64
    _, expect, _ = check_matches(G, backend, left=L, right=R)
    assert len(expect) > 100
    check_sequence(G, backend, left=L, right=R)


def _triangle_reference(G):
    tri = nx.triangles(nx.Graph(G.to_networkx()))
    return np.array([tri[v] for v in range(G.num_vertices)], dtype=np.int64)


#: cliques whose oriented pairs reach LONG_PAIR (K_k's longest: 2k - 3 entries); smaller
#: under the simulator, where a clique's every match is a simulated warp step
_K = 36 if ON_CUDASIM else 70
HUB_GRAPHS = {"wheel_100": wheel(100), "star_300": gunpy.generators.star(300),
              "clique": gunpy.Graph.from_networkx(nx.complete_graph(_K)),
              "hub_and_clique": gunpy.Graph.from_networkx(nx.compose(
                  nx.star_graph(120), nx.complete_graph(range(100, 100 + _K))))}
HUB_GRAPHS.update((f"nasty_{k}", GRAPHS[k]) for k in ("star_hub", "preferential_hubs"))


@pytest.mark.parametrize("name", sorted(HUB_GRAPHS))
def test_triangles_on_hub_graphs_equal_networkx(name, backend, pairs, small):
    if small and name == "clique":
        pytest.skip("the simulator runs the clique inside hub_and_clique (~45 s each)")
    if small and name == "hub_and_clique" and pairs == "warp":
        # shipped sends its long pairs to the warp, and warp runs the short ones elsewhere
        pytest.skip("the simulator's warp runs hub_and_clique's long pairs as shipped (~35 s)")
    G = HUB_GRAPHS[name]
    expect = _triangle_reference(G)
    r = gunpy.triangles(G, backend=backend)
    assert np.array_equal(r.triangles, expect)
    assert r.count == expect.sum() // 3 == gunpy.triangle_count(G, backend=backend)
    if name in ("clique", "hub_and_clique"):
        assert r.count > 0
        # oriented pairs long enough for a warp as shipped
        O = gunpy.primitives.triangles.orient(G)
        d = np.diff(O.row_offsets)
        src = np.repeat(np.arange(O.num_vertices), d)
        assert np.max(d[src] + d[O.column_indices]) >= 64


def test_a_second_call_allocates_nothing(backend):
    G = SKEWED["star_pairs"]
    ctx = ops.Context(G, backend)
    be = ctx.backend
    first = ops.intersect(G, Functor, context=ctx)
    before = be.counts()
    assert ops.intersect(G, Functor, context=ctx) == first > 0
    after = be.counts()
    assert after.allocs == before.allocs
    if after.launches is not None:  # CUDA: zeroing the counters, the kernel; one read
        assert (after.launches - before.launches, after.syncs - before.syncs) == (2, 1)
