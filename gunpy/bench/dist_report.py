"""The report of ``gunpy dist bench``: efficiency, the weak-scaling table, the paper beside it."""

import math

__all__ = ["PAPER", "add_efficiency", "markdown"]

#: Hiragushi and Takahashi, Efficient Hybrid BFS on GPUs, section 5.2 (HA-PACS, June 2013 Graph500)
PAPER = {"gteps": 117.546, "gpus": 1024, "vertices_per_process_log2": 21, "scale": 31,
         "gpu": "NVIDIA M2090"}
PAPER["gteps_per_gpu"] = PAPER["gteps"] / PAPER["gpus"]


def add_efficiency(runs):
    """Add ``teps_per_rank`` and ``efficiency`` (``TEPS(P) / (P * TEPS(1))``) to each run.

    Both for the harmonic mean (``efficiency``) and the median
    (``efficiency_median``); NaN without a 1-rank run. Returns ``runs``.
    """
    base = next((r for r in runs if r["ranks"] == 1), None)
    for r in runs:
        p = r["ranks"]
        r["teps_per_rank"] = r["hmean_teps"] / p
        r["median_teps_per_rank"] = r["median_teps"] / p
        r["efficiency"] = (r["hmean_teps"] / (p * base["hmean_teps"])
                           if base and base["hmean_teps"] > 0 else float("nan"))
        r["efficiency_median"] = (r["median_teps"] / (p * base["median_teps"])
                                  if base and base["median_teps"] > 0 else float("nan"))
    return runs



def _m(teps):
    if teps is None or math.isnan(teps):
        return "-"
    m = teps / 1e6
    return f"{m:,.1f}" if m >= 10 else f"{m:.3g}"


def _f(x, fmt="{:.2f}"):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt.format(x)


def _notes(runs):
    """Footnotes: small components' roots, oversubscribed cores, kernels loaded while timing."""
    notes = []
    for r in runs:
        comps = r["component_edges"]
        small = [m for m in comps if m < max(comps)]
        if small:
            notes.append(f"{r['ranks']} rank{'s' if r['ranks'] > 1 else ''}: {len(small)} of "
                         f"{len(comps)} roots lay outside the giant component (at most "
                         f"{max(small):,} edges); Graph500's harmonic mean counts their tiny "
                         "TEPS, the median does not.")
        cores = r.get("machine", {}).get("cores")
        if r["backend"] == "cpu" and cores and r["ranks"] * r["threads_per_rank"] > cores:
            notes.append(f"{r['ranks']} ranks x {r['threads_per_rank']} thread"
                         f"{'s' if r['threads_per_rank'] > 1 else ''} share {cores} cores: "
                         f"weak-scaling efficiency can reach at most about "
                         f"{cores / (r['ranks'] * r['threads_per_rank']):.2f} here.")
        if r.get("kernel_loads_timed"):
            notes.append(f"{r['ranks']} rank{'s' if r['ranks'] > 1 else ''}: "
                         f"{r['kernel_loads_timed']} kernels were compiled or loaded inside "
                         "timed runs (the warm-up missed them): their roots' times include it.")
    return [""] + [f"* {n}" for n in notes] if notes else []


def markdown(runs):
    """The weak-scaling table, the largest job's per-level split and the paper's figure."""
    runs = sorted(runs, key=lambda r: r["ranks"])
    if not runs:
        return "no runs\n"
    if "efficiency" not in runs[0]:
        add_efficiency(runs)
    first = runs[0]
    out = [f"Weak scaling, gunpy.dist BFS: 2^{first['scale_per_rank']} vertices per rank, "
           f"edge factor {first['edgefactor']}, {len(first['roots'])} roots, "
           f"direction {first['direction']}, backend {first['backend']}", "",
           "| ranks | scale | vertices | edges | threads/rank | median ms | MTEPS (hmean) | "
           "MTEPS (median) | MTEPS per rank | efficiency (hmean) | efficiency (median) | "
           "comm share | validated |",
           "|---" * 13 + "|"]
    for r in runs:
        out.append(
            f"| {r['ranks']} | {r['scale']} | {r['vertices']:,} | {r['edges']:,} | "
            f"{r['threads_per_rank']} | {_f(r['median_ms'], '{:.1f}')} | {_m(r['hmean_teps'])} | "
            f"{_m(r['median_teps'])} | {_m(r['teps_per_rank'])} | {_f(r['efficiency'])} | "
            f"{_f(r['efficiency_median'])} | {_f(100 * r['comm_share'], '{:.0f} %')} | "
            f"{r['validated']} of {len(r['roots'])} roots |")
    out += _notes(runs)
    big = runs[-1]
    if big.get("levels"):
        out += ["", f"Levels of the first root ({big['roots'][0]}) at {big['ranks']} "
                f"rank{'s' if big['ranks'] > 1 else ''} (ms: slowest rank; compute and comm: "
                "mean over ranks; comm includes waiting for slower ranks):", "",
                "| level | direction | frontier | edges | ms | compute ms | "
                "compute ms (max rank) | comm ms | bytes sent |", "|---" * 9 + "|"]
        for lv in big["levels"]:
            out.append(f"| {lv['level']} | {lv['direction']} | {lv['frontier']:,} | "
                       f"{lv.get('edges', '-'):,} | "
                       f"{_f(lv['ms'])} | {_f(lv['compute_ms'])} | {_f(lv['compute_max_ms'])} | "
                       f"{_f(lv['comm_ms'])} | {lv['bytes']:,} |")
    per, per_median = big["teps_per_rank"] / 1e9, big["median_teps_per_rank"] / 1e9
    out += ["", f"Beside the paper (Hiragushi and Takahashi, section 5.2): {PAPER['gteps']} GTEPS "
            f"on {PAPER['gpus']:,} {PAPER['gpu']} GPUs at Graph500 scale {PAPER['scale']}, "
            f"2^{PAPER['vertices_per_process_log2']} vertices per process: "
            f"{PAPER['gteps_per_gpu']:.3f} GTEPS per GPU. Here at {big['ranks']} "
            f"rank{'s' if big['ranks'] > 1 else ''} (2^{big['scale_per_rank']} vertices per "
            f"rank, {big['backend']} backend, {big['threads_per_rank']} "
            f"thread{'s' if big['threads_per_rank'] > 1 else ''} per rank): {per:.3g} GTEPS "
            f"per rank by the harmonic mean, {per_median:.3g} by the median, "
            f"{per / PAPER['gteps_per_gpu']:.3g}x and {per_median / PAPER['gteps_per_gpu']:.3g}x "
            "the paper's per-GPU rate."]
    m = first.get("machine", {})
    out += ["", "Machine: " + ", ".join(f"{k} {m[k]}" for k in ("cores", "cpu", "gpu", "mpi",
                                                                  "numba", "commit", "date")
                                         if k in m) + "."]
    loads = [(r["ranks"], r["machine"]["load_average"]) for r in runs
             if "load_average" in r.get("machine", {})]
    if loads:  # on a shared machine, what else was running
        out[-1] += (" Load average (1 min) at the end of each job: "
                    + ", ".join(f"{p} rank{'s' if p > 1 else ''} {la:.1f}" for p, la in loads)
                    + ".")
    return "\n".join(out) + "\n"
