"""Communities and cores: gunpy.louvain, gunpy.kcore."""

import networkx as nx
import numpy as np

import gunpy

from ._graph import _device

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
