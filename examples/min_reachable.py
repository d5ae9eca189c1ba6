"""For every vertex, the smallest vertex id it can reach along out-edges
(itself included): a label propagation that runs backwards.

A vertex's label can only fall, so a vertex whose label fell this round is
the only one that can lower its in-neighbours' labels next round: the loop
advances over the *reverse* graph from the vertices that changed.

    >>> import gunpy
    >>> from min_reachable import min_reachable
    >>> G = gunpy.Graph.from_edges([1, 2, 3], [2, 0, 1], num_vertices=5)
    >>> min_reachable(G, backend="cpu").label.tolist()
    [0, 0, 0, 0, 4]
"""
from collections import namedtuple

import numpy as np

import gunpy
from gunpy import Enactor, Functor, Problem, atomics

Data = namedtuple("Data", "label")


class Lower(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        # over the reverse graph: src's label reaches dst, which has an edge to src
        mine = data.label[src]
        return atomics.min(data.label, dst, mine) > mine


class MinProblem(Problem):
    Data = Data

    def init(self):
        self.label = self.backend.asarray(np.arange(self.num_vertices, dtype=np.int32))

    def extract(self):
        return self.to_host(self.label)


class MinEnactor(Enactor):
    def prepare_frontier(self, frontier):
        frontier.push(np.arange(self.num_vertices))

    def loop(self, frontier):
        return self.advance(frontier, Lower)


def min_reachable(G, *, backend="auto"):
    """``label[v]``: the smallest id reachable from ``v`` along out-edges."""
    src = np.repeat(np.arange(G.num_vertices), np.diff(G.row_offsets))
    reverse = gunpy.Graph.from_edges(G.column_indices, src, num_vertices=G.num_vertices)
    problem = MinProblem(reverse, backend=backend)
    stats = MinEnactor(problem).enact()
    return gunpy.Result(G, stats, label=problem.extract())
