"""``gunpy bench --neighbours``: gunpy's wall time per call alone and right after each peer.

What other libraries' threads cost gunpy's parallel regions in one process: per
root, gunpy alone; then, for each peer, the peer's call immediately followed by
gunpy's, timed (the peer's OpenMP team may still spin, or be descheduled, when
gunpy's regions start). Run it once per setting to compare, e.g. under
``OMP_WAIT_POLICY=ACTIVE`` and with gunpy's choice
(:mod:`gunpy.backends.threads`); the machine rows name the layer and policy.
"""

import statistics

from gunpy.bench.graphs import graph as _graph, roots as _roots, weighted_twin as _weighted_twin
from gunpy.bench.report import _fmt_ms
from gunpy.bench.timing import wall

__all__ = ["NEIGHBOUR_PRIMITIVES", "neighbour_table", "neighbour_markdown"]

#: the primitives measured here (BFS from each root; PageRank and CC once per root)
NEIGHBOUR_PRIMITIVES = ("bfs", "pagerank", "cc")


def _mine(prim, G, s, backend):
    import gunpy
    if prim == "bfs":
        return gunpy.bfs(G, s, backend=backend)
    return getattr(gunpy, prim)(G, backend=backend)


def _theirs(prim, peer, s):
    return peer.bfs(s) if prim == "bfs" else getattr(peer, prim)()


def neighbour_table(args, peers_all):
    """Rows ``{graph, primitive, before, median_ms, runs}``; ``before`` is ``"alone"`` or
    the peer whose call ran just before gunpy's."""
    from gunpy import backends
    backend = backends.resolve(args.backend)
    rows = []
    for gname in args.graphs or ["rmat18", "luxembourg_osm"]:
        G = _graph(gname, args.seed)
        Gw = _weighted_twin(G, args.seed)
        peers = [p for p in peers_all if p.max_vertices is None or G.num_vertices <= p.max_vertices]
        for p in peers:
            p.prepare(G, Gw)
        roots = _roots(G, args.roots, args.seed)
        for prim in (p for p in args.primitives if p in NEIGHBOUR_PRIMITIVES):
            _mine(prim, G, roots[0], backend)  # warm-up
            befores = [None] + [p for p in peers if hasattr(p, prim)]
            for p in befores[1:]:
                _theirs(prim, p, roots[0])
            times = {p: [] for p in befores}
            for s in roots:  # per root every neighbour, so a slow patch falls on all
                for p in befores:
                    if p is not None:
                        _theirs(prim, p, s)
                    times[p].append(wall(_mine, prim, G, s, backend)[0])
            for p, t in times.items():
                rows.append({"graph": gname, "primitive": prim,
                             "before": "alone" if p is None else p.name,
                             "median_ms": statistics.median(t), "runs": len(t)})
    return rows


def neighbour_markdown(rows, info):
    out = ["# gunpy beside other libraries' threads", "",
           ", ".join(f"{k}: {v}" for k, v in info.items() if k.startswith("threads")
                     or k in ("date", "commit", "load_average")), "",
           "gunpy's wall time per call, median over roots: alone, and right after each "
           "peer's call on the same root.", "",
           "| graph | primitive | before gunpy's call | wall ms | vs alone |", "|---|---|---|---|---|"]
    for r in rows:
        base = next(x for x in rows if x["graph"] == r["graph"]
                    and x["primitive"] == r["primitive"] and x["before"] == "alone")
        out.append(f"| {r['graph']} | {r['primitive']} | {r['before']} | "
                   f"{_fmt_ms(r['median_ms'])} | {r['median_ms'] / base['median_ms']:.2f}x |")
    return "\n".join(out) + "\n"
