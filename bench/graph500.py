"""Graph500 on one machine: generate, build, search from 64 roots, validate every tree.

    python bench/graph500.py [--scale 24] [--roots 64] [--backend cpu] [--seed 1]

Steps, each timed, with the process's peak resident memory after it:

1. kernel 0: ``gunpy.generators.rmat(scale)`` (Kronecker tuples, edge factor 16,
   scrambled labels, then an undirected CSR without self-loops or duplicates);
2. roots: ``--roots`` distinct random vertices with at least one edge (Graph500's rule);
3. kernel 1: ``gunpy.bfs`` from each root, with the harmonic mean of TEPS (each
   undirected edge of the root's component once, Graph500's ``m``);
4. validation: Graph500's five checks of every parent tree
   (:func:`gunpy.testing.check_bfs_tree`).

The graph's bytes per stored edge, and the peak memory per stored edge, let the same
path be sized for a larger scale by arithmetic (printed for scale + 2).
"""

import argparse
import resource
import sys
import time

import numpy as np


def peak_gib():
    """The process's peak resident memory so far, GiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def graph500_roots(G, count, seed):
    """``count`` distinct random vertices with at least one edge (fewer if the graph has
    fewer), drawn from one seeded stream: Graph500's rule."""
    degrees = np.diff(G.row_offsets)
    count = min(int(count), int(np.count_nonzero(degrees)))
    rng = np.random.default_rng([seed, 3])
    roots, seen = [], set()
    while len(roots) < count:
        for v in rng.integers(0, G.num_vertices, size=max(4 * count, 64)).tolist():
            if degrees[v] > 0 and v not in seen and len(roots) < count:
                seen.add(v)
                roots.append(v)
    return roots


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, default=24)
    p.add_argument("--roots", type=int, default=64)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    import gunpy
    from gunpy.progress import bar
    from gunpy.testing import check_bfs_tree

    def step(name, seconds):
        print(f"{name:<34} {seconds:9.2f} s   peak RSS {peak_gib():6.2f} GiB", flush=True)

    gunpy.generators.rmat(6, seed=a.seed)  # compile the generator's kernels (not timed)
    base = peak_gib()  # the interpreter and libraries, before any large graph
    t = time.perf_counter()
    G = gunpy.generators.rmat(a.scale, seed=a.seed)
    step(f"kernel 0: rmat({a.scale}) and CSR", time.perf_counter() - t)
    graph_bytes = G.row_offsets.nbytes + G.column_indices.nbytes
    print(f"graph: {G.num_vertices:,} vertices, {G.num_edges:,} stored edges, "
          f"{graph_bytes / 2**30:.2f} GiB ({graph_bytes / G.num_edges:.2f} bytes per stored "
          f"edge); building it peaked at {(peak_gib() - base) * 2**30 / G.num_edges:.2f} "
          "bytes per stored edge above the process's start")
    t = time.perf_counter()
    roots = graph500_roots(G, a.roots, a.seed)
    step(f"roots: {len(roots)}", time.perf_counter() - t)
    gunpy.bfs(G, roots[0], backend=a.backend)  # compile and warm (not timed)
    teps, search, check = [], 0.0, 0.0
    with bar(len(roots), "BFS + validation", unit="root", enabled=None) as shown:
        for root in roots:
            t = time.perf_counter()
            r = gunpy.bfs(G, root, backend=a.backend)
            elapsed = time.perf_counter() - t
            search += elapsed
            teps.append(r.stats.graph500_edges / elapsed)
            t = time.perf_counter()
            check_bfs_tree(G, root, r.depth, r.parent)
            check += time.perf_counter() - t
            shown.update(1)
    step(f"kernel 1: BFS from {len(roots)} roots", search)
    step("validation: five checks per tree", check)
    hmean = len(teps) / sum(1 / x for x in teps)
    print(f"TEPS: harmonic mean {hmean / 1e6:.1f} M, min {min(teps) / 1e6:.1f} M, "
          f"max {max(teps) / 1e6:.1f} M ({len(teps)} trees validated)")
    per_edge = (peak_gib() - base) * 2**30 / G.num_edges
    bigger = G.num_edges * 4  # two scales up: four times the edges
    print(f"scale {a.scale + 2} by arithmetic: ~{bigger:,} stored edges, peak "
          f"~{base + bigger * per_edge / 2**30:.1f} GiB ({per_edge:.2f} bytes per stored edge "
          f"above the start's {base:.2f} GiB, as in this run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
