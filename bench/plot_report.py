"""plot_report: the headline tables and the plots of docs/benchmarks.md, from one data file.

    python bench/plot_report.py                              # PNGs into docs/img/ (matplotlib)
    python bench/plot_report.py --markdown                   # the tables, as the page has them
    python bench/plot_report.py --check docs/benchmarks.md   # exit 1 where the page differs

``bench/report-data.json`` holds the numbers the report shows, as they were
recorded (docs/history.md has every measurement in full): one row per primitive
and graph, gunpy's median milliseconds per call, each peer's milliseconds and/or
its time over gunpy's (``ratio``), the fastest peer's ratio as recorded
(``fastest_ratio``), and the measurement it comes from (``source``: date,
commit, command, timing, conditions). A value is a number, or a string holding
a range (``"3.13-3.19"``) or two runs (``"2.24 / 2.38"``); numbers keep the digits
they were recorded with. A row's ``mode`` is ``warm`` (after an untimed call on
the same graph) or ``fresh`` (the first call on a newly built graph: such rows
get their own bars, hatched). Any peer name may appear (a new peer gets its own
colour); ``gunpy.blas`` is gunpy's own GraphBLAS layer and is left out of the
peer columns and plots.

Each plot shows every peer's time over gunpy's per graph (log scale; above 1:
gunpy is faster): the recorded ratio where there is one, else the ratio of the
recorded medians (a range or two runs: their mean). A graph marked with a dagger
comes from a measurement timed the older way (gunpy's own timer).
"""

import argparse
import json
import os
import re
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "report-data.json")
IMG = os.path.join(os.path.dirname(HERE), "docs", "img")

CORE = ["bfs", "sssp", "cc", "pagerank", "bc", "tc"]
REST = ["lcc", "cdlp", "louvain", "kcore", "hits", "ppr", "color", "mst", "scc", "spgemm",
        "wedges", "bc_weighted"]
NAMES = {"bfs": "BFS", "sssp": "SSSP", "cc": "CC", "pagerank": "PageRank",
         "bc": "BC, per source", "tc": "triangle counting", "lcc": "LCC",
         "cdlp": "CDLP, 10 rounds", "louvain": "Louvain", "kcore": "k-core", "hits": "HITS",
         "ppr": "personalised PageRank, 4 sources", "color": "colouring",
         "mst": "MST", "scc": "SCC", "spgemm": "SpGEMM `A @ A`",
         "wedges": "wedges, `plus_pair(A @ A)` under `~A.S`",
         "bc_weighted": "weighted BC, 64 sources"}
COLUMNS = [("scipy", "scipy"), ("graphblas", "SuiteSparse"), ("networkit", "NetworKit"),
           ("igraph", "igraph"), ("networkx", "networkx")]
OWN = {"gunpy.blas"}
OLDER = {"suite"}  # measurements timed by gunpy's own timer
COLOURS = {"scipy": "tab:orange", "graphblas": "tab:green", "networkit": "tab:red",
           "networkit PLMR": "lightcoral", "igraph": "tab:purple", "networkx": "tab:brown"}


def load(path=DATA):
    with open(path) as f:
        return json.load(f, parse_float=Decimal)


def value(v):
    """A recorded value as one float: a range or two runs give their mean."""
    if v is None:
        return None
    if isinstance(v, str):
        nums = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", v.replace(",", ""))]
        return sum(nums) / len(nums) if nums else None
    return float(v)


def fmt(v):
    """A recorded value as written: thousands separated, the recorded digits kept."""
    if isinstance(v, str):
        return v
    return format(v, ",")


def ratio(row, peer):
    """A peer's time over gunpy's: recorded, else from the recorded medians."""
    p = row["peers"][peer]
    if "ratio" in p:
        return value(p["ratio"])
    g, t = value(row["gunpy_ms"]), value(p.get("ms"))
    return t / g if g and t else None


def peers_of(rows):
    names = []
    for r in rows:
        names += [p for p in r["peers"] if p not in OWN and p not in names]
    return names


def label(row, sources):
    name = row["graph"] + (" (fresh)" if row.get("mode") == "fresh" else "")
    return name + (" \u2020" if row["source"] in OLDER else "")


# ---------------------------------------------------------------------------- tables

def _cell(p):
    if p is None:
        return "-"
    out = fmt(p["ms"]) if "ms" in p else ""
    if "colours" in p:
        out += f" ({p['colours']} colours)"
    if "ratio" in p:
        out += (" " if out else "") + f"({_times(p['ratio'])})"
    return out


def _times(v):
    """A recorded ratio with its "x": "1.86 / 1.84" -> "1.86x / 1.84x"."""
    return " / ".join(part + "x" for part in fmt(v).split(" / "))


def _fastest(row):
    if "fastest_ratio" in row and row["fastest_ratio"] is not None:
        return _times(row["fastest_ratio"])
    if row.get("note"):
        return row["note"]
    rs = [ratio(row, p) for p in row["peers"] if p not in OWN]
    rs = [x for x in rs if x is not None]
    return f"_{min(rs):.2f}x_" if rs else "-"


def table(data, prims):
    src = data["sources"]
    head = ("| primitive | graph | gunpy ms | " + " | ".join(h for _, h in COLUMNS)
            + " | fastest peer / gunpy | measured |")
    lines = [head, "|" + "---|" * (len(COLUMNS) + 5)]
    for prim in prims:
        for r in (r for r in data["rows"] if r["primitive"] == prim):
            g = fmt(r["gunpy_ms"])
            if "gunpy_alone_ms" in r:
                g += f" ({fmt(r['gunpy_alone_ms'])} alone)"
            if "colours" in r:
                g += f" ({r['colours']} colours)"
            cells = [_cell(r["peers"].get(k)) for k, _ in COLUMNS]
            lines.append(f"| {NAMES[prim]} | {r['graph']} | {g} | " + " | ".join(cells)
                         + f" | {_fastest(r)} | {src[r['source']]['label']} |")
    return "\n".join(lines)


def sources_table(data, prims):
    used = {r["source"] for r in data["rows"] if r["primitive"] in prims}
    lines = ["| | when | commit | what ran | timing | machine load |", "|---|---|---|---|---|---|"]
    for key, s in data["sources"].items():
        if key in used:
            commit = re.sub(r"\b([0-9a-f]{7})\b", r"`\1`", s["commit"])
            lines.append(f"| {s['label']} | {s['date']} | {commit} | {s['what']} | "
                         f"{s['timing']} | {s['conditions']} |")
    return "\n".join(lines)


def louvain_table(data):
    src = data["sources"]
    lines = ["| graph | gunpy ms | PLM | PLMR | igraph | networkx | gunpy / PLM time "
             "| modularity: gunpy / PLM / PLMR / igraph | measured |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in (r for r in data["rows"] if r["primitive"] == "louvain"):
        p = r["peers"]
        cells = [fmt(p[k]["ms"]) if k in p else "-"
                 for k in ("networkit", "networkit PLMR", "igraph", "networkx")]
        lines.append(f"| {r['graph']} | {fmt(r['gunpy_ms'])} | " + " | ".join(cells)
                     + f" | {fmt(r['gunpy_over_plm'])} | "
                     f"{r['modularity_gunpy_plm_plmr_igraph']} | {src[r['source']]['label']} |")
    return "\n".join(lines)


def markdown(data):
    """The blocks docs/benchmarks.md carries, in order."""
    return [table(data, CORE), sources_table(data, CORE), table(data, REST),
            sources_table(data, REST), louvain_table(data)]


def check(data, page):
    text = open(page).read()
    missing = [b for b in markdown(data) if b not in text]
    for b in missing:
        print(f"{page} lacks (or has another version of) this table:\n{b}\n", file=sys.stderr)
    return 1 if missing else 0


# ---------------------------------------------------------------------------- plots

def _bars(ax, rows, sources, title, names):
    import numpy as np
    from matplotlib.ticker import FuncFormatter, NullFormatter
    rows = [r for r in rows if not r.get("note")]  # not comparable
    peers = peers_of(rows)
    x = np.arange(len(rows))
    width = 0.8 / max(1, len(peers))
    for i, peer in enumerate(peers):
        ys = [ratio(r, peer) if peer in r["peers"] else None for r in rows]
        xs = [xi + (i - (len(peers) - 1) / 2) * width for xi in x]
        pts = [(a, b, r) for a, b, r in zip(xs, ys, rows) if b is not None]
        if not pts:
            continue
        algo = next((r["peers"][peer]["algo"] for r in rows
                     if "algo" in r["peers"].get(peer, {})), None)
        name = names.get(peer, peer) + (f" {algo}" if algo and " " not in peer else "")
        ax.bar([a for a, _, _ in pts], [b for _, b, _ in pts], width, label=name,
               color=COLOURS.get(peer), hatch=["//" if r.get("mode") == "fresh" else ""
                                                for _, _, r in pts])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain if ax.get_ylim()[1] / ax.get_ylim()[0] < 10 else NullFormatter())
    ax.set_xticks(x)
    ax.set_xticklabels([label(r, sources) for r in rows], rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("peer time / gunpy time")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, ncol=2)


def plots(data, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    os.makedirs(out, exist_ok=True)
    src, rows, written = data["sources"], data["rows"], []
    names = data.get("peers", {})

    def save(fig, name):
        fig.tight_layout()
        path = os.path.join(out, name)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)

    # 1. the headline: the fastest peer's time over gunpy's, core primitives x graphs
    graphs = []
    for r in rows:
        if r["primitive"] in CORE and r["graph"] not in graphs:
            graphs.append(r["graph"])
    grid = np.full((len(CORE), len(graphs)), np.nan)
    text = [["" for _ in graphs] for _ in CORE]
    for r in rows:
        if r["primitive"] in CORE:
            i, j = CORE.index(r["primitive"]), graphs.index(r["graph"])
            fr = value(r.get("fastest_ratio"))
            grid[i, j] = fr
            text[i][j] = (f"{fr:.2f}" if fr is not None else "-") + (
                "\u2020" if r["source"] in OLDER else "")
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    lim = np.nanmax(np.abs(np.log10(grid)))
    im = ax.imshow(np.log10(grid), cmap="RdYlGn", vmin=-lim, vmax=lim, aspect="auto")
    for i in range(len(CORE)):
        for j in range(len(graphs)):
            ax.text(j, i, text[i][j], ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(graphs)))
    ax.set_xticklabels(graphs, rotation=20, ha="right", fontsize=8)
    ax.set_yticks(range(len(CORE)))
    ax.set_yticklabels([NAMES[p].replace("`", "") for p in CORE], fontsize=8)
    ax.set_title("fastest peer's time / gunpy's (above 1: gunpy faster)", fontsize=10)
    cb = fig.colorbar(im, ax=ax)
    cb.set_label("log10 of the ratio", fontsize=8)
    save(fig, "report-headline.png")

    # 2. one plot per primitive, every peer
    for prim in CORE + ["lcc", "cdlp", "louvain"]:
        sel = [r for r in rows if r["primitive"] == prim]
        fig, ax = plt.subplots(figsize=(6.4, 3.2))
        _bars(ax, sel, src, f"{NAMES[prim].replace('`', '')}: peer time / gunpy time", names)
        save(fig, f"report-{prim}.png")

    # 3. the rest of the catalogue in one plot
    short = {"luxembourg_osm": "lux", "luxembourg_osm both ways": "lux, both ways",
             "rmat18 directed": "rmat18, directed"}
    sel = [dict(r, graph=f"{r['primitive']}\n{short.get(r['graph'], r['graph'])}")
           for r in rows if r["primitive"] in REST[3:] and not r.get("note")]
    fig, ax = plt.subplots(figsize=(11, 3.8))
    _bars(ax, sel, src, "Gunrock's catalogue: peer time / gunpy time", names)
    ax.set_xticklabels([r["graph"] for r in sel], rotation=90, ha="center", fontsize=7)
    save(fig, "report-catalogue.png")
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--out", default=IMG, help="folder for the PNGs (default docs/img)")
    ap.add_argument("--markdown", action="store_true", help="print the tables instead")
    ap.add_argument("--check", metavar="PAGE", help="check that PAGE carries the tables")
    a = ap.parse_args(argv)
    data = load(a.data)
    if a.check:
        return check(data, a.check)
    if a.markdown:
        print("\n\n".join(markdown(data)))
        return 0
    for path in plots(data, a.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
