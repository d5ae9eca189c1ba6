"""LDBC's LCC and CDLP on the CPU: wall time per call of gunpy and its peers, interleaved.

    python bench/ldbc.py                              # luxembourg_osm, delaunay_n16, rmat16, rmat18
    python bench/ldbc.py --graphs rmat16 --reps 5

Every library runs in this one process on the same undirected graph, as a user
would call it: ``gunpy.lcc(G)`` against igraph's
``transitivity_local_undirected(mode="zero")``, NetworKit's
``LocalClusteringCoefficient`` and, on graphs under 300,000 edges, networkx's
``clustering`` (each result is checked against gunpy's first, 1e-9). ``gunpy.cdlp(G,
10)`` has no peer computing the same thing (LDBC's synchronous rounds with ties to the
smallest label): igraph's ``community_label_propagation`` and NetworKit's ``PLP`` are
asynchronous label propagation with random ties, timed beside it as the nearest
algorithms, not as equals. One untimed call each, then ``--reps`` rounds of one call
per library in turn; medians and ranges in ms.
"""

import numpy as np

from interleaved import parse, parser, report, rounds


def _peers(G):
    """{name: (lcc call, cdlp-like call)} for the peers that import."""
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    keep = src < G.column_indices
    out = {}
    try:
        import igraph as ig
        gi = ig.Graph(n=G.num_vertices, edges=np.column_stack([src[keep],
                                                                G.column_indices[keep]]))
        out["igraph"] = (lambda: np.asarray(gi.transitivity_local_undirected(mode="zero")),
                         lambda: gi.community_label_propagation())
    except ImportError:
        pass
    try:
        import networkit as nk
        h = nk.GraphFromCoo((np.ones(int(keep.sum())), (src[keep].astype(np.uint64),
                                                         G.column_indices[keep].astype(np.uint64))),
                            n=G.num_vertices, directed=False, weighted=False)

        def nk_lcc():
            a = nk.centrality.LocalClusteringCoefficient(h, turbo=True)
            a.run()
            return np.asarray(a.scores())

        def nk_plp():
            a = nk.community.PLP(h)
            a.run()
            return a.getPartition()
        out["networkit"] = (nk_lcc, nk_plp)
    except ImportError:
        pass
    if G.num_edges < 300_000:
        import networkx as nx
        gx = G.to_networkx()
        out["networkx"] = (lambda: np.array(list(nx.clustering(gx).values())), None)
    return out


def measure(name, reps):
    import gunpy
    from gunpy.bench.graphs import graph
    G = graph(name, 1)
    calls = {("lcc", "gunpy"): lambda: gunpy.lcc(G, backend="cpu").lcc,
             ("cdlp", "gunpy"): lambda: gunpy.cdlp(G, 10, backend="cpu")}
    for lib, (lcc, cdlp) in _peers(G).items():
        calls["lcc", lib] = lcc
        if cdlp is not None:
            calls["cdlp-like", lib] = cdlp
    ref = calls["lcc", "gunpy"]()
    for key, f in calls.items():
        got = f()
        if key[0] == "lcc":  # every peer's coefficients are gunpy's
            assert np.allclose(got, ref, rtol=1e-9, atol=1e-12), key
    return G, rounds(calls, [()] * reps)


def main(argv=None):
    args = parse(parser(__doc__, graphs="luxembourg_osm,delaunay_n16,rmat16,rmat18", reps=7),
                 argv)
    for name in args.graphs.split(","):
        G, times = measure(name, args.reps)
        # cdlp has no peer, and cdlp-like no gunpy: the table gives a ratio for lcc alone
        report(name, G, times, ("lcc", "cdlp", "cdlp-like"))


if __name__ == "__main__":
    main()
