"""Enactors: the loop that sequences operators until a primitive converges.

A subclass fills the first frontier in :meth:`Enactor.prepare_frontier` and
writes one iteration in :meth:`Enactor.loop` as a sentence of operator calls::

    def loop(self, frontier):
        frontier = self.advance(frontier, BFSFunctor)
        return self.filter(frontier, BFSFunctor)

:meth:`Enactor.enact` repeats ``loop`` until :meth:`Enactor.is_converged` (by
default: the frontier is empty), timing the run and logging every iteration.

The operators themselves are free functions (:mod:`gunpy.operators`); the
enactor's methods call them with its :class:`~gunpy.operators.Context`
(scratch arrays, the iteration's stats record, the visited bitmap), its two
ping-pong frontiers as outputs, and for ``direction="auto"`` the push-pull
state (:class:`~gunpy.direction.PushPull`).
"""

import time

from gunpy.direction import DIRECTIONS, DirectionPolicy, PushPull, check_direction
from gunpy.frontier import FrontierPool, FrontierStore
from gunpy.functor import compile_functor
from gunpy.operators import advance as advance_op
from gunpy.operators import compute as compute_op
from gunpy.operators import filter as filter_op
from gunpy.operators import levels as levels_op
from gunpy.operators import neighbor_reduce as neighbor_reduce_op
from gunpy.operators import reduce as reduce_op
from gunpy.operators.context import Context
from gunpy.operators.priority_queue import NearFarQueue
from gunpy.result import Stats

__all__ = ["Enactor", "DirectionPolicy", "DIRECTIONS"]


class Enactor:
    """Base class for a primitive's main loop.

    Parameters
    ----------
    problem : gunpy.Problem
    load_balance : str, default "auto"
        Push advance workload mapping: "auto", "thread_mapped", "twc",
        "merge_path" or a registered strategy (see :mod:`gunpy.operators.advance`).
    direction : {"push", "pull", "auto"}, default "push"
        ``pull`` and ``auto`` track a visited bitmap and build the reverse graph.
    direction_policy : DirectionPolicy, optional
        Switching rule and pull kernel mapping for ``direction="auto"``.
    max_iterations : int, optional
        Stop after this many iterations even if not converged.
    auto_threshold : int, default 4096
        ``load_balance="auto"`` considers merge-path above this many frontier edges.
    idempotent : bool, default False
        The traversal tolerates duplicate discoveries (its functors use no
        atomics): ``filter`` then defaults to ``mode="cull"``, which removes
        duplicates and already-visited vertices and maintains the visited bitmap.
    """

    def __init__(self, problem, *, load_balance="auto", direction="push", direction_policy=None,
                 max_iterations=None, auto_threshold=advance_op.AUTO_THRESHOLD,
                 idempotent=False):
        self.problem = problem
        self.backend = problem.backend
        self.graph = problem.graph
        self.num_vertices = problem.num_vertices
        self.load_balance = advance_op.check_load_balance(load_balance)
        self.direction = check_direction(direction)
        self.policy = direction_policy or DirectionPolicy()
        if not isinstance(self.policy, DirectionPolicy):
            raise TypeError("direction_policy must be a gunpy.enactor.DirectionPolicy")
        self.max_iterations = max_iterations
        self.auto_threshold = int(auto_threshold)
        self.idempotent = bool(idempotent)
        #: the operators' context: backend, scratch, this iteration's record, visited bitmap
        self.context = Context(self.graph, self.backend)
        self.push_pull = PushPull(self.policy, self.num_vertices, self.graph.num_edges)
        #: the near/far queue's first level (items with priority below it are near)
        self.initial_level = 1.0
        self.iteration = 0
        self.stats = Stats(backend=self.backend.name)
        self._pq = None
        self._fused_records = []
        self._saved = FrontierStore(self.backend, self.num_vertices)
        self._pool = FrontierPool(self.context)
        #: keep a visited bitmap (pull traversal and culling filters read it)
        self.track_visited = False
        if self.direction != "push" or self.idempotent:
            self._track_visited()

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
        return frontier.size == 0

    def finalize(self):
        """Hook run once after the loop, inside the timed run (e.g. a last pass)."""

    # -- the loop -------------------------------------------------------------------
    def enact(self):
        """Run the primitive to convergence; returns :class:`gunpy.result.Stats`."""
        self.iteration = 0
        self.stats = Stats(backend=self.backend.name, load_balance=self.load_balance,
                           direction=self.direction)
        self.push_pull.reset()
        if self._pq is not None:
            self._pq.reset(self.initial_level)  # its piles are kept for the next run
        self._saved.clear()
        self._fused_records = []
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
            # the size read syncs with the device, so the time covers the iteration's kernels
            frontier.size
            record["ms"] = (time.perf_counter() - t0) * 1e3
            if before is not None:
                after = self.backend.counts()
                record["launches"], record["syncs"], record["uploads"] = (
                    a - b for a, b in zip(after, before))
            self.stats.per_iteration.append(record)
            self.stats.edges_visited += record["edges"]
            self.iteration += 1
            for more in self._fused_records:  # levels a fused call ran after the first
                more["iteration"] = self.iteration
                if before is not None:
                    more["launches"] = more["syncs"] = more["uploads"] = 0  # all on the first
                self.stats.per_iteration.append(more)
                self.iteration += 1
            self._fused_records = []
        ctx.record = {"edges": 0}
        self.stats.iterations = self.iteration
        self.finalize()
        self.backend.synchronize()
        # finalize is part of the run (SSSP's parents, CC's relabelling)
        self.stats.elapsed_ms = (time.perf_counter() - start) * 1e3
        return self.stats

    # -- operators (the free functions of gunpy.operators, on the enactor's state) ----
    def advance(self, frontier, functor, *, load_balance=None, direction=None, output="vertex",
                pull_input="visited", early_exit=True):
        """Visit the edges of ``frontier``; returns the frontier of accepted items.

        As :func:`gunpy.operators.advance`, with the enactor's visited bitmap as
        the mask when it keeps one, and ``direction="auto"`` deciding push or
        pull per call from its push-pull state. ``pull_input="visited"`` (the
        default here) tests in-neighbours against the visited set, Gunrock's
        operand reuse; ``"frontier"`` against the frontier itself.
        """
        direction = check_direction(direction or self.direction)
        if direction == "pull" and not self.track_visited:
            self._start_visited(frontier)
        if direction == "auto" or self.track_visited:
            direction = self.push_pull.decide(self.context, frontier, direction)
        push = direction == "push"
        ctx = self.context
        # gunpy.operators.advance past its argument checks (the enactor's were checked once)
        out = advance_op.run(
            ctx, frontier, compile_functor(functor, self.backend), self.problem.data(),
            self._pool.output_for(frontier, "edge" if output == "edge" else "vertex"),
            ctx.visited, functor.skip_visited,
            # in a culling (idempotent) push it is the filter that marks survivors visited
            not (push and self.idempotent), load_balance or self.load_balance, direction,
            output, pull_input, self.policy.pull_mapping, early_exit, self.auto_threshold)
        if not push:
            self.push_pull.pulled(out.examined if early_exit else None, frontier.known_edges or 0)
        return out

    def filter(self, frontier, functor, *, mode=None):
        """Keep the items of ``frontier`` whose ``cond_vertex`` holds (running ``apply_vertex``).

        ``mode="predicated"`` is exact; ``mode="cull"`` (the default of an
        idempotent enactor) also drops duplicate and already-visited vertices
        with Merrill's heuristics (see :mod:`gunpy.operators.filter`).
        """
        mode = mode or ("cull" if self.idempotent else "predicated")
        if mode == "cull":
            if not self.idempotent:
                raise ValueError("filter(mode='cull') needs an idempotent enactor "
                                 "(Enactor(..., idempotent=True))")
            if not frontier.has_queue:
                mode = "predicated"  # a bitmap (pull output) holds no duplicates
        # gunpy.operators.filter past its argument checks (likewise below)
        out = self._pool.output_for(frontier, frontier.kind)
        return filter_op.run(self.context, frontier, out, compile_functor(functor, self.backend),
                             self.problem.data(), mode)

    def filter_until_empty(self, frontier, functor, *, mode=None):
        """Filter repeatedly, each output feeding the next, until nothing is kept.

        For fixed-point sub-loops such as pointer jumping. Returns the number of rounds.
        """
        rounds = 0
        while frontier.size:
            frontier = self.filter(frontier, functor, mode=mode)
            rounds += 1
        return rounds

    def compute(self, frontier, functor):
        """Run ``apply_vertex`` on every item of ``frontier`` (``None``: every vertex)."""
        return compute_op.run(self.context, frontier, compile_functor(functor, self.backend),
                              self.problem.data())

    def neighbor_reduce(self, frontier, functor, out, *, edges="in", mapping="auto", op="sum"):
        """``out[v] = op of functor.gather_edge over v's in- (or out-) edges``.

        For the vertices of ``frontier`` (``None``: every vertex). A gather with
        one writer per vertex and no atomics (pull-style SpMV); ``op`` is
        ``"sum"``, ``"min"`` or ``"max"``.
        """
        neighbor_reduce_op.run(self.context, frontier, compile_functor(functor, self.backend),
                               self.problem.data(), out, edges, mapping, op)
        return frontier

    def near_far(self, frontier, functor, *, dedupe=False):
        """Split ``frontier`` by ``functor.priority``: the near slice (returned), the far pile.

        When the near slice is empty the level rises past the far pile's lowest
        priority and the far pile is split again; the result is empty only when
        both are. ``dedupe=True`` also drops repeats of a vertex within
        ``frontier`` (what a unique filter before the split would do, fused into
        it). See :mod:`gunpy.operators.priority_queue`.
        """
        hooks = compile_functor(functor, self.backend)
        frontier.ensure_queue(self.context.scratch)
        return self._queue().next(frontier, self._pool.output_for(frontier), hooks,
                                  self.problem.data(), dedupe=dedupe)

    def advance_filter(self, frontier, functor, *, load_balance=None, fuse=True):
        """``filter(advance(frontier, functor), functor)``, with thin push levels fused.

        A level whose out-edges stay under the backend's ``fuse_below`` (and,
        with ``direction="auto"``, under the push-pull rule's pull floor, so
        the level would be a push anyway) runs with the levels after it in one
        call, as long as each stays that thin (:mod:`gunpy.operators.levels`):
        on a road network hundreds of BFS levels become a few calls. Each level
        is still logged as an iteration (``strategy`` ``"fused"``; the call's
        time and launches go to its first). Not fused: an explicit
        ``load_balance`` (the strategy asked for runs), an idempotent enactor
        (its filter culls), pull levels, ``fuse=False``.
        """
        lb = load_balance or self.load_balance
        if fuse and lb == "auto" and not self.idempotent and self.direction != "pull":
            out = self._fused_levels(frontier, functor)
            if out is not None:
                return out
        return self.filter(self.advance(frontier, functor, load_balance=load_balance), functor)

    def _fused_levels(self, frontier, functor):
        pp = self.push_pull
        if self.direction == "auto" and pp.current != "push":
            return None
        ctx = self.context
        frontier.ensure_queue(ctx.scratch)
        m_f = frontier.known_edges  # None: the fused kernel counts them (no extra pass)
        limit = self.backend.fuse_below
        if self.direction == "auto":
            limit = min(limit, pp.pull_floor)
        cap = levels_op.MAX_LEVELS
        if self.max_iterations is not None:
            cap = min(cap, self.max_iterations - self.iteration)
        if (m_f is not None and m_f >= limit) or cap <= 0:
            return None
        out = self._pool.output_for(frontier)
        before = ctx.record.get("edges", 0)
        levels = levels_op.run(ctx, frontier, out, compile_functor(functor, self.backend),
                               self.problem.data(), edges=m_f, limit=limit, max_levels=cap,
                               skip_visited=functor.skip_visited and self.track_visited,
                               mark_visited=self.track_visited)
        if len(levels) == 0:
            return None
        pp.pushed(levels)
        # the first level is this iteration's; the others get records of their own
        ctx.record["edges"] = before + int(levels[0][1])
        ctx.record["direction"], ctx.record["strategy"] = "push", "fused"
        self._fused_records = [
            {"iteration": None, "frontier": int(n_f), "edges": int(e_f), "direction": "push",
             "strategy": "fused", "ms": 0.0} for n_f, e_f in levels[1:]]
        self.stats.edges_visited += int(levels[1:, 1].sum())
        return out

    def advance_near_far(self, frontier, functor, *, load_balance=None, fuse=True):
        """Push-advance ``frontier`` and split what it emits by ``functor.priority``.

        :meth:`advance` then :meth:`near_far` with ``dedupe=True``, with thin
        steps fused: while the near band's work stays under the backend's
        ``fuse_below`` edges, one call relaxes a vertex's edges, puts the
        improved vertices that fall in the band straight back to work and the
        others on the far pile, and refills from the far pile when the band
        runs dry (GAP's bucket fusion; on a road network thousands of thin
        steps become a few calls). The fixpoint is the same; how many
        iterations it takes is not. ``fuse=False`` or an explicit
        ``load_balance`` always runs the two operators. Returns the next near
        frontier (empty only when the far pile is empty too). Needs
        ``cond_edge``/``apply_edge``/``priority`` and an enactor that keeps no
        visited set.
        """
        lb = load_balance or self.load_balance
        if fuse and lb == "auto" and not self.track_visited:
            hooks = compile_functor(functor, self.backend)
            frontier.ensure_queue(self.context.scratch)
            out = self._queue().advance_next(
                frontier, self._pool.output_for(frontier), hooks, self.problem.data(),
                weighted=self.backend.graph(self.graph).weighted)
            if out is not None:
                return out
        frontier = self.advance(frontier, functor, load_balance=load_balance, direction="push")
        return self.near_far(frontier, functor, dedupe=True)

    @property
    def near_far_queue(self):
        """The :class:`~gunpy.operators.priority_queue.NearFarQueue` (None before the
        first :meth:`near_far`): the last run's ``level``, ``refills``, ``fused_steps``."""
        return self._pq

    def _queue(self):
        if self._pq is None:
            self._pq = NearFarQueue(self.context, initial_level=self.initial_level)
        return self._pq

    def reduce(self, array, op="sum", n=None):
        """``op`` ("sum", "min", "max") over a device array, as a Python number."""
        return reduce_op.reduce_array(self.backend, array, n, op)

    # -- frontiers the enactor keeps --------------------------------------------------
    def full_frontier(self, kind="vertex"):
        """A frontier of every vertex id (edge id: ``kind="edge"``), built once per graph."""
        return self.context.full_frontier(kind)

    def start_frontier(self):
        """The first of the enactor's ping-pong frontiers, emptied (for a sub-loop)."""
        return self._pool.first()

    def save_frontier(self, frontier):
        """Keep a copy of ``frontier`` (Gunrock 4.4.3); returns its :meth:`saved_frontier` index."""
        return self._saved.save(frontier, self.context.scratch)

    @property
    def num_saved_frontiers(self):
        return len(self._saved)

    def saved_frontier(self, i):
        """The ``i``-th saved frontier (a view on the storage, not a copy)."""
        return self._saved.get(i)

    # -- the visited set --------------------------------------------------------------
    def mark_visited(self, frontier, *, clear=False):
        """Set the visited bits of ``frontier``'s vertices (``clear``: start from empty)."""
        self.context.mark(self.context.visited, frontier, clear=clear)

    def _track_visited(self):
        self.track_visited, self.context.visited = True, self.context.new_bitmap()

    def _start_visited(self, frontier):
        """Track the visited set from now on (a pull on an enactor built for push).

        Only possible before anything was visited beyond the first frontier: the
        visited set is then exactly that frontier. Later, the vertices earlier
        push levels reached are unknown, and a pull would take them for unvisited.
        """
        if self.iteration != 0 or self.stats.edges_visited or self.context.record["edges"]:
            raise ValueError(
                "advance(direction='pull') needs the visited set, which this enactor does not "
                "keep (it was built with direction='push'); build it with direction='pull' or "
                "'auto' (Enactor(problem, direction=...)), or pull from the first iteration on")
        self._track_visited()
        self.mark_visited(frontier, clear=True)
