"""Breadth-first search: the depth and BFS-tree parent of every reachable vertex.

Gunrock section 5.1.1: advance from the frontier to unvisited neighbours,
claiming each with a compare-and-swap so that exactly one parent wins, then
filter the discovered vertices into the next frontier.
"""

from collections import namedtuple

import numpy as np

from gunpy import INVALID, Enactor, Functor, Problem, atomics
from gunpy.registry import Option, Primitive, register_primitive
from gunpy.result import Result, reached_edges

__all__ = ["bfs", "BFSResult", "BFSFunctor", "BFSProblem", "BFSEnactor"]

BFSData = namedtuple("BFSData", "depth parent")


class BFSFunctor(Functor):
    skip_visited = True  # a visited vertex has its depth: the CAS below would fail

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        # compare-and-swap: several frontier vertices may reach dst in one iteration
        return atomics.cas(data.depth, dst, INVALID, data.depth[src] + 1) == INVALID

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        data.parent[dst] = src


class IdempotentBFSFunctor(Functor):
    skip_visited = True

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        # no atomics: racing discoverers all store depth[src] + 1, a benign race;
        # the duplicates they put in the frontier are culled by the filter
        return data.depth[dst] == INVALID

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        data.depth[dst] = data.depth[src] + 1
        data.parent[dst] = src


class BFSProblem(Problem):
    Data = BFSData

    def init(self):
        self.depth = self.vertex_array(np.int32)
        self.parent = self.vertex_array(np.int32)

    def reset(self, source):
        self.source = self.check_source(source)
        self.backend.fill(self.depth, INVALID)
        self.backend.fill(self.parent, INVALID)
        self.backend.write(self.depth, self.source, 0)
        self.backend.write(self.parent, self.source, self.source)

    def extract(self):
        return self.to_host(self.depth), self.to_host(self.parent)


class BFSEnactor(Enactor):
    """The BFS loop: advance to unvisited neighbours, then filter them into the next frontier.

    Parameters
    ----------
    problem : BFSProblem
        Reset with the source before :meth:`enact`.
    direction : {"auto", "push", "pull"}, default "auto"
        Direction-optimised BFS by default (see :class:`gunpy.enactor.DirectionPolicy`).
    load_balance : {"auto", "thread_mapped", "twc", "merge_path"}, default "auto"
    idempotent : bool, default False
        Discover without atomics; the filter culls the duplicates.
    direction_policy : gunpy.enactor.DirectionPolicy, optional
    **kw
        Other :class:`gunpy.Enactor` options (``max_iterations``, ``auto_threshold``).
    """

    def __init__(self, problem, *, direction="auto", load_balance="auto", idempotent=False,
                 direction_policy=None, **kw):
        super().__init__(problem, direction=direction, load_balance=load_balance,
                         idempotent=idempotent, direction_policy=direction_policy, **kw)
        self.functor = IdempotentBFSFunctor if self.idempotent else BFSFunctor

    def prepare_frontier(self, frontier):
        frontier.push(self.problem.source)

    def loop(self, frontier):
        # advance then filter; thin push levels run fused, many to a call
        return self.advance_filter(frontier, self.functor)


class BFSResult(Result):
    """``depth`` (int32, -1 unreachable) and ``parent`` (int32, -1 unreachable, the source is its own parent)."""

    _fields = ("depth", "parent")
    _main = "depth"
    _columns = {"depth": "distance", "parent": "predecessor"}
    _vertex_fields = ("parent",)

    def _unreached(self, name, arr):
        return self.depth < 0


def bfs(G, source, *, direction="auto", load_balance="auto", idempotent=False, backend="auto",
        direction_policy=None, max_depth=None):
    """Breadth-first search from ``source``.

    Parameters
    ----------
    G : gunpy.Graph
    source : int
        Vertex id in ``0..G.num_vertices-1``.
    direction : {"auto", "push", "pull"}, default "auto"
        ``auto`` switches between top-down push and bottom-up pull per iteration
        (direction-optimised BFS); see :class:`gunpy.enactor.DirectionPolicy`.
    load_balance : {"auto", "thread_mapped", "twc", "merge_path"}, default "auto"
        How push advance maps neighbour lists to threads.
    idempotent : bool, default False
        Discover vertices without atomics, tolerating duplicates that the
        filter culls (Gunrock's idempotent BFS).
    backend : {"auto", "cuda", "cpu"}, default "auto"
    direction_policy : gunpy.enactor.DirectionPolicy, optional
        Switching heuristic and its parameters for ``direction="auto"``.
    max_depth : int, optional
        Stop at the vertices ``max_depth`` edges from the source (networkx's
        ``cutoff``): farther ones stay unreached (-1). The traversal ends there, so
        a shallow search costs what its ball of vertices does, not the graph.

    Returns
    -------
    BFSResult
        ``depth`` and ``parent`` arrays (int32; -1 where unreachable;
        ``parent[source] == source``) and ``stats``.

    Raises
    ------
    IndexError
        ``source`` is out of range.
    ValueError
        An unknown backend, direction or load-balance option, a negative ``max_depth``.
    TypeError
        A ``max_depth`` that is not an integer.

    See Also
    --------
    networkx.single_source_shortest_path_length : the depths BFS must equal.
    scipy.sparse.csgraph.breadth_first_order

    Notes
    -----
    The parent array is a valid BFS tree (Graph500's five checks), not
    necessarily the one networkx would build: any neighbour one level up may win.

    Examples
    --------
    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 3], directed=False)
    >>> r = gunpy.bfs(G, 0, backend="cpu")
    >>> r.depth.tolist(), r.parent.tolist()
    ([0, 1, 2, 3], [0, 0, 1, 2])
    >>> gunpy.bfs(G, 0, max_depth=1, backend="cpu").depth.tolist()
    [0, 1, -1, -1]
    """
    if max_depth is not None:
        if isinstance(max_depth, (bool, np.bool_)) or not isinstance(max_depth,
                                                                     (int, np.integer)):
            raise TypeError(f"max_depth must be an integer number of levels, got {max_depth!r}")
        if max_depth < 0:
            raise ValueError(f"max_depth must be at least 0, got {max_depth}")
        max_depth = int(max_depth)
    problem = BFSProblem(G, backend=backend)
    problem.reset(source)
    # one iteration a level: the cap ends the traversal at depth max_depth
    enactor = BFSEnactor(problem, load_balance=load_balance, direction=direction,
                         idempotent=idempotent, direction_policy=direction_policy,
                         max_iterations=max_depth)
    stats = enactor.enact()
    # the problem's own arrays (it is done with them): NumPy on a host backend, left on
    # the device by the CUDA backend until the result is read
    r = BFSResult(G, stats, depth=problem.depth, parent=problem.parent)
    stats.graph500_edges = lambda: reached_edges(G, r.device_array("depth") if G.on_device
                                                 else r.depth)
    return r


def _summary(r, G, source):
    reached = r.depth >= 0
    return [f"source {source}: reached {int(reached.sum())} of {G.num_vertices} vertices, "
            f"max depth {int(r.depth.max(initial=0))}"]


def _warmup(G, source, backend):
    from gunpy.enactor import DirectionPolicy
    # direction="auto" that never pulls: its push kernels (which keep the visited set)
    # on levels fat enough for merge-path, where the default would pull instead
    bfs(G, source, backend=backend)
    bfs(G, source, direction_policy=DirectionPolicy(alpha=1e-12), backend=backend)
    bfs(G, source, direction="push", backend=backend)


register_primitive(Primitive(
    "bfs", bfs, source="one", fields=BFSResult._fields, summary=_summary, warmup=_warmup,
    options=(Option("direction", "auto", "push, pull or auto (direction-optimising)",
                    choices=("auto", "push", "pull")),
             Option("load_balance", "auto", "advance strategy (thread_mapped, twc, merge_path, "
                                            "auto or a registered one)"),
             Option("idempotent", False, "no atomics in advance; duplicates culled")),
    networkx=("bfs_edges", "generic_bfs_edges", "bfs_layers", "single_source_shortest_path_length", "bfs_tree",
              "bfs_predecessors", "bfs_successors", "descendants_at_distance", "has_path",
              "descendants", "ancestors", "node_connected_component",
              "single_source_shortest_path", "closeness_centrality", "harmonic_centrality",
              "eccentricity", "single_target_shortest_path_length",
              "single_target_shortest_path", "predecessor", "all_pairs_shortest_path_length",
              "all_pairs_shortest_path", "average_shortest_path_length", "global_efficiency",
              "bidirectional_shortest_path", "ego_graph"),
    dist="gunpy.dist:bfs"))
