"""What the first call on a new Graph costs beside later calls on it.

    python bench/first_call.py [--scale 18] [--fresh 3] [--warm 3] [--backend cpu]

Kernels are compiled first (a call on another Graph object), so a "fresh" time is
the structures a primitive derives from a new graph (the reverse view for pull, the
backend's copy of the arrays) plus the run, not the graph's construction; "warm" is the best later call on the same
object. Printed per graph (RMAT, undirected and directed) and primitive: the median
fresh time, the warm time and their ratio.
"""

import argparse
import statistics
import time

PRIMITIVES = {
    "BFS": lambda gunpy, G, backend: gunpy.bfs(G, 0, backend=backend),
    "SSSP": lambda gunpy, G, backend: gunpy.sssp(G, 0, backend=backend),
    "CC": lambda gunpy, G, backend: gunpy.cc(G, backend=backend),
    "PageRank": lambda gunpy, G, backend: gunpy.pagerank(G, backend=backend),
    "BC (4 sources)": lambda gunpy, G, backend: gunpy.bc(G, sources=[0, 1, 2, 3],
                                                          backend=backend),
}


def fresh_and_warm(make, call, fresh, warm):
    """``(median fresh seconds, best warm seconds)`` of ``call(G)`` over ``fresh`` new graphs."""
    call(make())  # compile
    firsts, later = [], []
    for _ in range(fresh):
        G = make()
        t = time.perf_counter()
        call(G)
        firsts.append(time.perf_counter() - t)
        for _ in range(warm):
            t = time.perf_counter()
            call(G)
            later.append(time.perf_counter() - t)
    return statistics.median(firsts), min(later)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, default=18)
    p.add_argument("--fresh", type=int, default=3)
    p.add_argument("--warm", type=int, default=3)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--only", default=None, help="comma-separated primitive names")
    a = p.parse_args(argv)
    import gunpy
    only = a.only.split(",") if a.only else list(PRIMITIVES)
    print("| graph | primitive | fresh | warm | ratio |")
    print("|---|---|---|---|---|")
    for directed in (False, True):
        def make():  # a new Graph object each time (the generator is deterministic)
            return gunpy.generators.rmat(a.scale, seed=1, directed=directed)
        for name in only:
            call = PRIMITIVES[name]
            f, w = fresh_and_warm(make, lambda G: call(gunpy, G, a.backend), a.fresh, a.warm)
            print(f"| {'directed' if directed else 'undirected'} | {name} | {f * 1e3:.1f} ms | "
                  f"{w * 1e3:.1f} ms | {f / w:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
