"""The road-network rows on the CPU: wall time per call of gunpy and its peers, interleaved.

    python bench/road.py                         # luxembourg_osm, delaunay_n16, rmat18
    python bench/road.py --graphs luxembourg_osm --primitives bfs,bc --reps 15

Every library runs in this one process, on the same graph and the same roots,
called as a user would (``gunpy.bfs(G, root, backend="cpu")``, scipy's
``breadth_first_order``, igraph's ``bfs``, ...; :mod:`gunpy.bench.peers` knows
how each peer is called). Each call is made once untimed (compiling or
loading kernels, warming caches; every root once); then ``--reps`` rounds time every (primitive,
library) pair once each, in turn, so that a slow patch of a shared machine
falls on all of them. The report gives each call's median and range in ms and
gunpy's median over the fastest peer's (>1: gunpy is faster). BFS and BC
rotate over ``--roots`` roots (the same for every library); BC is one source
per call, igraph's ``betweenness(sources=[s])`` its peer (issue 14's target).

Peers that do not import are left out (``pip install igraph networkit``);
``--peers none`` times gunpy alone. As ``gunpy bench`` does, OpenMP's wait
policy is set to PASSIVE first unless the environment sets one
(:mod:`gunpy.backends.threads`; ``--keep-wait-policy`` leaves libgomp's spinning).
"""

import numpy as np

from interleaved import parse, parser, report, rounds

PRIMS = ("bfs", "cc", "pagerank", "bc")
PEERS = ("scipy", "networkit", "igraph")


def _load(name):
    from gunpy.bench.graphs import graph, weighted_twin
    G = graph(name, 1)
    return G, weighted_twin(G, 1)


def _roots(G, k):
    deg = np.diff(G.row_offsets)
    return np.random.default_rng(7).choice(np.flatnonzero(deg > 0), size=k, replace=False)


def _calls(G, Gw, roots, prims, peers):
    """{(primitive, library): f(i)}: the i-th call (BFS and BC take root i mod len(roots))."""
    import gunpy
    from gunpy.bench import peers as P
    libs = {}
    for cls in (P.ScipyPeer, P.NetworkitPeer, P.IgraphPeer):
        peer = cls()
        if peer.name not in peers:
            continue
        if peer.available():
            peer.prepare(G, Gw)
            libs[peer.name] = peer
    r = [int(x) for x in roots]
    calls = {}
    for prim in prims:
        if prim == "bfs":
            calls[prim, "gunpy"] = lambda i: gunpy.bfs(G, r[i % len(r)], backend="cpu")
        elif prim == "bc":
            calls[prim, "gunpy"] = lambda i: gunpy.bc(G, [r[i % len(r)]], backend="cpu")
        else:
            calls[prim, "gunpy"] = (lambda f: lambda i: f(G, backend="cpu"))(getattr(gunpy, prim))
        for name, peer in libs.items():
            if prim == "bc" and name == "igraph":
                calls[prim, name] = (lambda p: lambda i: p.bc([r[i % len(r)]]))(peer)
            elif prim in ("bfs",) and hasattr(peer, prim):
                calls[prim, name] = (lambda p: lambda i: p.bfs(r[i % len(r)]))(peer)
            elif prim in ("cc", "pagerank") and hasattr(peer, prim):
                calls[prim, name] = (lambda f: lambda i: f())(getattr(peer, prim))
    return calls


def measure(name, prims, reps, nroots, peers=PEERS):
    G, Gw = _load(name)
    calls = _calls(G, Gw, _roots(G, nroots), prims, peers)
    for f in calls.values():
        for i in range(nroots):
            f(i)  # compile or load kernels (each root's: they may take other strategies)
    return G, rounds(calls, [(i,) for i in range(reps)])


def main(argv=None):
    ap = parser(__doc__, graphs="luxembourg_osm,delaunay_n16,rmat18", reps=9)
    ap.add_argument("--primitives", default=",".join(PRIMS))
    ap.add_argument("--roots", type=int, default=3)
    ap.add_argument("--peers", default=",".join(PEERS), help="'none': gunpy alone")
    args = parse(ap, argv)
    prims = [p for p in args.primitives.split(",") if p]
    peers = [p for p in args.peers.split(",") if p in PEERS]
    for name in args.graphs.split(","):
        G, times = measure(name, prims, args.reps, args.roots, peers)
        report(name, G, times, prims)


if __name__ == "__main__":
    main()
