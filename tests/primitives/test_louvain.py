"""Louvain (gunpy.louvain) and its operators (neighbor_best, contract) against networkx.

The oracles: networkx's ``community.modularity`` of the returned partition (the reported
modularity must equal it), networkx's own ``louvain_communities`` (ours must come within
0.01 of its modularity), and networkx's quotient graph for the contraction. Partitions
differ from networkx's: its moves are sequential in a random order, ours move in seeded
buckets.
"""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy.backends.cpu import CpuBackend
from gunpy.testing import nasty_graphs
from gunpy.testing.oracles import weighted_copy
from doc_examples import check_docstring_examples, run_user_guide_section

UNDIRECTED = ("path_undirected", "star_hub", "disconnected", "edgeless", "random_undirected",
              "preferential_hubs", "grid")

#: networkx 3.6.1's louvain_communities(seed=1) modularity on the bundled undirected graphs
#: and RMAT-14 (measured once: networkx takes 0.3-19 s on the larger ones)
NETWORKX = {"karate": 0.4188, "chesapeake": 0.2593, "dolphins": 0.5177, "netscience": 0.9547,
            "CA-GrQc": 0.8625, "facebook": 0.8350, "email-Enron": 0.6018,
            "delaunay_n16": 0.9477, "luxembourg_osm": 0.9887, "rmat14": 0.1009}


@pytest.fixture(autouse=True)
def few_buckets(small, monkeypatch):
    """Under the simulator, levels move in 8 sub-rounds even when small (a sub-round costs
    two launches: one a vertex would cost a launch per vertex, 32 as shipped four times 8's;
    the kernels are the same); test_sequential_levels keeps the sequential path."""
    if small:
        from gunpy.primitives import louvain
        monkeypatch.setattr(louvain, "SEQUENTIAL_BELOW", 0)
        monkeypatch.setattr(louvain, "BUCKETS", 8)


def check(G, r, resolution=1.0):
    """Compact labels, and the reported modularity equal to networkx's of the partition."""
    n = G.num_vertices
    assert r.labels.dtype == np.int64 and r.labels.shape == (n,)
    k = int(r.labels.max(initial=-1)) + 1
    assert sorted(set(r.labels.tolist())) == list(range(k))
    assert r.levels[-1].communities == k
    np.testing.assert_array_equal(r.levels[-1].labels, r.labels)
    if G.num_edges == 0:
        assert np.isnan(r.modularity) and k == n
        return
    assert r.levels[-1].modularity == r.modularity
    g = G.to_networkx()
    expect = nx.community.modularity(g, r.communities(), resolution=resolution)
    assert abs(r.modularity - expect) < 1e-9
    singletons = nx.community.modularity(g, [{v} for v in g], resolution=resolution)
    assert r.modularity >= singletons - 1e-12


def with_loops(G, seed=3):
    # the graph's edges plus self-loops on a few vertices, weighted
    rng = np.random.default_rng(seed)
    coo = G.to_scipy().tocoo()
    keep = coo.row <= coo.col
    loops = rng.choice(G.num_vertices, max(1, G.num_vertices // 4), replace=False)
    src = np.r_[coo.row[keep], loops]
    dst = np.r_[coo.col[keep], loops]
    w = rng.integers(1, 5, src.shape[0]).astype(float)
    return gunpy.Graph.from_edges(src, dst, w, num_vertices=G.num_vertices, directed=False,
                                  remove_self_loops=False)


@pytest.mark.parametrize("name", UNDIRECTED)
def test_nasty_graphs_modularity_is_networkx_s(backend, small, name):
    G = nasty_graphs(small=small)[name]
    variants = (G, weighted_copy(G), with_loops(G)) if not small else (with_loops(G),)
    for H in variants if G.num_edges else (G,):
        check(H, gunpy.louvain(H, backend=backend))


def test_sequential_levels(backend, monkeypatch):
    # a level of at most SEQUENTIAL_BELOW vertices: one vertex a sub-round, no swap guard
    from gunpy.primitives import louvain
    monkeypatch.setattr(louvain, "SEQUENTIAL_BELOW", 256)
    G = weighted_copy(gunpy.Graph.from_networkx(nx.barbell_graph(4, 1)))
    r = gunpy.louvain(G, seed=3, backend=backend)
    check(G, r)
    assert r.labels.max() == 1


def test_resolution_and_karate(backend):
    g = nx.karate_club_graph()  # weighted
    G = gunpy.Graph.from_networkx(g)
    found = {}
    for resolution in (0.5, 2.0):
        found[resolution] = r = gunpy.louvain(G, resolution=resolution, seed=1, backend=backend)
        check(G, r, resolution)
    assert found[0.5].labels.max() < found[2.0].labels.max()


@pytest.mark.large
@pytest.mark.parametrize("name", ["karate", "chesapeake", "dolphins", "netscience", "CA-GrQc",
                                  "facebook", "rmat14"])
def test_as_good_as_networkx_on_bundled_graphs(name):
    G = gunpy.generators.rmat(14, seed=0) if name == "rmat14" else gunpy.datasets.load(name)
    r = gunpy.louvain(G, seed=1, backend="cpu")
    assert r.modularity >= NETWORKX[name] - 0.01, (r.modularity, NETWORKX[name])
    if G.num_edges < 200_000:
        check(G, r)


#: the CPU backend's work split as shipped (read before any fixture patches it)
SHIPPED_SPLIT = {name: getattr(CpuBackend, name)
                 for name in ("serial_below", "force_min_chunk", "fuse_below")}


def test_deterministic_for_a_seed_and_any_thread_split(backend, cpu_split, small, monkeypatch):
    # past SEQUENTIAL_BELOW vertices on the CPU: buckets of vertices moving together
    G = nasty_graphs(small=True)["preferential_hubs"] if small else \
        gunpy.generators.rmat(9, 4, seed=1)
    first = gunpy.louvain(G, seed=5, backend=backend)
    if not small:  # the simulator's run is compared with the CPU's below
        again = gunpy.louvain(G, seed=5, backend=backend)
        np.testing.assert_array_equal(first.labels, again.labels)
        assert first.modularity == again.modularity
        assert [lv.communities for lv in first.levels] == [lv.communities for lv in again.levels]
    # the serial CPU build gives the same partition as the chunked (cpu_split) or CUDA one
    for name, value in SHIPPED_SPLIT.items():  # cpu_split's chunking off: the shipped build
        monkeypatch.setattr(CpuBackend, name, value)
    serial = gunpy.louvain(G, seed=5, backend="cpu")
    np.testing.assert_array_equal(first.labels, serial.labels)


def test_levels_and_max_level(backend, small):
    G = nasty_graphs(small=small)["grid"]
    full = gunpy.louvain(G, seed=2, backend=backend)
    assert len(full.levels) >= 2
    q = [lv.modularity for lv in full.levels]
    assert q == sorted(q)  # every kept level raised the modularity
    one = gunpy.louvain(G, seed=2, max_level=1, backend=backend)
    assert len(one.levels) == 1 and one.levels[0].communities == full.levels[0].communities
    np.testing.assert_array_equal(one.labels, full.levels[0].labels)  # one level: no refining
    # the last level's partition is the refined one: never worse than the unrefined
    assert full.modularity >= full.levels[-2].modularity
    assert full.stats.iterations == len(full.stats.per_iteration) > 0
    assert {it["level"] for it in full.stats.per_iteration} >= {0, 1}


def test_empty_and_bad_input(backend):
    r = gunpy.louvain(gunpy.Graph.from_edges([], [], num_vertices=3, directed=False),
                      backend=backend)
    assert r.labels.tolist() == [0, 1, 2] and np.isnan(r.modularity)
    G = gunpy.generators.path(4)
    with pytest.raises(ValueError, match="undirected"):
        gunpy.louvain(gunpy.Graph.from_edges([0, 1], [1, 2]), backend=backend)
    with pytest.raises(ValueError, match="non-negative"):
        gunpy.louvain(gunpy.Graph.from_edges([0], [1], [-1.0], directed=False), backend=backend)
    for kwargs, what in (({"resolution": 0}, "resolution"), ({"resolution": "1"}, "resolution"),
                         ({"threshold": np.nan}, "threshold"), ({"max_level": 0}, "max_level"),
                         ({"max_level": 1.5}, "max_level"), ({"seed": -1}, "seed"),
                         ({"seed": 1.5}, "seed")):
        with pytest.raises(ValueError, match=what):
            gunpy.louvain(G, backend=backend, **kwargs)
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.louvain(nx.path_graph(3))


def test_user_arrays_not_mutated(backend):
    src, dst, w = np.array([0, 1, 2, 3]), np.array([1, 2, 3, 0]), np.array([1.0, 2.0, 3.0, 4.0])
    G = gunpy.Graph.from_edges(src, dst, w, directed=False)
    before = (G.row_offsets.copy(), G.column_indices.copy(), G.values.copy())
    gunpy.louvain(G, backend=backend)
    assert src.tolist() == [0, 1, 2, 3] and w.tolist() == [1.0, 2.0, 3.0, 4.0]
    for a, b in zip(before, (G.row_offsets, G.column_indices, G.values)):
        np.testing.assert_array_equal(a, b)


def test_sweeps_allocate_nothing(backend, small):
    G = gunpy.generators.grid_2d(*((4, 4) if small else (8, 8)))
    gunpy.louvain(G, backend=backend)
    its = gunpy.louvain(G, backend=backend).stats.per_iteration
    # a level's first sweep takes its graph's work arrays; none after it
    later = [it for before, it in zip(its, its[1:]) if it["level"] == before["level"]]
    assert len(later) >= 2 and all(it["allocs"] == 0 for it in later)
    assert its[0]["allocs"] == 0  # the input graph's were taken by the call before


def test_contract_is_networkx_s_quotient(backend, small):
    from gunpy import operators as ops
    be = gunpy.backends.get_backend(backend)
    G = with_loops(nasty_graphs(small=small)["random_undirected"])
    rng = np.random.default_rng(0)
    labels = rng.choice([3, 7, 8, 20, 39], G.num_vertices).astype(np.int64)
    dev = be.asarray(labels)
    Q = ops.contract(G, dev, context=ops.Context(G, be))
    new = be.to_host(dev)
    assert new.tolist() == np.unique(labels, return_inverse=True)[1].tolist()
    # networkx's quotient: each edge's weight once to its ends' communities' edge
    g, want = G.to_networkx(), {}
    for u, v, d in g.edges(data=True):
        key = tuple(sorted((int(new[u]), int(new[v]))))
        want[key] = want.get(key, 0.0) + d["weight"]
    got = {tuple(sorted((u, v))): d["weight"] for u, v, d in Q.to_networkx().edges(data=True)}
    assert got.keys() == want.keys()
    assert all(abs(got[k] - want[k]) < 1e-9 for k in want)
    with pytest.raises(ValueError, match="undirected"):
        ops.contract(gunpy.Graph.from_edges([0], [1]), be.asarray(np.zeros(2, np.int64)))
    with pytest.raises(ValueError, match="labels"):
        ops.contract(G, be.asarray(np.full(G.num_vertices, G.num_vertices, np.int64)),
                     context=ops.Context(G, be))


def test_neighbor_best_operator(backend):
    from collections import namedtuple

    from gunpy import Functor, operators as ops

    class Heaviest(Functor):  # key: the neighbour's group; odd vertices only; loops left out
        @staticmethod
        def cond_vertex(v, data):
            return v % 2 == 1

        @staticmethod
        def gather_edge(v, u, edge, weight, data):
            if u == v:
                return np.int64(-1)
            return data.group[u]

        @staticmethod
        def score(v, key, total, data):
            return total

    # 1 - 0 (w 2), 1 - 2 (w 1), 1 - 3 (w 1), 1 - 1 (w 9); 3 - 4 (w 1), 3 - 5 (w 1)
    G = gunpy.Graph.from_edges([1, 1, 1, 1, 3, 3], [0, 2, 3, 1, 4, 5],
                               [2.0, 1.0, 1.0, 9.0, 1.0, 1.0], directed=False,
                               remove_self_loops=False)
    be = gunpy.backends.get_backend(backend)
    group = [2, 2, 3, 3, 4, 5]  # keys are vertex ids; 6 or more would be left out
    data = namedtuple("D", "group")(be.asarray(np.array(group, dtype=np.int64)))
    out = be.asarray(np.array([-1, 3, -1, 4, -1, 5], dtype=np.int64))
    ctx = ops.Context(G, be)
    ops.neighbor_best(G, None, Heaviest, data, out, context=ctx)
    # 1: group 2 sums 2 (0), group 3 sums 2 (2 and 3): a tie, the incumbent 3 stays;
    # 3: 2 (1), 4 (4), 5 (5) all 1: the incumbent 4 is not beaten; 5: 3 (3) beats 5 (none)
    assert be.to_host(out).tolist() == [-1, 3, -1, 4, -1, 3]
    assert ctx.record["edges"] == 4 + 3 + 1
    out = be.asarray(np.array([-1, 0, -1, 0, -1, 0], dtype=np.int64))
    f = gunpy.Frontier(be, G.num_vertices)
    f.push([3])
    ops.neighbor_best(G, f, Heaviest, data, out, context=ops.Context(G, be))
    # 3: groups 2 (1), 4 (4), 5 (5) weigh 1 each, the incumbent 0 none: the smallest, 2
    assert be.to_host(out).tolist() == [-1, 0, -1, 2, -1, 0]


class Follow(gunpy.Functor):
    """Rounds: a vertex takes its neighbours' most common group, then joins it."""

    @staticmethod
    def round_of(v, data):
        return data.round[v]

    @staticmethod
    def gather_edge(v, u, edge, weight, data):
        return data.group[u]

    @staticmethod
    def score(v, key, total, data):
        return total

    @staticmethod
    def apply_vertex(v, data):
        data.group[v] = data.out[v]
        gunpy.atomics.add(data.applied, 0, 1)


@pytest.mark.parametrize("split", [False, True])
def test_neighbor_best_rounds_apply_before_the_next_round(backend, split, monkeypatch):
    from collections import namedtuple
    from gunpy import operators as ops
    be = gunpy.backends.get_backend(backend)
    if split and backend == "cpu":
        monkeypatch.setattr(be, "serial_below", 0)  # the chunked parallel build
    elif split:
        pytest.skip("the CPU's chunked build only")
    G = gunpy.Graph.from_edges([0, 1, 2, 4], [1, 2, 3, 5], directed=False)
    # path 0-1-2-3 and edge 4-5; rounds: 1 first, then 2 and 5 together; 0, 3, 4 in none
    rounds = np.array([7, 0, 1, 9, -1, 1], dtype=np.int64)
    group = be.asarray(np.arange(6, dtype=np.int64))
    out = be.asarray(np.arange(6, dtype=np.int64))
    data = namedtuple("D", "round group out applied")(be.asarray(rounds), group, out,
                                                      be.asarray(np.zeros(1, np.int64)))
    ctx = ops.Context(G, be)
    ops.neighbor_best(G, None, Follow, data, out, rounds=2, context=ctx)
    # round 0: 1 sees groups 0 and 2 (a tie: 0) and joins 0; round 1: 2 sees 1's new group
    # 0 and 3's 3 (a tie: 0); 5 sees 4's group 4
    assert be.to_host(group).tolist() == [0, 0, 0, 3, 4, 4]
    assert be.to_host(out).tolist() == [0, 0, 0, 3, 4, 4]
    assert be.to_host(data.applied).tolist() == [3]
    assert ctx.record["edges"] == 2 + 2 + 1
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="rounds"):
            ops.neighbor_best(G, None, Follow, data, out, rounds=bad, context=ctx)


@pytest.mark.ptx
def test_louvain_compiles_to_ptx(ptx_backend):
    # nothing runs on a compile-only backend: one level, every kernel of its sweeps
    G = nasty_graphs(small=True)["preferential_hubs"]
    gunpy.louvain(G, max_level=1, backend=ptx_backend)
    names = " ".join(ptx_backend.kernel_names())
    for kernel in ("best", "apply", "compute", "by_thread"):  # neighbor_best's rounds
        # (choose, apply: the moves), Start/Join, Inner
        assert kernel in names, names


@pytest.mark.parametrize("name", ["gunpy.primitives.louvain", "gunpy.operators.neighbor_best",
                                  "gunpy.operators.contract"])
def test_docstring_examples(name):
    check_docstring_examples(name, 4)


def test_user_guide_louvain_section_runs():
    run_user_guide_section("## Community detection by modularity (Louvain)", 4)


def test_cli_seed_reaches_the_primitive(capsys, backend):
    # gunpy run louvain --seed S: the generator's seed and the moves' order (--rmat too)
    if backend != "cpu":
        pytest.skip("the command line's plumbing: the CPU run covers it")
    from gunpy.cli import main
    G = gunpy.datasets.load("karate", progress=False)
    for seed in (0, 3):
        assert main(["run", "louvain", "--dataset", "karate", "--seed", str(seed),
                     "--backend", backend, "-q"]) == 0
        r = gunpy.louvain(G, seed=seed, backend=backend)
        assert f"modularity {r.modularity:.6f}" in capsys.readouterr().out
    assert gunpy.louvain(G, seed=0, backend=backend).modularity != r.modularity
