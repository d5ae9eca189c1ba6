"""Enactors: the loop that sequences operators until a primitive converges.

A subclass fills the first frontier in :meth:`Enactor.prepare_frontier` and writes one
iteration in :meth:`Enactor.loop` as a sentence of operator calls (BFS: ``return
self.filter(self.advance(frontier, BFSFunctor), BFSFunctor)``); :meth:`Enactor.enact`
repeats ``loop`` until :meth:`Enactor.is_converged` (by default: the frontier is
empty), timing the run and logging every iteration.

The traversal operators (``advance``, ``filter``, ``compute``, ``near_far`` and their
fused forms) and their shared state come from
:class:`~gunpy.operators.traversal.Traversal`; every other operator is a free function
of :mod:`gunpy.operators` called with ``context=self.context``.
"""

import time

from gunpy._deprecated import EnactorAliases
from gunpy.direction import DIRECTIONS, DirectionPolicy
from gunpy.frontier import Frontier, FrontierStore
from gunpy.operators import advance as advance_op
from gunpy.operators.traversal import Traversal
from gunpy.progress import bar
from gunpy.result import Stats

__all__ = ["Enactor", "DirectionPolicy", "DIRECTIONS"]


class Enactor(EnactorAliases, Traversal):
    """Base class for a primitive's main loop.

    Parameters
    ----------
    problem : gunpy.Problem
    max_iterations : int, optional
        Stop after this many iterations even if not converged.
    load_balance, direction, direction_policy, auto_threshold, idempotent
        The traversal's options (:class:`~gunpy.operators.traversal.Traversal`):
        ``load_balance`` ("auto", "thread_mapped", "twc", "merge_path" or a registered
        strategy), ``direction`` ("push", "pull", "auto"), ``idempotent`` (a culling
        filter and a visited bitmap).
    """

    def __init__(self, problem, *, load_balance="auto", direction="push", direction_policy=None,
                 max_iterations=None, auto_threshold=advance_op.AUTO_THRESHOLD,
                 idempotent=False):
        super().__init__(problem, load_balance=load_balance, direction=direction,
                         direction_policy=direction_policy, auto_threshold=auto_threshold,
                         idempotent=idempotent)
        self.max_iterations = max_iterations
        self.iteration = 0
        self.stats = Stats(backend=self.backend.name)
        # kept with the context's scratch: a later run on this graph reuses their arrays
        self._saved = self.context.kept(
            "enactor.saved", lambda: FrontierStore(self.backend, self.num_vertices))

    # -- override -----------------------------------------------------------------
    def prepare_frontier(self, frontier):
        """Put the first items in ``frontier`` (e.g. the source vertex)."""
        raise NotImplementedError

    def loop(self, frontier):
        """One iteration: run operators on ``frontier`` and return the next frontier."""
        raise NotImplementedError

    def is_converged(self, frontier):
        """True when the run is done (default: empty frontier or the iteration cap)."""
        cap = self.max_iterations
        return (cap is not None and self.iteration >= cap) or frontier.size == 0

    def finalize(self):
        """Hook run once after the loop, inside the timed run (e.g. a last pass)."""

    @property
    def iterations_left(self):
        """Iterations before :attr:`max_iterations` (None: no cap); fused levels count."""
        return None if self.max_iterations is None else self.max_iterations - self.iteration

    # -- the loop -------------------------------------------------------------------
    def enact(self, *, progress=False):
        """Run the primitive to convergence; returns :class:`gunpy.result.Stats`.

        ``progress``: a bar of the iterations on standard error (``None``: only on a
        terminal; see :mod:`gunpy.progress`)."""
        with bar(self.max_iterations, type(self).__name__.replace("Enactor", "") or "run",
                 unit="level", enabled=progress) as shown:
            self.context.in_run = True  # the operators leave their tallies to the run's end
            try:
                return self._enact(shown)
            finally:
                self.context.in_run = False

    def _enact(self, shown):
        self.iteration = 0
        self.stats = Stats(backend=self.backend.name, load_balance=self.load_balance,
                           direction=self.direction)
        self.restart()
        self._saved.clear()
        ctx = self.context
        ctx.record = {"edges": 0}  # set-up work (before the first iteration) is not logged
        frontier = self._pool.first()
        self.backend.synchronize()
        # the timed run includes setting up the first frontier (CC's edge frontier, ...)
        start = time.perf_counter()
        self.prepare_frontier(frontier)
        if self.track_visited:
            self.mark_visited(frontier, clear=True)
        while not self.is_converged(frontier):
            ctx.record = record = {"iteration": self.iteration, "frontier": frontier.size,
                                   "edges": 0, "direction": None, "strategy": None}
            before = self.backend.counts()
            t0 = time.perf_counter()
            frontier = self.loop(frontier)
            if not isinstance(frontier, Frontier):
                raise TypeError(f"{type(self).__name__}.loop returned {frontier!r}, not a "
                                f"Frontier: return the next iteration's frontier (e.g. "
                                f"return self.advance(frontier, F))")
            # the size read syncs with the device, so the time covers the iteration's kernels
            frontier.size
            record["ms"] = (time.perf_counter() - t0) * 1e3
            self._log(record, before)
            shown.update(self.iteration - shown.n)
        # statistics the kernels kept on the device (culled counts, neighbor_reduce's
        # edges) reach their records: one read for the whole run, none per level
        self.stats.edges_visited += ctx.flush().get("edges", 0)
        ctx.record = {"edges": 0}
        self.stats.iterations = self.iteration
        self.finalize()
        ctx.flush()  # finalize's own, if any (its record is not logged)
        self.backend.synchronize()
        # finalize is part of the run (SSSP's parents, CC's relabelling)
        self.stats.elapsed_ms = (time.perf_counter() - start) * 1e3
        return self.stats

    def _log(self, record, before):
        # every iteration's way to the stats; a fused call's later levels ("then": their
        # (size, edges) rows) go as one block, with no counts of their own
        counts = self.backend.counts()
        levels = record.pop("then", None)
        record["iteration"] = self.iteration
        if counts.launches is not None:
            record["launches"], record["syncs"], record["uploads"] = (
                counts[0] - before[0], counts[1] - before[1], counts[2] - before[2])
        record["allocs"] = counts.allocs - before.allocs
        self.stats.log(record)
        self.stats.edges_visited += record["edges"]
        self.iteration += 1
        if levels is not None and len(levels):
            self.stats.log_levels(self.iteration, levels, counts.launches is not None,
                                  record["direction"], record["strategy"])
            self.stats.edges_visited += int(levels[:, 1].sum())
            self.iteration += len(levels)

    # -- frontiers the enactor keeps --------------------------------------------------
    def save_frontier(self, frontier):
        """Keep a copy of ``frontier`` (Gunrock 4.4.3); returns its :meth:`saved_frontier` index."""
        return self._saved.save(frontier, self.context.scratch)

    @property
    def num_saved_frontiers(self):
        return len(self._saved)

    def saved_frontier(self, i):
        """The ``i``-th saved frontier (a view on the storage, not a copy)."""
        return self._saved.get(i)
