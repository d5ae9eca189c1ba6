"""The reports of ``gunpy bench``: the Markdown tables and the plots."""

import math
import os

import numpy as np

from gunpy.bench.peers import PRIMITIVES

__all__ = ["markdown", "plots"]


def _fmt_ms(x):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else (
        f"{x:.3g}" if x < 10 else f"{x:,.0f}")


_TITLES = {"pagerank": "PageRank", "tc": "Triangle counting"}

_METHOD = ("Wall time per call (`time.perf_counter` around the call) for every library, gunpy "
           "included. `alone`: gunpy in a loop with nothing in between, over every root; "
           "`interleaved`: per root (or round), every library once, the order rotated, over the "
           "same roots for all. `own timer`: gunpy's `stats.elapsed_ms` and its share of the wall "
           "time. `vs gunpy`: per root, the peer's wall time over gunpy's interleaved one, median "
           "over roots (above 1: gunpy faster); gunpy's interleaved row gives its median over "
           "its alone median on the same roots.")


def _vs(r):
    if r["library"] != "gunpy":
        return "-" if r.get("vs_gunpy") is None else f"{r['vs_gunpy']:.2f}x"
    return f"({r['vs_alone']:.2f}x alone)" if r.get("vs_alone") else "-"


def _own(r):
    if r.get("own_ms") is None:
        return "-"
    return f"{_fmt_ms(r['own_ms'])} ({100 * r['own_share']:.0f} %)"


def _line(prim, r):
    lib = r["library"] + (f" ({r['note']})" if r.get("note") else "")
    cells = [r["graph"], lib, r.get("mode", "-"), _fmt_ms(r["median_ms"])]
    if prim in ("bfs", "sssp"):
        cells += [_fmt_ms(r.get("max_ms")), str(r["runs"]), _mteps(r.get("hmean_teps")),
                  _mteps(r.get("median_teps"))]
    elif prim == "pagerank":
        cells += [str(r["runs"]), str(r.get("iterations") or "-"),
                  _fmt_ms(r.get("ms_per_iteration"))]
    else:
        cells += [str(r["runs"])]
    return "| " + " | ".join(cells + [_own(r), _vs(r)]) + " |"


def _head(prim):
    head = ["graph", "library", "mode", "wall ms per call (median)"]
    if prim in ("bfs", "sssp"):
        head += ["max ms", "runs", "Graph500 MTEPS (hmean)", "MTEPS (median)"]
    elif prim == "pagerank":
        head += ["runs", "iterations", "own ms/iteration"]
    else:
        head += ["runs"]
    head += ["own timer ms (share)", "vs gunpy (per call)"]
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]


def markdown(rows, info):
    out = ["# gunpy benchmark results", "",
           "| machine | value |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in info.items()]
    graphs = [r for r in rows if r["primitive"] == "graph"]
    out += ["", "## Graphs", "", "| graph | vertices | stored edges | directed | build ms |",
            "|---|---|---|---|---|"]
    out += [f"| {g['graph']} | {g['vertices']:,} | {g['edges']:,} | {g['directed']} | "
            f"{g['build_ms']:,.0f} |" for g in graphs]
    out += ["", _METHOD]
    for prim in dict.fromkeys(list(PRIMITIVES) + [r["primitive"] for r in rows]):
        sel = [r for r in rows if r["primitive"] == prim]
        if prim == "graph" or not sel:
            continue
        out += ["", f"## {_TITLES.get(prim, prim.upper())}", ""] + _head(prim)
        out += [_line(prim, r) for r in sel]
    bfs = [r for r in rows if r["primitive"] == "bfs" and r["library"] == "gunpy"
           and r.get("mode") == "alone"]
    if bfs:
        out += ["", "Gunrock's convention for BFS (edges the traversal visited, per second of "
                "wall time, gunpy alone):", "", "| graph | MTEPS (visited edges, hmean) |",
                "|---|---|"]
        out += [f"| {r['graph']} | {_mteps(r.get('hmean_teps_visited'))} |" for r in bfs]
    return "\n".join(out) + "\n"


def _mteps(teps):
    return "-" if teps is None or math.isnan(teps) else f"{teps / 1e6:,.1f}"


def plots(rows, outdir):
    """Speedup bars per primitive and graph; BFS frontier and direction per iteration."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    files = []
    prims = [p for p in PRIMITIVES if any(r["primitive"] == p for r in rows)]
    if prims:
        fig, axes = plt.subplots(1, len(prims), figsize=(4.2 * len(prims), 3.8), squeeze=False)
        for ax, prim in zip(axes[0], prims):
            sel = [r for r in rows if r["primitive"] == prim]
            graphs = list(dict.fromkeys(r["graph"] for r in sel))
            libs = [lib for lib in dict.fromkeys(r["library"] for r in sel) if lib != "gunpy"]
            width = 0.8 / max(len(libs), 1)
            for k, lib in enumerate(libs):
                ys = []
                for g in graphs:  # per call, interleaved, on the same roots
                    peer = next((r for r in sel if r["graph"] == g and r["library"] == lib), None)
                    ys.append(peer.get("vs_gunpy") or 0 if peer else 0)
                ax.bar(np.arange(len(graphs)) + k * width, ys, width, label=lib)
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_yscale("log")
            ax.set_xticks(np.arange(len(graphs)) + 0.4 - width / 2)
            ax.set_xticklabels(graphs, rotation=35, ha="right", fontsize=8)
            ax.set_title(f"{prim}: peer wall / gunpy wall, per call")
            if libs:
                ax.legend(fontsize=7)
        files.append(_save(plt, fig, outdir, "speedup.png"))
    bfs = [r for r in rows if r["primitive"] == "bfs" and r["library"] == "gunpy"
           and r.get("per_iteration")]
    if bfs:
        fig, ax = plt.subplots(figsize=(7, 3.8))
        for r in bfs:
            its = r["per_iteration"]
            xs = [it["iteration"] + 1 for it in its]
            ys = [max(it["frontier"], 1) for it in its]
            line, = ax.plot(xs, ys, label=r["graph"])
            pulls = [(x, y) for x, y, it in zip(xs, ys, its) if it["direction"] == "pull"]
            if pulls:
                ax.scatter(*zip(*pulls), marker="s", color=line.get_color(), s=25)
        ax.set_yscale("log")
        ax.set_xscale("log")
        ax.set_xlabel("BFS iteration + 1 (squares: pull)")
        ax.set_ylabel("frontier size")
        ax.set_title("BFS frontier per iteration, direction=auto")
        ax.legend(fontsize=7)
        files.append(_save(plt, fig, outdir, "bfs_frontier.png"))
    return files


def _save(plt, fig, outdir, name):
    fig.tight_layout()
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

