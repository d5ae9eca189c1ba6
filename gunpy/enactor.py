"""Enactors: the loop that sequences operators until a primitive converges.

A subclass fills the first frontier in :meth:`Enactor.prepare_frontier` and writes one
iteration in :meth:`Enactor.loop` as a sentence of operator calls (BFS: ``return
self.filter(self.advance(frontier, BFSFunctor), BFSFunctor)``); :meth:`Enactor.enact`
repeats ``loop`` until :meth:`Enactor.is_converged` (by default: the frontier is
empty), timing the run and logging every iteration.
"""

import time

from gunpy.direction import DIRECTIONS, DirectionPolicy, PushPull, check_direction
from gunpy.frontier import Frontier, FrontierPool, FrontierStore
from gunpy.functor import compile_functor
from gunpy.operators import (advance as advance_op, compute as compute_op,
                             contract as contract_op, filter as filter_op, levels as levels_op,
                             neighbor_best as neighbor_best_op, neighbor_mex as neighbor_mex_op,
                             neighbor_mode as neighbor_mode_op,
                             neighbor_reduce as neighbor_reduce_op, reduce as reduce_op,
                             sample as sample_op, spgemm as spgemm_op)
from gunpy.operators.context import Context
from gunpy.operators.fusion import FusionPolicy
from gunpy.operators.near_far import NearFarQueue
from gunpy.progress import bar
from gunpy.result import Stats

__all__ = ["Enactor", "DirectionPolicy", "DIRECTIONS"]


#: the policy of an enactor given none (frozen: one object serves every run)
_DEFAULT_POLICY = DirectionPolicy()


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
        The traversal tolerates duplicate discoveries (its functors use no atomics):
        ``filter`` then defaults to ``mode="cull"`` and maintains the visited bitmap.
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
        self.policy = direction_policy or _DEFAULT_POLICY
        if not isinstance(self.policy, DirectionPolicy):
            raise TypeError("direction_policy must be a gunpy.enactor.DirectionPolicy")
        self.max_iterations = max_iterations
        self.auto_threshold = int(auto_threshold)
        self.idempotent = bool(idempotent)
        #: the operators' context: backend, scratch, this iteration's record, visited bitmap
        self.context = Context(self.graph, self.backend)
        self.push_pull = PushPull(self.policy, self.num_vertices, self.graph.num_edges)
        #: when thin steps run fused (the operators' rule, asked before each fused call)
        self.fusion = FusionPolicy(self.backend, direction=self.direction,
                                   push_pull=self.push_pull, idempotent=self.idempotent)
        #: the near/far queue's first level (items with priority below it are near)
        self.initial_level = 1.0
        self.iteration = 0
        self.stats = Stats(backend=self.backend.name)
        #: the :class:`~gunpy.operators.near_far.NearFarQueue` (None before the first
        #: :meth:`near_far`): the last run's ``level``, ``refills``, ``fused_steps``
        self.near_far_queue = None
        # kept with the context's scratch: a later run on this graph reuses their arrays
        self._saved = self.context.kept(
            "enactor.saved", lambda: FrontierStore(self.backend, self.num_vertices))
        self._pool = FrontierPool(self.context)
        #: keep a visited bitmap (pull traversal and culling filters read it)
        self.track_visited = self.direction != "push" or self.idempotent
        self.context.visited = self.context.new_bitmap() if self.track_visited else None

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

    # -- the loop -------------------------------------------------------------------
    def enact(self, *, progress=False):
        """Run the primitive to convergence; returns :class:`gunpy.result.Stats`.

        ``progress``: a bar of the iterations on standard error (``None``: only on a
        terminal; see :mod:`gunpy.progress`)."""
        with bar(self.max_iterations, type(self).__name__.replace("Enactor", "") or "run",
                 unit="level", enabled=progress) as shown:
            return self._enact(shown)

    def _enact(self, shown):
        self.iteration = 0
        self.stats = Stats(backend=self.backend.name, load_balance=self.load_balance,
                           direction=self.direction)
        self.push_pull.reset()
        if self.near_far_queue is not None:
            self.near_far_queue.reset(self.initial_level)  # its piles are kept
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

    # -- operators (the free functions of gunpy.operators, on the enactor's state) ----
    def advance(self, frontier, functor, *, load_balance=None, direction=None, output="vertex",
                pull_input="visited", early_exit=True):
        """Visit the edges of ``frontier``; returns the frontier of accepted items.

        As :func:`gunpy.operators.advance`, with the enactor's visited bitmap as the
        mask, ``direction="auto"`` deciding push or pull from its push-pull state and
        ``pull_input="visited"`` (in-neighbours tested against the visited set).
        """
        direction = check_direction(direction or self.direction)
        if direction == "pull" and not self.track_visited:
            self._start_visited(frontier)
        if direction == "auto" or self.track_visited:
            direction = self.push_pull.decide(self.context, frontier, direction)
        push, ctx = direction == "push", self.context
        out = self._pool.output_for(frontier, "edge" if output == "edge" else "vertex")
        # gunpy.operators.advance past its argument checks (the enactor's were checked once);
        # in a culling (idempotent) push it is the filter that marks survivors visited
        out = advance_op.run(
            ctx, frontier, compile_functor(functor, self.backend), self.problem.data(), out,
            ctx.visited, functor.skip_visited, not (push and self.idempotent),
            load_balance or self.load_balance, direction, output, pull_input,
            self.policy.pull_mapping, early_exit, self.auto_threshold)
        if not push:
            self.push_pull.pulled(out.examined if early_exit else None, frontier.known_edges or 0)
        return out

    def filter(self, frontier, functor, *, mode=None):
        """Keep the items of ``frontier`` whose ``cond_vertex`` holds (running ``apply_vertex``).

        ``mode="cull"`` (an idempotent enactor's default) also drops duplicate and
        visited vertices (Merrill's heuristics, :mod:`gunpy.operators.filter`).
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
        return filter_op.run(self.context, frontier, out, *self._operands(functor), mode)

    def filter_until_empty(self, frontier, functor, *, mode=None):
        """Filter repeatedly, each output feeding the next, until nothing is kept (a
        fixed-point sub-loop such as pointer jumping). Returns the number of rounds."""
        rounds = 0
        while frontier.size:
            frontier = self.filter(frontier, functor, mode=mode)
            rounds += 1
        return rounds

    def compute(self, frontier, functor):
        """Run ``apply_vertex`` on every item of ``frontier`` (``None``: every vertex)."""
        return compute_op.run(self.context, frontier, *self._operands(functor))

    def neighbor_reduce(self, frontier, functor, out, *, edges="in", mapping="auto", op="sum",
                        apply=False, aggregates=0):
        """``out[v] = op`` (sum, min, max) ``of functor.gather_edge over v's in- (or out-)
        edges`` for the vertices of ``frontier`` (``None``: all): a pull-style SpMV.

        ``apply=True`` runs ``functor.apply_vertex`` on each vertex right after its
        ``out[v]``, in the same pass; ``aggregates=k`` (1-4) returns the sums of the ``k``
        floats ``apply_vertex`` returns (one read) instead of ``frontier``
        (:func:`gunpy.operators.neighbor_reduce`)."""
        sums = neighbor_reduce_op.run(self.context, frontier,
                                      compile_functor(functor, self.backend), self.problem.data(),
                                      out, edges, mapping, op, apply, aggregates)
        return sums if aggregates else frontier

    def neighbor_mode(self, frontier, functor, out, *, edges="both"):
        """``out[v]`` = the most frequent ``functor.gather_edge`` key across ``v``'s ``edges``
        (``"out"``, ``"in"``, ``"both"``; ties: the smallest) for the vertices of ``frontier``
        (``None``: all): label propagation's step (:mod:`gunpy.operators.neighbor_mode`)."""
        neighbor_mode_op.run(self.context, frontier, compile_functor(functor, self.backend),
                             self.problem.data(), out, edges)
        return frontier

    def neighbor_best(self, frontier, functor, out, *, rounds=None):
        """``out[v]`` = the key across ``v``'s out-edges whose summed weights
        ``functor.score`` rates best (the incumbent ``out[v]`` kept unless beaten strictly;
        ties: the smallest) for the vertices of ``frontier`` (``None``: all) where
        ``functor.cond_vertex`` holds: Louvain's local move
        (:mod:`gunpy.operators.neighbor_best`). ``rounds=r``: ``r`` sub-rounds in one call,
        each vertex in round ``functor.round_of(v, data)``, a round's choices applied by
        ``functor.apply_vertex`` before the next round chooses."""
        neighbor_best_op.run(self.context, frontier, compile_functor(functor, self.backend),
                             self.problem.data(), out, rounds)
        return frontier

    def neighbor_mex(self, frontier, functor, out):
        """``out[v]`` = the smallest non-negative key no out-edge of ``v`` gives as
        ``functor.gather_edge`` (negative keys left out) for the vertices of ``frontier``
        (``None``: all) where ``functor.cond_vertex`` holds: a colouring's first free
        colour (:mod:`gunpy.operators.neighbor_mex`)."""
        neighbor_mex_op.run(self.context, frontier, compile_functor(functor, self.backend),
                            self.problem.data(), out)
        return frontier

    def contract(self, labels):
        """The quotient of the (undirected) graph by ``labels``, renumbered in place to
        ``0..k-1``: a weighted :class:`~gunpy.Graph`, edges inside a label kept as its
        self-loop (:mod:`gunpy.operators.contract`)."""
        return contract_op.run(self.context, labels)

    def spgemm_structure(self, right=None, *, exclude=None):
        """The pattern of ``graph @ right`` (``right``: a :class:`~gunpy.Graph`, default the
        graph itself) without ``exclude``'s entries: a :class:`~gunpy.Graph` whose rows are
        sorted (:func:`gunpy.operators.spgemm.structure`)."""
        right = self.graph if right is None else right
        return spgemm_op.structure(self.graph, right, exclude=exclude, context=self.context)

    def spgemm(self, pattern, functor, *, right=None):
        """``functor.apply_intersection(i, j, e, k, p, q, data)`` on every term
        ``graph(i, k) right(k, j)`` whose ``(i, j)`` is entry ``e`` of ``pattern`` (an
        entry's terms one at a time, ``k`` increasing); returns the number of terms
        (:func:`gunpy.operators.spgemm`)."""
        right = self.graph if right is None else right
        return spgemm_op.spgemm(pattern, functor, self.problem.data(), left=self.graph,
                                right=right, context=Context(pattern, self.backend))

    def sample(self, frontier, functor, k):
        """``cond_edge`` / ``apply_edge`` on the first ``k`` out-edges of each vertex of
        ``frontier`` (``None``: every vertex), emitting nothing (Afforest's neighbour
        sampling, :mod:`gunpy.operators.sample`)."""
        sample_op.run(self.context, frontier, compile_functor(functor, self.backend),
                      self.problem.data(), k)
        return frontier

    def near_far(self, frontier, functor, *, dedupe=False):
        """Split ``frontier`` by ``functor.priority``: the near slice (returned; empty only
        when the far pile is too, :mod:`gunpy.operators.near_far`), the far pile.
        ``dedupe=True`` also drops repeats of a vertex within ``frontier``."""
        frontier.ensure_queue(self.context.scratch)
        return self._queue().next(frontier, self._pool.output_for(frontier),
                                  *self._operands(functor), dedupe=dedupe)

    def advance_filter(self, frontier, functor, *, load_balance=None, fuse=True,
                       early_exit=True, context=None):
        """``filter(advance(frontier, functor), functor)``, with thin push levels fused.

        Where :class:`~gunpy.operators.fusion.FusionPolicy` allows, the next levels run
        in the same call while each has fewer than ``fuse_below`` out-edges (the CPU:
        ``fuse_levels_below``; :mod:`gunpy.operators.levels`), each logged as an
        iteration. ``early_exit``: as :meth:`advance`'s (False: a pull level gathers
        from every in-neighbour, BC's path counts). ``context``: the
        :class:`~gunpy.operators.Context` of another graph on the same vertices to push
        over (a reverse graph's: SCC's backward searches), fused alike; ``frontier``
        then comes from a filter or from operators over that graph (its counted edges
        are that graph's), and no visited bitmap is kept."""
        if context is not None and context is not self.context:
            return self._advance_filter_over(context, frontier, functor, load_balance, fuse)
        left = None if self.max_iterations is None else self.max_iterations - self.iteration
        plan = self.fusion.levels(fuse=fuse, load_balance=load_balance or self.load_balance,
                                  iterations_left=left)
        out = plan and levels_op.fused(self.context, frontier, self._pool.output_for(frontier),
                                       *self._operands(functor), plan, push_pull=self.push_pull,
                                       visited=self.track_visited, skip=functor.skip_visited)
        return out if out is not None else self.filter(
            self.advance(frontier, functor, load_balance=load_balance, early_exit=early_exit),
            functor)

    def _advance_filter_over(self, context, frontier, functor, load_balance, fuse):
        # advance_filter over another graph's context: push only, no visited bitmap; its
        # records go to this iteration's
        context.record = self.context.record
        load_balance = load_balance or self.load_balance
        left = None if self.max_iterations is None else self.max_iterations - self.iteration
        push = FusionPolicy(self.backend)
        plan = push.levels(fuse=fuse, load_balance=load_balance, iterations_left=left)
        out = plan and levels_op.fused(context, frontier, self._pool.output_for(frontier),
                                       *self._operands(functor), plan)
        if out is None:
            out = advance_op.run(context, frontier, *self._operands(functor),
                                 self._pool.output_for(frontier), None, False, True,
                                 load_balance, "push", "vertex", "visited",
                                 self.policy.pull_mapping, True, self.auto_threshold)
        return self.filter(out, functor)

    def advance_near_far(self, frontier, functor, *, load_balance=None, fuse=True):
        """:meth:`advance` (push), then :meth:`near_far` with ``dedupe=True``.

        Where :class:`~gunpy.operators.fusion.FusionPolicy` allows, thin steps run many
        to a call while the band's work stays under ``fuse_below`` edges (GAP's bucket
        fusion, :mod:`gunpy.operators.near_far.fused`): the same fixpoint, fewer
        iterations."""
        limit = self.fusion.near_far(fuse=fuse, load_balance=load_balance or self.load_balance,
                                     track_visited=self.track_visited)
        out = None if limit is None else self._queue().advance_next(
            frontier, self._pool.output_for(frontier), *self._operands(functor), limit=limit)
        if out is not None:
            return out
        frontier = self.advance(frontier, functor, load_balance=load_balance, direction="push")
        return self.near_far(frontier, functor, dedupe=True)

    def _queue(self):  # made on first use: two far piles of a vertex each
        if self.near_far_queue is None:
            self.near_far_queue = NearFarQueue(self.context, initial_level=self.initial_level)
        return self.near_far_queue

    def _operands(self, functor):  # what every operator takes besides frontiers
        return compile_functor(functor, self.backend), self.problem.data()

    def reduce(self, array, op="sum", n=None):
        """``op`` ("sum", "min", "max") over a device array, as a Python number."""
        return reduce_op.reduce_array(self.backend, array, n, op)

    # -- frontiers the enactor keeps --------------------------------------------------
    def full_frontier(self, kind="vertex"):
        """A frontier of every vertex id (edge id: ``kind="edge"``), built once per graph."""
        return self.context.full_frontier(kind)

    def start_frontier(self):
        """An empty frontier of the enactor's pool that no one holds (a sub-loop's first)."""
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

    def _start_visited(self, frontier):
        # a pull on a push-built enactor: only while the first frontier is all that was visited
        if self.iteration != 0 or self.stats.edges_visited or self.context.record["edges"]:
            raise ValueError("advance(direction='pull') needs the visited set, which this enactor "
                             "does not keep (built with direction='push'); build it with "
                             "direction='pull' or 'auto', or pull from the first iteration on")
        self.track_visited, self.context.visited = True, self.context.new_bitmap()
        self.mark_visited(frontier, clear=True)
