"""Breadth-first search from several sources at once: each vertex's distance to
the nearest source, and which source that is.

    >>> import gunpy
    >>> from multi_source_bfs import multi_source_bfs
    >>> r = multi_source_bfs(gunpy.generators.path(6), [0, 5], backend="cpu")
    >>> r.depth.tolist(), r.nearest.tolist()
    ([0, 1, 2, 2, 1, 0], [0, 0, 0, 5, 5, 5])
"""
from collections import namedtuple

import numpy as np

import gunpy
from gunpy import INVALID, Enactor, Functor, Problem, atomics

Data = namedtuple("Data", "depth nearest")


class Reach(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        # the first source's wave to arrive claims dst; a tie between waves goes to
        # whichever claims first (the distance is the same)
        if atomics.cas(data.depth, dst, INVALID, data.depth[src] + 1) == INVALID:
            data.nearest[dst] = data.nearest[src]
            return True
        return False


class MultiProblem(Problem):
    Data = Data

    def init(self):
        self.depth = self.vertex_array(np.int32)
        self.nearest = self.vertex_array(np.int32)

    def reset(self, sources):
        self.sources = [self.check_source(s) for s in sources]
        self.backend.fill(self.depth, INVALID)
        self.backend.fill(self.nearest, INVALID)
        for s in self.sources:
            self.backend.write(self.depth, s, 0)
            self.backend.write(self.nearest, s, s)


class MultiEnactor(Enactor):
    def prepare_frontier(self, frontier):
        frontier.push(np.unique(self.problem.sources))

    def loop(self, frontier):
        return self.advance(frontier, Reach)


def multi_source_bfs(G, sources, *, backend="auto"):
    """``depth``: hops to the nearest of ``sources`` (-1: none reaches it); ``nearest``:
    which source that is (-1 likewise)."""
    problem = MultiProblem(G, backend=backend)
    problem.reset(sources)
    stats = MultiEnactor(problem).enact()
    return gunpy.Result(G, stats, depth=problem.to_host(problem.depth),
                        nearest=problem.to_host(problem.nearest), unreached=INVALID)
