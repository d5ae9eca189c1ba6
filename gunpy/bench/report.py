"""The reports of ``gunpy bench``: the Markdown tables and the plots."""

import math
import os

import numpy as np

from gunpy.bench.peers import PRIMITIVES

__all__ = ["markdown", "plots"]


def _fmt_ms(x):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else (
        f"{x:.3g}" if x < 10 else f"{x:,.0f}")


def markdown(rows, info):
    out = ["# gunpy benchmark results", "",
           "| machine | value |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in info.items()]
    graphs = [r for r in rows if r["primitive"] == "graph"]
    out += ["", "## Graphs", "", "| graph | vertices | stored edges | directed | build ms |",
            "|---|---|---|---|---|"]
    out += [f"| {g['graph']} | {g['vertices']:,} | {g['edges']:,} | {g['directed']} | "
            f"{g['build_ms']:,.0f} |" for g in graphs]
    for prim in dict.fromkeys(list(PRIMITIVES) + [r["primitive"] for r in rows]):
        if prim == "graph":
            continue
        sel = [r for r in rows if r["primitive"] == prim]
        if not sel:
            continue
        title = {"pagerank": "PageRank", "tc": "Triangle counting"}.get(prim, prim.upper())
        out += ["", f"## {title}", ""]
        head = "| graph | library | median ms | runs | gunpy speedup |"
        if prim in ("bfs", "sssp"):
            head = ("| graph | library | median ms | max ms | runs | Graph500 MTEPS (hmean) | "
                    "MTEPS (median) | gunpy speedup |")
        if prim == "pagerank":
            head = "| graph | library | median ms | iterations | ms/iteration | gunpy speedup |"
        out += [head, "|" + "---|" * (head.count("|") - 1)]
        for gname in dict.fromkeys(r["graph"] for r in sel):
            mine = next((r for r in sel if r["graph"] == gname and r["library"] == "gunpy"), None)
            for r in (x for x in sel if x["graph"] == gname):
                sp = (r["median_ms"] / mine["median_ms"]) if mine and r is not mine else None
                spd = "-" if sp is None else f"{sp:.2f}x"
                if prim in ("bfs", "sssp"):
                    te, tm = (_mteps(r.get("hmean_teps")), _mteps(r.get("median_teps")))
                    out.append(f"| {gname} | {r['library']} | {_fmt_ms(r['median_ms'])} | "
                               f"{_fmt_ms(r.get('max_ms'))} | {r['runs']} | {te} | {tm} | {spd} |")
                elif prim == "pagerank":
                    out.append(f"| {gname} | {r['library']} | {_fmt_ms(r['median_ms'])} | "
                               f"{r.get('iterations') or '-'} | "
                               f"{_fmt_ms(r.get('ms_per_iteration'))} | {spd} |")
                else:
                    note = f" ({r['note']})" if r.get("note") else ""
                    out.append(f"| {gname} | {r['library']}{note} | {_fmt_ms(r['median_ms'])} | "
                               f"{r['runs']} | {spd} |")
    bfs = [r for r in rows if r["primitive"] == "bfs" and r["library"] == "gunpy"]
    if bfs:
        out += ["", "Gunrock's convention for BFS (edges the traversal visited, per second):", "",
                "| graph | MTEPS (visited edges, hmean) | MTEPS (visited edges, median) |",
                "|---|---|---|"]
        out += [f"| {r['graph']} | {_mteps(r['hmean_teps_visited'])} | "
                f"{_mteps(r.get('median_teps_visited'))} |" for r in bfs]
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
                for g in graphs:
                    mine = next((r for r in sel if r["graph"] == g and r["library"] == "gunpy"),
                                None)
                    peer = next((r for r in sel if r["graph"] == g and r["library"] == lib), None)
                    ys.append(peer["median_ms"] / mine["median_ms"] if mine and peer else 0)
                ax.bar(np.arange(len(graphs)) + k * width, ys, width, label=lib)
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_yscale("log")
            ax.set_xticks(np.arange(len(graphs)) + 0.4 - width / 2)
            ax.set_xticklabels(graphs, rotation=35, ha="right", fontsize=8)
            ax.set_title(f"{prim}: peer time / gunpy time")
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

