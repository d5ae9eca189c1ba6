"""What the CPU comparison scripts here share: options, interleaved rounds, the table.

``catalogue.py``, ``road.py``, ``ldbc.py`` and ``louvain.py`` time gunpy and its
peers in one process: ``--graphs`` and ``--reps`` (:func:`parser`), OpenMP's wait
policy set to PASSIVE first as ``gunpy bench`` does (:func:`parse`), rounds that
call every library once each, in turn, so that a slow patch of a shared machine
falls on all of them (:func:`rounds`), and each graph's table of medians
(:func:`report`). ``python bench/road.py`` puts this folder first on ``sys.path``,
so the scripts import this module by its name.
"""

import argparse
import statistics

from gunpy.bench.timing import wall


def parser(doc, graphs, reps):
    """An ArgumentParser described by ``doc``'s first line, with ``--graphs`` (names joined
    by commas, default ``graphs``), ``--reps`` (default ``reps``) and ``--keep-wait-policy``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--graphs", default=graphs)
    ap.add_argument("--reps", type=int, default=reps)
    ap.add_argument("--keep-wait-policy", action="store_true",
                    help="leave libgomp's spinning wait policy as it is")
    return ap


def parse(ap, argv=None):
    """``ap``'s arguments from ``argv``; OpenMP's wait policy is set to PASSIVE first
    (:mod:`gunpy.backends.threads`) unless ``--keep-wait-policy`` or the environment says
    otherwise."""
    args = ap.parse_args(argv)
    if not args.keep_wait_policy:
        from gunpy.backends import threads
        threads.configure()  # before any parallel region or peer's OpenMP runtime starts
    return args


def rounds(calls, inputs, on_output=None):
    """``{key: [ms, ...]}`` from ``calls`` (``{key: fn}``): a round for each argument tuple
    of ``inputs``, in which every ``fn(*args)`` runs once, in turn, by wall time.

    ``on_output(key, output)`` sees each call's output once its timer has stopped.
    """
    times = {key: [] for key in calls}
    for args in inputs:
        for key, fn in calls.items():
            ms, out = wall(fn, *args)
            times[key].append(ms)
            if on_output is not None:
                on_output(key, out)
    return times


def report(name, G, times, kinds, width=9, out=None):
    """``name``'s table: a row for each of ``kinds`` that ran (``times``: ``{(kind, library):
    [ms, ...]}``), each library's median [min-max] in ms, then, where gunpy and a peer
    both ran, gunpy's median over the fastest peer's (>1: gunpy is faster); on ``out``
    (default ``sys.stdout``)."""
    print(f"\n{name}: {G.num_vertices:,} vertices, {G.num_edges:,} edges "
          "(ms per call: median [min-max])", file=out)
    for kind in kinds:
        rows = {lib: ts for (k, lib), ts in times.items() if k == kind}
        if not rows:
            continue
        med = {lib: statistics.median(ts) for lib, ts in rows.items()}
        best = min((lib for lib in rows if lib != "gunpy"), key=med.get, default=None)
        cells = "  ".join(f"{lib} {med[lib]:.2f} [{min(ts):.2f}-{max(ts):.2f}]"
                          for lib, ts in rows.items())
        ratio = (f"  gunpy x{med[best] / med['gunpy']:.2f} of {best}"
                 if best and "gunpy" in med else "")
        print(f"  {kind:{width}s} {cells}{ratio}", file=out)
