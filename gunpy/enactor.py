"""Enactors: the loop that sequences operators until a primitive converges.

A subclass fills the first frontier in :meth:`Enactor.prepare_frontier` and
writes one iteration in :meth:`Enactor.loop` as a sentence of operator calls::

    def loop(self, frontier):
        frontier = self.advance(frontier, BFSFunctor)
        return self.filter(frontier, BFSFunctor)

:meth:`Enactor.enact` repeats ``loop`` until :meth:`Enactor.is_converged` (by
default: the frontier is empty), timing the run and logging every iteration.
"""

import time

import numpy as np

from gunpy.frontier import Frontier
from gunpy.functor import compile_functor
from gunpy.operators import advance as advance_op
from gunpy.operators import compute as compute_op
from gunpy.operators import filter as filter_op
from gunpy.result import Stats

__all__ = ["Enactor"]

#: advance directions; "auto" means push until direction optimisation lands
DIRECTIONS = ("push", "auto")


class Enactor:
    """Base class for a primitive's main loop.

    Parameters
    ----------
    problem : gunpy.Problem
    load_balance : {"auto", "thread_mapped", ...}, default "auto"
        Advance workload mapping (see :mod:`gunpy.operators.advance`).
    direction : {"push"}, default "push"
    max_iterations : int, optional
        Stop after this many iterations even if not converged.
    """

    def __init__(self, problem, *, load_balance="auto", direction="push", max_iterations=None):
        self.problem = problem
        self.backend = problem.backend
        self.graph = problem.graph
        self.num_vertices = problem.num_vertices
        self.load_balance = advance_op.check_load_balance(load_balance)
        if direction not in DIRECTIONS:
            raise ValueError(f"unknown direction {direction!r}; valid directions are "
                             f"{', '.join(repr(d) for d in DIRECTIONS)}")
        self.direction = direction
        self.max_iterations = max_iterations
        self.iteration = 0
        self._scratch = {}
        self._record = None
        self.stats = Stats(backend=self.backend.name)
        cap = max(self.num_vertices, 1)
        dtype = problem.index_dtype
        self._frontiers = [Frontier(self.backend, cap, dtype=dtype, name="A"),
                           Frontier(self.backend, cap, dtype=dtype, name="B")]
        # for compute over all vertices: a queue that is never read, and the count n
        self.dummy_queue = self.backend.zeros(1, dtype)
        self.vertex_count = self.backend.asarray(np.array([self.num_vertices], dtype=np.int64))

    # -- override -----------------------------------------------------------------
    def prepare_frontier(self, frontier):
        """Put the first items in ``frontier`` (e.g. the source vertex)."""
        raise NotImplementedError

    def loop(self, frontier):
        """One iteration: run operators on ``frontier`` and return the next frontier."""
        raise NotImplementedError

    def is_converged(self, frontier):
        """True when the run is done (default: empty frontier or the iteration cap)."""
        if self.max_iterations is not None and self.iteration >= self.max_iterations:
            return True
        if self.backend.dry_run:
            return self.iteration >= 2
        return frontier.size == 0

    def finalize(self):
        """Hook run once after the loop (e.g. to fill stats)."""

    # -- the loop -------------------------------------------------------------------
    def enact(self):
        """Run the primitive to convergence; returns :class:`gunpy.result.Stats`."""
        self.iteration = 0
        self.stats = Stats(backend=self.backend.name, load_balance=self.load_balance,
                           direction=self.direction)
        frontier = self._frontiers[0]
        frontier.clear()
        self.prepare_frontier(frontier)
        self.backend.synchronize()
        start = time.perf_counter()
        while not self.is_converged(frontier):
            self._record = {"iteration": self.iteration, "frontier": frontier.size,
                            "edges": 0, "direction": None, "strategy": None}
            frontier = self.loop(frontier)
            self.stats.per_iteration.append(self._record)
            self.stats.edges_visited += self._record["edges"]
            self.iteration += 1
        self.backend.synchronize()
        self.stats.elapsed_ms = (time.perf_counter() - start) * 1e3
        self.stats.iterations = self.iteration
        self._record = None
        self.finalize()
        return self.stats

    # -- operators ------------------------------------------------------------------
    def advance(self, frontier, functor, *, load_balance=None, direction=None):
        """Visit the out-edges of ``frontier``; returns the frontier of accepted destinations.

        For each edge ``(src, dst)`` whose ``cond_edge`` holds, ``apply_edge`` runs
        and ``dst`` joins the output.
        """
        direction = direction or self.direction
        if direction not in DIRECTIONS:
            raise ValueError(f"unknown direction {direction!r}; valid directions are "
                             f"{', '.join(repr(d) for d in DIRECTIONS)}")
        hooks = compile_functor(functor, self.backend)
        out = self._output_for(frontier)
        dg = self.backend.graph(self.graph)
        strategy, edges = advance_op.execute(self, dg, frontier, out, hooks,
                                             self.problem.data(),
                                             load_balance=load_balance or self.load_balance)
        self._log(edges=edges, direction=direction, strategy=strategy)
        return out

    def filter(self, frontier, functor, *, mode="predicated"):
        """Keep the items of ``frontier`` whose ``cond_vertex`` holds (running ``apply_vertex``)."""
        hooks = compile_functor(functor, self.backend)
        out = self._output_for(frontier)
        return filter_op.execute(self, frontier, out, hooks, self.problem.data(), mode=mode)

    def compute(self, frontier, functor):
        """Run ``apply_vertex`` on every item of ``frontier`` (``None``: every vertex)."""
        hooks = compile_functor(functor, self.backend)
        compute_op.execute(self, frontier, hooks, self.problem.data())
        return frontier

    # -- plumbing -------------------------------------------------------------------
    def _output_for(self, frontier):
        a, b = self._frontiers
        return b if frontier is a else a

    def _log(self, *, edges=0, direction=None, strategy=None):
        if self._record is None:
            return
        self._record["edges"] += int(edges)
        if direction:
            self._record["direction"] = direction
        if strategy:
            self._record["strategy"] = strategy

    def scratch(self, name, n, dtype):
        """A reusable work array of at least ``n`` items (grown on demand)."""
        arr = self._scratch.get(name)
        if arr is None or arr.shape[0] < n or arr.dtype != np.dtype(dtype):
            arr = self.backend.empty(max(int(n), 1), dtype)
            self._scratch[name] = arr
        return arr

