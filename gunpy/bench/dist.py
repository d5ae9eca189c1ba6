"""gunpy dist bench: weak scaling of the distributed BFS, measured the Graph500 way.

Every rank holds ``2**S`` vertices of a Graph500 Kronecker graph (edge factor
16), so ``P`` ranks traverse a graph of scale ``S + log2 P``; with perfect
weak scaling the TEPS grow as ``P`` (efficiency ``TEPS(P) / (P * TEPS(1))``
stays 1). The hybrid-BFS paper measured this way (Hiragushi and Takahashi,
section 5.2: ``2**21`` vertices per process, 117.5 GTEPS on 1,024 GPUs).

Two layers:

:func:`run_rank`
    the SPMD side, inside one MPI job: generate, pick the roots, time a BFS
    from each, validate, and return the measurements on rank 0.
:func:`weak_scaling`
    launches one MPI job per rank count (``mpiexec -n P python -m mpi4py -m
    gunpy.bench.dist ...``), collects their results and adds TEPS per rank and
    the efficiency; :func:`markdown` renders them (:mod:`gunpy.bench.dist_report`).

    gunpy dist bench --scale-per-rank 16 --roots 64 --ranks 1,2,4     # launches the jobs
    mpiexec -n 4 gunpy dist bench --scale-per-rank 16 --roots 64      # one size, in this job
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from gunpy.bench.dist_report import PAPER, add_efficiency, markdown  # noqa: F401
from gunpy.bench.machine import cores as _cores, machine_info
from gunpy.dist.comm import Comm

__all__ = ["run_rank", "weak_scaling", "add_efficiency", "markdown", "PAPER", "graph500_roots",
           "threads_per_rank", "main"]


# ----------------------------------------------------------------------------- SPMD side
class _LevelClock(Comm):
    """A Comm that also notes when each BFS level ends.

    The distributed BFS takes its counters once before its barrier, once at
    the end of every level and once after its last reductions, so the times of
    those calls delimit the levels; the level's wall time minus its ``comm_ms``
    is the rank's compute time for it.
    """

    def __init__(self, comm=None):
        super().__init__(comm)
        self.marks = []

    def take_counters(self):
        self.marks.append(("take", time.perf_counter()))
        return super().take_counters()

    def barrier(self):
        super().barrier()
        self.marks.append(("barrier", time.perf_counter()))


def graph500_roots(dgraph, count, seed):
    """``count`` distinct random vertices with at least one edge, the same on every rank.

    Graph500's rule: sample vertices uniformly, skip those of degree 0 and
    repeats. Every rank draws the same candidates from one seeded stream;
    their degrees are summed over the ranks (each knows its own vertices').
    """
    dg, comm = dgraph, dgraph.comm
    count = min(int(count), int(comm.allreduce(int(np.count_nonzero(dg.out_degrees)))))
    rng = np.random.default_rng([seed, 3])
    roots, seen = [], set()
    while len(roots) < count:
        batch = rng.integers(0, dg.num_vertices, size=max(4 * count, 64))
        mine = (batch >= dg.lo) & (batch < dg.hi)
        deg = np.zeros(batch.shape[0], dtype=np.int64)
        deg[mine] = dg.out_degrees[batch[mine] - dg.lo]
        deg = comm.allreduce(deg)
        for v, d in zip(batch.tolist(), deg.tolist()):
            if d > 0 and v not in seen and len(roots) < count:
                seen.add(v)
                roots.append(v)
    return roots


def _level_split(marks, per_iteration):
    """This rank's wall and compute ms of each level of the BFS whose counter marks are given.

    ``None`` when the marks do not have the expected shape (one before the
    run, one per level, one after), e.g. if the BFS changed how it counts.
    """
    k = len(per_iteration)
    if all("ms" in it for it in per_iteration):  # the BFS times its levels itself
        wall = np.array([it["ms"] for it in per_iteration], dtype=np.float64)
    else:
        takes = [t for kind, t in marks if kind == "take"]
        if len(takes) != k + 2:
            return None
        # level 0 starts when the BFS's barrier returns, not at its first counter reset
        first = max([t for kind, t in marks if kind == "barrier" and t < takes[1]] or [takes[0]])
        wall = np.diff(np.array([first] + takes[1:k + 1])) * 1e3
    comm = np.array([it["comm_ms"] for it in per_iteration], dtype=np.float64)
    return wall, np.maximum(wall - comm, 0.0), comm


def run_rank(scale_per_rank, roots=64, *, edgefactor=16, seed=1, direction="auto",
             backend="cpu", validate=4, comm=None):
    """Weak-scaling BFS measurements of this MPI job (collective; SPMD).

    Parameters
    ----------
    scale_per_rank : int
        Each rank holds ``2**scale_per_rank`` vertices (the graph's scale is
        ``scale_per_rank + log2 P``; ``P`` must be a power of two).
    roots : int, default 64
        BFS roots (Graph500: 64 random vertices with an edge).
    edgefactor : int, default 16
    seed : int, default 1
        Seeds the generator and the choice of roots.
    direction : {"auto", "push", "pull"}, default "auto"
    backend : {"cpu", "cuda"}, default "cpu"
        ``"cuda"``: each rank first selects a GPU by its node-local rank
        (:func:`gunpy.dist.comm.select_device`).
    validate : int, default 4
        Check the BFS trees of the first ``validate`` roots with
        :func:`gunpy.dist.check_bfs_tree` (outside the timed region).
    comm : mpi4py communicator, optional
        Default ``MPI.COMM_WORLD``.

    Returns
    -------
    dict or None
        On rank 0 (None elsewhere), JSON-able: ``ranks``, ``scale``,
        ``vertices``, ``edges`` (undirected), per-root ``times_ms`` (wall time
        of each ``gunpy.dist.bfs`` call after a barrier, slowest rank),
        ``teps`` (Graph500: input edges of the traversed component per
        second), ``hmean_teps``, ``median_teps``, ``comm_share`` (time in
        collectives over wall time, all ranks and roots), ``levels`` (the first
        root's levels: wall, compute and comm ms, bytes), ``generate_s``.

    Raises
    ------
    AssertionError
        On every rank, when a validated BFS tree fails a Graph500 check.

    See Also
    --------
    weak_scaling : launches this for several rank counts.
    gunpy.bench : the single-device suite (same TEPS definition).
    """
    import numba

    import gunpy.dist as gd
    from gunpy import _jitcache
    from gunpy.bench.machine import harmonic as _harmonic
    from gunpy.dist.comm import select_device

    clock = _LevelClock(comm)
    # one GPU a rank, by node-local rank; the ranks' choices go in the report
    devices = clock.allgather(select_device(clock)) if backend == "cuda" else None
    t0 = time.perf_counter()
    dg = gd.DistGraph.rmat(scale_per_rank, edgefactor, seed=seed, comm=clock)
    generate_s = clock.allreduce(time.perf_counter() - t0, op="max")
    chosen = graph500_roots(dg, roots, seed)
    if not chosen:
        raise ValueError("the generated graph has no edges")

    t0 = time.perf_counter()
    _warm_up(dg, chosen, direction, backend)
    warmup_s = clock.allreduce(time.perf_counter() - t0, op="max")
    loads = _jitcache.counters["hits"] + _jitcache.counters["misses"]

    timed = _time_roots(clock, dg, chosen, direction, backend, validate)
    # kernels compiled or loaded inside the timed calls: each costs ms to s (should be 0)
    late_loads = clock.allreduce(_jitcache.counters["hits"] + _jitcache.counters["misses"] - loads)
    if clock.rank != 0:
        return None
    times, teps = timed["times_ms"], timed["teps"]
    return {
        "ranks": clock.size, "scale": dg.scale, "scale_per_rank": int(scale_per_rank),
        "edgefactor": int(edgefactor), "seed": int(seed), "direction": direction,
        "backend": backend, "threads_per_rank": numba.get_num_threads(),
        "vertices": dg.num_vertices, "edges": dg.num_edges // (1 if dg.directed else 2),
        "roots": chosen, "times_ms": times, "elapsed_ms": timed["elapsed_ms"],
        "component_edges": timed["component_edges"],
        "teps": teps, "hmean_teps": _harmonic(teps), "median_teps": statistics.median(teps),
        "median_ms": statistics.median(times),
        "comm_share": timed["comm_share"], "compute_imbalance": timed["compute_imbalance"],
        "levels": timed["levels"], "validated": min(int(validate), len(chosen)),
        "kernel_loads_timed": int(late_loads),
        "generate_s": generate_s, "warmup_s": warmup_s, "devices": devices,
        "machine": machine_info(backend, mpi=True, bandwidth=False),
    }


def _time_roots(clock, dg, roots, direction, backend, validate):
    """A BFS from each root after a barrier, timed on the slowest rank (collective).

    Returns the per-root lists of run_rank's report (``times_ms``, ``teps``,
    ``component_edges``, ``elapsed_ms``), the first root's ``levels``, the
    ``comm_share`` (time in collectives over wall time, all ranks and roots)
    and the ``compute_imbalance`` (compute of the busiest rank over the
    average: 1 is a perfect balance).
    """
    import gunpy.dist as gd

    times, teps, comps, inner, levels = [], [], [], [], None
    rank_comm_ms = rank_wall_ms = 0.0
    for i, root in enumerate(roots):
        clock.barrier()
        clock.marks = []
        t0 = time.perf_counter()
        r = gd.bfs(dg, root, direction=direction, backend=backend)
        mine = time.perf_counter() - t0
        split = _level_split(clock.marks, r.stats.per_iteration)
        rank_comm_ms += sum(it["comm_ms"] for it in r.stats.per_iteration)
        rank_wall_ms += mine * 1e3
        # Graph500 v2: the input edges of the traversed component, each undirected edge once
        m = int(clock.allreduce(int(dg.out_degrees[r.depth >= 0].sum())))
        m = m if dg.directed else m // 2
        wall = clock.allreduce(mine, op="max")
        times.append(wall * 1e3)
        teps.append(m / wall)
        comps.append(m)
        inner.append(r.stats.elapsed_ms)
        if i == 0:
            levels = _levels_table(clock, r.stats.per_iteration, split)
        if i < validate:
            gd.check_bfs_tree(dg, root, r.depth, r.parent)
    comm_total, wall_total = clock.allreduce(np.array([rank_comm_ms, rank_wall_ms]))
    compute = rank_wall_ms - rank_comm_ms
    compute_max, compute_sum = clock.allreduce(compute, op="max"), clock.allreduce(compute)
    return {"times_ms": times, "teps": teps, "component_edges": comps, "elapsed_ms": inner,
            "levels": levels,
            "comm_share": comm_total / wall_total if wall_total > 0 else float("nan"),
            "compute_imbalance": (compute_max * clock.size / compute_sum if compute_sum > 0
                                  else 1.0)}


def _warm_up(dg, roots, direction, backend, *, quiet_runs=4):
    """Compile or load, untimed, the kernels the timed runs will need (collective).

    Which kernels a BFS needs depends on its frontiers (the strategy push
    ``auto`` picks, a thin frontier's serial build, a pull level or not), so
    one run is not enough: first a push with each strategy push ``auto``
    chooses from (every frontier size of a giant-component search: the thin
    serial build and the parallel one) and, unless pushing only, a pull; then
    roots in turn until ``quiet_runs`` runs in a row loaded no kernel on any
    rank (at most one run per root).
    """
    import gunpy.dist as gd
    from gunpy import _jitcache

    def loads():
        return _jitcache.counters["hits"] + _jitcache.counters["misses"]

    if direction in ("auto", "push"):
        for strategy in ("thread_mapped", "merge_path"):  # what advance.choose picks from
            gd.bfs(dg, roots[0], direction="push", load_balance=strategy, backend=backend)
    if direction in ("auto", "pull"):
        gd.bfs(dg, roots[0], direction="pull", backend=backend)
    quiet = 0
    for root in roots:
        before = loads()
        gd.bfs(dg, root, direction=direction, backend=backend)
        quiet = 0 if dg.comm.allreduce(loads() - before) else quiet + 1
        if quiet >= quiet_runs:
            break


def _levels_table(comm, per_iteration, split):
    """The first root's levels, reduced over the ranks (collective).

    ``edges``: the edges the level's advances visited or examined, all ranks.
    """
    k = len(per_iteration)
    if split is None:
        wall = compute = np.full(k, np.nan)
        comm_ms = np.array([it["comm_ms"] for it in per_iteration], dtype=np.float64)
    else:
        wall, compute, comm_ms = split
    if k:
        wall_max = comm.allreduce(wall, op="max")
        compute_sum = comm.allreduce(compute)
        compute_max = comm.allreduce(compute, op="max")
        comm_sum = comm.allreduce(comm_ms)
        nbytes = comm.allreduce(np.array([it["bytes_sent"] for it in per_iteration]))
        edges = comm.allreduce(np.array([it["edges"] for it in per_iteration]))
    rows = []
    for i, it in enumerate(per_iteration):
        rows.append({"level": it["iteration"], "direction": it["direction"],
                     "frontier": it["frontier"], "edges": int(edges[i]),
                     "ms": float(wall_max[i]),
                     "compute_ms": float(compute_sum[i]) / comm.size,
                     "compute_max_ms": float(compute_max[i]),
                     "comm_ms": float(comm_sum[i]) / comm.size, "bytes": int(nbytes[i])})
    return rows


# ----------------------------------------------------------------------------- launcher
def threads_per_rank(ranks, cores=None):
    """Numba threads a rank gets: the cores shared by the largest job, at least one.

    The same for every rank count, so that each rank has the same resources
    at every size (weak scaling); a 1-rank job using every core would make
    the baseline a different machine.
    """
    return max(1, (cores or _cores()) // max(ranks))


def mpiexec():
    """The ``mpiexec`` next to the interpreter (the mpich wheel's), else the one on PATH."""
    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(exe):
        return exe
    exe = shutil.which("mpiexec")
    if not exe:
        raise RuntimeError("no mpiexec next to the interpreter or on PATH "
                           "(pip install gunpy[mpi] brings one)")
    return exe


def _check_ranks(ranks):
    ranks = sorted({int(p) for p in ranks})
    bad = [p for p in ranks if p < 1 or p & (p - 1)]
    if not ranks or bad:
        raise ValueError(f"rank counts must be powers of two (DistGraph.rmat), got {bad or ranks}")
    return ranks


def weak_scaling(ranks=(1, 2, 4), scale_per_rank=16, roots=64, *, edgefactor=16, seed=1,
                 direction="auto", backend="cpu", validate=4, threads=None, timeout=None,
                 progress=True):
    """Run :func:`run_rank` in one MPI job per rank count; return their results with efficiency.

    Parameters
    ----------
    ranks : sequence of int, default (1, 2, 4)
        Rank counts (powers of two); include 1 for the efficiency column.
    scale_per_rank, roots, edgefactor, seed, direction, backend, validate
        As :func:`run_rank`.
    threads : int, optional
        ``NUMBA_NUM_THREADS`` of every rank. Default: the environment's
        ``NUMBA_NUM_THREADS`` if set, else :func:`threads_per_rank`.
    timeout : float, optional
        Seconds each job may run.
    progress : bool, default True
        A progress bar and one line per job on stderr.

    Returns
    -------
    dict
        ``{"runs": [run_rank's dict per rank count, plus "teps_per_rank" and
        "efficiency"], "launch": {...}}``.

    Raises
    ------
    RuntimeError
        No mpiexec, or a job failed (its output's tail goes to stderr).
    ValueError
        A rank count that is not a power of two.

    Notes
    -----
    Ranks that outnumber the cores wait in MPICH with
    ``MPIR_CVAR_ENABLE_HEAVY_YIELD=1`` (yield instead of spinning), unless
    the environment sets it.
    """
    from tqdm.auto import tqdm

    ranks = _check_ranks(ranks)
    exe = mpiexec()
    cores = _cores()
    if threads is None:
        threads = int(os.environ.get("NUMBA_NUM_THREADS") or threads_per_rank(ranks, cores))
    root_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    runs = []
    with tempfile.TemporaryDirectory(prefix="gunpy-dist-bench-") as tmp, \
            tqdm(total=len(ranks), desc="ranks", unit="job", disable=not progress,
                 file=sys.stderr) as bar:
        for p in ranks:
            out = os.path.join(tmp, f"ranks{p}.json")
            env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
            env["PYTHONPATH"] = os.pathsep.join(x for x in (root_dir, env.get("PYTHONPATH"))
                                                if x)
            if p * threads > cores:
                env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
            cmd = [exe, "-n", str(p), sys.executable, "-m", "mpi4py", "-m", "gunpy.bench.dist",
                   "--scale-per-rank", str(scale_per_rank), "--roots", str(roots),
                   "--edgefactor", str(edgefactor), "--seed", str(seed),
                   "--direction", direction, "--backend", backend,
                   "--validate", str(validate), "--json", out]
            bar.set_description(f"{p} rank{'s' if p > 1 else ''}")
            t0 = time.perf_counter()
            try:
                job = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                     timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                raise RuntimeError(f"mpiexec -n {p} ran past {timeout} s") from exc
            if job.returncode != 0 or not os.path.exists(out):
                tail = (job.stdout + job.stderr).strip()[-4000:]
                sys.stderr.write(tail + "\n")
                raise RuntimeError(f"mpiexec -n {p} failed (exit status {job.returncode}): "
                                   f"{_last_line(tail)}")
            with open(out) as f:
                run = json.load(f)
            run["job_s"] = time.perf_counter() - t0
            runs.append(run)
            bar.update(1)
            if progress:
                tqdm.write(f"{p} rank{'s' if p > 1 else ''}: scale {run['scale']}, "
                           f"{run['hmean_teps'] / 1e6:,.1f} MTEPS (hmean), "
                           f"job {run['job_s']:.0f} s", file=sys.stderr)
    add_efficiency(runs)
    return {"runs": runs, "launch": {"mpiexec": exe, "cores": cores, "threads_per_rank": threads,
                                     "heavy_yield": os.environ.get(
                                         "MPIR_CVAR_ENABLE_HEAVY_YIELD", "1 when oversubscribed")}}


def _last_line(text):
    lines = [x for x in text.splitlines() if x.strip()]
    return lines[-1].strip() if lines else "no output"


# ----------------------------------------------------------------------------- command line
def add_arguments(p, *, launcher=True):
    """The options of ``gunpy dist bench`` (``launcher=False``: those of one SPMD job)."""
    p.add_argument("--scale-per-rank", type=int, default=16, metavar="S",
                   help="2**S vertices per rank (default 16)")
    p.add_argument("--roots", type=int, default=64, help="BFS roots (Graph500: 64)")
    if launcher:
        p.add_argument("--ranks",
                       help="rank counts to launch, powers of two (default 1,2,4); ignored "
                            "inside an MPI job, which measures its own size")
        p.add_argument("--threads", type=int,
                       help="NUMBA_NUM_THREADS of every rank (default: $NUMBA_NUM_THREADS, "
                            "else cores // the largest rank count)")
        p.add_argument("--timeout", type=float, help="seconds each job may run")
        p.add_argument("--out", metavar="FILE.md", help="also write the Markdown report here")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--edgefactor", type=int, default=16)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--direction", default="auto", choices=("auto", "push", "pull"))
    p.add_argument("--backend", default="cpu", choices=("cpu", "cuda"),
                   help="cuda: one rank per GPU (by node-local rank)")
    p.add_argument("--validate", type=int, default=4, metavar="N",
                   help="check the BFS trees of the first N roots (default 4; 0: none)")
    p.add_argument("--json", metavar="FILE", help="write the measurements as JSON")
    return p


def _spmd(args, stream=sys.stdout):
    """Measure this MPI job's size; rank 0 writes the JSON and prints the report."""
    res = run_rank(args.scale_per_rank, args.roots, edgefactor=args.edgefactor, seed=args.seed,
                   direction=args.direction, backend=args.backend, validate=args.validate)
    if res is None:
        return 0
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    if stream is not None:
        stream.write(markdown([res]))
        stream.flush()
    if getattr(args, "out", None):
        with open(args.out, "w") as f:
            f.write(markdown([res]))
    return 0


def cli(args, *, in_mpi_job):
    """``gunpy dist bench`` with parsed ``args``: launch the jobs, or measure this one."""
    if in_mpi_job:
        return _spmd(args)
    ranks = [int(x) for x in (args.ranks or "1,2,4").split(",") if x.strip()]
    report = weak_scaling(ranks,
                          args.scale_per_rank, args.roots, edgefactor=args.edgefactor,
                          seed=args.seed, direction=args.direction, backend=args.backend,
                          validate=args.validate, threads=args.threads, timeout=args.timeout,
                          progress=not args.quiet)
    md = markdown(report["runs"])
    print(md, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


def main(argv=None):
    """``python -m mpi4py -m gunpy.bench.dist``: one SPMD job (what weak_scaling launches)."""
    p = add_arguments(argparse.ArgumentParser(prog="python -m gunpy.bench.dist",
                                              description=__doc__.split("\n\n")[0]),
                      launcher=False)
    args = p.parse_args(argv)
    # the launcher reads the JSON; a report on stdout would only be captured and dropped
    return _spmd(args, stream=None if args.json else sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
