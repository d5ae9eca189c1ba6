"""Louvain on the CPU: wall time per call of gunpy and its peers, interleaved, modularity beside.

    python bench/louvain.py                     # luxembourg_osm, delaunay_n16, rmat16, rmat18
    python bench/louvain.py --graphs rmat14,facebook --reps 5

Every library runs in this one process on the same undirected, unweighted graph, as
a user would call it: ``gunpy.louvain(G, seed=s)`` against igraph's
``community_multilevel()``, NetworKit's ``PLM(refine=False)`` (and ``PLM(refine=True)``)
and, on graphs under 300,000 edges, networkx's ``louvain_communities(seed=s)``. Every
partition's modularity is computed by one function (igraph's ``modularity``, on the
same graph), so the qualities compare. One untimed call each, then ``--reps`` rounds of
one call per library in turn (seed = round); medians and ranges in ms, the median
modularity and its range.
"""

import statistics

import numpy as np

from interleaved import parse, parser, rounds


def _peers(G, src, dst):
    """{name: call(seed) -> membership array} for the peers that import."""
    out = {}
    try:
        import igraph as ig
        gi = ig.Graph(n=G.num_vertices, edges=np.column_stack([src, dst]))
        out["igraph"] = lambda seed: np.asarray(gi.community_multilevel().membership)
    except ImportError:
        pass
    try:
        import networkit as nk
        h = nk.GraphFromCoo((np.ones(src.shape[0]), (src.astype(np.uint64),
                                                     dst.astype(np.uint64))),
                            n=G.num_vertices, directed=False, weighted=False)

        def plm(refine):
            def call(seed):
                nk.engineering.setSeed(seed, True)
                a = nk.community.PLM(h, refine=refine)
                a.run()
                return np.asarray(a.getPartition().getVector())
            return call
        out["networkit PLM"] = plm(False)
        out["networkit PLMR"] = plm(True)
    except ImportError:
        pass
    if G.num_edges < 300_000:
        import networkx as nx
        gx = G.to_networkx()

        def nx_louvain(seed):
            labels = np.empty(G.num_vertices, dtype=np.int64)
            for c, members in enumerate(nx.community.louvain_communities(gx, seed=seed)):
                labels[list(members)] = c
            return labels
        out["networkx"] = nx_louvain
    return out


def measure(name, reps):
    import igraph as ig

    import gunpy
    from gunpy.bench.graphs import graph
    G = graph(name, 1)
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    keep = src < G.column_indices
    src, dst = src[keep], G.column_indices[keep].astype(np.int64)
    judge = ig.Graph(n=G.num_vertices, edges=np.column_stack([src, dst]))
    calls = {"gunpy": lambda seed: gunpy.louvain(G, seed=seed, backend="cpu").labels,
             **_peers(G, src, dst)}
    r = gunpy.louvain(G, seed=0, backend="cpu")  # gunpy's reported modularity is the judge's
    assert abs(r.modularity - judge.modularity(r.labels.tolist())) < 1e-9
    for f in calls.values():
        f(0)
    quality = {lib: [] for lib in calls}

    def judged(lib, labels):
        quality[lib].append(judge.modularity(np.asarray(labels).tolist()))

    times = rounds(calls, [(rep + 1,) for rep in range(reps)], judged)  # seed = round
    return G, times, quality


def main(argv=None):
    args = parse(parser(__doc__, graphs="luxembourg_osm,delaunay_n16,rmat16,rmat18", reps=5),
                 argv)
    for name in args.graphs.split(","):
        G, times, quality = measure(name, args.reps)
        print(f"\n{name}: {G.num_vertices:,} vertices, {G.num_edges:,} edges "
              "(ms per call: median [min-max]; modularity: median [min-max])")
        med = {lib: statistics.median(ts) for lib, ts in times.items()}
        for lib, ts in times.items():
            q = quality[lib]
            print(f"  {lib:15s} {med[lib]:9.1f} [{min(ts):.1f}-{max(ts):.1f}]   "
                  f"Q {statistics.median(q):.4f} [{min(q):.4f}-{max(q):.4f}]")
        best = min((lib for lib in med if lib != "gunpy"), key=med.get, default=None)
        if best:
            print(f"  gunpy x{med['gunpy'] / med[best]:.2f} the time of {best}")


if __name__ == "__main__":
    main()
