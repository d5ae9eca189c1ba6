"""gpu_diff: every configuration on the CUDA backend against the CPU backend, at the real launch shape.

    python bench/gpu_diff.py [--backend cuda] [--quick] [--only PATTERNS] [--graphs NAMES]
                             [--block-size N] [--jobs N] [--list]

Each configuration (BFS push / pull / auto x every load balance x idempotent;
SSSP fused near/far, unfused near/far, Bellman-Ford; CC; PageRank push and
pull; BC; triangles; gunpy.blas BFS; gunpy.dist BFS on one rank) runs on
``--backend`` (default ``cuda``, at its default launch shape: 256-thread blocks,
32 blocks a multiprocessor on a GPU) and on the ``cpu`` backend, on graphs with
hubs of about 300, 3,000 and 5,000 edges among random edges and a 300 x 300 grid
(road-like: long diameter, degree <= 4). Results are compared where they are
defined exactly:

* BFS depths exactly; parents with Graph500's checks
  (:func:`gunpy.testing.check_bfs_tree`), since any neighbour one level up may win;
* SSSP distances exactly on integer weights, to 1e-12 relative on real ones,
  and the parents as a shortest-path tree (:func:`gunpy.testing.check_sssp_tree`);
* CC as partitions; PageRank to 1e-8 absolute; BC to 1e-9 relative; triangle
  counts exactly (per vertex and in total).

Every call runs twice on each backend: the first compiles (or loads the kernel
cache) and is checked too, the second is timed (``--quick``: one call each).
Prints one row per configuration and graph as it finishes (``ok``, ``FAIL`` or
``skip``, the milliseconds of the timed calls on each backend, summed over the
sources; each line flushed, so a run killed part way keeps what it did) and exits
1 if any row failed, 2 if the backend cannot run here. ``--jobs N`` shares the
configurations among N processes (each with its own CUDA context and
cores/N CPU threads for the reference), prints their rows as they come, then
the whole table in order.

``--quick`` selects tiny graphs (a hub of 40 leaves, bigger than the simulator's
32-thread block; a 6 x 6 grid) so that the script runs under numba's CUDA
simulator::

    NUMBA_ENABLE_CUDASIM=1 python bench/gpu_diff.py --backend cuda --quick --only 'bfs-push-*'
"""

import argparse
import fnmatch
import os
import sys
import time
from collections import namedtuple

import numpy as np

#: one configuration: ``run(G, source, backend) -> result`` (``source`` None for the
#: whole-graph ones), ``compare(G, source, got, ref) -> None or a message``;
#: ``weighted``: runs on the graph's weighted twin; ``undirected``: skipped on directed graphs
Config = namedtuple("Config", "name run compare sourced weighted undirected needs",
                    defaults=(True, False, False, None))

#: a test graph: ``G`` unweighted, ``Gw`` the same edges weighted, ``exact``: integer weights
TestGraph = namedtuple("TestGraph", "name G Gw exact sources note")


# ----------------------------------------------------------------------------- graphs
def hub_graph(n, hub_degree, *, directed=False, avg_degree=4, seed=0):
    """Random edges (``avg_degree`` a vertex) plus a hub of ``hub_degree`` distinct neighbours
    (vertex 0) and a few middle hubs (vertex 1..4, a tenth of it each: warp- and CTA-sized lists
    beside the hub in one frontier)."""
    from gunpy import Graph
    rng = np.random.default_rng(seed)
    m = n * avg_degree // (1 if directed else 2)
    src = [rng.integers(0, n, m)]
    dst = [rng.integers(0, n, m)]
    for hub, deg in [(0, hub_degree)] + [(h, max(2, hub_degree // 10)) for h in range(1, 5)]:
        nb = rng.choice(np.arange(5, n), size=min(deg, n - 5), replace=False)
        src.append(np.full(nb.shape[0], hub))
        dst.append(nb)
    src, dst = np.concatenate(src), np.concatenate(dst)
    return Graph.from_edges(src, dst, num_vertices=n, directed=directed)


def _weighted(G, *, integer, seed=1):
    """``G`` with weights: integers 1..64 (distances exact in floating point) or reals in (0, 1]."""
    from gunpy import Graph
    rng = np.random.default_rng(seed)
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    dst = np.asarray(G.column_indices)
    if not G.directed:  # one weight per undirected edge: keep u < v, from_edges mirrors it
        keep = src < dst
        src, dst = src[keep], dst[keep]
    w = rng.integers(1, 65, src.shape[0]).astype(np.float64) if integer \
        else 1.0 - rng.random(src.shape[0])
    return Graph.from_edges(src, dst, w, num_vertices=G.num_vertices, directed=G.directed)


def _sources(G):
    """The vertex of highest out-degree, and a low-degree vertex far from it in id order."""
    deg = G.out_degrees()
    hub = int(np.argmax(deg))
    low = np.flatnonzero((deg > 0) & (deg <= 4))
    other = int(low[-1]) if low.size else int(G.num_vertices - 1)
    return (hub,) if other == hub else (hub, other)


def make_graphs(quick=False, names=None):
    """The test graphs, ``{name: TestGraph}`` (``quick``: tiny ones for the simulator)."""
    from gunpy import generators
    if quick:
        spec = [("hub40", lambda: hub_graph(64, 40, seed=1), True),
                ("hub40-directed", lambda: hub_graph(64, 40, directed=True, seed=2), True),
                ("grid6x6", lambda: generators.grid_2d(6, 6), False)]
    else:
        spec = [("hub300", lambda: hub_graph(3_000, 300, seed=1), True),
                ("hub3000-directed", lambda: hub_graph(10_000, 3_000, directed=True, seed=2), True),
                ("hub5000", lambda: hub_graph(20_000, 5_000, seed=3), True),
                ("grid300x300", lambda: generators.grid_2d(300, 300), False)]
    out = {}
    for name, build, exact in spec:
        if names and name not in names:
            continue
        G = build()
        Gw = _weighted(G, integer=exact)
        kind = "directed" if G.directed else "undirected"
        note = (f"{G.num_vertices:,} vertices, {G.num_edges:,} edges ({kind}), max degree "
                f"{int(G.out_degrees().max(initial=0)):,}, weights "
                f"{'integer 1..64' if exact else 'real (0, 1]'}")
        out[name] = TestGraph(name, G, Gw, exact, _sources(G), note)
    return out


# ----------------------------------------------------------------------------- comparisons
def _first_diff(a, b):
    bad = np.flatnonzero(a != b)
    i = int(bad[0])
    return f"{bad.size} differ, first at {i}: {a[i].item()!r} vs {b[i].item()!r}"


def same_bfs(G, source, got, ref):
    from gunpy.testing import check_bfs_tree
    if not np.array_equal(got.depth, ref.depth):
        return "depth: " + _first_diff(got.depth, ref.depth)
    try:
        check_bfs_tree(G, source, got.depth, got.parent)
    except AssertionError as exc:
        return f"parent tree: {str(exc).splitlines()[0] if str(exc) else 'check failed'}"
    return None


def _same_sssp(exact):
    def compare(G, source, got, ref):
        from gunpy.testing import check_sssp_tree
        a, b = got.distance, ref.distance
        if exact:
            if not np.array_equal(a, b):
                return "distance: " + _first_diff(a, b)
        else:
            fin = np.isfinite(b)
            if not np.array_equal(np.isfinite(a), fin):
                return "distance: reached sets differ"
            err = np.abs(a[fin] - b[fin]) / np.maximum(np.abs(b[fin]), 1e-300)
            if err.size and err.max() > 1e-12:
                return f"distance: relative error {err.max():.3g} > 1e-12"
        try:
            check_sssp_tree(G, source, got.distance, got.parent, rtol=1e-12)
        except AssertionError as exc:
            return f"parent tree: {str(exc).splitlines()[0] if str(exc) else 'check failed'}"
        return None
    return compare


def _partition(labels):
    """Each vertex's class as the index of the class's first vertex (a canonical labelling)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    return first[inverse]


def same_cc(G, source, got, ref):
    a, b = _partition(got.labels), _partition(ref.labels)
    return None if np.array_equal(a, b) else "partition: " + _first_diff(a, b)


def same_pagerank(G, source, got, ref):
    err = float(np.abs(got.rank - ref.rank).max(initial=0.0))
    return None if err <= 1e-8 else f"rank: max abs difference {err:.3g} > 1e-8"


def same_bc(G, source, got, ref):
    a, b = got.centrality, ref.centrality
    scale = max(1.0, float(np.abs(b).max(initial=0.0)))
    err = float(np.abs(a - b).max(initial=0.0)) / scale
    return None if err <= 1e-9 else f"centrality: relative difference {err:.3g} > 1e-9"


def same_triangles(G, source, got, ref):
    if int(got.count) != int(ref.count):
        return f"count {int(got.count)} vs {int(ref.count)}"
    if not np.array_equal(got.triangles, ref.triangles):
        return "per vertex: " + _first_diff(got.triangles, ref.triangles)
    return None


# ----------------------------------------------------------------------------- configurations
def _bfs(direction, lb, idempotent):
    def run(G, s, be):
        import gunpy
        return gunpy.bfs(G, s, direction=direction, load_balance=lb, idempotent=idempotent,
                         backend=be)
    return run


def _sssp(method, fuse):
    def run(G, s, be):
        from gunpy.primitives.sssp import SSSPEnactor, SSSPProblem
        problem = SSSPProblem(G, backend=be)
        enactor = SSSPEnactor(problem, method=method, fuse=fuse)
        problem.reset(s, None)
        enactor.enact()
        distance, parent = problem.extract()
        return argparse.Namespace(distance=distance, parent=parent)
    return run


def _pagerank(direction):
    def run(G, s, be):
        import gunpy
        # converged far below the 1e-8 comparison, so that the two backends' summation
        # orders cannot stop them an iteration apart
        return gunpy.pagerank(G, direction=direction, tol=1e-10, max_iter=500, backend=be)
    return run


def _blas_bfs(direction):
    def run(G, s, be):
        from gunpy.blas import algorithms
        return algorithms.bfs(G, s, direction=direction, backend=be)
    return run


def _dist_bfs(direction):
    def run(G, s, be):
        import gunpy.dist as gd
        # one rank: MPI starts as a singleton (no mpiexec); every vertex is owned here
        return gd.bfs(gd.DistGraph.from_graph(G), s, direction=direction, backend=be).gather()
    return run


def _needs_mpi():
    try:
        import gunpy.dist  # noqa: F401
    except Exception as exc:  # no mpi4py (ImportError), or mpi4py finds no MPI library
        return str(exc).splitlines()[0]
    return None


def configurations(exact_weights=True):
    """Every configuration, in table order."""
    import gunpy
    from gunpy.operators.advance import load_balance_options
    cfgs = []
    for direction in ("push", "pull", "auto"):
        for lb in load_balance_options():
            for idem in (False, True):
                name = f"bfs-{direction}-{lb}" + ("-idem" if idem else "")
                cfgs.append(Config(name, _bfs(direction, lb, idem), same_bfs))
    for name, method, fuse in [("sssp-fused", "near_far", True), ("sssp-unfused", "near_far", False),
                               ("sssp-bellman_ford", "bellman_ford", True)]:
        cfgs.append(Config(name, _sssp(method, fuse), None, weighted=True))
    cfgs.append(Config("cc", lambda G, s, be: gunpy.cc(G, backend=be), same_cc, sourced=False))
    for d in ("push", "pull"):
        cfgs.append(Config(f"pagerank-{d}", _pagerank(d), same_pagerank, sourced=False))
    cfgs.append(Config("bc", lambda G, s, be: gunpy.bc(G, list(s), backend=be), same_bc,
                       sourced=False))
    cfgs.append(Config("triangles", lambda G, s, be: gunpy.triangles(G, backend=be),
                       same_triangles, sourced=False, undirected=True))
    for d in ("push", "pull", "auto"):
        cfgs.append(Config(f"blas-bfs-{d}", _blas_bfs(d), same_bfs))
    for d in ("push", "pull", "auto"):
        cfgs.append(Config(f"dist-bfs-1rank-{d}", _dist_bfs(d), same_bfs, needs=_needs_mpi))
    return cfgs


# ----------------------------------------------------------------------------- running
Row = namedtuple("Row", "config graph status ms_test ms_cpu detail")


def _timed(run, G, s, be):
    t0 = time.perf_counter()
    r = run(G, s, be)
    return r, (time.perf_counter() - t0) * 1e3


def _short(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:200]


def run_one(cfg, tg, backend, *, calls=2):
    """One row: ``cfg`` on ``tg`` with ``backend`` and with ``cpu``, every source, compared."""
    if cfg.undirected and tg.G.directed:
        return Row(cfg.name, tg.name, "skip", None, None, "undirected graphs only")
    if cfg.needs is not None:
        why = cfg.needs()
        if why:
            return Row(cfg.name, tg.name, "skip", None, None, why)
    G = tg.Gw if cfg.weighted else tg.G
    compare = cfg.compare or _same_sssp(tg.exact)
    sources = [None] if not cfg.sourced else list(tg.sources)
    ms_test = ms_cpu = 0.0
    for s in sources:
        arg = tg.sources if s is None else s
        stage = "cpu"
        try:
            ref = None
            for _ in range(calls):
                ref, ms = _timed(cfg.run, G, arg, "cpu")
            ms_cpu += ms
            stage = backend
            for i in range(calls):
                got, ms = _timed(cfg.run, G, arg, backend)
                bad = compare(G, s, got, ref)
                if bad:
                    where = "" if s is None else f"source {s}, "
                    which = "" if calls == 1 else ("first call, " if i == 0 else "timed call, ")
                    return Row(cfg.name, tg.name, "FAIL", None, None, f"{where}{which}{bad}")
            ms_test += ms
        except Exception as exc:  # a crash in either backend is a failed row, not the end
            return Row(cfg.name, tg.name, "FAIL", None, None, f"{stage} raised {_short(exc)}")
    return Row(cfg.name, tg.name, "ok", ms_test, ms_cpu, "")


def _fmt(ms):
    return "-" if ms is None else f"{ms:.2f}"


class Table:
    """The result table, printed a row at a time as rows finish (each line flushed), so a run
    killed part way has printed every row it finished."""

    def __init__(self, backend, configs, graphs, out=None):
        self.backend, self.out = backend, out
        self.w = max([len(c) for c in configs] + [6])
        self.g = max([len(g) for g in graphs] + [5])

    def _print(self, line):
        print(line, file=self.out or sys.stdout, flush=True)

    def header(self):
        self._print(f"| {'config':{self.w}s} | {'graph':{self.g}s} | result | "
                    f"{self.backend + ' ms':>10s} | {'cpu ms':>10s} |")
        self._print(f"|{'-' * (self.w + 2)}|{'-' * (self.g + 2)}|--------|{'-' * 11}:|"
                    f"{'-' * 11}:|")

    def row(self, r):
        self._print(f"| {r.config:{self.w}s} | {r.graph:{self.g}s} | {r.status:6s} | "
                    f"{_fmt(r.ms_test):>10s} | {_fmt(r.ms_cpu):>10s} |")


def print_table(rows, backend, out=None):
    t = Table(backend, [r.config for r in rows], [r.graph for r in rows], out)
    t.header()
    for r in rows:
        t.row(r)
    print_notes(rows, out)


def print_notes(rows, out=None):
    """The failures' details and the reasons for skipped rows, under the table."""
    out = sys.stdout if out is None else out
    notes = [r for r in rows if r.detail and r.status == "FAIL"]
    skips = sorted({(r.config.rsplit("-", 1)[0] if r.config.startswith("dist") else r.config,
                     r.detail) for r in rows if r.status == "skip"})
    if notes:
        print("\nFailures:", file=out)
        for r in notes:
            print(f"- {r.config} on {r.graph}: {r.detail}", file=out)
    if skips:
        print("\nSkipped:", file=out)
        for name, why in skips:
            print(f"- {name}: {why}", file=out)
    out.flush()


def _prepare(backend):
    """Switch on the simulator's shims when it is on; return None, or why ``backend`` cannot run."""
    from gunpy.testing import install_simulator_shims
    install_simulator_shims()  # a no-op unless NUMBA_ENABLE_CUDASIM=1 was set before numba
    from gunpy import backends
    if backend == "cuda":
        ok, why = backends.cuda_status()
        if not ok:
            return f"no usable CUDA GPU here ({why})"
    return None


def save_cache_counters():
    """Where ``GUNPY_DAY_COUNTERS`` names a folder (bench/gpu-day sets it), leave this process's
    kernel-cache hits and misses there (one JSON file a process) for the day's report."""
    folder = os.environ.get("GUNPY_DAY_COUNTERS")
    if not folder or "gunpy._jitcache" not in sys.modules:
        return
    import json
    from gunpy import _jitcache
    try:
        with open(os.path.join(folder, f"{os.getpid()}.json"), "w") as fh:
            json.dump(dict(_jitcache.counters, process=" ".join(sys.argv[:3])), fh)
    except OSError:
        pass


def build_parser():
    p = argparse.ArgumentParser(prog="gpu_diff", description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", default="cuda", choices=("cuda", "cpu"),
                   help="the backend checked against the cpu backend (default cuda)")
    p.add_argument("--quick", action="store_true",
                   help="tiny graphs, one call each (runs under the CUDA simulator)")
    p.add_argument("--only", default=None,
                   help="comma-separated glob patterns of configuration names (e.g. 'bfs-*,cc')")
    p.add_argument("--graphs", default=None, help="comma-separated graph names")
    p.add_argument("--block-size", type=int, default=None,
                   help="threads a block on the cuda backend (default: the backend's, 256)")
    p.add_argument("--jobs", type=int, default=1,
                   help="processes to share the configurations among (default 1); each takes "
                        "cores/jobs CPU threads for the reference runs")
    p.add_argument("--shard", default=None, help=argparse.SUPPRESS)  # I/N: one --jobs worker
    p.add_argument("--list", action="store_true", help="list the configurations and graphs")
    return p


def _select(args):
    """``(configurations, graphs)`` the arguments pick, or an error message."""
    cfgs = configurations()
    if args.only:
        pats = [p.strip() for p in args.only.split(",") if p.strip()]
        cfgs = [c for c in cfgs if any(fnmatch.fnmatchcase(c.name, p) for p in pats)]
        if not cfgs:
            return None, None, f"no configuration matches {args.only!r} (see --list)"
    names = [n.strip() for n in args.graphs.split(",")] if args.graphs else None
    graphs = make_graphs(args.quick, names)
    if not graphs and not args.list:
        return None, None, f"no graph named {args.graphs!r} (see --list)"
    return cfgs, graphs, None


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.jobs < 1:
        print("gpu_diff: --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.jobs > 1 and not args.list:
        return _run_jobs(args, argv if argv is not None else sys.argv[1:])
    why = _prepare(args.backend)
    if why:
        print(f"gpu_diff: {why}", file=sys.stderr)
        return 2
    import atexit
    atexit.register(save_cache_counters)
    from gunpy.backends import get_backend
    be = get_backend(args.backend)
    if args.block_size is not None and args.backend == "cuda":
        be.block_size = args.block_size
    cfgs, graphs, err = _select(args)
    if err:
        print(f"gpu_diff: {err}", file=sys.stderr)
        return 2
    if args.list:
        print("configurations: " + " ".join(c.name for c in configurations()))
        print("graphs: " + " ".join(make_graphs(args.quick)))
        return 0
    shard = None
    if args.shard:
        i, n = map(int, args.shard.split("/"))
        cfgs, shard = cfgs[i::n], i
    if shard is None:
        shape = ""
        if args.backend == "cuda":
            shape = (f" (blocks of {be.block_size} threads, at most {be.max_blocks} blocks, "
                     f"{be.num_sms} multiprocessors)")
        print(f"gpu_diff: {args.backend}{shape} against cpu, {len(cfgs)} configurations x "
              f"{len(graphs)} graphs")
        for tg in graphs.values():
            print(f"  {tg.name}: {tg.note}; sources {', '.join(map(str, tg.sources))}")
        print(flush=True)
    table = Table(args.backend, [c.name for c in cfgs], list(graphs))
    if shard is None:
        table.header()
    rows = []
    t0 = time.perf_counter()
    for tg in graphs.values():
        for cfg in cfgs:
            rows.append(run_one(cfg, tg, args.backend, calls=1 if args.quick else 2))
            if shard is None:
                table.row(rows[-1])
            else:  # to the parent (_run_jobs), one line a row as it finishes
                import json
                print("@row " + json.dumps(rows[-1]._asdict()), flush=True)
    if shard is not None:
        return 1 if any(r.status == "FAIL" for r in rows) else 0
    print_notes(rows)
    return _summary(rows, time.perf_counter() - t0)


def _summary(rows, seconds):
    failed = sum(r.status == "FAIL" for r in rows)
    ok = sum(r.status == "ok" for r in rows)
    skipped = sum(r.status == "skip" for r in rows)
    print(f"\ngpu_diff: {ok} ok, {failed} FAIL, {skipped} skipped in {seconds:.1f} s", flush=True)
    return 1 if failed else 0


def _run_jobs(args, argv):
    """``--jobs N``: N processes of this script (``--shard i/N``: every N-th configuration),
    their rows printed as each finishes, then the whole table in order."""
    import json
    import selectors
    import subprocess
    n = args.jobs
    threads = max(1, (os.cpu_count() or 1) // n)
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), PYTHONUNBUFFERED="1")
    base = [a for a in argv if not a.startswith("--jobs")]
    if "--jobs" in argv:  # "--jobs N" as two arguments
        k = argv.index("--jobs")
        base = argv[:k] + argv[k + 2:]
    cfgs, graphs, err = _select(args)
    if err:
        print(f"gpu_diff: {err}", file=sys.stderr)
        return 2
    n = min(n, len(cfgs))
    print(f"gpu_diff: {args.backend} against cpu, {len(cfgs)} configurations x {len(graphs)} "
          f"graphs in {n} processes of {threads} CPU threads each; rows as they finish:\n",
          flush=True)
    table = Table(args.backend, [c.name for c in cfgs], list(graphs))
    table.header()
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), *base,
                               "--shard", f"{i}/{n}"], stdout=subprocess.PIPE, text=True,
                              env=env, bufsize=1) for i in range(n)]
    sel = selectors.DefaultSelector()
    for i, p in enumerate(procs):
        sel.register(p.stdout, selectors.EVENT_READ, i)
    rows, open_ = [], n
    while open_:
        for key, _ in sel.select():
            line = key.fileobj.readline()
            if not line:
                sel.unregister(key.fileobj)
                open_ -= 1
            elif line.startswith("@row "):
                rows.append(Row(**json.loads(line[5:])))
                table.row(rows[-1])
            else:
                print(f"[{key.data}/{n}] {line.rstrip()}", flush=True)
    codes = [p.wait() for p in procs]
    order = {(g, c.name): k for k, (g, c) in enumerate((g, c) for g in graphs for c in cfgs)}
    rows.sort(key=lambda r: order.get((r.graph, r.config), len(order)))
    print("\nAll rows, in order:\n")
    print_table(rows, args.backend)
    broken = [(i, rc) for i, rc in enumerate(codes) if rc not in (0, 1)]
    for i, rc in broken:
        print(f"gpu_diff: process {i}/{n} exited with status {rc}", flush=True)
    if len(rows) < len(order):
        print(f"gpu_diff: {len(order) - len(rows)} rows missing (a process ended early)",
              flush=True)
    if broken and all(rc == 2 for _, rc in broken) and not rows:
        return 2
    rc = _summary(rows, time.perf_counter() - t0)
    return 1 if broken or len(rows) < len(order) else rc


if __name__ == "__main__":
    sys.exit(main())
