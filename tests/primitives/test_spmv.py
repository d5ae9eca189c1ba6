"""SpMV (gunpy.spmv) against scipy's ``G.to_scipy() @ x``."""

import numpy as np
import pytest

import gunpy
from gunpy.testing import graph_names, nasty_graphs, weighted_copy
from doc_examples import check_docstring_examples, run_user_guide_section


@pytest.mark.parametrize("mapping", ["auto", "thread", "warp"])
@pytest.mark.parametrize("name", graph_names(nasty_graphs(small=True)))
def test_nasty_graphs_equal_scipy(backend, cpu_split, small, name, mapping):
    G = nasty_graphs(small=small)[name]
    x = np.random.default_rng(1).random(G.num_vertices) - 0.5
    for H in (G, weighted_copy(G)):
        r = gunpy.spmv(H, x, mapping=mapping, backend=backend)
        np.testing.assert_allclose(r.y, H.to_scipy() @ x, rtol=1e-12, atol=1e-12)
        assert r.y.dtype == np.float64


def test_defaults_errors_and_registry(backend):
    G = gunpy.Graph.from_edges([0, 0, 1, 2], [1, 2, 2, 0], [2.0, 3.0, 4.0, 5.0])
    assert gunpy.spmv(G, backend=backend).y.tolist() == [5.0, 4.0, 5.0]  # x = ones
    assert gunpy.spmv(G, [1, 2, 3], backend=backend).y.tolist() == [13.0, 12.0, 5.0]
    with pytest.raises(ValueError, match="one value per vertex"):
        gunpy.spmv(G, [1.0, 2.0], backend=backend)
    with pytest.raises(ValueError, match="mapping"):
        gunpy.spmv(G, mapping="block", backend=backend)
    with pytest.raises(TypeError, match="gunpy.Graph"):
        gunpy.spmv(G.to_scipy(), [1, 2, 3])
    from gunpy.registry import primitive
    assert primitive("spmv").function is gunpy.spmv


@pytest.mark.large
def test_rmat_equals_scipy(backend):
    G = gunpy.generators.rmat(12, 16, seed=2, weighted=True)
    x = np.random.default_rng(3).random(G.num_vertices)
    np.testing.assert_allclose(gunpy.spmv(G, x, backend=backend).y, G.to_scipy() @ x,
                               rtol=1e-12)


@pytest.mark.ptx
def test_spmv_compiles_to_ptx(ptx_backend):
    G = nasty_graphs(small=True)["preferential_hubs"]
    for mapping in ("thread", "warp"):
        gunpy.spmv(weighted_copy(G), mapping=mapping, backend=ptx_backend)
    assert any("by_warp" in k for k in ptx_backend.kernel_names())
    assert any("by_thread" in k for k in ptx_backend.kernel_names())


def test_docstring_examples():
    check_docstring_examples("gunpy.primitives.spmv", 2)


def test_user_guide_spmv_section_runs():
    run_user_guide_section("## Sparse matrix times vector (SpMV)", 3)
