"""Start-up benchmark: what a user waits for in a new process, cold and warm kernel cache.

``gunpy bench --startup`` measures, each in fresh Python processes:

* ``import gunpy``;
* for every primitive, the first call in a new process on a bundled dataset
  (kernel compilation, or loading from the cache, included) beside the second
  call in the same process (the run itself): their difference is what the
  process paid before its first result;
* the whole ``gunpy run bfs --dataset email-Enron`` command, wall time;

once with an empty kernel cache (``cold``: everything compiles) and once with
the cache the cold run filled (``warm``: a user's every later process). Each
case runs in its own private cache folder (``GUNPY_CACHE_DIR``), so the
machine's own cache is neither used nor touched.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

__all__ = ["run", "markdown"]

# each primitive through its registry entry, from vertex 1 (every vertex has a source there)
_CALL = "gunpy.registry.primitive({name!r}).call(G, 1, backend=B)"

_FIRST_CALL = """
import json, time
t0 = time.perf_counter()
import gunpy
from gunpy import _jitcache
t1 = time.perf_counter()
G = gunpy.datasets.load({dataset!r}, progress=False)
t2 = time.perf_counter()
B = {backend!r}
{call}
t3 = time.perf_counter()
{call}
t4 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "load_s": t2 - t1, "first_s": t3 - t2,
                  "second_s": t4 - t3, "compiled": _jitcache.counters["misses"],
                  "loaded": _jitcache.counters["hits"]}}))
"""


def _env(cache):
    env = dict(os.environ)
    env["GUNPY_CACHE_DIR"] = cache
    env.pop("GUNPY_KERNEL_CACHE", None)
    return env


def _python(code, env):
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"start-up benchmark process failed: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _import_time(env):
    code = ("import json, time; t = time.perf_counter(); import gunpy; "
            "print(json.dumps({'import_s': time.perf_counter() - t}))")
    return _python(code, env)["import_s"]


def _command_time(argv, env):
    t0 = time.perf_counter()
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {out.stderr.strip()[-500:]}")
    return time.perf_counter() - t0


def run(*, dataset="email-Enron", backend="cpu", primitives=None, reps=3, progress=True):
    """Measure; returns a dict of rows (see :func:`markdown`).

    ``primitives``: registered primitives' names (default: every one).
    """
    if primitives is None:
        from gunpy import registry
        primitives = registry.names()
    cli = [sys.executable, "-m", "gunpy.cli", "run", "bfs", "--dataset", dataset, "--backend",
           backend, "-q"]
    steps = [("import", None)] + [("primitive", p) for p in primitives] + [("command", None)]
    bar = None
    if progress:
        try:
            from tqdm import tqdm
            bar = tqdm(total=len(steps) * 2 * reps, desc="start-up", unit="process")
        except ImportError:  # tqdm is a dependency, but never fail a benchmark on a bar
            bar = None
    rows = []
    root = tempfile.mkdtemp(prefix="gunpy-startup-")
    try:
        for kind, name in steps:
            cold, warm = [], []
            for rep in range(reps):
                cache = os.path.join(root, f"{kind}-{name}-{rep}")
                for phase, into in (("cold", cold), ("warm", warm)):
                    env = _env(cache)
                    if kind == "import":
                        into.append({"wall_s": _import_time(env)})
                    elif kind == "command":
                        into.append({"wall_s": _command_time(cli, env)})
                    else:
                        code = _FIRST_CALL.format(dataset=dataset, backend=backend,
                                                  call=_CALL.format(name=name))
                        into.append(_python(code, env))
                    if bar is not None:
                        bar.update(1)
                shutil.rmtree(cache, ignore_errors=True)
            rows.append({"kind": kind, "name": name, "cold": cold, "warm": warm})
    finally:
        if bar is not None:
            bar.close()
        shutil.rmtree(root, ignore_errors=True)
    return {"dataset": dataset, "backend": backend, "reps": reps, "rows": rows}


def _med(samples, key):
    return statistics.median(s[key] for s in samples)


def markdown(result, machine=None):
    """The tables of ``docs/benchmarks.md``'s start-up section."""
    ds, reps = result["dataset"], result["reps"]
    lines = []
    if machine:
        lines.append(f"Machine: {machine}")
        lines.append("")
    lines.append(f"Medians of {reps} fresh processes each; cold: empty kernel cache, warm: the "
                 f"cache the cold process filled. Dataset `{ds}`, backend "
                 f"`{result['backend']}`.")
    lines.append("")
    lines.append("| what | cold | warm |")
    lines.append("|---|---|---|")
    for r in result["rows"]:
        if r["kind"] == "import":
            lines.append(f"| `import gunpy` | {_med(r['cold'], 'wall_s'):.2f} s | "
                         f"{_med(r['warm'], 'wall_s'):.2f} s |")
        elif r["kind"] == "command":
            lines.append(f"| `gunpy run bfs --dataset {ds}` (whole command) | "
                         f"{_med(r['cold'], 'wall_s'):.2f} s | {_med(r['warm'], 'wall_s'):.2f} s |")
    lines.append("")
    lines.append("First call of each primitive in a new process (after `import gunpy` and "
                 "loading the graph), the second call in the same process (the run itself), "
                 "and their difference (compiling, or loading kernels from the cache):")
    lines.append("")
    lines.append("| primitive | cold: first call | cold: overhead | kernels compiled | "
                 "warm: first call | warm: overhead | kernels loaded | run (second call) |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in result["rows"]:
        if r["kind"] != "primitive":
            continue
        c, w = r["cold"], r["warm"]
        run_s = _med(c + w, "second_s")
        lines.append(
            f"| {r['name']} | {_med(c, 'first_s'):.2f} s | {_med(c, 'first_s') - run_s:.2f} s | "
            f"{int(_med(c, 'compiled'))} | {_med(w, 'first_s'):.3f} s | "
            f"{_med(w, 'first_s') - run_s:.3f} s | {int(_med(w, 'loaded'))} | "
            f"{run_s * 1e3:.1f} ms |")
    loads = [s["load_s"] for r in result["rows"] if r["kind"] == "primitive"
             for s in r["cold"] + r["warm"]]
    if loads:
        lines.append("")
        lines.append(f"Loading `{ds}` in those processes: median {statistics.median(loads):.2f} s "
                     f"(no JIT compile on the load path).")
    return "\n".join(lines) + "\n"


def main(args):
    from gunpy.bench.machine import machine_info
    result = run(backend=args.startup_backend, reps=args.startup_reps,
                 progress=not args.quiet)
    os.makedirs(args.out, exist_ok=True)
    info = machine_info(args.startup_backend)
    with open(os.path.join(args.out, "startup.json"), "w") as f:
        json.dump({"machine": info, **result}, f, indent=1, default=str)
    machine = (f"{info.get('cpu', info.get('machine'))}, {info.get('cpu_count')} cores, "
               f"Python {info.get('python')}, numba {info.get('numba')}, "
               f"gunpy {info.get('gunpy')} at {info.get('commit', '?')}, {info.get('date')}")
    md = markdown(result, machine=machine)
    with open(os.path.join(args.out, "startup.md"), "w") as f:
        f.write(md)
    print(md)
    return 0
