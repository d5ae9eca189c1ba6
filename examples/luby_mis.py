"""A maximal independent set by Luby's rule, written with gunpy's framework.

Each round, every undecided vertex whose priority beats all its undecided
neighbours' joins the set, and its neighbours leave. The loop keeps two
frontiers at once (the undecided vertices and the round's winners): each
operator writes to a frontier no one holds, so ``frontier`` is still whole
when it is filtered again at the end of the round.

    >>> import gunpy
    >>> from luby_mis import mis
    >>> chosen = mis(gunpy.generators.path(5), backend="cpu")
    >>> chosen.in_set.astype(int).tolist()
    [0, 1, 0, 0, 1]
"""
from collections import namedtuple

import numpy as np

import gunpy
from gunpy import Enactor, Functor, Problem, atomics

MISData = namedtuple("MISData", "state prio best")
UNDECIDED, IN, OUT = 0, 1, 2


class Reset(Functor):
    @staticmethod
    def apply_vertex(v, data):
        data.best[v] = -1


class Spread(Functor):  # best[v] = the highest priority among v's undecided neighbours
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        if src != dst:
            atomics.max(data.best, dst, data.prio[src])
        return False


class Join(Functor):
    @staticmethod
    def cond_vertex(v, data):
        return data.prio[v] > data.best[v]

    @staticmethod
    def apply_vertex(v, data):
        data.state[v] = IN


class Remove(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return src != dst

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        data.state[dst] = OUT


class StillUndecided(Functor):
    @staticmethod
    def cond_vertex(v, data):
        return data.state[v] == UNDECIDED


class MISProblem(Problem):
    Data = MISData

    def init(self):
        self.state = self.vertex_array(np.int8, UNDECIDED)
        self.best = self.vertex_array(np.int64, -1)

    def reset(self, seed=0):
        self.backend.fill(self.state, UNDECIDED)
        perm = np.random.default_rng(seed).permutation(self.num_vertices).astype(np.int64)
        self.prio = self.backend.asarray(perm)  # distinct priorities: no ties

    def extract(self):
        return self.to_host(self.state) == IN


class MISEnactor(Enactor):
    def prepare_frontier(self, frontier):
        frontier.push(np.arange(self.num_vertices))

    def loop(self, frontier):
        self.compute(frontier, Reset)
        self.advance(frontier, Spread, output="none")
        winners = self.filter(frontier, Join)
        self.advance(winners, Remove, output="none")
        return self.filter(frontier, StillUndecided)


def mis(G, *, seed=0, backend="auto"):
    """A maximal independent set of the undirected graph ``G`` (self-loops ignored)."""
    problem = MISProblem(G, backend=backend)
    problem.reset(seed)
    stats = MISEnactor(problem).enact()
    return gunpy.Result(G, stats, in_set=problem.extract())
