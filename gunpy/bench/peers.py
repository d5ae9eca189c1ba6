"""The peers of ``gunpy bench``: each library's versions of the primitives, on one graph.

A peer converts the graph once (:meth:`Peer.prepare`, untimed), then offers the
primitives it has as methods (``bfs(s)``, ``sssp(s)``, ``cc()``, ``pagerank()``,
``bc(sources)``, ``tc()``); the suite times the methods a peer has and leaves out
the ones it lacks.
"""

import importlib
import os

import numpy as np

__all__ = ["PRIMITIVES", "Peer", "ScipyPeer", "NetworkxPeer", "BlasPeer", "GraphBLASPeer", "IgraphPeer",
           "NetworkitPeer", "ALL_PEERS"]

#: primitives with a hand-written benchmark (peers side by side); "tc" is triangle counting.
#: Every other registered primitive (gunpy.registry) gets a generic row: gunpy's wall
#: time per call with its default options, from the highest-degree vertex where it takes one.
PRIMITIVES = ("bfs", "sssp", "cc", "pagerank", "bc", "tc")
_ALIASES = {"triangles": "tc"}


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
