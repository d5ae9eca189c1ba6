"""A/B timing of two gunpy checkouts in alternating processes, with the A/A noise beside it.

    python bench/ab.py --a /tmp/before/.venv/bin/python --b .venv/bin/python \
        --processes 3 --out bench/results/ab.md

Each side runs ``--processes`` fresh processes, alternating A, B, B, A, ... so that a
slow patch of the machine falls on both; each process loads the graphs, warms every
call up once (compiling or loading its kernels) and times it ``--reps`` times (the
median is kept). The report gives, per call, each side's median over its processes,
B/A, and the A/A and B/B spreads (slowest over fastest process of the same build):
a B/A inside those spreads is noise.

Only the public API both builds share is called (``gunpy.bfs``, ``sssp``, ``cc``,
``pagerank``, ``bc``, ``generators.rmat``, ``datasets.load``), on the CPU backend.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WORKER = r"""
import json, sys, time
import numpy as np
import gunpy
from gunpy import datasets, generators
reps = int(sys.argv[1])
cases = json.loads(sys.argv[2])
graphs = {}
def graph(name):
    if name not in graphs:
        if name.startswith("rmat"):
            scale, weighted = int(name[4:6]), name.endswith("w")
            graphs[name] = generators.rmat(scale, 16, seed=1, weighted=weighted)
        else:
            graphs[name] = datasets.load(name)
    return graphs[name]
def roots(G, k):
    deg = np.diff(G.row_offsets)
    cand = np.flatnonzero(deg > 0)
    return np.random.default_rng(7).choice(cand, size=k, replace=False).tolist()
def call(case):
    prim, gname, opts = case["primitive"], case["graph"], case.get("options", {})
    G = graph(gname)
    if prim in ("bfs", "sssp"):
        src = roots(G, 1)[0] if gname.startswith("rmat") else 0
        return lambda: getattr(gunpy, prim)(G, src, backend="cpu", **opts)
    if prim == "bc":
        return lambda: gunpy.bc(G, [0], backend="cpu", **opts)
    return lambda: getattr(gunpy, prim)(G, backend="cpu", **opts)
out = {}
for case in cases:
    f = call(case)
    f()  # compile or load the kernels
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    out[case["label"]] = float(np.median(times))
print(json.dumps(out))
"""

CASES = [
    {"label": "BFS rmat18, auto", "primitive": "bfs", "graph": "rmat18"},
    {"label": "BFS rmat18, push", "primitive": "bfs", "graph": "rmat18",
     "options": {"direction": "push"}},
    {"label": "BFS rmat20, auto", "primitive": "bfs", "graph": "rmat20"},
    {"label": "BFS rmat20, push", "primitive": "bfs", "graph": "rmat20",
     "options": {"direction": "push"}},
    {"label": "BFS luxembourg_osm, auto", "primitive": "bfs", "graph": "luxembourg_osm"},
    {"label": "BFS luxembourg_osm, push", "primitive": "bfs", "graph": "luxembourg_osm",
     "options": {"direction": "push"}},
    {"label": "SSSP rmat18 (weighted)", "primitive": "sssp", "graph": "rmat18w"},
    {"label": "SSSP rmat20 (weighted)", "primitive": "sssp", "graph": "rmat20w"},
    {"label": "SSSP luxembourg_osm", "primitive": "sssp", "graph": "luxembourg_osm"},
    {"label": "CC rmat18", "primitive": "cc", "graph": "rmat18"},
    {"label": "CC luxembourg_osm", "primitive": "cc", "graph": "luxembourg_osm"},
    {"label": "PageRank rmat18", "primitive": "pagerank", "graph": "rmat18"},
    {"label": "BC rmat18, 1 source", "primitive": "bc", "graph": "rmat18"},
    {"label": "BC luxembourg_osm, 1 source", "primitive": "bc", "graph": "luxembourg_osm"},
]


def run_side(python, cwd, reps, cases):
    cmd = [python, "-c", WORKER, str(reps), json.dumps(cases)]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONWARNINGS="ignore"))
    if done.returncode:
        sys.exit(f"{python} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(a_runs, b_runs, a_name, b_name):
    rows = [f"| call | {a_name} ms | {b_name} ms | B / A | A/A spread | B/B spread |",
            "|---|---|---|---|---|---|"]
    for label in a_runs[0]:
        a = [r[label] * 1e3 for r in a_runs]
        b = [r[label] * 1e3 for r in b_runs]
        ma, mb = statistics.median(a), statistics.median(b)
        rows.append(f"| {label} | {ma:.3g} | {mb:.3g} | {mb / ma:.3f} | "
                    f"{max(a) / min(a):.3f} | {max(b) / min(b):.3f} |")
    return "\n".join(rows)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", required=True, help="python of build A (run in its checkout)")
    p.add_argument("--b", required=True, help="python of build B")
    p.add_argument("--processes", type=int, default=3)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--only", nargs="*", help="labels (substrings) to keep")
    p.add_argument("--out")
    args = p.parse_args(argv)
    cases = [c for c in CASES if not args.only or any(o in c["label"] for o in args.only)]
    sides = {"A": (args.a, _checkout(args.a)), "B": (args.b, _checkout(args.b))}
    runs = {"A": [], "B": []}
    start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for i in range(args.processes):
        for side in ("AB" if i % 2 == 0 else "BA"):
            runs[side].append(run_side(*sides[side], args.reps, cases))
            print(f"process {i + 1}/{args.processes} {side} done", file=sys.stderr)
    text = (f"A = `{_commit(sides['A'][1])}`, B = `{_commit(sides['B'][1])}`; "
            f"{args.processes} alternating "
            f"processes a side, median of {args.reps} calls each, started {start}.\n\n"
            + report(runs["A"], runs["B"], "A", "B") + "\n")
    print(text)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)
            f.write("\n```json\n" + json.dumps(runs, indent=1) + "\n```\n")


def _commit(checkout):
    done = subprocess.run(["git", "-C", checkout, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", checkout, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return done.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def _checkout(python):
    """The checkout a venv's python belongs to (``<checkout>/.venv/bin/python``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(python))))


if __name__ == "__main__":
    main()
