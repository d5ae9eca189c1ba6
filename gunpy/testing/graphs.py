"""Small, nasty test graphs (each remembers its raw edge list: :mod:`gunpy.testing.oracles`)."""

import math

import networkx as nx
import numpy as np

from gunpy.testing.oracles import graph_from_edges, graph_from_networkx
from gunpy.testing.simulator import ON_CUDASIM

__all__ = ["SIM_GRAPHS", "graph_names", "nasty_graphs"]


#: the nasty graphs a simulator run covers (every simulated launch costs tens of ms):
#: a hub larger than a block, isolated vertices and several components, a random
#: directed graph, self-loops and duplicates in the input, and the degenerate cases
SIM_GRAPHS = ("star_hub", "mixed_lists", "disconnected", "random_directed", "self_loops_duplicates",
              "edgeless", "single_vertex")


def graph_names(graphs):
    """All of ``graphs``' names, or the :data:`SIM_GRAPHS` subset under the simulator."""
    names = sorted(graphs)
    return [n for n in names if n in SIM_GRAPHS] if ON_CUDASIM else names


def nasty_graphs(*, hub=None, random_n=None, seed=7, small=None):
    """Small graphs that break careless traversals, as ``{name: Graph}``.

    Each graph remembers the edge list it was built from (:func:`raw_edges`), so
    :func:`to_nx` and the ``reference_*`` oracles do not depend on gunpy's CSR build.

    Paths (long diameter), a star whose hub has ``hub`` leaves (larger than a
    CTA), disconnected pieces with isolated vertices, a directed cycle,
    self-loops and duplicate edges in the input, an edgeless graph, a single
    vertex, random directed and undirected graphs, a preferential-attachment
    graph with hubs, and a 2-D grid.

    ``small`` (default: when the CUDA simulator is on) shrinks them so that a
    simulated traversal takes seconds: paths of 16, a hub of 40 leaves (still
    more than the simulator's 32-thread block), random graphs of 40 vertices.
    """
    small = ON_CUDASIM if small is None else small
    hub = hub if hub is not None else (40 if small else 300)
    random_n = random_n if random_n is not None else (40 if small else 200)
    rng = np.random.default_rng(seed)
    out = {}
    n = 16 if small else 60
    out["path_undirected"] = graph_from_edges(np.arange(n - 1), np.arange(1, n), directed=False)
    out["path_directed"] = graph_from_edges(np.arange(n - 1), np.arange(1, n), directed=True)
    out["star_hub"] = graph_from_edges(np.zeros(hub, dtype=np.int64), np.arange(1, hub + 1),
                                       directed=False)
    out["star_directed_in"] = graph_from_edges(np.arange(1, hub + 1), np.zeros(hub, dtype=np.int64),
                                               directed=True)
    # two components, a triangle, and isolated vertices 10..14
    s = [0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16]
    d = [1, 2, 3, 4, 0, 6, 7, 8, 5, 16, 17]
    out["disconnected"] = graph_from_edges(s, d, num_vertices=20, directed=False)
    c = 12 if small else 40
    out["directed_cycle"] = graph_from_edges(np.arange(c), (np.arange(c) + 1) % c, directed=True)
    s = [0, 0, 0, 1, 1, 2, 3, 3, 4]
    d = [0, 1, 1, 1, 2, 2, 4, 4, 0]
    out["self_loops_duplicates"] = graph_from_edges(s, d, num_vertices=6, directed=True)
    out["edgeless"] = graph_from_edges([], [], num_vertices=7, directed=False)
    out["single_vertex"] = graph_from_edges([], [], num_vertices=1, directed=True)
    m = random_n * 4
    out["random_directed"] = graph_from_edges(rng.integers(0, random_n, m),
                                              rng.integers(0, random_n, m), directed=True)
    out["random_undirected"] = graph_from_edges(rng.integers(0, random_n, m // 2),
                                                rng.integers(0, random_n, m // 2),
                                                num_vertices=random_n, directed=False)
    ba = nx.barabasi_albert_graph(random_n, 3, seed=seed)
    out["preferential_hubs"] = graph_from_networkx(ba)
    side = int(math.sqrt(random_n))
    out["grid"] = graph_from_networkx(nx.convert_node_labels_to_integers(
        nx.grid_2d_graph(side, side)))
    return out
