"""gunpy bench: the benchmark suite, gunpy beside the libraries a user would otherwise pick.

Every library runs in the same process on the same graph (converted once,
untimed) after one untimed warm-up call, and every result is validated. BFS
follows Graph500: 64 random roots of degree >= 1, each run checked with the
five parent-tree checks, TEPS counting every undirected edge of the reached
component once (Graph500 v2), harmonic mean over roots; Gunrock's convention
(edges the traversal actually visited) is reported beside it. SSSP follows
Graph500's kernel 2 the same way (weights uniform in [0, 1)). BC, CC and
PageRank report time (PageRank also per iteration).

Outputs (``--out DIR``, default ``bench/results``): ``results.json`` (every
measurement), ``results.md`` (tables with ratios to gunpy) and PNG plots
(speedup per primitive and graph; BFS frontier size and direction per
iteration).

    gunpy bench                                   # CPU suite: RMAT 16-20, road, mesh, social
    gunpy bench --scales 20 22 24 --backend cuda  # on a GPU
    gunpy bench --primitives bfs --graphs rmat18 luxembourg_osm --roots 8 --quick
"""

import argparse
import importlib
import json
import math
import os
import statistics
import sys
import time

import numpy as np

from gunpy.bench.machine import copy_bandwidth, machine_info  # noqa: F401  (re-exported)
from gunpy.bench.machine import harmonic as _harmonic

__all__ = ["main", "run_suite"]

#: primitives with a hand-written benchmark (peers side by side); "tc" is triangle counting.
#: Every other registered primitive (gunpy.registry) gets a generic row: gunpy's wall
#: time per call with its default options, from the highest-degree vertex where it takes one.
PRIMITIVES = ("bfs", "sssp", "cc", "pagerank", "bc", "tc")
_ALIASES = {"triangles": "tc"}


def _suite_primitives():
    """The suite's names: the hand-written ones, then every other registered primitive."""
    from gunpy import registry
    extra = [n for n in registry.names() if n not in PRIMITIVES and n not in _ALIASES]
    return list(PRIMITIVES) + extra


# ----------------------------------------------------------------------------- graphs
def _graph(name, seed):
    import gunpy
    from gunpy import datasets, generators
    if name.startswith("rmat"):
        return generators.rmat(int(name[4:]), 16, seed=seed)
    if name.startswith("grid"):
        side = int(name[4:])
        return generators.grid_2d(side, side, drop=0.03, seed=seed)
    if name in datasets.available() or name in datasets.remote():
        return datasets.load(name, download=False)
    raise ValueError(f"unknown benchmark graph {name!r}")


def _weighted_twin(G, seed):
    """Graph500 kernel-2 weights, uniform in [0, 1), the same both ways on undirected graphs."""
    import gunpy
    rng = np.random.default_rng([seed, 2])
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    dst = G.column_indices.astype(np.int64)
    if G.directed:
        return gunpy.Graph(G.row_offsets, G.column_indices, rng.random(G.num_edges),
                           directed=True)
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    key = lo * G.num_vertices + hi
    uniq, inv = np.unique(key, return_inverse=True)
    w = rng.random(uniq.size)[inv]
    return gunpy.Graph(G.row_offsets, G.column_indices, w, directed=False)


def _roots(G, count, seed):
    deg = G.out_degrees()
    cand = np.flatnonzero(deg > 0)
    rng = np.random.default_rng([seed, 3])
    return rng.choice(cand, size=min(count, cand.size), replace=False).tolist()


def _component_edges(G, reached):
    """Graph500 v2 m: undirected edges of the traversed component, each counted once."""
    deg = G.out_degrees()
    total = int(deg[reached].sum())
    return total // 2 if not G.directed else total


# ----------------------------------------------------------------------------- timing
def _timed(fn, *a, **kw):
    t = time.perf_counter()
    out = fn(*a, **kw)
    return (time.perf_counter() - t) * 1e3, out


# ----------------------------------------------------------------------------- peers
class Peer:
    """A library's versions of the primitives; ``None`` where it has none."""

    name = ""
    max_vertices = None
    modules = ()  # what must import for the peer to run

    def available(self):
        try:
            for m in self.modules:
                importlib.import_module(m)
            return True
        except Exception:
            return False

    def prepare(self, G, Gw):
        pass


class ScipyPeer(Peer):
    name = "scipy"

    def prepare(self, G, Gw):
        import scipy.sparse as sp
        self.A = G.to_scipy()
        self.Aw = Gw.to_scipy()
        self.n = G.num_vertices
        deg = np.asarray(self.A.sum(axis=1)).ravel()
        self.inv = np.divide(1.0, deg, out=np.zeros(self.n), where=deg != 0)
        self.AT = sp.csr_array(self.A.T)

    def bfs(self, s):
        import scipy.sparse.csgraph as csg
        _, pred = csg.breadth_first_order(self.A, s, directed=True, return_predecessors=True)
        parent = np.where(pred < 0, -1, pred)
        parent[s] = s
        return parent

    def sssp(self, s):
        import scipy.sparse.csgraph as csg
        return csg.dijkstra(self.Aw, directed=True, indices=s)

    def cc(self):
        import scipy.sparse.csgraph as csg
        return csg.connected_components(self.A, directed=True, connection="weak")[0]

    def pagerank(self, alpha=0.85, tol=1e-6, max_iter=100):
        # networkx's own algorithm (_pagerank_scipy), on the same CSR
        n = self.n
        x = np.full(n, 1.0 / n)
        dangling = self.inv == 0
        for it in range(max_iter):
            last = x
            x = alpha * (self.AT @ (x * self.inv)) + (alpha * x[dangling].sum() + 1 - alpha) / n
            if np.abs(x - last).sum() < n * tol:
                return x, it + 1
        return x, max_iter


class NetworkxPeer(Peer):
    name = "networkx"
    max_vertices = 70_000

    def prepare(self, G, Gw):
        from gunpy.testing import to_nx
        self.g = to_nx(G)
        self.gw = to_nx(Gw)

    def bfs(self, s):
        import networkx as nx
        return nx.single_source_shortest_path_length(self.g, s)

    def sssp(self, s):
        import networkx as nx
        return nx.single_source_dijkstra_path_length(self.gw, s)

    def cc(self):
        import networkx as nx
        f = nx.weakly_connected_components if self.g.is_directed() else nx.connected_components
        return sum(1 for _ in f(self.g))

    def pagerank(self, alpha=0.85, tol=1e-6, max_iter=100):
        import networkx as nx
        return nx.pagerank(self.g, alpha=alpha, tol=tol, max_iter=max_iter), None

    def bc(self, sources):
        import networkx as nx
        return nx.betweenness_centrality_subset(self.g, sources, list(self.g))

    def tc(self):
        import networkx as nx
        g = self.g.to_undirected() if self.g.is_directed() else self.g
        return sum(nx.triangles(g).values()) // 3


class BlasPeer(Peer):
    """gunpy.blas.algorithms: the same primitives written in GraphBLAS on gunpy's operators
    (on the suite's backend), beside the native ones."""

    name = "gunpy.blas"
    backend = "auto"

    def prepare(self, G, Gw):
        from gunpy import blas
        self.A = blas.Matrix.from_graph(G, backend=self.backend)
        self.Aw = blas.Matrix.from_graph(Gw, backend=self.backend)

    def bfs(self, s):
        from gunpy.blas import algorithms
        return algorithms.bfs(self.A, s)

    def sssp(self, s):
        from gunpy.blas import algorithms
        return algorithms.sssp(self.Aw, s)

    def pagerank(self, alpha=0.85, tol=1e-6, max_iter=100):
        from gunpy.blas import algorithms
        r = algorithms.pagerank(self.A, alpha=alpha, tol=tol, max_iter=max_iter)
        return r.rank, r.iterations

    def bc(self, sources):
        from gunpy.blas import algorithms
        return algorithms.bc(self.A, sources)

    def tc(self):
        from gunpy.blas import algorithms
        return algorithms.triangle_count(self.A)


class GraphBLASPeer(Peer):
    """SuiteSparse:GraphBLAS through python-graphblas: a direction-optimising BFS written
    as the push-pull paper's masked mxv, graphblas-algorithms' SSSP and PageRank."""

    name = "graphblas"

    modules = ("graphblas", "graphblas_algorithms")

    def prepare(self, G, Gw):
        import graphblas as gb
        import graphblas_algorithms as ga
        A = G.to_scipy().tocoo()
        self.n = G.num_vertices
        self.directed = G.directed
        self.A = gb.Matrix.from_coo(A.row, A.col, np.ones(A.nnz, dtype=bool), nrows=self.n,
                                    ncols=self.n)
        self.AT = self.A.T.new()
        W = Gw.to_scipy().tocoo()
        self.ga_w = ga.Graph(gb.Matrix.from_coo(W.row, W.col, W.data, nrows=self.n, ncols=self.n))
        self.ga = ga.Graph(gb.Matrix.from_coo(A.row, A.col, np.ones(A.nnz), nrows=self.n,
                                              ncols=self.n))

    def bfs(self, s):
        import graphblas as gb
        from graphblas import binary, semiring
        n = self.n
        levels = gb.Vector(int, n)
        q = gb.Vector(bool, n)
        q[s] = True
        levels[s] = 0
        depth = 0
        while q.nvals:
            depth += 1
            if q.nvals > n // 16:  # pull: masked mxv over the unvisited rows
                q(~levels.S, replace=True) << semiring.any_pair(self.AT @ q)
            else:                  # push: vxm from the sparse frontier
                q(~levels.S, replace=True) << semiring.any_pair(q @ self.A)
            levels(q.S, accum=binary.second) << depth
        return levels

    def sssp(self, s):
        import graphblas_algorithms as ga
        return ga.single_source_bellman_ford_path_length(self.ga_w, s)

    def tc(self):
        """LAGraph's "Sandia" method: sum(L plus.pair L.T) under the mask L."""
        from graphblas import binary, monoid, select, semiring
        S = self.A.ewise_add(self.AT, binary.lor).new() if self.directed else self.A
        L = select.tril(S, -1).new()
        C = semiring.plus_pair(L @ L.T).new(mask=L.S)
        return int(C.reduce_scalar(monoid.plus).value or 0)

    def pagerank(self, alpha=0.85, tol=1e-6, max_iter=100):
        import graphblas_algorithms as ga
        return ga.pagerank(self.ga, alpha=alpha, tol=tol, max_iter=max_iter), None


class IgraphPeer(Peer):
    name = "igraph"

    modules = ("igraph",)

    def prepare(self, G, Gw):
        import igraph as ig
        src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
        keep = src <= G.column_indices if not G.directed else np.ones(src.size, bool)
        edges = np.column_stack([src[keep], G.column_indices[keep]])
        self.g = ig.Graph(n=G.num_vertices, edges=edges, directed=G.directed)
        self.g.es["weight"] = Gw.values[keep]

    def bfs(self, s):
        return self.g.bfs(s)

    def sssp(self, s):
        return self.g.distances(source=s, weights="weight")

    def cc(self):
        return len(self.g.connected_components(mode="weak"))

    def pagerank(self, alpha=0.85, tol=1e-6, max_iter=100):
        return self.g.pagerank(damping=alpha), None

    def bc(self, sources):
        return self.g.betweenness(sources=sources, directed=self.g.is_directed())

    def tc(self):
        g = self.g.as_undirected() if self.g.is_directed() else self.g
        return len(g.simplify().list_triangles())


class NetworkitPeer(Peer):
    name = "networkit"

    modules = ("networkit",)

    def prepare(self, G, Gw):
        import networkit as nk
        src = np.repeat(np.arange(G.num_vertices), G.out_degrees()).astype(np.uint64)
        dst = G.column_indices.astype(np.uint64)
        keep = src <= dst if not G.directed else np.ones(src.size, bool)
        self.g = nk.GraphFromCoo((np.ones(int(keep.sum())), (src[keep], dst[keep])),
                                 n=G.num_vertices, directed=G.directed, weighted=False)
        self.gw = nk.GraphFromCoo((Gw.values[keep], (src[keep], dst[keep])),
                                  n=G.num_vertices, directed=G.directed, weighted=True)
        nk.setNumberOfThreads(os.cpu_count() or 1)

    def bfs(self, s):
        import networkit as nk
        b = nk.distance.BFS(self.g, s, storePaths=False)
        b.run()
        return b

    def sssp(self, s):
        import networkit as nk
        d = nk.distance.Dijkstra(self.gw, s, storePaths=False)
        d.run()
        return d

    def cc(self):
        import networkit as nk
        c = (nk.components.WeaklyConnectedComponents(self.g) if self.g.isDirected()
             else nk.components.ConnectedComponents(self.g))
        c.run()
        return c.numberOfComponents()

    def pagerank(self, alpha=0.85, tol=1e-6, max_iter=100):
        import networkit as nk
        pr = nk.centrality.PageRank(self.g, damp=alpha, tol=tol)
        pr.run()
        return pr, None

    def bc_estimate(self, k):
        """NetworKit has no fixed-source BC: its sampler with k random sources (not validated)."""
        import networkit as nk
        b = nk.centrality.EstimateBetweenness(self.g, k, False, True)
        b.run()
        return b


ALL_PEERS = (BlasPeer, ScipyPeer, GraphBLASPeer, NetworkitPeer, IgraphPeer, NetworkxPeer)


# ----------------------------------------------------------------------------- the suite
def _record(rows, **kw):
    rows.append(kw)
    return kw


def _bench_bfs(G, name, backend, roots, peer_roots, peers, rows, validate, bar, args):
    import gunpy
    from gunpy.testing import check_bfs_tree
    for s in roots[:4]:  # warm-up: compiles the kernels these paths need (push, pull, mappings)
        gunpy.bfs(G, s, backend=backend, direction=args.direction, load_balance=args.load_balance)
    times, teps, gteps = [], [], []
    component_edges = {}
    sample_iterations, sample_edges = None, -1
    for s in roots:
        r = gunpy.bfs(G, s, backend=backend, direction=args.direction,
                      load_balance=args.load_balance)
        if validate:
            check_bfs_tree(G, s, r.depth, r.parent)
        ms = r.stats.elapsed_ms
        m = component_edges[s] = _component_edges(G, r.depth >= 0)
        times.append(ms)
        teps.append(m / (ms * 1e-3))
        gteps.append(r.stats.edges_visited / (ms * 1e-3))
        if sample_iterations is None or m > sample_edges:  # plot the largest traversal
            sample_iterations, sample_edges = r.stats.per_iteration, m
        bar.update(1)
    _record(rows, graph=name, primitive="bfs", library="gunpy", backend=backend,
            runs=len(roots), median_ms=statistics.median(times), min_ms=min(times),
            max_ms=max(times), hmean_teps=_harmonic(teps), median_teps=statistics.median(teps),
            hmean_teps_visited=_harmonic(gteps), median_teps_visited=statistics.median(gteps),
            validated=validate,
            per_iteration=sample_iterations)
    for peer in peers:
        if not hasattr(peer, "bfs"):
            continue
        peer.bfs(roots[0])
        pt, pteps = [], []
        for s in roots[:peer_roots]:
            ms, out = _timed(peer.bfs, s)
            pt.append(ms)
            pteps.append(component_edges[s] / (ms * 1e-3))
        _record(rows, graph=name, primitive="bfs", library=peer.name, runs=len(pt),
                median_ms=statistics.median(pt), min_ms=min(pt), max_ms=max(pt),
                hmean_teps=_harmonic(pteps), median_teps=statistics.median(pteps),
                validated=False)
        bar.update(1)


def _bench_sssp(G, Gw, name, backend, roots, peer_roots, peers, rows, validate, bar):
    import gunpy
    from gunpy.testing import check_sssp_tree
    for s in roots[:4]:
        gunpy.sssp(Gw, s, backend=backend)
    times, teps = [], []
    reached_edges = {}
    ref = None
    for s in roots:
        r = gunpy.sssp(Gw, s, backend=backend)
        if validate:
            check_sssp_tree(Gw, s, r.distance, r.parent)
        ms = r.stats.elapsed_ms
        times.append(ms)
        m = reached_edges[s] = _component_edges(Gw, np.isfinite(r.distance))
        teps.append(m / (ms * 1e-3))
        if ref is None:
            ref = r.distance
        bar.update(1)
    _record(rows, graph=name, primitive="sssp", library="gunpy", backend=backend,
            runs=len(roots), median_ms=statistics.median(times), min_ms=min(times),
            max_ms=max(times), hmean_teps=_harmonic(teps), median_teps=statistics.median(teps),
            validated=validate)
    for peer in peers:
        if not hasattr(peer, "sssp"):
            continue
        peer.sssp(roots[0])
        pt, pteps = [], []
        for s in roots[:peer_roots]:
            ms, out = _timed(peer.sssp, s)
            pteps.append(reached_edges[s] / (ms * 1e-3))
            if validate and peer.name == "scipy" and s == roots[0]:
                if not np.allclose(out, ref, rtol=1e-9, equal_nan=True):
                    raise AssertionError(f"SSSP distances differ from scipy on {name}")
            pt.append(ms)
        _record(rows, graph=name, primitive="sssp", library=peer.name, runs=len(pt),
                median_ms=statistics.median(pt), min_ms=min(pt), max_ms=max(pt),
                hmean_teps=_harmonic(pteps), median_teps=statistics.median(pteps),
                validated=peer.name == "scipy" and validate)
        bar.update(1)


def _repeat(fn, reps):
    fn()
    ts = []
    out = None
    for _ in range(reps):
        ms, out = _timed(fn)
        ts.append(ms)
    return ts, out


def _bench_cc(G, name, backend, peers, rows, reps, bar):
    import gunpy
    gunpy.cc(G, backend=backend)
    runs = [gunpy.cc(G, backend=backend) for _ in range(reps)]
    times = [r.stats.elapsed_ms for r in runs]
    ncomp = runs[0].num_components
    _record(rows, graph=name, primitive="cc", library="gunpy", backend=backend, runs=reps,
            median_ms=statistics.median(times), min_ms=min(times), components=ncomp,
            validated=True)
    for peer in peers:
        if not hasattr(peer, "cc"):
            continue
        ts, out = _repeat(peer.cc, reps)
        if out != ncomp:
            raise AssertionError(f"{peer.name} finds {out} components on {name}, gunpy {ncomp}")
        _record(rows, graph=name, primitive="cc", library=peer.name, runs=reps,
                median_ms=statistics.median(ts), min_ms=min(ts), validated=True)
        bar.update(1)


def _bench_pagerank(G, name, backend, peers, rows, reps, bar):
    import gunpy
    gunpy.pagerank(G, backend=backend)
    runs = [gunpy.pagerank(G, backend=backend) for _ in range(reps)]
    times = [r.stats.elapsed_ms for r in runs]
    it = runs[0].iterations
    per_it = statistics.median(x["ms"] for x in runs[-1].stats.per_iteration)
    ref = runs[0].rank
    _record(rows, graph=name, primitive="pagerank", library="gunpy", backend=backend,
            runs=reps, median_ms=statistics.median(times), min_ms=min(times), iterations=it,
            ms_per_iteration=per_it, validated=True)
    for peer in peers:
        if not hasattr(peer, "pagerank"):
            continue
        ts, (out, pit) = _repeat(peer.pagerank, reps)
        if peer.name == "scipy" and not np.allclose(out, ref, rtol=1e-6, atol=1e-12):
            raise AssertionError(f"PageRank differs from the scipy power iteration on {name}")
        _record(rows, graph=name, primitive="pagerank", library=peer.name, runs=reps,
                median_ms=statistics.median(ts), min_ms=min(ts), iterations=pit,
                validated=peer.name == "scipy")
        bar.update(1)


def _bench_bc(G, name, backend, roots, peers, rows, bar):
    import gunpy
    srcs = roots[:4]
    gunpy.bc(G, srcs, backend=backend)  # warm-up on the same sources: every path compiled
    r = gunpy.bc(G, srcs, backend=backend)
    per = r.stats.elapsed_ms / len(srcs)
    _record(rows, graph=name, primitive="bc", library="gunpy", backend=backend,
            runs=len(srcs), median_ms=per, min_ms=per, note="per source", validated=False)
    for peer in peers:
        if hasattr(peer, "bc"):
            if peer.name == "networkx" and G.num_vertices > 20000:
                continue
            ms, out = _timed(peer.bc, srcs)
            _record(rows, graph=name, primitive="bc", library=peer.name, runs=len(srcs),
                    median_ms=ms / len(srcs), min_ms=ms / len(srcs), note="per source",
                    validated=False)
        elif hasattr(peer, "bc_estimate"):
            ms, _ = _timed(peer.bc_estimate, len(srcs))
            _record(rows, graph=name, primitive="bc", library=peer.name, runs=len(srcs),
                    median_ms=ms / len(srcs), min_ms=ms / len(srcs),
                    note="per source, its own random sources (not validated)", validated=False)
        bar.update(1)


def _bench_tc(G, name, backend, peers, rows, reps, bar):
    """Triangle counting: wall time per call (orientation or L included) for every library."""
    import gunpy
    ts, count = _repeat(lambda: gunpy.triangle_count(G, backend=backend), reps)
    _record(rows, graph=name, primitive="tc", library="gunpy", backend=backend, runs=reps,
            median_ms=statistics.median(ts), min_ms=min(ts), triangles=count, validated=True)
    for peer in peers:
        if not hasattr(peer, "tc"):
            continue
        if peer.name in ("networkx", "igraph") and G.num_edges > 2_000_000:
            continue  # networkx is slow; igraph lists every triangle (RMAT-20: out of memory)
        pts, out = _repeat(peer.tc, reps)
        if out != count:
            raise AssertionError(f"{peer.name} counts {out} triangles on {name}, gunpy {count}")
        _record(rows, graph=name, primitive="tc", library=peer.name, runs=reps,
                median_ms=statistics.median(pts), min_ms=min(pts), validated=True)
        bar.update(1)


def run_suite(args):
    """Run the configured suite; returns the list of result rows."""
    from tqdm.auto import tqdm

    import gunpy
    from gunpy import backends
    backend = backends.resolve(args.backend)
    graphs = list(args.graphs or [f"rmat{s}" for s in args.scales] + ["luxembourg_osm",
                                                                        "delaunay_n16",
                                                                        "email-Enron"])
    graphs += [g for g in gunpy.datasets.remote() if args.with_remote and
               os.path.exists(os.path.join(gunpy.datasets.cache_dir(), f"{g}.npz"))]
    args.primitives = list(dict.fromkeys(_ALIASES.get(p, p) for p in args.primitives))
    rows = []
    BlasPeer.backend = backend
    peers_all = [P() for P in ALL_PEERS if P.name not in args.skip_peers]
    peers_all = [p for p in peers_all if p.available()]
    for gname in tqdm(graphs, desc="graphs", disable=args.quiet):
        t0 = time.perf_counter()
        G = _graph(gname, args.seed)
        Gw = _weighted_twin(G, args.seed)
        load_ms = (time.perf_counter() - t0) * 1e3
        peers = [p for p in peers_all if p.max_vertices is None or G.num_vertices <= p.max_vertices]
        for p in peers:
            p.prepare(G, Gw)
        roots = _roots(G, args.roots, args.seed)
        steps = len(args.primitives) * (len(peers) + 1) + len(roots) * (
            ("bfs" in args.primitives) + ("sssp" in args.primitives))
        with tqdm(total=steps, desc=gname, leave=False, disable=args.quiet) as bar:
            _record(rows, graph=gname, primitive="graph", library="-",
                    vertices=G.num_vertices, edges=G.num_edges, directed=G.directed,
                    build_ms=load_ms)
            if "bfs" in args.primitives:
                _bench_bfs(G, gname, backend, roots, args.peer_roots, peers, rows,
                           not args.no_validate, bar, args)
            if "sssp" in args.primitives:
                _bench_sssp(G, Gw, gname, backend, roots, args.peer_roots, peers, rows,
                            not args.no_validate, bar)
            if "cc" in args.primitives:
                _bench_cc(G, gname, backend, peers, rows, args.reps, bar)
            if "pagerank" in args.primitives:
                _bench_pagerank(G, gname, backend, peers, rows, args.reps, bar)
            if "bc" in args.primitives:
                _bench_bc(G, gname, backend, roots, peers, rows, bar)
            if "tc" in args.primitives:
                _bench_tc(G, gname, backend, peers, rows, args.reps, bar)
            for pname in args.primitives:
                if pname not in PRIMITIVES:
                    _bench_registered(pname, G, Gw, gname, backend, rows, args.reps, bar)
    return rows


def _bench_registered(pname, G, Gw, name, backend, rows, reps, bar):
    """A registered primitive with no hand-written benchmark: gunpy's wall time per call."""
    from gunpy import registry
    entry = registry.primitive(pname)
    graph = Gw if entry.weighted else G
    source = int(graph.out_degrees().argmax()) if graph.num_vertices else 0
    ts, _ = _repeat(lambda: entry.call(graph, source, backend=backend), reps)
    _record(rows, graph=name, primitive=pname, library="gunpy", backend=backend, runs=reps,
            median_ms=statistics.median(ts), min_ms=min(ts), validated=False)
    bar.update(1)


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


# ----------------------------------------------------------------------------- reports
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
        fig.tight_layout()
        path = os.path.join(outdir, "speedup.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
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
        fig.tight_layout()
        path = os.path.join(outdir, "bfs_frontier.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
    return files


# ----------------------------------------------------------------------------- CLI
def build_parser():
    p = argparse.ArgumentParser(prog="gunpy bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--scales", type=int, nargs="+", default=[16, 18, 20],
                   help="Graph500 RMAT scales (edge factor 16)")
    p.add_argument("--graphs", nargs="+", help="graphs instead of the default set "
                   "(rmatS, gridN, or dataset names)")
    p.add_argument("--with-remote", action="store_true",
                   help="also the registry's large graphs already in the cache")
    names = _suite_primitives()
    p.add_argument("--primitives", nargs="+", default=names, choices=names + list(_ALIASES),
                   help="hand-written benchmarks with peers (tc: triangle counting), then any "
                        "other registered primitive (gunpy's time per call)")
    p.add_argument("--roots", type=int, default=64, help="BFS/SSSP roots (Graph500: 64)")
    p.add_argument("--peer-roots", type=int, default=8, help="roots timed for each peer")
    p.add_argument("--reps", type=int, default=3, help="repetitions for CC and PageRank")
    p.add_argument("--skip-peers", nargs="*", default=[], help="peer names to leave out")
    p.add_argument("--direction", default="auto")
    p.add_argument("--load-balance", default="auto")
    p.add_argument("--no-validate", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=os.path.join("bench", "results"))
    p.add_argument("--quick", action="store_true", help="8 roots, 1 rep, no networkx")
    p.add_argument("--strategies", action="store_true",
                   help="instead: BFS time for every load balance x direction")
    p.add_argument("--startup", action="store_true",
                   help="instead: time to first result in new processes, cold and warm "
                        "kernel cache (import, each primitive, gunpy run)")
    p.add_argument("--startup-reps", type=int, default=3, help="processes per start-up case")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def main(args=None):
    if args is None or isinstance(args, list):
        args = build_parser().parse_args(args)
    elif hasattr(args, "rest"):
        args = build_parser().parse_args(args.rest)
    if args.quick:
        args.roots, args.peer_roots, args.reps = 8, 4, 1
        args.skip_peers = list(args.skip_peers) + ["networkx"]
    from gunpy import backends
    backend = backends.resolve(args.backend)
    if args.startup:
        from gunpy.bench import startup
        args.startup_backend = backend
        return startup.main(args)
    if args.strategies:
        rows = strategy_table(args)
        info = machine_info(backend)
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "strategies.json"), "w") as f:
            json.dump({"machine": info, "rows": rows}, f, indent=1, default=str)
        md = strategy_markdown(rows, info)
        with open(os.path.join(args.out, "strategies.md"), "w") as f:
            f.write(md)
        print(md)
        return 0
    rows = run_suite(args)
    info = machine_info(backend)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"machine": info, "rows": rows}, f, indent=1, default=str)
    md = markdown(rows, info)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(md)
    files = plots(rows, args.out)
    print(md)
    print("wrote", ", ".join([os.path.join(args.out, "results.json"),
                             os.path.join(args.out, "results.md")] + files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
