"""Connected components against networkx (weak components on directed graphs)."""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import operators as ops
from gunpy.testing import nasty_graphs, to_nx, graph_names
from _helpers import enact_own_loop

GRAPHS = nasty_graphs()


def expected_labels(G):
    g = to_nx(G)
    comps = nx.weakly_connected_components(g) if G.directed else nx.connected_components(g)
    labels = np.empty(G.num_vertices, dtype=np.int64)
    for c in comps:
        labels[list(c)] = min(c)
    return labels


@pytest.mark.parametrize("sample", [0, 2])
@pytest.mark.parametrize("name", graph_names(GRAPHS))
def test_cc_matches_networkx(name, sample, backend, cpu_split):
    G = GRAPHS[name]
    r = gunpy.cc(G, sample=sample, backend=backend)
    expect = expected_labels(G)
    assert np.array_equal(r.labels, expect)
    assert r.num_components == len(np.unique(expect))
    assert r.labels.dtype == G.column_indices.dtype


def test_cc_many_components_and_isolated_vertices(backend, cpu_split):
    rng = np.random.default_rng(5)
    n = 300
    src = rng.integers(0, n, 120)
    dst = rng.integers(0, n, 120)
    G = gunpy.Graph.from_edges(src, dst, num_vertices=n, directed=True)
    r = gunpy.cc(G, backend=backend)
    assert np.array_equal(r.labels, expected_labels(G))


def test_cc_long_path_worst_case_for_hooking(backend, small):
    n = 80 if small else 2000
    perm = np.random.default_rng(1).permutation(n)  # labels far from path order
    G = gunpy.Graph.from_edges(perm[:-1], perm[1:], directed=False)
    r = gunpy.cc(G, backend=backend)
    assert r.num_components == 1 and (r.labels == 0).all()



@pytest.mark.parametrize("load_balance", ["auto", "thread_mapped", "twc", "merge_path"])
@pytest.mark.parametrize("name", ["star_hub", "disconnected"])
def test_cc_every_load_balance(name, load_balance, backend):
    G = GRAPHS[name]
    r = gunpy.cc(G, load_balance=load_balance, backend=backend)
    expect = expected_labels(G)
    assert np.array_equal(r.labels, expect)
    assert r.num_components == len(np.unique(expect))
    assert r.stats.load_balance == load_balance

@pytest.mark.large
def test_cc_afforest_on_rmat_with_many_components():
    G = gunpy.generators.rmat(14, seed=5)
    for sample in (0, 1, 2, 5):
        r = gunpy.cc(G, sample=sample, backend="cpu")
        assert np.array_equal(r.labels, expected_labels(G)), sample


@pytest.mark.large
@pytest.mark.parametrize("directed", [False, True])
def test_cc_racing_hooks_in_parallel_chunks(directed, monkeypatch):
    # every pass in the smallest chunks: both cores hook at once, their CAS links race on
    # the shared roots and the losers climb and retry
    from gunpy.backends.cpu import CpuBackend
    monkeypatch.setattr(CpuBackend, "serial_below", 0)
    monkeypatch.setattr(CpuBackend, "force_min_chunk", 1)
    rng = np.random.default_rng(11)
    src, dst = rng.integers(0, 3000, 2500), rng.integers(0, 3000, 2500)
    src = np.r_[src, rng.permutation(3000)[:1500]]  # a long path through the rest
    dst = np.r_[dst, np.roll(src[-1500:], 1)]
    G = gunpy.Graph.from_edges(src, dst, num_vertices=3100, directed=directed)
    expect = expected_labels(G)
    assert 1 < len(np.unique(expect)) < 3100
    for sample in (0, 1, 2):
        for _ in range(3):
            assert np.array_equal(gunpy.cc(G, sample=sample, backend="cpu").labels, expect)


def test_cc_bad_sample():
    with pytest.raises(ValueError, match="sample"):
        gunpy.cc(GRAPHS["path_directed"], sample=-1, backend="cpu")


def test_cc_dict_and_scipy_agree():
    import scipy.sparse.csgraph as csg
    G = GRAPHS["random_directed"]
    r = gunpy.cc(G, backend="cpu")
    ncomp, lab = csg.connected_components(G.to_scipy(), directed=True, connection="weak")
    assert r.num_components == ncomp
    # same partition
    pairs = set(zip(r.labels.tolist(), lab.tolist()))
    assert len(pairs) == ncomp


@pytest.mark.ptx
def test_cc_compiles_to_ptx(ptx_backend):
    gunpy.cc(GRAPHS["random_directed"], backend=ptx_backend)
    gunpy.cc(GRAPHS["random_undirected"], backend=ptx_backend)  # + the Afforest filter
    names = " ".join(ptx_backend.kernel_names())
    for kernel in ("advance", "compute", "flag", "_iota"):
        assert kernel in names, kernel


@pytest.mark.ptx
def test_the_device_side_root_count_and_sampling_compile_to_ptx():
    """CountRoots and PickRoot (the components counted, the samples' roots found where the
    labels are) compile for the GPU, each its own compute kernel."""
    from gunpy import Frontier
    from gunpy.primitives.cc import CountRoots, PickData, PickRoot, RootData
    from gunpy.testing import PtxBackend
    be = PtxBackend(cc=(9, 0))
    G = GRAPHS["random_undirected"]
    ctx = ops.Context(G, backend=be)
    labels = np.arange(G.num_vertices, dtype=G.index_dtype)
    ops.compute(G, None, CountRoots, RootData(labels, np.zeros(1, np.int64)), context=ctx)
    slots = Frontier.view(be, np.arange(4, dtype=G.index_dtype), 4, num_vertices=G.num_vertices)
    ops.compute(G, slots, PickRoot, PickData(labels, np.arange(4), np.zeros(4, np.int64)),
                context=ctx)
    computes = [key for key in be.compiled if key[0].__name__ == "compute"]
    assert len(computes) == 2, list(be.compiled)


# --------------------------------------------------------------------- the enactor built directly
from gunpy.primitives.cc import CCEnactor, CCProblem  # noqa: E402

TINY = nasty_graphs(small=True)  # at most 41 vertices


@pytest.mark.parametrize("name", ["random_directed", "random_undirected", "disconnected",
                                  "grid", "edgeless", "single_vertex"])
def test_cc_enactor_with_its_defaults(name, backend):
    # a user's own loop: Problem + Enactor(problem), with no attribute set afterwards
    G = TINY[name]
    enactor = enact_own_loop(CCProblem, CCEnactor, G, backend)  # Afforest's sample=2, as in cc()
    assert np.array_equal(enactor.problem.extract(), expected_labels(G))


def test_cc_enactor_rejects_bad_options():
    problem = CCProblem(TINY["path_directed"], backend="cpu")
    with pytest.raises(ValueError, match="load_balance"):
        CCEnactor(problem, load_balance="nope")
    with pytest.raises(ValueError, match="sample"):
        problem.reset(sample=-1)


def test_hook_keeps_no_reference_counts_in_parallel_builds():
    # a parallel (NRT) build calls Hook once per edge from every thread: an increment and
    # decrement of the arrays' shared reference counts per call made the RMAT-18 hooking
    # pass 5x slower; numba prunes them only for bodies shaped like Hook's (one exit)
    import re
    from gunpy.backends import get_backend
    from gunpy.functor import compile_functor
    from gunpy.primitives.cc import CCData, Flatten, Hook
    labels = np.array([0, 0, 1, 3, 3, 4], dtype=np.int32)  # trees 2->1->0 and 5->4->3
    data = CCData(labels, True, -1)
    hooks = compile_functor(Hook, get_backend("cpu"))
    assert hooks.cond_edge(5, 2, 5, 1.0, data) is False
    assert labels.tolist() == [0, 0, 0, 0, 3, 3]  # paths halved, root 3 under root 0
    llvm = hooks.cond_edge.inspect_llvm(hooks.cond_edge.signatures[0])
    assert "NRT_decref" in llvm  # (the pattern is the one numba emits)
    assert not re.search(r"call void @NRT_incref", llvm)
    flatten = compile_functor(Flatten, get_backend("cpu")).apply_vertex
    flatten(4, data)
    assert labels.tolist() == [0, 0, 0, 0, 0, 3]
    assert not re.search(r"call void @NRT_incref", flatten.inspect_llvm(flatten.signatures[0]))
