"""gap: gunpy's CPU kernels beside the GAP Benchmark Suite's, on the same graph bytes.

    python bench/gap.py GAP_DIR [--graphs rmat18,luxembourg_osm] [--kernels bfs,sssp,...]
                        [--trials 8] [--threads 2] [--fresh 3]

GAP_DIR holds GAP's binaries (``bfs``, ``sssp``, ``pr``, ``cc``, ``bc``, ``tc``: built
from https://github.com/sbeamer/gapbs with its Makefile, ``g++ -O3 -fopenmp``); nothing
of GAP is part of gunpy. Each graph is written in GAP's serialized format (``.sg``, and
``.wsg`` with symmetric integer weights 1-255 for SSSP) from gunpy's own CSR, so both
sides read the same bytes. Then, for each kernel, GAP runs ``--trials`` trials (its
"Trial Time" lines: the kernel alone) and gunpy runs the same call ``--trials`` times
after a warm-up, wall per call, both on ``--threads`` threads, each with its own
default OpenMP wait policy (GAP's threads spin; gunpy sets PASSIVE); the table gives the
medians, GAP / gunpy (>= 1: gunpy is level or ahead), gunpy's first call on a new
``Graph`` object (median of ``--fresh``; kernels already compiled) and the cross-check
of the answers GAP prints with ``-a``: BFS and SSSP reached vertices, CC's five largest
components, TC's count, PageRank's top five vertices and BC's top four besides the root
(GAP's BC also scores the source itself; PageRank: GAP drops the rank of vertices
without out-edges, networkx's rule spreads it, so the top vertices may differ where such
vertices exist; said, not hidden).

The same root for every trial (``-r``; gunpy's ``source``): the highest-degree vertex.
SSSP's delta is GAP's ``-d`` and gunpy's ``delta`` (``--delta``, default 2 for RMAT
and 9 for the others); PageRank runs 20 iterations on both (``-i 20 -t 0``; gunpy
``max_iter=20, tol=0``; ``pr32``: the same with ``dtype="float32"``, GAP's own
precision); BC 4 iterations from the root (``-i 4``; gunpy
``sources=[root] * 4``).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

KERNELS = ("bfs", "sssp", "pr", "pr32", "cc", "bc", "tc")
#: the GAP binary each kernel's row runs (``pr32``: gunpy's float32 PageRank beside GAP's
#: ``pr``, whose scores are float32 too)
BINARIES = {"pr32": "pr"}


def load(name):
    """The undirected graph ``name`` (``rmatN`` or a bundled dataset), without self-loops
    or repeated edges (GAP's builder drops them), neighbours sorted."""
    import gunpy
    if name.startswith("rmat"):
        G = gunpy.generators.rmat(int(name[4:]), seed=1)
    else:
        G = gunpy.datasets.load(name)
    ro, ci = G.row_offsets.astype(np.int64), G.column_indices.astype(np.int64)
    src = np.repeat(np.arange(G.num_vertices), np.diff(ro))
    return gunpy.Graph.from_edges(src, ci, num_vertices=G.num_vertices, directed=False,
                                  remove_self_loops=True, remove_duplicates=True)


def weights(G):
    """Integer weights 1-255, the same both ways of an undirected edge (a hash of it)."""
    src = np.repeat(np.arange(G.num_vertices, dtype=np.int64), np.diff(G.row_offsets))
    dst = G.column_indices.astype(np.int64)
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    return (1 + (lo * 2654435761 + hi * 40503) % 255).astype(np.int32)


def write_sg(path, G, w=None):
    """GAP's serialized graph: directed flag, edge and vertex counts (int64), the offsets
    (int64) and the neighbours (int32; with ``w``, (neighbour, weight) int32 pairs)."""
    n, m = G.num_vertices, G.num_edges
    with open(path, "wb") as f:
        f.write(np.array([0], np.uint8).tobytes())  # undirected
        f.write(np.array([m, n], np.int64).tobytes())
        f.write(G.row_offsets.astype(np.int64).tobytes())
        cols = G.column_indices.astype(np.int32)
        if w is None:
            f.write(cols.tobytes())
        else:
            f.write(np.stack([cols, w], axis=1).tobytes())


#: the environment as it was before gunpy set OpenMP's wait policy for itself: GAP runs
#: with its own default (libgomp's threads spin between its many short regions)
_ENVIRON = dict(os.environ)


def run_gap(gap_dir, kernel, path, args, threads):
    """GAP's trial times (seconds) and its printed analysis, from one run."""
    env = dict(_ENVIRON, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([os.path.join(gap_dir, kernel), "-f", path, *args], env=env,
                         capture_output=True, text=True, check=True).stdout
    trials = [float(t) for t in re.findall(r"Trial Time:\s+([0-9.]+)", out)]
    return trials, out


def _top(scores, k=5):
    order = np.lexsort((np.arange(scores.size), -scores))
    return [int(v) for v in order[:k]]


def gunpy_calls(gunpy, root, delta):
    """``{kernel: (call(G, W), what to compare with GAP's printout)}``."""
    return {
        "bfs": (lambda G, W: gunpy.bfs(G, root, backend="cpu"),
                lambda r: int((r.depth >= 0).sum())),
        "sssp": (lambda G, W: gunpy.sssp(W, root, delta=delta, backend="cpu"),
                 lambda r: int(np.isfinite(r.distance).sum())),
        "pr": (lambda G, W: gunpy.pagerank(G, max_iter=20, tol=0, backend="cpu"),
               lambda r: _top(r.rank)),
        "pr32": (lambda G, W: gunpy.pagerank(G, max_iter=20, tol=0, dtype="float32",
                                             backend="cpu"),
                 lambda r: _top(r.rank)),
        "cc": (lambda G, W: gunpy.cc(G, backend="cpu"),
               lambda r: sorted(np.bincount(r.labels).tolist(), reverse=True)[:5]),
        "bc": (lambda G, W: gunpy.bc(G, sources=[root] * 4, backend="cpu"),
               lambda r: [v for v in _top(r.centrality) if v != root][:4]),
        "tc": (lambda G, W: gunpy.triangle_count(G, backend="cpu"), int),
    }


def gap_answer(kernel, out, root):
    """What GAP's ``-a`` printout says, in the form :func:`gunpy_calls` compares."""
    if kernel == "bfs":
        return int(re.search(r"BFS Tree has (\d+) nodes", out).group(1))
    if kernel == "sssp":
        return int(re.search(r"SSSP Tree reaches (\d+) nodes", out).group(1))
    if kernel == "tc":
        return int(re.search(r"(\d+) triangles", out).group(1))
    pairs = [tuple(map(float, p)) for p in re.findall(r"^(\d+):([0-9.e+-]+)$", out, re.M)]
    if kernel == "cc":  # "component id:size"
        return sorted((int(size) for _, size in pairs), reverse=True)[:5]
    top = [int(v) for v, _ in pairs[:5]]
    # GAP's BC adds the source's own dependencies to its score: gunpy, as networkx and
    # Brandes, does not; the other vertices' order is compared
    return [v for v in top if v != root][:4] if kernel == "bc" else top


def plot(rows, path):
    """A bar chart of GAP / gunpy per kernel, a group per graph (log scale; above 1: gunpy
    is faster), from the table's ``(graph, kernel, ratio)`` rows, saved at ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    graphs = list(dict.fromkeys(g for g, _, _ in rows))
    kernels = list(dict.fromkeys(k for _, k, _ in rows))
    ratio = {(g, k): r for g, k, r in rows}
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(graphs)
    for i, g in enumerate(graphs):
        xs = [j + i * width for j, k in enumerate(kernels) if (g, k) in ratio]
        ax.bar(xs, [ratio[g, k] for k in kernels if (g, k) in ratio], width, label=g)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(kernels))], kernels)
    ax.set_ylabel("GAP time / gunpy time")
    ax.set_title("gunpy beside GAP (2 threads; above 1: gunpy is faster)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gap_dir")
    ap.add_argument("--graphs", default="rmat18,luxembourg_osm")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--fresh", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--delta", type=float, default=None)
    ap.add_argument("--plot", help="also save a bar chart of the ratios here (a PNG)")
    a = ap.parse_args(argv)
    from gunpy.backends import threads
    threads.configure()
    import numba

    import gunpy
    numba.set_num_threads(a.threads)
    ratios = []
    print("| graph | kernel | GAP ms | gunpy ms | GAP / gunpy | gunpy fresh ms | answers |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.graphs.split(","):
            G = load(name)
            w = weights(G)
            W = gunpy.Graph(G.row_offsets, G.column_indices, w.astype(np.float64),
                            directed=False)
            sg, wsg = os.path.join(tmp, f"{name}.sg"), os.path.join(tmp, f"{name}.wsg")
            write_sg(sg, G)
            write_sg(wsg, G, w)
            root = int(np.argmax(np.diff(G.row_offsets)))
            delta = a.delta or (2 if name.startswith("rmat") else 9)
            calls = gunpy_calls(gunpy, root, delta)
            for kernel in a.kernels.split(","):
                args = {"bfs": ["-r", str(root)], "sssp": ["-r", str(root), "-d", str(delta)],
                        "pr": ["-i", "20", "-t", "0"], "pr32": ["-i", "20", "-t", "0"],
                        "bc": ["-r", str(root), "-i", "4"],
                        "cc": [], "tc": []}[kernel]
                path = wsg if kernel == "sssp" else sg
                trials, out = run_gap(a.gap_dir, BINARIES.get(kernel, kernel), path,
                                      [*args, "-n", str(a.trials), "-a"], a.threads)
                call, answer = calls[kernel]
                call(G, W)  # compile and warm
                ms = []
                for _ in range(a.trials):
                    t = time.perf_counter()
                    r = call(G, W)
                    ms.append((time.perf_counter() - t) * 1e3)
                fresh = []
                for _ in range(a.fresh):
                    G2 = gunpy.Graph(G.row_offsets.copy(), G.column_indices.copy(),
                                     directed=False)
                    W2 = gunpy.Graph(G2.row_offsets, G2.column_indices, W.values.copy(),
                                     directed=False)
                    t = time.perf_counter()
                    call(G2, W2)
                    fresh.append((time.perf_counter() - t) * 1e3)
                gap_ms, ours = statistics.median(trials) * 1e3, statistics.median(ms)
                want, got = gap_answer(kernel, out, root), answer(r)
                same = "same" if want == got else f"GAP {want}, gunpy {got}"
                print(f"| {name} | {kernel} | {gap_ms:.1f} | {ours:.1f} | "
                      f"{gap_ms / ours:.2f} | {statistics.median(fresh):.1f} | {same} |",
                      flush=True)
                ratios.append((name, kernel, gap_ms / ours))
    if a.plot:
        plot(ratios, a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
