"""Graph construction at memory speed: each step's time, rate and peak memory, beside peers.

    python bench/construction.py --scales 18 20 --reps 3
    python bench/construction.py --scales 18 20 22 --memory --old 7c64063~1 \
        --out bench/results/construction.md

On Graph500 Kronecker edge lists (edge factor 16, seed 1) it times, best of ``--reps``
after a warm-up call (kernels compiled or loaded from the cache):

* ``generate``: the edge tuples (:func:`gunpy.generators.kronecker_edges`' stream, int32);
* ``csr``: CSR from the tuples (a counting sort by row, rows sorted, duplicates and
  self-loops dropped), and ``csr, duplicates kept``;
* ``symmetrise``: the undirected CSR (each tuple stored both ways, deduplicated);
* ``transpose``: CSR to CSC of the directed graph; ``reverse ids``: the undirected
  graph's twin-edge ids (its reverse graph is itself);
* ``rmat``: :func:`gunpy.generators.rmat` end to end.

Peers on the same arrays: SciPy's ``coo -> tocsr`` (duplicates summed, indices sorted)
and ``csr.tocsc()``, and NumPy's ``np.sort`` of one int64 key per edge (the core of any
sort-based build). Rates are input edges per second (tuples; both directions for
``symmetrise``; stored edges for the transposes). ``--memory`` runs each gunpy step in a
fresh process and reports its peak RSS above the process's RSS before the step's inputs
existed, per stored edge, with the final graph's own bytes per edge beside it.
``--old REV`` also runs the generator and builder of git revision ``REV`` (its
``generators.py`` and ``_csr.py``: NumPy generation, the sort-based or serial numba build)
for the speed-up. The threads are numba's (``--threads``, default all).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

STEPS = ["generate", "csr", "csr, duplicates kept", "symmetrise", "transpose",
         "reverse ids", "rmat"]

WORKER = r"""
import json, os, resource, sys, time
import numpy as np
args = json.loads(sys.argv[1])
if args["threads"]:
    import numba
    numba.set_num_threads(args["threads"])
from gunpy import _csr, generators
from gunpy.graph import Graph

scale, reps, step, old = args["scale"], args["reps"], args["step"], args["old"]
n = 1 << scale


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def tuples(s):
    return generators._kronecker(s, 16, 1, 0.57, 0.19, 0.19, True, np.int32)


def old_modules():
    import importlib.util
    mods = {}
    for name in ("_csr", "generators"):
        spec = importlib.util.spec_from_file_location("old" + name, os.path.join(old, name + ".py"))
        mods[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mods[name])
    return mods


def old_rmat(mods, s):
    # the old pipeline: NumPy generation, from_edges' int64 copies and mirrored list, build
    src, dst = mods["generators"].kronecker_edges(s, 16, seed=1)
    src, dst = src.astype(np.int64), dst.astype(np.int64)
    off = src != dst
    src, dst = np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]])
    ro, ci, _ = mods["_csr"].build_csr(src, dst, None, 1 << s, index_dtype=np.int32)
    return Graph(ro, ci, None, directed=False, _trusted=True)


def call(step, s, inputs):
    if step == "generate":
        return tuples(s)
    if step == "rmat":
        return generators.rmat(s, 16, seed=1)
    if step == "old rmat":
        return old_rmat(inputs["old"], s)
    if step == "old transpose":
        ro, ci = inputs["csr"]
        return inputs["old"]["_csr"].transpose_csr(ro, ci, 1 << s)
    src, dst = inputs.get("tuples", (None, None))
    if step == "csr":
        return _csr.build_csr(src, dst, None, 1 << s)
    if step == "csr, duplicates kept":
        return _csr.build_csr(src, dst, None, 1 << s, remove_duplicates=False)
    if step == "symmetrise":
        return _csr.build_csr(src, dst, None, 1 << s, mirror=True)
    if step == "transpose":
        ro, ci = inputs["csr"]
        return _csr.transpose_csr(ro, ci, 1 << s)
    if step == "reverse ids":
        ro, ci = inputs["sym"]
        return _csr.reverse_edge_ids(ro, ci, 1 << s)
    import scipy.sparse as sp
    if step == "scipy tocsr":
        A = sp.coo_array((np.ones(src.shape[0], np.float32), (src, dst)), shape=(1 << s, 1 << s))
        return A.tocsr()
    if step == "scipy tocsc":
        ro, ci = inputs["csr"]
        A = sp.csr_array((np.ones(ci.shape[0], np.float32), ci, ro), shape=(1 << s, 1 << s))
        return A.tocsc()
    if step == "numpy sort":
        return np.sort(inputs["keys"])
    raise ValueError(step)


def prepare(step, s):
    inputs = {}
    if old and step.startswith("old"):
        inputs["old"] = old_modules()
    if step in ("generate", "rmat", "old rmat"):
        return inputs
    src, dst = tuples(s)
    inputs["tuples"] = (src, dst)
    if step in ("transpose", "scipy tocsc", "old transpose"):
        ro, ci, _ = _csr.build_csr(src, dst, None, 1 << s)
        inputs["csr"] = (ro, ci)
        del inputs["tuples"]
    elif step == "reverse ids":
        ro, ci, _ = _csr.build_csr(src, dst, None, 1 << s, mirror=True)
        inputs["sym"] = (ro, ci)
        del inputs["tuples"]
    elif step == "numpy sort":
        key = src.astype(np.int64)
        key *= 1 << s
        key += dst
        inputs["keys"] = key
        del inputs["tuples"]
    return inputs


def size(step, inputs, out, s):
    # (input edges, stored edges of the result)
    if step == "generate":
        return out[0].shape[0], out[0].shape[0]
    if step in ("rmat", "old rmat"):
        return 16 << s, out.num_edges
    if step in ("transpose", "old transpose", "scipy tocsc", "reverse ids"):
        m = (inputs.get("csr") or inputs.get("sym"))[1].shape[0]
        return m, m
    if step == "numpy sort":
        return out.shape[0], out.shape[0]
    m = inputs["tuples"][0].shape[0] * (2 if step == "symmetrise" else 1)
    stored = out.nnz if hasattr(out, "nnz") else out[1].shape[0]
    return m, stored


def graph_bytes(step, out):
    if step in ("rmat", "old rmat"):
        return out.nbytes()
    if isinstance(out, tuple) and len(out) == 3 and out[1] is not None and step != "generate":
        return sum(a.nbytes for a in out if a is not None)
    return None


# warm-up on a smaller graph that takes the same paths (past the NumPy thresholds):
# kernels compiled or loaded before anything is timed or measured
ws = min(scale, 15)
call(step, ws, prepare(step, ws))
base = rss()
inputs = prepare(step, scale)
times = []
out = None
traced = None
if args["memory"]:
    import tracemalloc  # NumPy reports its arrays to tracemalloc: the step's own peak
    tracemalloc.start()
for _ in range(1 if args["memory"] else reps):
    out = None
    if args["memory"]:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
    t = time.perf_counter()
    out = call(step, scale, inputs)
    times.append(time.perf_counter() - t)
    if args["memory"]:
        traced = tracemalloc.get_traced_memory()[1] - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
m_in, stored = size(step, inputs, out, scale)
print(json.dumps({"step": step, "scale": scale, "seconds": min(times), "edges": m_in,
                  "stored": stored, "peak_above_base": peak - base, "step_peak": traced,
                  "graph_bytes": graph_bytes(step, out)}))
"""

PEERS = {"csr": ["scipy tocsr", "numpy sort"], "transpose": ["scipy tocsc"],
         "rmat": [], "generate": [], "symmetrise": [], "csr, duplicates kept": [],
         "reverse ids": []}


def run(step, scale, reps, threads, memory, old):
    arg = json.dumps({"step": step, "scale": scale, "reps": reps, "threads": threads,
                      "memory": memory, "old": old})
    p = subprocess.run([sys.executable, "-c", WORKER, arg], capture_output=True, text=True,
                       cwd=ROOT)
    if p.returncode:
        raise RuntimeError(f"{step} at scale {scale} failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def old_sources(rev):
    folder = tempfile.mkdtemp(prefix="gunpy-old-")
    for name in ("_csr", "generators"):
        text = subprocess.run(["git", "show", f"{rev}:gunpy/{name}.py"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
        with open(os.path.join(folder, name + ".py"), "w") as f:
            f.write(text)
    return folder


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scales", type=int, nargs="+", default=[18, 20])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1,
                    help="run every step this many times, interleaved, each in a new "
                         "process; the best time is kept (a shared machine's quiet moments)")
    ap.add_argument("--threads", type=int, default=0, help="numba threads (0: all)")
    ap.add_argument("--steps", nargs="+", default=STEPS, choices=STEPS)
    ap.add_argument("--memory", action="store_true",
                    help="also each gunpy step alone in a fresh process: peak RSS")
    ap.add_argument("--old", metavar="REV", help="also time git revision REV's rmat")
    ap.add_argument("--out", help="write the markdown report here (and a .json beside it)")
    args = ap.parse_args(argv)
    old = old_sources(args.old) if args.old else None
    best = {}
    for _ in range(args.rounds):
        for scale in args.scales:
            for step in args.steps:
                names = [step] + PEERS[step]
                if old and step in ("rmat", "transpose"):
                    names.append("old " + step)
                for name in names:
                    r = run(name, scale, args.reps, args.threads, False, old)
                    r["of"] = step
                    key = (scale, name)
                    if key not in best:
                        r["peak_above_base"] = r["step_peak"] = None
                        if args.memory and not name.startswith(("scipy", "numpy")):
                            mem = run(name, scale, 1, args.threads, True, old)
                            r["peak_above_base"] = mem["peak_above_base"]
                            r["step_peak"] = mem["step_peak"]
                        best[key] = r
                    elif r["seconds"] < best[key]["seconds"]:
                        best[key]["seconds"] = r["seconds"]
                    print(_line(r), flush=True)
    rows = list(best.values())
    report = _report(rows, args)
    print(report)
    if args.out:
        with open(args.out, "w") as f:
            f.write(report)
        with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
            json.dump(rows, f, indent=1)


def _line(r):
    return (f"scale {r['scale']} {r['step']:<22} {r['seconds']:8.3f} s "
            f"{r['edges'] / r['seconds'] / 1e6:8.1f} M edges/s")


def _report(rows, args):
    import numba
    threads = args.threads or numba.config.NUMBA_NUM_THREADS
    out = [f"Graph construction, {threads} threads, best of {args.reps} calls x "
           f"{args.rounds} rounds (`bench/construction.py`)", "",
           "Peak RSS counts everything above the process before the step's inputs (the "
           "tuples, a CSR) were made; the step's own peak is what NumPy allocated during "
           "the step (tracemalloc), its inputs not counted; both per stored edge of the "
           "result.", "",
           "| scale | step | seconds | M edges/s | x gunpy's time | peak RSS B/edge "
           "| step's own peak B/edge | result B/edge |", "|---|---|---|---|---|---|---|---|"]
    mine = {(r["scale"], r["step"]): r for r in rows}
    for r in rows:
        ref = mine[(r["scale"], r["of"])]
        peak = (f"{r['peak_above_base'] / r['stored']:.1f}" if r["peak_above_base"] else "-")
        own = f"{r['step_peak'] / r['stored']:.1f}" if r["step_peak"] else "-"
        gb = f"{r['graph_bytes'] / r['stored']:.1f}" if r.get("graph_bytes") else "-"
        out.append(f"| {r['scale']} | {r['step']} | {r['seconds']:.3f} | "
                   f"{r['edges'] / r['seconds'] / 1e6:.0f} | "
                   f"{r['seconds'] / ref['seconds']:.2f} | {peak} | {own} | {gb} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
