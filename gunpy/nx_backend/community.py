"""Communities, cores and trusses: gunpy.louvain, gunpy.kcore, the intersect operator."""

import networkx as nx
import numpy as np

import gunpy

from ._graph import _device, _nx_order_csr

def louvain_communities(G, weight="weight", resolution=1, threshold=0.0000001, max_level=None,
                        seed=None):
    # networkx's py_random_state has made `seed` a random.Random: one draw seeds gunpy
    graph = G.graph
    if G.is_multigraph():  # parallel edges' weights summed, as networkx does
        A = nx.to_scipy_sparse_array(G.nxg, weight=G.weight_attr, dtype=np.float64)
        graph = gunpy.Graph.from_scipy(A, directed=False, remove_self_loops=False)
    draw = seed.randrange(2**31) if hasattr(seed, "randrange") else seed
    r = gunpy.louvain(graph, resolution=resolution, threshold=threshold, max_level=max_level,
                      seed=draw, backend=_device())
    return [{G.nodes[v] for v in members} for members in _members(r.labels)]


def _members(labels):
    order = np.argsort(labels, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(labels[order])) + 1) if labels.size else []


def _cores(G):
    core = gunpy.kcore(G.graph, backend=_device()).core.tolist()
    return dict(zip(G.nodes, core))


def core_number(G):
    return _cores(G)


def _core_subgraph(name):
    # networkx's own function (undispatched) on the original graph, given gunpy's numbers:
    # its k defaults, filters, node order and copied attributes (core_number= is declined)
    def subgraph(G, k=None, core_number=None):
        return getattr(nx, name).orig_func(G.nxg, k, _cores(G))
    subgraph.__name__ = name
    return subgraph


k_core, k_shell, k_crust, k_corona = (_core_subgraph(name) for name in
                                      ("k_core", "k_shell", "k_crust", "k_corona"))


def k_truss(G, k):
    """networkx's k-truss: edges in fewer than ``k - 2`` triangles dropped, round after round
    until none is, then the nodes left with no edge. Each round's supports are one call of
    the intersect operator (``C<A> = A plus.pair A^T``: the common neighbours of each
    edge's ends, no per-match hook); the dropped edges go in NumPy (a symmetric pair drops
    together: both directions have one support). The answer is networkx's ``G.copy()``
    less those edges and nodes: its node, edge and attribute order. can_run declines
    directed graphs, multigraphs and self-loops (networkx raises for them)."""
    from gunpy import operators as ops
    g = G.nxg
    n = G.graph.num_vertices
    ro, ci = G.graph.row_offsets, G.graph.column_indices
    src = np.repeat(np.arange(n, dtype=ci.dtype), np.diff(ro))
    ids = np.arange(ci.size)  # the CSR edges still in, in CSR order
    while ids.size:
        rows, cols = src[ids], ci[ids]
        current = gunpy.Graph(np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n)))),
                              cols, directed=False)
        ctx = ops.Context(current, _device())
        counts = ctx.backend.zeros(ids.size, np.int64)
        ops.intersect(current, gunpy.Functor, counts=counts, context=ctx)
        keep = ctx.backend.to_host(counts) >= k - 2
        if keep.all():
            break
        ids = ids[keep]
    return _copy_of(G, np.bincount(src[ids], minlength=n) > 0, src[ids] * n + ci[ids])


def _copy_of(G, keep_node, keep_key):
    """networkx's ``g.copy()`` less the nodes and edges not kept, built from the kept ones
    only (a truss keeps few of a sparse graph's edges): ``keep_node[v]`` by vertex id,
    ``keep_key`` the kept edges' ``u * n + v``. Nodes, adjacency and attribute dicts come in
    the order the copy, then the removals, would leave them (the edges in networkx's
    adjacency order: :func:`_nx_order_csr`)."""
    g, labels = G.nxg, G.nodes
    ro, ci = _nx_order_csr(G)
    src = np.repeat(np.arange(len(labels), dtype=np.int64), np.diff(ro))
    kept = np.isin(src * len(labels) + ci, keep_key)
    H = g.__class__()
    H.graph.update(g.graph)
    H.add_nodes_from((labels[v], g.nodes[labels[v]].copy())
                     for v in np.flatnonzero(keep_node).tolist())
    adj = g.adj
    H.add_edges_from((labels[u], labels[v], adj[labels[u]][labels[v]].copy())
                     for u, v in zip(src[kept].tolist(), ci[kept].tolist()))
    return H
