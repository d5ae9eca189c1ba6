"""A primitive is one module plus one registry entry: everything that lists primitives reads it.

A primitive registered here, in a test file, shows up in ``gunpy.NAME``, ``gunpy run``
(with its options in ``--help``), ``gunpy warmup`` and the benchmark suite with no
other edit; the built-in ones (triangles included) are all there too.
"""

import networkx as nx
import numpy as np
import pytest

import gunpy
from gunpy import cli, registry
from gunpy.registry import Option, Primitive
from gunpy.testing import to_nx


def hops(G, source, *, limit=2, backend="auto"):
    """Vertices within ``limit`` hops of ``source`` (depths beyond it are -1)."""
    r = gunpy.bfs(G, source, backend=backend)
    r.depth[r.depth > limit] = -1
    return r


@pytest.fixture
def registered():
    entry = registry.register_primitive(Primitive(
        "hops", hops, source="one", fields=("depth",),
        options=(Option("limit", 2, "largest depth kept"),),
        summary=lambda r, G, s: [f"within reach of {s}: {int((r.depth >= 0).sum())} vertices"]))
    yield entry
    registry.unregister_primitive("hops")


def test_builtin_primitives_are_registered():
    assert registry.names()[:6] == ["bfs", "sssp", "bc", "cc", "pagerank", "triangles"]
    for entry in registry.primitives():
        assert getattr(gunpy, entry.name) is entry.function
        assert entry.name in gunpy.__all__
    assert registry.primitive("sssp").weighted and registry.primitive("bc").source == "many"
    assert registry.primitive("bfs").dist == "gunpy.dist:bfs"


@pytest.mark.parametrize("name, twin", [("kcore", "core_number"),
                                        ("louvain", "louvain_communities"),
                                        ("scc", "strongly_connected_components")])
def test_a_primitive_is_registered_with_its_networkx_twin(name, twin):
    spec = registry.primitive(name)
    assert spec.function is getattr(gunpy, name) and twin in spec.networkx


def test_unknown_and_taken_names_are_clear_errors(registered):
    with pytest.raises(ValueError, match=r"unknown primitive 'nope'; registered: bfs, sssp"):
        registry.primitive("nope")
    with pytest.raises(ValueError, match="registered already"):
        registry.register_primitive(registered)
    with pytest.raises(TypeError, match="takes a gunpy.registry.Primitive"):
        registry.register_primitive(hops)
    with pytest.raises(ValueError, match="source must be"):
        Primitive("x", hops, source="two")


def test_a_test_registered_primitive_is_gunpy_name(registered, backend):
    G = gunpy.datasets.load("karate")
    r = gunpy.hops(G, 0, limit=1, backend=backend)
    expect = nx.single_source_shortest_path_length(to_nx(G), 0, cutoff=1)
    assert {v for v in range(G.num_vertices) if r.depth[v] >= 0} == set(expect)


def test_a_test_registered_primitive_runs_from_the_command_line(registered, backend, capsys):
    assert cli.main(["run", "hops", "--dataset", "karate", "--source", "33", "--limit", "1",
                     "--backend", backend, "-q"]) == 0
    out = capsys.readouterr().out
    G = gunpy.datasets.load("karate")
    reach = len(nx.single_source_shortest_path_length(to_nx(G), 33, cutoff=1))
    assert f"within reach of 33: {reach} vertices" in out
    with pytest.raises(SystemExit):
        cli.main(["run", "hops", "--help"])
    out = capsys.readouterr().out
    assert "--limit LIMIT" in out and "largest depth kept" in out


def test_a_test_registered_primitive_is_warmed_up(registered):
    from gunpy.warmup import warmup
    from gunpy.backends import get_backend
    times = warmup("cpu", ["hops"], scale=6)
    assert list(times) == ["hops"]
    # the warm-up's work splits leave the backend as they found it (no instance attribute
    # hiding the class's settings: the chunked test fixture patches those)
    be = get_backend("cpu")
    assert "serial_below" not in vars(be) and "force_min_chunk" not in vars(be)
    with pytest.raises(ValueError, match="unknown primitive"):
        warmup("cpu", ["nope"], scale=6)


def test_a_test_registered_primitive_is_benchmarked(registered, tmp_path):
    from gunpy import bench
    args = bench.build_parser().parse_args(
        ["--graphs", "karate", "--primitives", "hops", "triangles", "--reps", "1",
         "--backend", "cpu", "--skip-peers", "networkx", "igraph", "networkit", "graphblas",
         "gunpy.blas", "scipy", "--out", str(tmp_path), "-q"])
    assert args.primitives == ["hops", "triangles"]
    rows = bench.run_suite(args)
    mine = [r for r in rows if r["primitive"] == "hops"]
    assert len(mine) == 1 and mine[0]["library"] == "gunpy" and mine[0]["median_ms"] > 0
    tc = [r for r in rows if r["primitive"] == "tc"]           # triangles: the tc benchmark
    assert tc and tc[0]["triangles"] == sum(nx.triangles(to_nx(gunpy.datasets.load("karate")))
                                            .values()) // 3
    assert "## HOPS" in bench.markdown(rows, {"machine": "test"})


def test_every_builtin_primitive_runs_from_the_command_line(capsys, backend, mode):
    """gunpy run NAME for every registered primitive (triangles had none before); the
    simulator leaves out all-sources BC and PageRank (50 s there; test_cli runs them)."""
    G = gunpy.datasets.load("karate")
    g = to_nx(G)
    expect = {
        "bfs": f"reached {G.num_vertices} of {G.num_vertices} vertices",
        "sssp": f"reached {G.num_vertices} of {G.num_vertices} vertices",
        "cc": f"{nx.number_connected_components(g)} components",
        "triangles": f"{sum(nx.triangles(g).values()) // 3} triangles",
        "pagerank": "top vertices: 33",
        "bc": "top vertices: 0",
    }
    assert set(expect) <= set(registry.names())
    for name in expect:
        if mode == "sim" and name in ("bc", "pagerank"):
            continue
        assert cli.main(["run", name, "--dataset", "karate", "--backend", backend, "-q",
                         "--no-warmup"]) == 0
        assert expect[name] in capsys.readouterr().out, name


def test_run_help_lists_each_primitives_options(capsys):
    for name, flags in [("bfs", ["--direction", "--load-balance", "--idempotent"]),
                        ("pagerank", ["--alpha", "--tol", "--max-iter", "--direction"]),
                        ("sssp", ["--delta", "--method"]), ("bc", ["--normalized"])]:
        with pytest.raises(SystemExit):
            cli.main(["run", name, "--help"])
        out = capsys.readouterr().out
        for flag in flags:
            assert flag in out, (name, flag)
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = capsys.readouterr().out
    for name in registry.names():
        assert name in out


def test_option_types_come_from_defaults():
    assert Option("alpha", 0.85).value_type is float
    assert Option("idempotent", False).value_type is bool
    assert Option("delta", None, type=float).value_type is float
    assert Option("max_iter", 100).flag == "--max-iter"
    assert registry.primitive("pagerank").options[2].value_type is int


def test_installed_packages_register_through_entry_points(monkeypatch):
    """A package's ``gunpy.primitives`` entry point is imported once, on first use of the
    registry; a broken one warns and leaves the others in place."""
    import importlib.metadata as md
    loaded = []

    class EP:
        def __init__(self, name, ok):
            self.name, self.value, self.ok = name, f"pkg_{name}", ok

        def load(self):
            if not self.ok:
                raise ImportError("no module named pkg_broken")
            loaded.append(self.name)
            registry.register_primitive(Primitive("plugged", hops, source="one"), replace=True)

    monkeypatch.setattr(md, "entry_points",
                        lambda group: [EP("good", True), EP("broken", False)]
                        if group == "gunpy.primitives" else [])
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    try:
        with pytest.warns(UserWarning, match="plugin 'broken'.*failed to load"):
            assert "plugged" in registry.names()
        assert loaded == ["good"]
        registry.names()
        assert loaded == ["good"]                      # once a process
    finally:
        registry.unregister_primitive("plugged")


def test_networkx_backend_answers_exactly_the_registered_twins():
    from gunpy import nx_backend
    twins = {t for entry in registry.primitives() for t in entry.networkx}
    assert twins == set(nx_backend._FUNCTIONS)


def test_a_numpy_integer_source_is_one_source():
    G = gunpy.datasets.load("karate")
    r = registry.primitive("bc").call(G, np.int64(0), backend="cpu")
    assert np.allclose(r.centrality, gunpy.bc(G, [0], backend="cpu").centrality)
