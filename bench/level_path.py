"""What one unfused BFS level costs the host, and the code it passes through.

    python bench/level_path.py [--vertices 4000] [--load-balance thread_mapped]

A BFS on a path graph runs one level per vertex, each with a frontier of one
vertex, so the time per level is almost all host work: the Python layers
between the Enactor and the kernels, and the kernels' own dispatch. Printed:

* host time per level (CPU backend, explicit load balance, so no level is fused),
  the best of several runs, wall and process CPU time;
* the floor under it: the same level's numba kernels called directly with the
  arguments the framework passed them (what a level would cost with no Python
  layer at all);
* the path of one level: the Python calls made (C functions and numba kernels
  count as the call that made them), the files they live in, and how many times
  the path comes back to a file it had left for another (not counting returns
  to the caller).
"""

import argparse
import os
import sys
import time


def level_time(G, load_balance, runs):
    import gunpy
    best_wall = best_cpu = float("inf")
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        r = gunpy.bfs(G, 0, backend="cpu", direction="push", load_balance=load_balance)
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    levels = r.stats.iterations
    return best_wall / levels * 1e6, best_cpu / levels * 1e6, levels


def kernel_calls(G, load_balance):
    """``[(dispatcher, args)]``: every numba kernel call of one run, with its arguments."""
    import gunpy
    from numba.core.registry import CPUDispatcher
    calls = []
    orig = CPUDispatcher.__call__

    def spy(self, *args, **kwargs):
        calls.append((self, args))
        return orig(self, *args, **kwargs)
    CPUDispatcher.__call__ = spy
    try:
        gunpy.bfs(G, 0, backend="cpu", direction="push", load_balance=load_balance)
    finally:
        CPUDispatcher.__call__ = orig
    return calls


def level_path(G, load_balance):
    """``(calls, files, reentries)`` of the third level's ``loop()``: the Python functions
    called (``file:function``), the files in order of first entry, and the calls that
    enter a file the path had already left (other than returning to a caller)."""
    import gunpy
    from gunpy.primitives.bfs import BFSEnactor
    root = os.path.dirname(os.path.dirname(os.path.abspath(gunpy.__file__)))
    trace, stack = [], []
    files, reentries = [], 0
    loop = BFSEnactor.loop

    def hook(frame, event, arg):
        nonlocal reentries
        if event == "call":
            f = os.path.relpath(frame.f_code.co_filename, root)
            caller = stack[-1] if stack else None
            if f != caller and f in files:
                reentries += 1
            if f not in files:
                files.append(f)
            stack.append(f)
            trace.append(f"{f}:{frame.f_code.co_name}")
        elif event == "return":
            stack.pop()
            if not stack:
                sys.setprofile(None)

    level = {"n": 0}

    def traced(self, frontier):
        level["n"] += 1
        if level["n"] != 3:
            return loop(self, frontier)
        sys.setprofile(hook)
        return loop(self, frontier)
    BFSEnactor.loop = traced
    try:
        gunpy.bfs(G, 0, backend="cpu", direction="push", load_balance=load_balance)
    finally:
        BFSEnactor.loop = loop
        sys.setprofile(None)
    return trace, files, reentries


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vertices", type=int, default=4000)
    p.add_argument("--load-balance", default="thread_mapped")
    p.add_argument("--runs", type=int, default=10)
    a = p.parse_args(argv)
    import gunpy
    G = gunpy.generators.path(a.vertices)
    gunpy.bfs(G, 0, backend="cpu", direction="push", load_balance=a.load_balance)
    wall, cpu, levels = level_time(G, a.load_balance, a.runs)
    print(f"host time per level: {wall:.1f} us wall, {cpu:.1f} us CPU ({levels} levels, "
          f"best of {a.runs}, load_balance={a.load_balance})")
    calls = kernel_calls(G, a.load_balance)
    per_level = len(calls) / levels
    t = time.perf_counter()
    for disp, args in calls:
        disp(*args)
    floor = (time.perf_counter() - t) / levels * 1e6
    print(f"kernel floor: {floor:.1f} us per level ({per_level:.1f} numba calls a level, "
          "called directly with the same arguments)")
    trace, files, reentries = level_path(G, a.load_balance)
    print(f"one level: {len(trace)} Python calls in {len(files)} files, {reentries} of "
          "them into a file the path had left:")
    for f in files:
        print(f"  {f}")


if __name__ == "__main__":
    main()
