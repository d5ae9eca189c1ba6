"""``gunpy bench --strategies``: BFS time for every load balance x direction, and its table."""

import statistics

import numpy as np

from gunpy.bench.graphs import graph as _graph, roots as _roots
from gunpy.bench.report import _fmt_ms

__all__ = ["strategy_table", "strategy_markdown"]


def strategy_table(args):
    """BFS time for every load-balancing strategy x direction (issue: which mapping when)."""
    from tqdm.auto import tqdm

    import gunpy
    from gunpy import backends
    from gunpy.operators.advance import load_balance_options
    LOAD_BALANCE_OPTIONS = load_balance_options()
    backend = backends.resolve(args.backend)
    graphs = args.graphs or ["rmat18", "luxembourg_osm", "delaunay_n16", "grid512"]
    rows = []
    # pull has no push load balancing to vary; idempotence only changes push
    combos = [(lb, d, False) for d in ("push", "pull", "auto") for lb in LOAD_BALANCE_OPTIONS
              if d == "push" or lb == "auto"]
    combos += [(lb, "push", True) for lb in LOAD_BALANCE_OPTIONS]
    # an A/A control: push+auto run a second time, so the table shows its own noise
    combos.append(("auto", "push", False))
    for gname in tqdm(graphs, desc="graphs", disable=args.quiet):
        G = _graph(gname, args.seed)
        roots = _roots(G, args.roots, args.seed)
        opts = [dict(load_balance=lb, direction=d, idempotent=idem, backend=backend)
                for lb, d, idem in combos]
        for o in opts:  # warm-up: compile every combination's kernels first
            for s in roots[:2]:
                gunpy.bfs(G, s, **o)
        # interleaved: each root runs every combination, in a fresh random order, so that
        # a slow patch of the machine (or the cold caches a pull run leaves behind) falls
        # on all rows alike and the per-root ratios are paired
        ms = [[] for _ in combos]
        edges = [[] for _ in combos]
        order = np.random.default_rng([args.seed, 7])
        for s in tqdm(roots, desc=gname, leave=False, disable=args.quiet):
            for j in order.permutation(len(combos)):
                st = gunpy.bfs(G, s, **opts[j]).stats
                ms[j].append(st.elapsed_ms)
                edges[j].append(st.edges_visited)
        base = ms[combos.index(("auto", "push", False))]
        for j, ((lb, d, idem), t, e) in enumerate(zip(combos, ms, edges)):
            rows.append({"graph": gname, "load_balance": lb, "direction": d,
                         "idempotent": idem, "roots": len(roots),
                         "control": j == len(combos) - 1,
                         "median_ms": statistics.median(t),
                         "edges_visited": statistics.median(e),
                         # per root: push+auto's time over this row's, then the median
                         "paired_speedup": statistics.median(b / x for b, x in zip(base, t))})
    return rows


def strategy_markdown(rows, info):
    out = ["# BFS: load balancing x direction", "",
           f"{info.get('date')}, backend {info.get('backend')}, commit {info.get('commit')}, "
           f"{info.get('cpu', info.get('gpu', ''))}", "",
           "Every root runs every combination, in a random order per root. `vs push+auto`: the "
           "ratio of medians; `paired`: per root, push+auto's time over the row's, median "
           "over roots (above 1: faster than push). The last row of each graph runs "
           "push+auto again: how far two identical configurations drift apart here.", "",
           "| graph | load_balance | direction | idempotent | median ms | "
           "edges visited (median) | vs push+auto | paired |", "|---|---|---|---|---|---|---|---|"]
    for g in dict.fromkeys(r["graph"] for r in rows):
        base = next(r for r in rows if r["graph"] == g and r["direction"] == "push"
                    and r["load_balance"] == "auto" and not r["idempotent"])
        for r in (x for x in rows if x["graph"] == g):
            d = r["direction"] + (" (A/A control)" if r.get("control") else "")
            out.append(f"| {g} | {r['load_balance']} | {d} | "
                       f"{'yes' if r['idempotent'] else 'no'} | "
                       f"{_fmt_ms(r['median_ms'])} | {int(r['edges_visited']):,} | "
                       f"{base['median_ms'] / r['median_ms']:.2f}x | "
                       f"{r.get('paired_speedup', float('nan')):.3f}x |")
    return "\n".join(out) + "\n"

