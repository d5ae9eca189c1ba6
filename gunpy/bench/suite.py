"""gunpy bench: the benchmark suite, gunpy beside the libraries a user would otherwise pick.

Every library runs in the same process on the same graph (converted once,
untimed), and **every library, gunpy included, is timed by wall time per call
over the same inputs** (:mod:`gunpy.bench.timing`): after an untimed pass (the
warm-up, and validation), gunpy runs **alone** over every root (a loop with
nothing in between), then every library runs **interleaved** over the first
``--peer-roots`` roots (per root: gunpy, then each peer, the order rotated per
root); the ratios are per call on the same root, from the interleaved wall
times. gunpy's rows add its own timer (``stats.elapsed_ms``) and its share of
the wall time. BFS follows Graph500: 64 random roots of degree >= 1, each run
checked with the five parent-tree checks, TEPS counting every undirected edge
of the reached component once (Graph500 v2), harmonic mean over roots;
Gunrock's convention (edges the traversal actually visited) is reported beside
it. SSSP follows Graph500's kernel 2 the same way (weights uniform in [0, 1)).
CC, PageRank, BC and triangle counting run ``--reps`` calls alone and
``--reps`` interleaved rounds.

The pieces: :mod:`gunpy.bench.graphs` (the graphs, weights and roots),
:mod:`gunpy.bench.peers` (the other libraries), :mod:`gunpy.bench.timing` (how a
call is timed), :mod:`gunpy.bench.cases` (one case per kind of primitive),
:mod:`gunpy.bench.report` (tables and plots), :mod:`gunpy.bench.strategies`
(``--strategies``); this module runs them and holds the command line.

Outputs (``--out DIR``, default ``bench/results``): ``results.json`` (every
measurement), ``results.md`` (tables with ratios to gunpy) and PNG plots
(speedup per primitive and graph; BFS frontier size and direction per
iteration).

    gunpy bench                                   # CPU suite: RMAT 16-20, road, mesh, social
    gunpy bench --scales 20 22 24 --backend cuda  # on a GPU
    gunpy bench --primitives bfs --graphs rmat18 luxembourg_osm --roots 8 --quick
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

from gunpy.bench.graphs import (graph as _graph, roots as _roots, weighted_twin as _weighted_twin)
from gunpy.bench.machine import copy_bandwidth, machine_info  # noqa: F401  (re-exported)
from gunpy.bench.peers import _ALIASES, ALL_PEERS, PRIMITIVES, BlasPeer  # noqa: F401
from gunpy.bench.report import markdown, plots  # noqa: F401  (re-exported)
from gunpy.bench.strategies import strategy_markdown, strategy_table  # noqa: F401
from gunpy.bench.cases import Case, counts_agree, repeated, scipy_close, traversal
from gunpy.bench.timing import alone, summary
from gunpy.progress import bar

__all__ = ["main", "run_suite"]


def _suite_primitives():
    """The suite's names: the hand-written ones, then every other registered primitive."""
    from gunpy import registry
    extra = [n for n in registry.names() if n not in PRIMITIVES and n not in _ALIASES]
    return list(PRIMITIVES) + extra


# ----------------------------------------------------------------------------- the suite
def _bench_bfs(G, case, args):
    import gunpy
    from gunpy.testing import check_bfs_tree

    def call(s):
        return gunpy.bfs(G, s, backend=case.backend, direction=args.direction,
                         load_balance=args.load_balance)

    traversal(case, "bfs", G, call, check=lambda s, r: check_bfs_tree(G, s, r.depth, r.parent),
              reached=lambda r: r.depth >= 0)


def _bench_sssp(Gw, case):
    import gunpy
    from gunpy.testing import check_sssp_tree
    traversal(case, "sssp", Gw, lambda s: gunpy.sssp(Gw, s, backend=case.backend),
              check=lambda s, r: check_sssp_tree(Gw, s, r.distance, r.parent),
              reached=lambda r: np.isfinite(r.distance),
              check_peer=lambda peer, out, r: scipy_close(
                  f"SSSP distances on {case.name}", 1e-9)(peer, out, r.distance))


def _peer_calls(case, primitive, *args, skip=lambda peer: False):
    return [(p, (lambda fn=getattr(p, primitive): fn(*args)), None) for p in case.peers
            if hasattr(p, primitive) and not skip(p)]


def _bench_cc(G, case):
    import gunpy
    count = counts_agree(f"finds {{}} components on {case.name}")
    repeated(case, "cc", lambda: gunpy.cc(G, backend=case.backend), _peer_calls(case, "cc"),
             own=lambda r: r.stats.elapsed_ms,
             check_peer=lambda peer, out, r: count(peer, out, r.num_components),
             gunpy_fields=lambda r: {"components": r.num_components})


def _bench_pagerank(G, case):
    import gunpy
    close = scipy_close(f"PageRank on {case.name}", 1e-6, 1e-12)

    def fields(r):
        per_it = statistics.median(x["ms"] for x in r.stats.per_iteration) \
            if r.stats.per_iteration else None
        return {"iterations": r.iterations, "ms_per_iteration": per_it}

    repeated(case, "pagerank", lambda: gunpy.pagerank(G, backend=case.backend),
             _peer_calls(case, "pagerank"), own=lambda r: r.stats.elapsed_ms,
             check_peer=lambda peer, out, r: close(peer, out, r.rank), gunpy_fields=fields)


def _bench_bc(G, case):
    """BC from the first 4 roots in one call, per source (NetworKit: its sampler with
    4 random sources, not validated)."""
    import gunpy
    srcs = case.roots[:4]
    peers = _peer_calls(case, "bc", srcs, skip=lambda p: p.name == "networkx"
                        and G.num_vertices > 20000)
    peers += [(p, (lambda p=p: p.bc_estimate(len(srcs))),
               "its own random sources, not validated") for p in case.peers
              if not hasattr(p, "bc") and hasattr(p, "bc_estimate")]
    repeated(case, "bc", lambda: gunpy.bc(G, srcs, backend=case.backend), peers,
             own=lambda r: r.stats.elapsed_ms, per=len(srcs))
    for row in case.rows[-len(peers) - 2:]:
        row["note"] = "per source" + (f", {row['note']}" if row.get("note") else "")


def _bench_tc(G, case):
    """Triangle counting: wall time per call (orientation or L included), no own timer."""
    import gunpy
    big = G.num_edges > 2_000_000  # networkx is slow; igraph lists every triangle
    count = counts_agree(f"counts {{}} triangles on {case.name}")
    repeated(case, "tc", lambda: gunpy.triangle_count(G, backend=case.backend),
             _peer_calls(case, "tc", skip=lambda p: big and p.name in ("networkx", "igraph")),
             check_peer=count, gunpy_fields=lambda n: {"triangles": n})


def run_suite(args):
    """Run the configured suite; returns the list of result rows."""
    import gunpy
    from gunpy import backends
    from gunpy.backends import threads
    threads.configure()  # before any parallel region or peer's OpenMP runtime starts
    backend = backends.resolve(args.backend)
    graphs = list(args.graphs or [f"rmat{s}" for s in args.scales] + ["luxembourg_osm",
                                                                        "delaunay_n16",
                                                                        "email-Enron"])
    graphs += [g for g in gunpy.datasets.remote() if args.with_remote and
               os.path.exists(os.path.join(gunpy.datasets.cache_dir(), f"{g}.npz"))]
    args.primitives = list(dict.fromkeys(_ALIASES.get(p, p) for p in args.primitives))
    rows = []
    BlasPeer.backend = backend
    peers_all = [P() for P in ALL_PEERS if P.name not in args.skip_peers]
    peers_all = [p for p in peers_all if p.available()]
    shown = False if args.quiet else None  # bars on a terminal only, none with -q
    graphs_bar = bar(len(graphs), "graphs", unit="graph", enabled=shown, leave=True)
    for gname in graphs:
        graphs_bar.update()
        t0 = time.perf_counter()
        G = _graph(gname, args.seed)
        Gw = _weighted_twin(G, args.seed)
        load_ms = (time.perf_counter() - t0) * 1e3
        peers = [p for p in peers_all if p.max_vertices is None or G.num_vertices <= p.max_vertices]
        for p in peers:
            p.prepare(G, Gw)
        rows.append(dict(graph=gname, primitive="graph", library="-", vertices=G.num_vertices,
                         edges=G.num_edges, directed=G.directed, build_ms=load_ms))
        steps = len(args.primitives) * (len(peers) + 2)
        with bar(steps, gname, unit="row", enabled=shown) as rows_bar:
            case = Case(gname, backend, _roots(G, args.roots, args.seed), args.peer_roots,
                        args.reps, peers, rows, not args.no_validate, rows_bar)
            benches = {"bfs": lambda: _bench_bfs(G, case, args), "sssp": lambda: _bench_sssp(Gw, case),
                       "cc": lambda: _bench_cc(G, case), "pagerank": lambda: _bench_pagerank(G, case),
                       "bc": lambda: _bench_bc(G, case), "tc": lambda: _bench_tc(G, case)}
            for pname in args.primitives:
                if pname in benches:
                    benches[pname]()
                else:
                    _bench_registered(pname, G, Gw, case)
    graphs_bar.close()
    return rows


def _bench_registered(pname, G, Gw, case):
    """A registered primitive with no hand-written benchmark: gunpy alone, wall per call."""
    from gunpy import registry
    entry = registry.primitive(pname)
    graph = Gw if entry.weighted else G
    source = int(graph.out_degrees().argmax()) if graph.num_vertices else 0
    call = lambda k: entry.call(graph, source, backend=case.backend)  # noqa: E731
    call(None)
    owns = []
    runs = alone(call, range(case.reps), lambda lib, k, ms, r: owns.append(
        getattr(getattr(r, "stats", None), "elapsed_ms", None)))
    walls = [ms for _, ms, _ in runs]
    case.add(pname, "gunpy", "alone", **summary(walls, owns if None not in owns else None),
             validated=False)


# ----------------------------------------------------------------------------- CLI
def build_parser():
    p = argparse.ArgumentParser(prog="gunpy bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--scales", type=int, nargs="+", default=[16, 18, 20],
                   help="Graph500 RMAT scales (edge factor 16)")
    p.add_argument("--graphs", nargs="+", help="graphs instead of the default set "
                   "(rmatS, gridN, or dataset names)")
    p.add_argument("--with-remote", action="store_true",
                   help="also the registry's large graphs already in the cache")
    names = _suite_primitives()
    p.add_argument("--primitives", nargs="+", default=names, choices=names + list(_ALIASES),
                   help="hand-written benchmarks with peers (tc: triangle counting), then any "
                        "other registered primitive (gunpy's time per call)")
    p.add_argument("--roots", type=int, default=64,
                   help="BFS/SSSP roots (Graph500: 64): gunpy alone runs them all")
    p.add_argument("--peer-roots", type=int, default=8,
                   help="the first roots, run by every library, gunpy included, interleaved "
                        "(the ratios come from these)")
    p.add_argument("--reps", type=int, default=3,
                   help="calls per mode (alone, interleaved) for CC, PageRank, BC and TC")
    p.add_argument("--skip-peers", nargs="*", default=[], help="peer names to leave out")
    p.add_argument("--direction", default="auto")
    p.add_argument("--load-balance", default="auto")
    p.add_argument("--no-validate", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=os.path.join("bench", "results"))
    p.add_argument("--quick", action="store_true", help="8 roots, 1 rep, no networkx")
    p.add_argument("--strategies", action="store_true",
                   help="instead: BFS time for every load balance x direction")
    p.add_argument("--neighbours", action="store_true",
                   help="instead: gunpy's wall time per call alone and right after each "
                        "peer's call (BFS, PageRank, CC; other libraries' threads)")
    p.add_argument("--startup", action="store_true",
                   help="instead: time to first result in new processes, cold and warm "
                        "kernel cache (import, each primitive, gunpy run)")
    p.add_argument("--startup-reps", type=int, default=3, help="processes per start-up case")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def main(args=None):
    if args is None or isinstance(args, list):
        args = build_parser().parse_args(args)
    elif hasattr(args, "rest"):
        args = build_parser().parse_args(args.rest)
    if args.quick:
        args.roots, args.peer_roots, args.reps = 8, 4, 1
        args.skip_peers = list(args.skip_peers) + ["networkx"]
    from gunpy import backends
    backend = backends.resolve(args.backend)
    if args.startup:
        from gunpy.bench import startup
        args.startup_backend = backend
        return startup.main(args)
    if args.neighbours:
        return _neighbours(args, backend)
    if args.strategies:
        rows = strategy_table(args)
        info = machine_info(backend)
        md = strategy_markdown(rows, info)
        _write(args.out, "strategies", rows, info, md)
        print(md)
        return 0
    rows = run_suite(args)
    info = machine_info(backend)
    md = markdown(rows, info)
    written = _write(args.out, "results", rows, info, md)
    files = plots(rows, args.out)
    print(md)
    print("wrote", ", ".join(written + files))
    return 0


def _neighbours(args, backend):
    from gunpy.backends import threads
    from gunpy.bench.neighbours import neighbour_markdown, neighbour_table
    threads.configure()
    peers = [P() for P in ALL_PEERS if P.name not in args.skip_peers]
    rows = neighbour_table(args, [p for p in peers if p.available()])
    info = machine_info(backend)
    md = neighbour_markdown(rows, info)
    _write(args.out, "neighbours", rows, info, md)
    print(md)
    return 0


def _write(outdir, stem, rows, info, md):
    """``stem.json`` (the machine and every row) and ``stem.md`` in ``outdir``; their paths."""
    os.makedirs(outdir, exist_ok=True)
    paths = [os.path.join(outdir, f"{stem}.json"), os.path.join(outdir, f"{stem}.md")]
    with open(paths[0], "w") as f:
        json.dump({"machine": info, "rows": rows}, f, indent=1, default=str)
    with open(paths[1], "w") as f:
        f.write(md)
    return paths

if __name__ == "__main__":
    sys.exit(main())
