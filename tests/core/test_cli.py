"""The ``gunpy`` command's success paths, checked against networkx on the same graphs.

``gunpy.cli.main`` runs in-process (``capsys`` reads what it prints); one
subprocess proves the ``python -m gunpy.cli`` entry point. Error paths are in
test_hostile.py.
"""

import re
import subprocess
import sys

import networkx as nx
import pytest

import gunpy
from gunpy import _jitcache, datasets
from gunpy.cli import main
from gunpy.testing import to_nx

KARATE = nx.karate_club_graph()  # the bundled karate dataset is the same graph


def cli(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def _backend_flag(backend):
    return ["--backend", backend, "-q"]


@pytest.mark.parametrize("options", [[], ["--direction", "push", "--load-balance", "twc"],
                                     ["--direction", "pull", "--idempotent"]])
def test_run_bfs_on_a_dataset(options, capsys, backend):
    out = cli(capsys, "run", "bfs", "--dataset", "karate", "--source", "5", *options,
              *_backend_flag(backend))
    assert "graph: dataset karate (undirected): 34 vertices, 156 edges" in out
    depth = nx.single_source_shortest_path_length(KARATE, 5)
    assert f"source 5: reached 34 of 34 vertices, max depth {max(depth.values())}" in out
    m = re.search(r"warm-up: \d+ ms \((\d+) kernels compiled, (\d+) loaded from the cache\)", out)
    assert m and int(m[1]) <= _jitcache.counters["misses"] and \
        int(m[2]) <= _jitcache.counters["hits"]
    assert "stats: " in out


def test_run_sssp_on_a_weighted_dataset_from_its_default_source(capsys, backend):
    G = datasets.load("dolphins", progress=False)
    g = to_nx(G)
    source = int(G.out_degrees().argmax())  # the CLI default: the largest out-degree
    dist = nx.single_source_dijkstra_path_length(g, source)
    out = cli(capsys, "run", "sssp", "--dataset", "dolphins", *_backend_flag(backend))
    assert f"(undirected, weighted): {G.num_vertices} vertices, {G.num_edges} edges" in out
    assert (f"source {source}: reached {len(dist)} of {G.num_vertices} vertices, "
            f"max distance {max(dist.values()):.6g}") in out


def test_run_cc_on_an_edge_list_file(tmp_path, capsys, backend):
    path = tmp_path / "g.txt"
    path.write_text("# one-based ids\n1 2\n2 3\n5 6\n7 7\n")  # 4 isolated, 7 a self-loop
    out = cli(capsys, "run", "cc", "--graph", str(path), "--one-based", "--undirected",
              "--no-warmup", *_backend_flag(backend))
    assert "warm-up" not in out
    assert f"graph: {path} (undirected): 7 vertices, 6 edges" in out
    assert "4 components, largest has 3 vertices" in out  # {0,1,2} {3} {4,5} {6}


@pytest.mark.large  # all-sources BC and PageRank through the CLI: 100 s in the simulator
def test_run_pagerank_and_bc_name_networkx_top_vertices(capsys, backend):
    out = cli(capsys, "run", "pagerank", "--dataset", "karate", "--tol", "1e-10",
              "--max-iter", "300", *_backend_flag(backend))
    assert "converged=True" in out
    pr = nx.pagerank(KARATE, weight=None, tol=1e-12)
    top = sorted(pr, key=pr.get, reverse=True)[:5]
    assert "top vertices: " + ", ".join(f"{v} ({pr[v]:.4g})" for v in top) in out
    out = cli(capsys, "run", "bc", "--dataset", "karate", "--normalized", *_backend_flag(backend))
    bc = nx.betweenness_centrality(KARATE, normalized=True)
    top = sorted(bc, key=bc.get, reverse=True)[:5]
    assert "top vertices: " + ", ".join(f"{v} ({bc[v]:.4g})" for v in top) in out


@pytest.mark.large
def test_run_bfs_on_rmat_repeated_with_its_iteration_table(capsys, backend):
    G = gunpy.generators.rmat(8, 16, seed=3)
    g = to_nx(G)
    source = int(G.out_degrees().argmax())  # the CLI default: the largest out-degree
    depth = nx.single_source_shortest_path_length(g, source)
    out = cli(capsys, "run", "bfs", "--rmat", "8", "--seed", "3", "--repeat", "3", "-v",
              *_backend_flag(backend))
    assert f"{G.num_vertices} vertices, {G.num_edges:,} edges" in out
    assert f"reached {len(depth)} of {G.num_vertices} vertices, " \
           f"max depth {max(depth.values())}" in out
    assert re.search(r"runs: 3, best [\d.]+ ms, median [\d.]+ ms", out)
    table = out.split("iteration  frontier      edges  direction  strategy\n")[1]
    rows = [line.split() for line in table.strip().splitlines()]
    levels = max(depth.values()) + 1
    assert [int(r[0]) for r in rows] == list(range(levels))
    # each iteration's frontier is one BFS level: its size is networkx's count at that depth
    assert [int(r[1]) for r in rows] == [list(depth.values()).count(k) for k in range(levels)]
    assert {r[3] for r in rows} <= {"push", "pull"}


def test_info_names_versions_and_backends(capsys):
    import numba
    out = cli(capsys, "info")
    assert f"gunpy {gunpy.__version__}\n" in out and f"numba {numba.__version__}\n" in out
    assert re.search(r"cpu backend: available \(\d+ threads", out)
    assert re.search(r"cuda backend: (available|unavailable) \(", out)


def test_datasets_list_and_info(capsys):
    out = cli(capsys, "datasets", "list")
    lines = {line.split()[0]: line.split() for line in out.splitlines()}
    for name in datasets.available():
        assert lines[name][1:3] == ["bundled", str(datasets.info(name)["vertices"])]
    assert all(lines[name][1] == "download" for name in datasets.remote())
    out = cli(capsys, "datasets", "info", "karate")
    assert "vertices: 34\n" in out and "edges: 78\n" in out and "format: mtx\n" in out


def test_cache_info_on_an_empty_and_a_filled_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GUNPY_CACHE_DIR", str(tmp_path))
    out = cli(capsys, "cache", "info")
    assert f"kernel cache: {tmp_path}\n" in out and "enabled: yes" in out
    assert "\n0 compiled kernels of 0 kernel sources for this environment" in out
    monkeypatch.delenv("GUNPY_CACHE_DIR")
    st = _jitcache.info()
    out = cli(capsys, "cache", "info", "-v")
    assert f"kernel cache: {st['path']}\n" in out
    assert f"\n{st['files']} compiled kernels of {len(st['kernels'])} kernel sources" in out
    listed = [line.split(None, 1) for line in out.splitlines() if line.startswith("  ")]
    assert {name: int(n) for n, name in listed} == st["kernels"]


def test_entry_point_runs_bfs_in_a_new_process():
    p = subprocess.run([sys.executable, "-m", "gunpy.cli", "run", "bfs", "--dataset", "chesapeake",
                        "--source", "0", "--backend", "cpu", "-q"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    g = to_nx(datasets.load("chesapeake", progress=False))
    depth = nx.single_source_shortest_path_length(g, 0)
    assert (f"source 0: reached {len(depth)} of 39 vertices, max depth {max(depth.values())}"
            in p.stdout)


def test_a_primitive_with_many_sources_takes_a_list(capsys):
    out = cli(capsys, "run", "bc", "--dataset", "karate", "--source", "0,33", "--backend", "cpu")
    assert "sources=2" in out
    with pytest.raises(SystemExit):
        cli(capsys, "run", "bc", "--dataset", "karate", "--source", "0,x")
    assert "expected vertex ids separated by commas" in capsys.readouterr().err


def test_a_registered_option_may_not_take_a_cli_flag():
    from gunpy.registry import Option, Primitive
    with pytest.raises(ValueError, match=r"Option\('seed'\) would collide with gunpy run's "
                                         r"own --seed .*drop the Option"):
        Primitive("mine", lambda G, **kw: None, options=(Option("seed", 0),))
    with pytest.raises(ValueError, match=r"Option\('repeat'\).*reserved names are"):
        Primitive("mine", lambda G, **kw: None, options=(Option("repeat", 1),))


def test_every_flag_gunpy_run_adds_is_reserved():
    from gunpy import cli as gcli, registry
    parser = gcli.build_parser(["run", "bfs"])
    run = next(a for a in parser._subparsers._group_actions[0].choices["run"]._actions
               if a.dest == "primitive")
    bfs = run.choices["bfs"]
    own = {a.dest for a in bfs._actions} - {o.name for o in registry.primitive("bfs").options}
    assert own - {"weighted"} <= registry.RESERVED_OPTIONS, own - registry.RESERVED_OPTIONS
