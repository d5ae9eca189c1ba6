"""traversal: the operators of one traversal, with the state they share across levels.

A :class:`Traversal` holds what a traversal's operator calls share: the
:class:`Context`, the frontiers the outputs go to, the visited bitmap, the
push-pull state of a direction-optimising advance, the fusion rule and the
near/far queue. Its methods are the operators with that state filled in::

    t = Traversal(problem, direction="auto")
    frontier = t.start_frontier().push(source)
    t.mark_visited(frontier, clear=True)
    while frontier.size:
        frontier = t.advance_filter(frontier, BFSFunctor)

An :class:`~gunpy.Enactor` is a traversal with the loop around it. Each method
calls its operator's ``run`` (the free function past its argument checks, done
once here).
"""

from gunpy.direction import DirectionPolicy, PushPull, check_direction
from gunpy.frontier import FrontierPool
from gunpy.functor import compile_functor
from gunpy.operators import advance as advance_op
from gunpy.operators import compute as compute_op
from gunpy.operators import filter as filter_op
from gunpy.operators import levels as levels_op
from gunpy.operators.common import problem_data
from gunpy.operators.context import Context
from gunpy.operators.fusion import FusionPolicy
from gunpy.operators.near_far import NearFarQueue

__all__ = ["Traversal"]

#: the policy of a traversal given none (frozen: one object serves every run)
_DEFAULT_POLICY = DirectionPolicy()


class Traversal:
    """The operators of one traversal over ``problem``'s graph, with their shared state.

    Parameters
    ----------
    problem : gunpy.Problem
        Its ``data()`` goes to every functor.
    load_balance : str, default "auto"
        Push advance workload mapping: "auto", "thread_mapped", "twc",
        "merge_path" or a registered strategy (see :mod:`gunpy.operators.advance`).
    direction : {"push", "pull", "auto"}, default "push"
        ``pull`` and ``auto`` track a visited bitmap and build the reverse graph.
    direction_policy : DirectionPolicy, optional
        Switching rule and pull kernel mapping for ``direction="auto"``.
    auto_threshold : int, default 4096
        ``load_balance="auto"`` considers merge-path above this many frontier edges.
    idempotent : bool, default False
        The traversal tolerates duplicate discoveries (its functors use no atomics):
        ``filter`` then defaults to ``mode="cull"`` and maintains the visited bitmap.
    """

    #: advances that may still run as iterations (None: no cap; an Enactor's cap)
    iterations_left = None

    def __init__(self, problem, *, load_balance="auto", direction="push", direction_policy=None,
                 auto_threshold=advance_op.AUTO_THRESHOLD, idempotent=False):
        self.problem = problem
        self.backend = problem.backend
        self.graph = problem.graph
        self.num_vertices = problem.num_vertices
        self.load_balance = advance_op.check_load_balance(load_balance)
        self.direction = check_direction(direction)
        self.policy = direction_policy or _DEFAULT_POLICY
        if not isinstance(self.policy, DirectionPolicy):
            raise TypeError("direction_policy must be a gunpy.enactor.DirectionPolicy")
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
        #: the :class:`~gunpy.operators.near_far.NearFarQueue` (None before the first
        #: :meth:`near_far`): the last run's ``level``, ``refills``, ``fused_steps``
        self.near_far_queue = None
        self._pool = FrontierPool(self.context)
        #: keep a visited bitmap (pull traversal and culling filters read it)
        self.track_visited = self.direction != "push" or self.idempotent
        self.context.visited = self.context.new_bitmap() if self.track_visited else None
        self._advanced = False  # an advance ran since restart(): the visited set is behind
        self._pushes = {}  # (functor, load_balance, output, visited kept) -> advance_op.Push

    def restart(self):
        """Forget the last traversal's push-pull state and near/far level."""
        self.push_pull.reset()
        if self.near_far_queue is not None:
            self.near_far_queue.reset(self.initial_level)  # its piles are kept
        self._advanced = False

    # -- operators (the free functions of gunpy.operators, on the traversal's state) ---
    def advance(self, frontier, functor, *, load_balance=None, direction=None, output="vertex",
                pull_input="visited", early_exit=True, out=None):
        """Visit the edges of ``frontier``; returns the frontier of accepted items.

        As :func:`gunpy.operators.advance`, with the visited bitmap as the mask,
        ``direction="auto"`` deciding push or pull from the push-pull state and
        ``pull_input="visited"`` (in-neighbours tested against the visited set).
        ``out``: the frontier to write (default: one of the pool's that no one holds).
        """
        direction = check_direction(direction or self.direction)
        if direction == "pull" and not self.track_visited:
            self._start_visited(frontier)
        if direction == "auto" or self.track_visited:
            direction = self.push_pull.decide(self.context, frontier, direction)
        ctx = self.context
        self._advanced = True
        if out is None:
            out = self._pool.output_for(frontier, "edge" if output == "edge" else "vertex")
        if direction == "push":
            return self._push(functor, load_balance or self.load_balance, output)(
                frontier, out, problem_data(self.problem))
        out = advance_op.run(
            ctx, frontier, compile_functor(functor, self.backend), problem_data(self.problem), out,
            ctx.visited, functor.skip_visited, True, load_balance or self.load_balance,
            direction, output, pull_input, self.policy.pull_mapping, early_exit,
            self.auto_threshold)
        self.push_pull.pulled(out.examined if early_exit else None, frontier.known_edges or 0)
        return out

    def _push(self, functor, load_balance, output):
        # the push advance for these options, checked and bound on first use
        # (a level then pays none of it)
        tracked = self.context.visited is not None
        key = (functor, load_balance, output, tracked)
        push = self._pushes.get(key)
        if push is None or push.generation != advance_op._generation:
            # in a culling (idempotent) push it is the filter that marks survivors visited
            push = self._pushes[key] = advance_op.Push(
                self.context, compile_functor(functor, self.backend), load_balance=load_balance,
                output=output, mark_visited=tracked and not self.idempotent and output == "vertex",
                skip_visited=tracked and functor.skip_visited, threshold=self.auto_threshold)
        return push

    def filter(self, frontier, functor, *, mode=None, out=None):
        """Keep the items of ``frontier`` whose ``cond_vertex`` holds (running ``apply_vertex``).

        ``mode="cull"`` (an idempotent traversal's default) also drops duplicate and
        visited vertices (Merrill's heuristics, :mod:`gunpy.operators.filter`). ``out``:
        as :meth:`advance`'s.
        """
        mode = mode or ("cull" if self.idempotent else "predicated")
        if mode == "cull":
            if not self.idempotent:
                raise ValueError("filter(mode='cull') needs an idempotent enactor "
                                 "(Enactor(..., idempotent=True))")
            if not frontier.has_queue:
                mode = "predicated"  # a bitmap (pull output) holds no duplicates
        hooks = compile_functor(functor, self.backend)
        if filter_op.bypassed(frontier, hooks, mode):
            return frontier
        if out is None:
            out = self._pool.output_for(frontier, frontier.kind)
        return filter_op.run(self.context, frontier, out, hooks, problem_data(self.problem), mode)

    def compute(self, frontier, functor):
        """Run ``apply_vertex`` on every item of ``frontier`` (``None``: every vertex)."""
        return compute_op.run(self.context, frontier, *self._operands(functor))

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
        load_balance = load_balance or self.load_balance
        if context is not None and context is not self.context:
            return self.filter(self._push_over(context, frontier, functor, load_balance, fuse),
                               functor)
        plan = self.fusion.levels(fuse=fuse, load_balance=load_balance,
                                  iterations_left=self.iterations_left)
        out = plan and levels_op.fused(self.context, frontier, self._pool.output_for(frontier),
                                       *self._operands(functor), plan, push_pull=self.push_pull,
                                       visited=self.track_visited, skip=functor.skip_visited)
        return out if out is not None else self.filter(
            self.advance(frontier, functor, load_balance=load_balance, early_exit=early_exit),
            functor)

    def _push_over(self, context, frontier, functor, load_balance, fuse):
        # advance_filter's advance over another graph's context: push only, no visited
        # bitmap; its records go to this iteration's
        context.record = self.context.record
        plan = FusionPolicy(self.backend).levels(fuse=fuse, load_balance=load_balance,
                                                 iterations_left=self.iterations_left)
        out = plan and levels_op.fused(context, frontier, self._pool.output_for(frontier),
                                       *self._operands(functor), plan)
        if out is None:
            out = advance_op.run(context, frontier, *self._operands(functor),
                                 self._pool.output_for(frontier), None, False, True,
                                 load_balance, "push", "vertex", "visited",
                                 self.policy.pull_mapping, True, self.auto_threshold)
        return out

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
        return compile_functor(functor, self.backend), problem_data(self.problem)

    # -- frontiers and the visited set ---------------------------------------------------
    def full_frontier(self, kind="vertex"):
        """A frontier of every vertex id (edge id: ``kind="edge"``), built once per graph."""
        return self.context.full_frontier(kind)

    def start_frontier(self):
        """An empty frontier of the traversal's pool that no one holds (a sub-loop's first)."""
        return self._pool.first()

    def mark_visited(self, frontier, *, clear=False):
        """Set the visited bits of ``frontier``'s vertices (``clear``: start from empty)."""
        self.context.mark(self.context.visited, frontier, clear=clear)

    def _start_visited(self, frontier):
        # a pull on a push-built traversal: only while the first frontier is all that was visited
        if self._advanced:
            raise ValueError("advance(direction='pull') needs the visited set, which this enactor "
                             "does not keep (built with direction='push'); build it with "
                             "direction='pull' or 'auto', or pull from the first iteration on")
        self.track_visited, self.context.visited = True, self.context.new_bitmap()
        self.mark_visited(frontier, clear=True)
