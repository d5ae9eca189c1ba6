"""gunpy bench: the benchmark suite, gunpy beside the libraries a user would otherwise pick.

Every library runs in the same process on the same graph (converted once,
untimed) after one untimed warm-up call, and every result is validated. BFS
follows Graph500: 64 random roots of degree >= 1, each run checked with the
five parent-tree checks, TEPS counting every undirected edge of the reached
component once (Graph500 v2), harmonic mean over roots; Gunrock's convention
(edges the traversal actually visited) is reported beside it. SSSP follows
Graph500's kernel 2 the same way (weights uniform in [0, 1)). BC, CC and
PageRank report time (PageRank also per iteration).

The pieces: :mod:`gunpy.bench.graphs` (the graphs, weights and roots),
:mod:`gunpy.bench.peers` (the other libraries), :mod:`gunpy.bench.report` (tables
and plots), :mod:`gunpy.bench.strategies` (``--strategies``); this module runs them
and holds the command line.

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

from gunpy.bench.graphs import (component_edges as _component_edges, graph as _graph,  # noqa: F401
                                roots as _roots, weighted_twin as _weighted_twin)
from gunpy.bench.machine import copy_bandwidth, machine_info  # noqa: F401  (re-exported)
from gunpy.bench.machine import harmonic as _harmonic
from gunpy.bench.peers import _ALIASES, ALL_PEERS, PRIMITIVES, BlasPeer  # noqa: F401
from gunpy.bench.report import markdown, plots  # noqa: F401  (re-exported)
from gunpy.bench.strategies import strategy_markdown, strategy_table  # noqa: F401

__all__ = ["main", "run_suite"]


def _suite_primitives():
    """The suite's names: the hand-written ones, then every other registered primitive."""
    from gunpy import registry
    extra = [n for n in registry.names() if n not in PRIMITIVES and n not in _ALIASES]
    return list(PRIMITIVES) + extra


# ----------------------------------------------------------------------------- timing
def _timed(fn, *a, **kw):
    t = time.perf_counter()
    out = fn(*a, **kw)
    return (time.perf_counter() - t) * 1e3, out


# ----------------------------------------------------------------------------- the suite
def _record(rows, **kw):
    rows.append(kw)
    return kw


def _teps_row(rows, name, primitive, library, times, teps, validated, *, backend=None,
              visited=None, **after):
    """A BFS or SSSP row: the times of the roots and their Graph500 TEPS."""
    row = {"graph": name, "primitive": primitive, "library": library}
    if backend is not None:
        row["backend"] = backend
    row.update(runs=len(times), median_ms=statistics.median(times), min_ms=min(times),
               max_ms=max(times), hmean_teps=_harmonic(teps), median_teps=statistics.median(teps))
    if visited is not None:  # Gunrock's convention: the edges the traversal visited
        row.update(hmean_teps_visited=_harmonic(visited),
                   median_teps_visited=statistics.median(visited))
    row.update(validated=validated, **after)
    rows.append(row)
    return row


def _bench_peer_traversals(primitive, peers, roots, edges, name, rows, bar, check=None):
    """Every peer's BFS or SSSP from ``roots`` after one warm-up call, TEPS by gunpy's ``edges``.

    ``check(peer, out)`` sees a peer's output for the first root and returns whether it
    validated it (it raises when the output is wrong).
    """
    for peer in peers:
        fn = getattr(peer, primitive, None)
        if fn is None:
            continue
        fn(roots[0])
        times, teps, first = [], [], None
        for s in roots:
            ms, out = _timed(fn, s)
            times.append(ms)
            teps.append(edges[s] / (ms * 1e-3))
            first = out if first is None else first
        validated = bool(check(peer, first)) if check else False
        _teps_row(rows, name, primitive, peer.name, times, teps, validated)
        bar.update(1)


def _bench_bfs(G, name, backend, roots, peer_roots, peers, rows, validate, bar, args):
    import gunpy
    from gunpy.testing import check_bfs_tree
    for s in roots[:4]:  # warm-up: compiles the kernels these paths need (push, pull, mappings)
        gunpy.bfs(G, s, backend=backend, direction=args.direction, load_balance=args.load_balance)
    times, teps, gteps = [], [], []
    component_edges = {}
    sample_iterations, sample_edges = None, -1
    for s in roots:
        r = gunpy.bfs(G, s, backend=backend, direction=args.direction,
                      load_balance=args.load_balance)
        if validate:
            check_bfs_tree(G, s, r.depth, r.parent)
        ms = r.stats.elapsed_ms
        m = component_edges[s] = _component_edges(G, r.depth >= 0)
        times.append(ms)
        teps.append(m / (ms * 1e-3))
        gteps.append(r.stats.edges_visited / (ms * 1e-3))
        if sample_iterations is None or m > sample_edges:  # plot the largest traversal
            sample_iterations, sample_edges = r.stats.per_iteration, m
        bar.update(1)
    _teps_row(rows, name, "bfs", "gunpy", times, teps, validate, backend=backend, visited=gteps,
              per_iteration=sample_iterations)
    _bench_peer_traversals("bfs", peers, roots[:peer_roots], component_edges, name, rows, bar)


def _bench_sssp(G, Gw, name, backend, roots, peer_roots, peers, rows, validate, bar):
    import gunpy
    from gunpy.testing import check_sssp_tree
    for s in roots[:4]:
        gunpy.sssp(Gw, s, backend=backend)
    times, teps = [], []
    reached_edges = {}
    ref = None
    for s in roots:
        r = gunpy.sssp(Gw, s, backend=backend)
        if validate:
            check_sssp_tree(Gw, s, r.distance, r.parent)
        ms = r.stats.elapsed_ms
        times.append(ms)
        m = reached_edges[s] = _component_edges(Gw, np.isfinite(r.distance))
        teps.append(m / (ms * 1e-3))
        if ref is None:
            ref = r.distance
        bar.update(1)
    _teps_row(rows, name, "sssp", "gunpy", times, teps, validate, backend=backend)

    def against_scipy(peer, out):  # the first root's distances
        if not (validate and peer.name == "scipy"):
            return False
        if not np.allclose(out, ref, rtol=1e-9, equal_nan=True):
            raise AssertionError(f"SSSP distances differ from scipy on {name}")
        return True

    _bench_peer_traversals("sssp", peers, roots[:peer_roots], reached_edges, name, rows, bar,
                           check=against_scipy)


def _repeat(fn, reps):
    fn()
    ts = []
    out = None
    for _ in range(reps):
        ms, out = _timed(fn)
        ts.append(ms)
    return ts, out


def _bench_cc(G, name, backend, peers, rows, reps, bar):
    import gunpy
    gunpy.cc(G, backend=backend)
    runs = [gunpy.cc(G, backend=backend) for _ in range(reps)]
    times = [r.stats.elapsed_ms for r in runs]
    ncomp = runs[0].num_components
    _record(rows, graph=name, primitive="cc", library="gunpy", backend=backend, runs=reps,
            median_ms=statistics.median(times), min_ms=min(times), components=ncomp,
            validated=True)
    _bench_peer_counts("cc", peers, reps, ncomp, "finds {} components", name, rows, bar)


def _bench_peer_counts(primitive, peers, reps, expected, says, name, rows, bar,
                       skip=lambda peer: False):
    """Every peer's ``primitive()`` (a count), timed ``reps`` times, checked against gunpy's.

    ``says``: what a wrong count reads as (``"finds {} components"``).
    """
    for peer in peers:
        fn = getattr(peer, primitive, None)
        if fn is None or skip(peer):
            continue
        ts, out = _repeat(fn, reps)
        if out != expected:
            raise AssertionError(f"{peer.name} {says.format(out)} on {name}, gunpy {expected}")
        _record(rows, graph=name, primitive=primitive, library=peer.name, runs=reps,
                median_ms=statistics.median(ts), min_ms=min(ts), validated=True)
        bar.update(1)


def _bench_pagerank(G, name, backend, peers, rows, reps, bar):
    import gunpy
    gunpy.pagerank(G, backend=backend)
    runs = [gunpy.pagerank(G, backend=backend) for _ in range(reps)]
    times = [r.stats.elapsed_ms for r in runs]
    it = runs[0].iterations
    per_it = statistics.median(x["ms"] for x in runs[-1].stats.per_iteration)
    ref = runs[0].rank
    _record(rows, graph=name, primitive="pagerank", library="gunpy", backend=backend,
            runs=reps, median_ms=statistics.median(times), min_ms=min(times), iterations=it,
            ms_per_iteration=per_it, validated=True)
    for peer in peers:
        if not hasattr(peer, "pagerank"):
            continue
        ts, (out, pit) = _repeat(peer.pagerank, reps)
        if peer.name == "scipy" and not np.allclose(out, ref, rtol=1e-6, atol=1e-12):
            raise AssertionError(f"PageRank differs from the scipy power iteration on {name}")
        _record(rows, graph=name, primitive="pagerank", library=peer.name, runs=reps,
                median_ms=statistics.median(ts), min_ms=min(ts), iterations=pit,
                validated=peer.name == "scipy")
        bar.update(1)


def _bench_bc(G, name, backend, roots, peers, rows, bar):
    import gunpy
    srcs = roots[:4]
    gunpy.bc(G, srcs, backend=backend)  # warm-up on the same sources: every path compiled
    r = gunpy.bc(G, srcs, backend=backend)
    per = r.stats.elapsed_ms / len(srcs)
    _record(rows, graph=name, primitive="bc", library="gunpy", backend=backend,
            runs=len(srcs), median_ms=per, min_ms=per, note="per source", validated=False)
    for peer in peers:
        if hasattr(peer, "bc"):
            if peer.name == "networkx" and G.num_vertices > 20000:
                continue
            ms, out = _timed(peer.bc, srcs)
            _record(rows, graph=name, primitive="bc", library=peer.name, runs=len(srcs),
                    median_ms=ms / len(srcs), min_ms=ms / len(srcs), note="per source",
                    validated=False)
        elif hasattr(peer, "bc_estimate"):
            ms, _ = _timed(peer.bc_estimate, len(srcs))
            _record(rows, graph=name, primitive="bc", library=peer.name, runs=len(srcs),
                    median_ms=ms / len(srcs), min_ms=ms / len(srcs),
                    note="per source, its own random sources (not validated)", validated=False)
        bar.update(1)


def _bench_tc(G, name, backend, peers, rows, reps, bar):
    """Triangle counting: wall time per call (orientation or L included) for every library."""
    import gunpy
    ts, count = _repeat(lambda: gunpy.triangle_count(G, backend=backend), reps)
    _record(rows, graph=name, primitive="tc", library="gunpy", backend=backend, runs=reps,
            median_ms=statistics.median(ts), min_ms=min(ts), triangles=count, validated=True)
    # networkx is slow; igraph lists every triangle (RMAT-20: out of memory)
    big = G.num_edges > 2_000_000
    _bench_peer_counts("tc", peers, reps, count, "counts {} triangles", name, rows, bar,
                       skip=lambda peer: big and peer.name in ("networkx", "igraph"))


def run_suite(args):
    """Run the configured suite; returns the list of result rows."""
    from tqdm.auto import tqdm

    import gunpy
    from gunpy import backends
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
    for gname in tqdm(graphs, desc="graphs", disable=args.quiet):
        t0 = time.perf_counter()
        G = _graph(gname, args.seed)
        Gw = _weighted_twin(G, args.seed)
        load_ms = (time.perf_counter() - t0) * 1e3
        peers = [p for p in peers_all if p.max_vertices is None or G.num_vertices <= p.max_vertices]
        for p in peers:
            p.prepare(G, Gw)
        roots = _roots(G, args.roots, args.seed)
        steps = len(args.primitives) * (len(peers) + 1) + len(roots) * (
            ("bfs" in args.primitives) + ("sssp" in args.primitives))
        with tqdm(total=steps, desc=gname, leave=False, disable=args.quiet) as bar:
            _record(rows, graph=gname, primitive="graph", library="-",
                    vertices=G.num_vertices, edges=G.num_edges, directed=G.directed,
                    build_ms=load_ms)
            if "bfs" in args.primitives:
                _bench_bfs(G, gname, backend, roots, args.peer_roots, peers, rows,
                           not args.no_validate, bar, args)
            if "sssp" in args.primitives:
                _bench_sssp(G, Gw, gname, backend, roots, args.peer_roots, peers, rows,
                            not args.no_validate, bar)
            if "cc" in args.primitives:
                _bench_cc(G, gname, backend, peers, rows, args.reps, bar)
            if "pagerank" in args.primitives:
                _bench_pagerank(G, gname, backend, peers, rows, args.reps, bar)
            if "bc" in args.primitives:
                _bench_bc(G, gname, backend, roots, peers, rows, bar)
            if "tc" in args.primitives:
                _bench_tc(G, gname, backend, peers, rows, args.reps, bar)
            for pname in args.primitives:
                if pname not in PRIMITIVES:
                    _bench_registered(pname, G, Gw, gname, backend, rows, args.reps, bar)
    return rows


def _bench_registered(pname, G, Gw, name, backend, rows, reps, bar):
    """A registered primitive with no hand-written benchmark: gunpy's wall time per call."""
    from gunpy import registry
    entry = registry.primitive(pname)
    graph = Gw if entry.weighted else G
    source = int(graph.out_degrees().argmax()) if graph.num_vertices else 0
    ts, _ = _repeat(lambda: entry.call(graph, source, backend=backend), reps)
    _record(rows, graph=name, primitive=pname, library="gunpy", backend=backend, runs=reps,
            median_ms=statistics.median(ts), min_ms=min(ts), validated=False)
    bar.update(1)


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
    p.add_argument("--roots", type=int, default=64, help="BFS/SSSP roots (Graph500: 64)")
    p.add_argument("--peer-roots", type=int, default=8, help="roots timed for each peer")
    p.add_argument("--reps", type=int, default=3, help="repetitions for CC and PageRank")
    p.add_argument("--skip-peers", nargs="*", default=[], help="peer names to leave out")
    p.add_argument("--direction", default="auto")
    p.add_argument("--load-balance", default="auto")
    p.add_argument("--no-validate", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=os.path.join("bench", "results"))
    p.add_argument("--quick", action="store_true", help="8 roots, 1 rep, no networkx")
    p.add_argument("--strategies", action="store_true",
                   help="instead: BFS time for every load balance x direction")
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
