"""The ``gunpy`` command line: run primitives, list datasets, show the setup.

    gunpy run bfs --dataset email-Enron
    gunpy run sssp --graph my.mtx --source 3 --backend cpu
    gunpy run bfs --rmat 18 --load-balance merge_path --direction auto
    gunpy datasets list
    gunpy info
    gunpy warmup                     # compile the built-in kernels into the cache
    gunpy cache info                 # where the kernel cache is, and what it holds
    gunpy dist bench --scale-per-rank 16 --roots 64 --ranks 1,2,4   # gunpy.dist weak scaling

Bad input ends with a one-line ``gunpy: error: ...`` and exit status 2, never a
traceback (``--debug`` shows it).
"""

import argparse
import inspect
import os
import sys
import time

import numpy as np

from gunpy import backends
from gunpy.progress import status

__all__ = ["main"]



class CliError(Exception):
    """An error to report on one line."""


def _warn(message):
    """``gunpy: warning: message`` on standard error; returns 1, the exit status of a
    command whose warning means it did not do all it was asked."""
    print(f"gunpy: warning: {message}", file=sys.stderr)
    return 1


# ----------------------------------------------------------------------------- graphs
def _load_graph(args):
    import gunpy
    t0 = time.perf_counter()
    chosen = [x is not None for x in (args.dataset, args.graph, args.rmat)]
    if sum(chosen) != 1:
        raise CliError("give exactly one of --dataset NAME, --graph PATH, --rmat SCALE")
    directed = None if args.directed is None else args.directed
    shown = None if not args.quiet else False  # a status line on a terminal
    if args.dataset is not None:
        from gunpy import datasets
        with status(f"loading {args.dataset}", enabled=shown):
            G = datasets.load(args.dataset, progress=not args.quiet)
        label = f"dataset {args.dataset}"
    elif args.graph is not None:
        path = args.graph
        if not os.path.exists(path):
            raise CliError(f"no such file: {path}")
        from gunpy import io
        kind = io.detect_format(path)  # by content: a .txt may hold Matrix Market or METIS
        with status(f"reading {path} ({kind})", enabled=shown):
            if kind == "mtx":
                G = io.read_mtx(path, directed=directed)
            elif kind == "metis":
                G = io.read_metis(path, directed=bool(directed))
            else:  # an edge list: undirected unless --directed
                G = io.read_edgelist(path, directed=bool(directed), one_based=args.one_based,
                                     relabel=args.relabel)
        label = path
    else:
        from gunpy import generators
        weighted = getattr(args, "weighted", False)
        label = f"Graph500 RMAT scale {args.rmat}, edge factor {args.edge_factor}"
        with status(f"generating {label}", enabled=shown):
            G = generators.rmat(args.rmat, args.edge_factor, seed=args.seed, weighted=weighted,
                                weight_range=(1, 64) if weighted else None)
    return G, label, (time.perf_counter() - t0) * 1e3


def _default_source(G):
    """The vertex of largest out-degree (the smallest id among ties): a hub, so a
    traversal from it shows something (vertex 0 of email-Enron has no edge at all)."""
    deg = G.out_degrees()
    return int(np.argmax(deg)) if deg.size else 0


def _vertex_list(text):
    """``--source 0,33``: vertex ids, 0-based, comma-separated."""
    try:
        ids = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected vertex ids separated by commas, got "
                                         f"{text[:100]!r}") from None
    if not ids:
        raise argparse.ArgumentTypeError("expected at least one vertex id")
    return ids


# ----------------------------------------------------------------------------- run
def _run_primitive(args, G):
    from gunpy import registry
    spec = registry.primitive(args.primitive)
    source = None
    if spec.source == "one":
        source = _default_source(G) if args.source is None else args.source
    elif spec.source == "many":
        source = args.source  # None: every vertex
    options = {o.name: getattr(args, o.name) for o in spec.options}
    params = inspect.signature(spec.function).parameters
    if "seed" in params:
        options.setdefault("seed", args.seed)
    if "progress" in params:  # a bar on a terminal, none with -q or in a pipe
        options.setdefault("progress", False if args.quiet else None)
    r = spec.call(G, source, backend=args.backend, **options)
    return r, spec.lines(r, G, source)


def cmd_run(args):
    G, label, load_ms = _load_graph(args)
    kind = "directed" if G.directed else "undirected"
    w = ", weighted" if G.weighted else ""
    print(f"graph: {label} ({kind}{w}): {G.num_vertices:,} vertices, {G.num_edges:,} edges "
          f"(loaded in {load_ms:.0f} ms)")
    if not args.no_warmup:
        # the first run compiles the kernels (numba JIT), or loads them from the kernel
        # cache in a later process; time the runs after it
        from gunpy import _jitcache
        t0 = time.perf_counter()
        with status("warm-up (compiling the kernels, or loading them from the cache)",
                    enabled=None if not args.quiet else False):
            _run_primitive(args, G)
        c = _jitcache.counters
        print(f"warm-up: {(time.perf_counter() - t0) * 1e3:.0f} ms ({c['misses']} kernels "
              f"compiled, {c['hits']} loaded from the cache)")
    results = []
    for rep in range(args.repeat):
        r, lines = _run_primitive(args, G)
        results.append(r)
    for line in lines:
        print(line)
    if not all(hasattr(x, "stats") for x in results):
        return 0  # a registered primitive that returns plain arrays: no stats to show
    st = min(results, key=lambda x: x.stats.elapsed_ms).stats
    print(f"stats: {st.summary()}")
    if args.repeat > 1:
        times = sorted(x.stats.elapsed_ms for x in results)
        print(f"runs: {args.repeat}, best {times[0]:.3f} ms, median {times[len(times) // 2]:.3f} ms")
    if args.verbose and st.per_iteration:
        print("iteration  frontier      edges  direction  strategy")
        for it in st.per_iteration:
            print(f"{it['iteration']:9d} {it['frontier']:9d} {it['edges']:10d}  "
                  f"{str(it['direction'] or '-'):9s}  {it['strategy'] or '-'}")
    return 0


# ----------------------------------------------------------------------------- others
def cmd_info(args):
    """Versions, backends and the CUDA load path, checked as ``CudaBackend()`` checks them:
    exit status 1 where a GPU is here and the CUDA backend would refuse to start."""
    import numba

    import gunpy
    from gunpy.backends.cuda import UnsupportedNumbaCuda, check_numba_cuda
    print(f"gunpy {gunpy.__version__}")
    print(f"numba {numba.__version__}")
    fine = True
    try:
        print(f"numba-cuda {check_numba_cuda()} (supported)")
    except UnsupportedNumbaCuda as exc:
        fine = False
        print(f"numba-cuda {_installed_version('numba-cuda')}: unsupported: {exc}")
    ok, why = backends.cuda_status()
    print(f"cuda backend: {'available' if ok else 'unavailable'} ({why})")
    fine = _print_toolchain() and fine
    print(f"cpu backend: available ({numba.get_num_threads()} threads, "
          f"threading layer {numba.config.THREADING_LAYER})")
    print(f"backend='auto' selects: {backends.available()[0]}")
    return 0 if fine or not ok else 1


def _installed_version(dist):
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return "(not installed)"


def _print_toolchain():
    """The CUDA toolchain's versions and the path that loads kernels, found by the check that
    ``CudaBackend()`` runs (:func:`gunpy.backends.toolchain.ensure_loadable`); False where
    it fails."""
    import numba
    if numba.config.ENABLE_CUDASIM:
        print("cuda toolchain: numba's simulator (no PTX, no linker)")
        return True
    from gunpy.backends import toolchain as tc

    def v(t):
        return "none" if t is None else ".".join(map(str, t))

    tv = tc.versions()
    print(f"cuda driver: {'CUDA ' + v(tv.driver) if tv.driver else 'none (no driver or GPU)'}")
    print(f"cuda toolchain: NVVM {tv.nvvm or 'unknown'} (writes PTX ISA {v(tv.ptx_isa)}), "
          f"nvJitLink {v(tv.nvjitlink)}, CUDA runtime {v(tv.runtime)}")
    try:
        p = tc.ensure_loadable()
        where = "kernels load" if tv.driver else "kernels would load (no driver here)"
        print(f"{where}: {p.describe()}")
    except tc.ToolchainError as exc:
        print(f"kernels cannot load: {exc}")
        return False
    return True


def cmd_warmup(args):
    from gunpy import _jitcache
    from gunpy.warmup import warmup
    # nothing to warm where nothing can be saved: say why and stop
    problem = _jitcache.problem()
    if problem:
        return _warn(f"nothing compiled, the kernel cache cannot be used: {problem}")
    t0 = time.perf_counter()

    def report(name, seconds):
        if not args.quiet:
            print(f"{name:9s} {seconds:7.2f} s")

    arch = getattr(args, "arch", None)
    warmup("cuda" if arch and args.backend == "auto" else args.backend, args.primitives,
           progress=report, arch=arch)
    c = _jitcache.counters
    built = f" for {arch} (no GPU: compiled and linked, nothing run)" if arch else ""
    print(f"warm-up done in {time.perf_counter() - t0:.1f} s{built}: {c['misses']} kernels "
          f"compiled, {c['saved']} saved, {c['hits']} loaded from the cache "
          f"({_jitcache.cache_dir()})")
    if c["unsaved"]:
        return _warn(f"{c['unsaved']} compiled kernels were not saved: "
                     f"{_jitcache.last_problem}")
    return 0


def cmd_cache(args):
    from gunpy import _jitcache
    from gunpy import warmup as carry
    files = getattr(args, "files", None) or []
    if args.action in ("info", "clear") and files:
        raise CliError(f"gunpy cache {args.action} takes no file")
    if args.action == "export":
        if len(files) != 1:
            raise CliError("gunpy cache export takes one FILE (the archive to write)")
        r = carry.export_cache(files[0], target=args.target)
        print(f"exported {r['entries']} kernels of environment {r['environment']} "
              f"({carry.describe(r['versions'])}; {', '.join(r['targets'])}) to {r['path']}: "
              f"{r['bytes'] / 2**20:.1f} MiB, {r['compressed'] / 2**20:.2f} MiB compressed")
        if r["skipped"]:
            _warn(f"{r['skipped']} entries failed authentication and were left out")
        return 0
    if args.action == "import":
        if not files:
            raise CliError("gunpy cache import takes the archives to import (FILE ...)")
        for path in files:
            r = carry.import_cache(path)
            print(f"imported {r['entries']} kernels from {path} into {_jitcache.cache_dir()}: "
                  f"environment {r['environment']} ({carry.describe(r['versions'])}; "
                  f"{', '.join(r['targets'])})")
            if r["differences"]:
                why = "; ".join(f"{what} {theirs} there, {mine} here"
                                for what, theirs, mine in r["differences"])
                _warn(f"these kernels are for another environment than this one "
                      f"({r['here']}), so they will not be used here: {why}")
            else:
                print(f"this environment ({r['here']}) will load them")
        return 0
    if args.action == "clear":
        try:
            r = _jitcache.clear(stale_only=args.stale)
        except _jitcache.CacheError as exc:
            return _warn(exc)
        what = "kernels of other environments" if args.stale else "cached kernels"
        print(f"removed {r.removed} {what} from {_jitcache.cache_dir()}")
        if r.failed:
            return _warn(f"{r.failed} cached kernels could not be removed ({r.error})")
        return 0
    st = _jitcache.info()
    print(f"kernel cache: {st['path']}")
    print(f"enabled: {'yes' if st['enabled'] else 'no (GUNPY_KERNEL_CACHE=0)'}")
    if st["problem"] and st["enabled"]:
        print(f"usable: no: {st['problem']} (kernels are compiled in every process)")
    print(f"key: {st['key_file']}")
    print(f"{st['files']} compiled kernels of {len(st['kernels'])} kernel sources for this "
          f"environment ({st['environment']}), {st['bytes'] / 2**20:.1f} MiB")
    if st["unverified"]:
        print(f"{st['unverified']} of them fail authentication (altered, damaged, or signed with "
              f"another key): each is deleted and compiled again when used")
    if st["rejected"]:
        last = st["last_rejected"] or {}
        print(f"{st['rejected']} entries rejected so far (failed authentication, compiled "
              f"again); the last: {last.get('entry', '?')} at {last.get('time', '?')}")
    print(f"{st['stale_files']} kernels of other gunpy / numba versions or sources, "
          f"{st['stale_bytes'] / 2**20:.1f} MiB (gunpy cache clear --stale removes them)")
    if args.verbose:
        for name, n in st["kernels"].items():
            print(f"  {n:4d}  {name}")
    return 0


def cmd_datasets(args):
    from gunpy import datasets
    if args.action == "list":
        for name in datasets.available():
            meta = datasets.info(name)
            print(f"{name:22s} bundled  {meta.get('vertices', '?'):>10} vertices  "
                  f"{meta.get('description', meta.get('notes', ''))}")
        for name in datasets.remote():
            meta = datasets.info(name)
            print(f"{name:22s} download {meta.get('vertices', '?'):>10} vertices  "
                  f"{meta.get('url', '')}")
        return 0
    if not args.name:
        raise CliError(f"'gunpy datasets {args.action}' needs a dataset name")
    if args.action == "info":
        for k, v in datasets.info(args.name).items():
            print(f"{k}: {v}")
        return 0
    path = datasets.fetch(args.name, progress=not args.quiet)
    print(path)
    return 0


# ----------------------------------------------------------------------------- dist
#: environment variables by which MPI launchers tell a process its job's size
_MPI_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")


def _mpi_job_size():
    """The size of the MPI job this process was started in by mpiexec, or None."""
    for var in _MPI_SIZE_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return None


def _dist_main(argv):
    """``gunpy dist bench``: the weak-scaling benchmark of gunpy.dist (gunpy/bench/dist.py).

    Run plainly, it launches one ``mpiexec`` job per rank count; run under
    ``mpiexec -n P``, every rank measures that job's size itself.
    """
    size = _mpi_job_size()
    try:
        import mpi4py
        if size is None:
            # the launcher only starts mpiexec jobs: it must not become a singleton MPI
            # process itself (and no MPI is initialised in a process that never uses it)
            mpi4py.rc.initialize = False
        from gunpy.bench import dist as bench
    except ImportError as exc:
        print(f"gunpy: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    p = argparse.ArgumentParser(prog="gunpy dist", description="gunpy.dist over MPI")
    sub = p.add_subparsers(dest="action", required=True)
    b = sub.add_parser("bench", help="weak scaling of the distributed BFS (Graph500 TEPS)",
                       description=bench.__doc__.split("\n\n")[0] + " Plainly run, it launches "
                       "one mpiexec job per rank count; under 'mpiexec -n P' it measures that "
                       "job.")
    bench.add_arguments(b)
    b.add_argument("--debug", action="store_true", help="show tracebacks")
    args = p.parse_args(argv)
    if size is not None and args.ranks is not None and os.environ.get("PMI_RANK", "0") == "0":
        print(f"gunpy dist bench: inside an MPI job of {size} ranks; --ranks ignored",
              file=sys.stderr)
    try:
        return bench.cli(args, in_mpi_job=size is not None)
    except KeyboardInterrupt:
        print("gunpy: interrupted", file=sys.stderr)
        return 130
    except (ValueError, RuntimeError, OSError) as exc:
        if args.debug:
            raise
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"gunpy: error: {msg}", file=sys.stderr)
        return 2


# ----------------------------------------------------------------------------- parser
def _primitive_parser(prims, spec):
    """``gunpy run NAME``: the graph options, the source, the entry's options, timing."""
    doc = (spec.function.__doc__ or spec.name).strip().splitlines()[0]
    r = prims.add_parser(spec.name, help=doc, description=doc)
    src = r.add_argument_group("graph (one of)")
    src.add_argument("--dataset", metavar="NAME", help="bundled or registered dataset")
    src.add_argument("--graph", metavar="PATH", help=".mtx or edge-list file (.gz too)")
    src.add_argument("--rmat", metavar="SCALE", type=int, help="Graph500 Kronecker graph")
    r.add_argument("--edge-factor", type=int, default=16)
    r.add_argument("--seed", type=int, default=0,
                   help="the RMAT generator's seed, and the primitive's where it takes one "
                        "(louvain, color)")
    r.add_argument("--directed", dest="directed", action="store_true", default=None,
                   help="read --graph as directed")
    r.add_argument("--undirected", dest="directed", action="store_false",
                   help="read --graph as undirected")
    r.add_argument("--one-based", action="store_true", help="edge list ids start at 1")
    r.add_argument("--relabel", action="store_true", help="renumber edge-list ids 0..k-1")
    if spec.source == "one":
        r.add_argument("--source", type=int,
                       help="source vertex, 0-based, also for 1-based .mtx files (default: "
                            "the vertex of largest out-degree)")
    elif spec.source == "many":
        r.add_argument("--source", type=_vertex_list, metavar="S[,S...]",
                       help=f"source vertices, 0-based, comma-separated "
                            f"(default: {spec.source_default})")
    else:  # accepted, as by every primitive before the registry: `gunpy run NAME --source S`
        r.add_argument("--source", type=int, help=f"ignored: {spec.name} takes no source")
    opts = r.add_argument_group(f"{spec.name} options")
    for o in spec.options:
        if o.value_type is bool:
            opts.add_argument(o.flag, dest=o.name, action="store_true", default=o.default,
                              help=o.help)
        else:
            opts.add_argument(o.flag, dest=o.name, type=o.value_type, default=o.default,
                              choices=o.choices,
                              help=o.help if o.default is None else f"{o.help} (default: {o.default})")
    r.add_argument("--backend", default="auto", choices=("auto",) + backends.names())
    r.add_argument("--repeat", type=int, default=1, help="timed runs (the best is reported)")
    r.add_argument("--no-warmup", action="store_true",
                   help="do not run once untimed first (the first run includes JIT compilation)")
    r.add_argument("-v", "--verbose", action="store_true", help="per-iteration table")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    r.set_defaults(func=cmd_run, weighted=spec.weighted)
    return r


def _primitives_for(argv):
    """The registry entries ``argv`` needs parsers for: ``gunpy run NAME ...`` loads
    NAME alone, ``gunpy run --help`` every primitive, other commands none (so that
    ``gunpy --help`` or ``gunpy info`` imports no primitive)."""
    from gunpy import registry
    if argv is None or argv[:1] != ["run"]:
        return [] if argv is not None else registry.primitives()
    name = next((a for a in argv[1:] if not a.startswith("-")), None)
    if name is not None:
        try:
            return [registry.primitive(name)]
        except ValueError:
            pass  # argparse names the valid choices
    return registry.primitives()


def build_parser(argv=None):
    """The parser; ``argv`` (optional) lets it build only the parts that command needs."""
    p = argparse.ArgumentParser(prog="gunpy", description=__doc__.split("\n\n")[0])
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run a primitive on a graph and print its stats",
                       description="Run a primitive on a bundled dataset, a file or an RMAT "
                                   "graph (gunpy run NAME --help: that primitive's options).")
    prims = r.add_subparsers(dest="primitive", required=True, metavar="PRIMITIVE")
    from gunpy import registry
    for spec in _primitives_for(argv):
        _primitive_parser(prims, spec)

    i = sub.add_parser("info", help="backends, GPU and library versions")
    i.set_defaults(func=cmd_info)

    d = sub.add_parser("datasets", help="list, describe or download datasets")
    d.add_argument("action", choices=("list", "info", "fetch"))
    d.add_argument("name", nargs="?")
    d.add_argument("-q", "--quiet", action="store_true")
    d.set_defaults(func=cmd_datasets)

    w = sub.add_parser("warmup", help="compile the built-in primitives' kernels into the cache",
                       description="Compile (or load) the kernels the built-in primitives use "
                                   "with their default options, so that later processes start "
                                   "from the persistent kernel cache (for containers and CI).")
    w.add_argument("--backend", default="auto", choices=("auto",) + backends.names())
    names = registry.names() if argv is None or argv[:1] == ["warmup"] else registry.BUILTIN
    w.add_argument("--primitives", nargs="+", choices=names, metavar="NAME",
                   help=f"some of {', '.join(names)} (default: all)")
    w.add_argument("--arch", metavar="sm_XY",
                   help="build the CUDA kernels for a GPU of this architecture (e.g. sm_90) "
                        "on a machine without one: compiled and linked, nothing run")
    w.add_argument("-q", "--quiet", action="store_true")
    w.set_defaults(func=cmd_warmup)

    c = sub.add_parser("cache", help="show, empty, export or import the persistent kernel cache",
                       description="The kernel cache lives in $GUNPY_CACHE_DIR, else "
                                   "$NUMBA_CACHE_DIR/gunpy, else ~/.cache/gunpy/kernels; its "
                                   "entries are signed with a key in ~/.config/gunpy/cache.key "
                                   "($GUNPY_CACHE_KEY_FILE). export FILE writes this "
                                   "environment's kernels to a tar.xz archive; import FILE ... "
                                   "checks such archives and signs their kernels with this "
                                   "machine's key (import only archives you trust).")
    c.add_argument("action", choices=("info", "clear", "export", "import"))
    c.add_argument("files", nargs="*", metavar="FILE", help="export: the archive to write; "
                                                            "import: the archives to read")
    c.add_argument("-v", "--verbose", action="store_true", help="list the kernel sources")
    c.add_argument("--stale", action="store_true",
                   help="clear: only the kernels of other environments (older gunpy or numba "
                        "versions, other gunpy sources)")
    c.add_argument("--target", choices=("cuda", "cpu"),
                   help="export: only the CUDA (or CPU) kernels")
    c.set_defaults(func=cmd_cache)

    sub.add_parser("bench", help="benchmark suite with peers side by side (gunpy bench --help; "
                                 "gunpy bench --launch: a kernel launch's Python cost)",
                   add_help=False)
    sub.add_parser("dist", help="gunpy.dist over MPI: gunpy dist bench, the weak-scaling "
                                "benchmark (gunpy dist bench --help)", add_help=False)
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"] and "--launch" in argv[1:]:
        # a launch's Python cost, numba's path against gunpy's launcher (gunpy/bench/launch.py)
        from gunpy.bench import launch
        return launch.main(argv[1:])
    if argv and argv[0] == "bench":
        # the benchmark suite has its own options (gunpy bench --help)
        from gunpy import bench
        try:
            return bench.main(argv[1:])
        except (ValueError, RuntimeError, OSError) as exc:
            print(f"gunpy: error: {exc}", file=sys.stderr)
            return 2
    if argv and argv[0] == "dist":
        return _dist_main(argv[1:])
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if getattr(args, "repeat", 1) < 1:
        parser.error("--repeat must be at least 1")
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("gunpy: interrupted", file=sys.stderr)
        return 130
    except (CliError, ValueError, IndexError, TypeError, FileNotFoundError, MemoryError,
            RuntimeError, OSError, EOFError, OverflowError) as exc:
        if args.debug:
            raise
        # one short line: the first line of the message, cut at 300 characters
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, MemoryError):
            msg = f"out of memory ({msg})"
        if len(msg) > 300:
            msg = msg[:300] + "..."
        print(f"gunpy: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
