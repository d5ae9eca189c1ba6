"""Issue 16's catalogue on the CPU: wall time per call of gunpy and its peers, interleaved.

    python bench/catalogue.py                                  # rmat18, luxembourg_osm
    python bench/catalogue.py --graphs rmat18 --primitives kcore,hits --reps 5

Every library runs in this one process on the same (undirected) graph, called as
a user would, and each result is checked against gunpy's first:

``kcore``
    ``gunpy.kcore(G)`` against NetworKit's ``CoreDecomposition``, igraph's
    ``coreness()`` and, under 300,000 edges, networkx's ``core_number`` (equal);
``hits``
    ``gunpy.hits(G)`` against igraph's ``hub_score()`` and ``authority_score()``
    (one call each, ARPACK) and scipy's ``svds(A, k=1)`` (networkx's ``hits``
    minus its dicts), each normalised to sum 1 (equal to ``--hits-atol``);
``ppr``
    ``gunpy.ppr(G, sources)`` (``--sources`` vertices, one call) against igraph's
    ``personalized_pagerank(reset_vertices=s)`` (PRPACK, exact) and networkx's
    ``_pagerank_scipy`` loop written with scipy, once per source (1e-6 in L1 per
    source: networkx's own tolerance).

``color``
    ``gunpy.color(G)`` against igraph's ``vertex_coloring_greedy()`` and, under
    300,000 edges, networkx's ``greedy_color(strategy="largest_first")`` (every
    colouring checked proper; their colour counts printed). NetworKit has only
    ``SpectralColoring`` (a spectral heuristic, no greedy colouring): left out;
``mst`` (on the graph with Graph500's uniform random weights, ``weighted_twin``)
    ``gunpy.mst(G)`` against scipy's ``minimum_spanning_tree``, igraph's
    ``spanning_tree(weights=)`` and NetworKit's ``KruskalMSF`` (the same total
    weight, 1e-9 relative);

``scc`` (on directed graphs: RMAT's directed Kronecker graph of the same scale, a
bundled graph's edges as directed ones, both ways where it is undirected)
    ``gunpy.scc(G)`` against scipy's ``connected_components(connection="strong")``,
    igraph's ``connected_components(mode="strong")`` and NetworKit's
    ``StronglyConnectedComponents`` (the same partition). A graph stored both ways
    is symmetric: ``gunpy.scc`` checks that (once per graph) and answers it with
    ``gunpy.cc``, where the peers run their strong-components code;

``bc_weighted`` (not in the default set; on ``weighted_twin``'s weights)
    ``gunpy.bc(W, sources, weighted=True)`` (``--sources`` sources) against igraph's
    ``betweenness(weights=w, sources=sources)`` (equal, 1e-9 relative), NetworKit's
    ``EstimateBetweenness(h, len(sources), parallel=True)`` (as many sampled pivots,
    its own: timed, not compared) and, under 50,000 edges, networkx's
    ``betweenness_centrality_subset(weight="weight")`` (equal);

``spgemm``, ``wedges`` (not in the default set: their outputs outgrow memory past
RMAT-14)
    gunpy.blas's ``plus_times(A @ A).new()`` and ``plus_pair(A @ A).new(mask=~A.S)``
    against scipy's ``A @ A`` (and ``C - C.multiply(A)``) and python-graphblas
    (SuiteSparse) with the same semiring and mask (entries and value sums equal).

One untimed call each, then ``--reps`` rounds of one call per library in turn
(so that a slow patch of the shared machine falls on all); medians and ranges
in ms, and gunpy's median over the fastest peer's (>1: gunpy is faster).
"""

import sys
import warnings

import numpy as np

from interleaved import parse, parser, report, rounds

warnings.filterwarnings("ignore", category=RuntimeWarning)  # igraph on undirected graphs

PRIMS = ("kcore", "hits", "ppr", "color", "mst")


def _edges(G):
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    keep = src < G.column_indices  # each undirected edge once
    return src[keep], G.column_indices[keep]


def _kcore_peers(G, out):
    import igraph as ig
    import networkit as nk
    src, dst = _edges(G)
    gi = ig.Graph(n=G.num_vertices, edges=np.column_stack([src, dst]))
    out["igraph"] = lambda: np.asarray(gi.coreness())
    h = nk.GraphFromCoo((np.ones(src.size), (src.astype(np.uint64), dst.astype(np.uint64))),
                        n=G.num_vertices, directed=False, weighted=False)

    def networkit():
        c = nk.centrality.CoreDecomposition(h)
        c.run()
        return np.asarray(c.scores(), dtype=np.int64)
    out["networkit"] = networkit
    if G.num_edges < 300_000:
        import networkx as nx
        gx = G.to_networkx()
        out["networkx"] = lambda: np.array(list(nx.core_number(gx).values()))


def _hits_peers(G, out):
    import igraph as ig
    import scipy.sparse.linalg as sla
    src, dst = _edges(G)
    gi = ig.Graph(n=G.num_vertices, edges=np.column_stack([src, dst]))
    A = G.to_scipy().astype(np.float64)

    def igraph():
        h, a = np.asarray(gi.hub_score()), np.asarray(gi.authority_score())
        return h / h.sum(), a / a.sum()

    def scipy():
        _, _, vt = sla.svds(A, k=1, maxiter=100, tol=1e-8)
        a = vt.ravel().real
        h = A @ a
        return h / h.sum(), a / a.sum()
    out["igraph"], out["scipy"] = igraph, scipy


def _ppr_peers(G, sources, out):
    import igraph as ig
    src, dst = _edges(G)
    gi = ig.Graph(n=G.num_vertices, edges=np.column_stack([src, dst]))
    n = G.num_vertices
    A = G.to_scipy().astype(np.float64)
    S = np.asarray(A.sum(axis=1)).ravel()
    inv = np.divide(1.0, S, out=np.zeros(n), where=S != 0)
    P = (A.T.multiply(inv)).T.tocsr()
    dangling = np.flatnonzero(S == 0)

    def scipy_one(s, alpha=0.85, tol=1e-6):
        x = np.full(n, 1.0 / n)
        for _ in range(100):
            last = x
            x = alpha * (x @ P)
            x[s] += alpha * last[dangling].sum() + 1 - alpha
            if np.abs(x - last).sum() < n * tol:
                break
        return x
    out["igraph"] = lambda: np.array([gi.personalized_pagerank(reset_vertices=[s])
                                      for s in sources])
    out["scipy"] = lambda: np.array([scipy_one(s) for s in sources])


def _color_peers(G, out):
    import igraph as ig
    src, dst = _edges(G)
    gi = ig.Graph(n=G.num_vertices, edges=np.column_stack([src, dst]))
    out["igraph"] = lambda: np.asarray(gi.vertex_coloring_greedy())
    if G.num_edges < 300_000:
        import networkx as nx
        gx = nx.Graph(G.to_networkx())
        gx.remove_edges_from(list(nx.selfloop_edges(gx)))
        out["networkx"] = lambda: (lambda c: np.array([c[v] for v in range(G.num_vertices)]))(
            nx.greedy_color(gx, strategy="largest_first"))


def proper_colouring(G, colors):
    """Whether no edge (self-loops aside) joins two vertices of one colour."""
    src, dst = _edges(G)
    return not np.any(colors[src] == colors[dst])


def _weighted_peer_graphs(W, src, dst):
    """The undirected weighted graph ``W``, its edges ``src``, ``dst`` once each
    (:func:`_edges`), for the peers: its scipy matrix, the edges' weights, its igraph
    graph and its networkit graph."""
    import igraph as ig
    import networkit as nk
    A = W.to_scipy().tocsr()
    w = np.asarray(A[src, dst]).ravel()
    gi = ig.Graph(n=W.num_vertices, edges=np.column_stack([src, dst]))
    h = nk.GraphFromCoo((w, (src.astype(np.uint64), dst.astype(np.uint64))),
                        n=W.num_vertices, directed=False, weighted=True)
    return A, w, gi, h


def _mst_peers(W, out):
    import networkit as nk
    from scipy.sparse import csgraph
    A, w, gi, h = _weighted_peer_graphs(W, *_edges(W))
    out["scipy"] = lambda: float(csgraph.minimum_spanning_tree(A).sum())
    out["igraph"] = lambda: float(w[gi.spanning_tree(weights=w, return_tree=False)].sum())

    def networkit():
        k = nk.graph.KruskalMSF(h)
        k.run()
        return k.getTotalWeight()
    out["networkit"] = networkit


def _bc_weighted_peers(W, sources, out):
    import networkit as nk
    src, dst = _edges(W)
    _, w, gi, h = _weighted_peer_graphs(W, src, dst)
    out["igraph"] = lambda: np.array(gi.betweenness(weights=w, sources=sources))

    def networkit():  # its own pivots: timed only
        b = nk.centrality.EstimateBetweenness(h, len(sources), False, True)
        b.run()
    out["networkit"] = networkit
    if W.num_edges < 50_000:
        import networkx as nx
        g = nx.Graph()
        g.add_nodes_from(range(W.num_vertices))
        g.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()))
        out["networkx"] = lambda: (lambda d: np.array([d[v] for v in range(len(d))]))(
            nx.betweenness_centrality_subset(g, sources, list(g), normalized=False,
                                             weight="weight"))


def directed_twin(G, name):
    """scc's graph: RMAT's directed graph of the same scale, else ``G``'s edges directed."""
    import gunpy
    if name.startswith("rmat"):
        return gunpy.generators.rmat(int(name[4:]), 16, seed=1, directed=True)
    return gunpy.Graph(G.row_offsets, G.column_indices, directed=True)


def smallest_ids(labels):
    """Component labels renamed to each component's smallest vertex id (gunpy.scc's)."""
    labels = np.asarray(labels)
    first = np.full(labels.max(initial=-1) + 1, labels.size)
    np.minimum.at(first, labels, np.arange(labels.size))
    return first[labels]


def _scc_peers(H, out):
    import igraph as ig
    import networkit as nk
    from scipy.sparse import csgraph
    A = H.to_scipy().tocsr()
    src = np.repeat(np.arange(H.num_vertices), H.out_degrees())
    dst = H.column_indices
    gi = ig.Graph(n=H.num_vertices, edges=np.column_stack([src, dst]), directed=True)
    h = nk.GraphFromCoo((np.ones(src.size), (src.astype(np.uint64), dst.astype(np.uint64))),
                        n=H.num_vertices, directed=True, weighted=False)
    out["scipy"] = lambda: smallest_ids(csgraph.connected_components(
        A, directed=True, connection="strong")[1])
    out["igraph"] = lambda: smallest_ids(gi.connected_components(mode="strong").membership)

    def networkit():
        s = nk.components.StronglyConnectedComponents(h)
        s.run()
        return smallest_ids(s.getPartition().getVector())
    out["networkit"] = networkit


def _nnz_sum(C):
    """``(entries, sum of values)`` of a gunpy.blas, scipy or python-graphblas matrix."""
    from gunpy import blas
    if isinstance(C, blas.Matrix):
        return C.nvals, float(C.to_coo()[2].sum())
    if hasattr(C, "ss"):
        return C.nvals, float(C.reduce_scalar().new().value)  # python-graphblas
    return C.nnz, float(C.sum())  # scipy


def _spgemm_calls(G, prim, calls):
    """``A @ A`` (plus_times) or the wedges that close no triangle (plus_pair under
    ``~A.S``) of gunpy.blas, scipy and python-graphblas (SuiteSparse)."""
    import graphblas as gb

    from gunpy import blas
    A = blas.Matrix.from_graph(G, backend="cpu")
    S = G.to_scipy().astype(np.float64).tocsr()
    r, c = S.nonzero()
    gA = gb.Matrix.from_coo(r, c, np.asarray(S[r, c]).ravel(), nrows=S.shape[0],
                            ncols=S.shape[0])
    if prim == "spgemm":
        calls[prim, "gunpy"] = lambda: blas.semiring.plus_times(A @ A).new()
        calls[prim, "scipy"] = lambda: S @ S
        calls[prim, "graphblas"] = lambda: gb.semiring.plus_times(gA @ gA).new()
        return
    P = (S != 0).astype(np.float64)
    calls[prim, "gunpy"] = lambda: blas.semiring.plus_pair(A @ A).new(mask=~A.S)
    calls[prim, "scipy"] = lambda: (lambda C: C - C.multiply(P))(P @ P)
    calls[prim, "graphblas"] = lambda: gb.semiring.plus_pair(gA @ gA).new(mask=~gA.S)


def _calls(G, prims, sources, name=""):
    import gunpy
    calls, checks = {}, {}
    for prim in prims:
        peers = {}
        if prim == "kcore":
            calls[prim, "gunpy"] = lambda: gunpy.kcore(G, backend="cpu").core
            _kcore_peers(G, peers)
            checks[prim] = lambda a, b: np.array_equal(a, b)
        elif prim == "hits":
            calls[prim, "gunpy"] = lambda: (lambda r: (r.hubs, r.authorities))(
                gunpy.hits(G, backend="cpu"))
            _hits_peers(G, peers)
            checks[prim] = lambda a, b: max(np.abs(a[0] - b[0]).max(),
                                            np.abs(a[1] - b[1]).max()) < ARGS.hits_atol
        elif prim == "scc":
            H = directed_twin(G, name)
            calls[prim, "gunpy"] = lambda: gunpy.scc(H, backend="cpu").labels
            _scc_peers(H, peers)
            checks[prim] = lambda a, b: np.array_equal(a, b)
        elif prim == "color":
            calls[prim, "gunpy"] = lambda: gunpy.color(G, backend="cpu").colors
            _color_peers(G, peers)
            checks[prim] = lambda a, b: proper_colouring(G, a) and proper_colouring(G, b)
        elif prim == "mst":
            from gunpy.bench.graphs import weighted_twin
            W = weighted_twin(G, 1)
            calls[prim, "gunpy"] = lambda: gunpy.mst(W, backend="cpu").total
            _mst_peers(W, peers)
            checks[prim] = lambda a, b: abs(a - b) <= 1e-9 * abs(a)
        elif prim == "bc_weighted":
            from gunpy.bench.graphs import weighted_twin
            W = weighted_twin(G, 1)
            if not W.values.min() > 0:  # [0, 1): a zero is possible, and BC needs > 0
                W = gunpy.Graph(W.row_offsets, W.column_indices,
                                np.where(W.values > 0, W.values, 1.0), directed=W.directed)
            calls[prim, "gunpy"] = lambda: gunpy.bc(W, sources, weighted=True,
                                                    backend="cpu").centrality
            _bc_weighted_peers(W, sources, peers)
            checks[prim] = lambda a, b: b is None or np.allclose(a, b, rtol=1e-9, atol=1e-9)
        elif prim in ("spgemm", "wedges"):
            _spgemm_calls(G, prim, calls)
            checks[prim] = lambda a, b: (lambda x, y: x[0] == y[0] and
                                         abs(x[1] - y[1]) <= 1e-9 * abs(x[1]))(
                _nnz_sum(a), _nnz_sum(b))
        else:
            calls[prim, "gunpy"] = lambda: gunpy.ppr(G, sources, backend="cpu").rank
            _ppr_peers(G, sources, peers)
            checks[prim] = lambda a, b: np.abs(a - b).sum(axis=1).max() < 1e-5
        for name, f in peers.items():
            calls[prim, name] = f
    return calls, checks


def measure(name, prims, reps, nsources):
    from gunpy.bench.graphs import graph
    G = graph(name, 1)
    deg = np.diff(G.row_offsets)
    sources = np.random.default_rng(7).choice(np.flatnonzero(deg > 0), nsources,
                                              replace=False).tolist()
    calls, checks = _calls(G, prims, sources, name)
    first = {}
    for (prim, lib), f in calls.items():  # untimed: compile, load, warm; and check
        first[prim, lib] = f()
        if prim == "color":
            print(f"  {name} color: {lib} {int(first[prim, lib].max()) + 1} colours",
                  file=sys.stderr)
        if lib != "gunpy" and not checks[prim](first[prim, "gunpy"], first[prim, lib]):
            print(f"  note: {prim} of {lib} differs from gunpy's", file=sys.stderr)
    return G, rounds(calls, [()] * reps)


ARGS = None


def main(argv=None):
    global ARGS
    ap = parser(__doc__, graphs="rmat18,luxembourg_osm", reps=7)
    ap.add_argument("--primitives", default=",".join(PRIMS))
    ap.add_argument("--sources", type=int, default=4,
                    help="PPR's and bc_weighted's sources per call")
    ap.add_argument("--hits-atol", type=float, default=1e-6)
    ARGS = args = parse(ap, argv)
    prims = [p for p in args.primitives.split(",") if p]
    for name in args.graphs.split(","):
        G, times = measure(name, prims, args.reps, args.sources)
        report(name, G, times, prims, width=6)


if __name__ == "__main__":
    main()
