"""queue: the near/far pile of one enactor run (Davidson et al.; Gunrock section 4.4.2).

A user-defined ``priority(v, data)`` splits a frontier: vertices whose priority
is below the current **level** form the *near* slice, which is returned as the
next frontier; the others go to the *far* pile. When the near slice runs dry
the level moves up to just above the smallest priority left in the far pile
(skipping empty buckets) and the far pile is split again, with repeats dropped
(a vertex may have been pushed to the far pile several times). SSSP's priority
is ``distance / delta``, which makes this delta-stepping with two buckets.
"""

import math

import numpy as np

from gunpy.frontier import Frontier
from gunpy.operators import bitmap
from gunpy.operators.near_far.band import raise_level
from gunpy.operators.near_far.bins import REFILL, FarBins
from gunpy.operators.near_far.fused import FUSED
from gunpy.operators.near_far.split import MIN_PRIORITY, SPLIT

__all__ = ["NearFarQueue"]


class NearFarQueue:
    """The near/far pile of one enactor run.

    ``level`` starts at ``initial_level`` (items with ``priority < level`` are near).
    """

    def __init__(self, ctx, *, initial_level=1.0):
        self.ctx = ctx
        self.backend = ctx.backend
        # two far piles: a refill splits one into the near slice and the other; they
        # and the fused steps' work arrays are kept with the context's scratch, so a
        # later queue on the same graph and backend allocates nothing
        self._kept = ctx.kept("near_far.queue", lambda: {"piles": [
            Frontier(self.backend, max(ctx.num_vertices, 1), dtype=ctx.index_dtype,
                     name=f"far{i}", num_vertices=ctx.num_vertices) for i in range(2)]})
        self._piles = self._kept["piles"]
        self._work = None
        self._bins = None
        self.reset(initial_level)

    def reset(self, initial_level=1.0):
        """Empty both piles and start again at ``initial_level`` (the arrays are kept)."""
        self.level = float(initial_level)
        for pile in self._piles:
            pile.clear()
        self.far = self._piles[0]
        if self._bins is not None:
            self._bins.reset()
        self.refills = 0
        #: vertices expanded by fused steps (:meth:`advance_next`)
        self.fused_steps = 0

    # -- what the backends' fused steps use ------------------------------------------
    def work_arrays(self, make):
        """The fused steps' work arrays: ``make()``'s result, made on the first call and
        kept with the queue's piles (the epochs and rounds they stamp stay valid across
        runs, and across queues on the same graph and backend)."""
        if self._work is None:
            # kept across queues per maker (its code), so no other caller's arrays come back
            key = ("work", getattr(make, "__code__", make))
            self._work = self._kept.get(key)
            if self._work is None:
                self._work = self._kept[key] = make()
        return self._work

    def bins(self):
        """The far pile's buckets (:class:`~gunpy.operators.near_far.bins.FarBins`: a
        backend's refill that files items ahead), made on first use and kept."""
        if self._bins is None:
            ctx = self.ctx
            self._bins = self._kept.get("bins")
            if self._bins is None:
                self._bins = self._kept["bins"] = FarBins(self.backend, ctx.num_vertices,
                                                          ctx.index_dtype)
            self._bins.reset()
        return self._bins

    def waiting(self):
        """Items filed away from the far pile (in :meth:`bins`): they wait too."""
        return 0 if self._bins is None else self._bins.waiting

    def other_pile(self):
        """The far pile not in use (a refill splits :attr:`far` into it)."""
        return self._piles[1] if self.far is self._piles[0] else self._piles[0]

    def swap_piles(self):
        """Make the other pile the far pile (its contents are kept); returns it."""
        self.far = self.other_pile()
        return self.far

    def fused(self, state):
        """Take a fused call's outcome (a :data:`~gunpy.operators.near_far.fused.STATE`
        record): the level reached, the refills it made and the vertices it expanded."""
        self.level = float(state["level"])
        self.refills += int(state["refills"])
        self.fused_steps += int(state["expanded"])

    # -- the operators ------------------------------------------------------------------
    def _split(self, frontier, out, hooks, data, *, dedupe, far_out, floor=-np.inf):
        """Split ``frontier`` into ``out`` (near, overwritten) and ``far_out`` (appended).

        Items below ``floor`` are dropped: when the far pile is split at a new
        level, an entry whose priority fell below the previous level was
        improved while that level was current, went to the near slice then, and
        has been processed already.
        """
        ctx, backend = self.ctx, self.backend
        n = frontier.size_bound()  # the kernels read the true size: no host read here
        if far_out.size_bound() + n > far_out.capacity:
            # the bounds say the pile might overflow: read the true sizes before growing it
            n = frontier.size
            far_out.reserve(far_out.size + n, keep=True)
        out.reserve(n)
        seen = ctx.visited_words() if not dedupe else \
            ctx.scratch("pq.seen", bitmap.num_words(ctx.num_vertices), np.uint32)
        if dedupe:
            backend.fill(seen, 0)
        SPLIT(ctx, frontier, out, far_out, hooks, data, self.level,
              float(floor), dedupe, seen)

    def min_far_priority(self, hooks, data):
        """The lowest priority on the far pile (inf when it is empty)."""
        return MIN_PRIORITY(self.backend, self.far, hooks, data)

    def next(self, frontier, out, hooks, data, *, dedupe=False):
        """The next near frontier (in ``out``); the rest of ``frontier`` joins the far pile.

        ``dedupe``: drop repeated items of ``frontier`` on the way (one bitmap
        test-and-set each), so a traversal whose advance emits a vertex once per
        improvement needs no unique filter before the split.
        Returns the frontier to process next: empty only when near and far both are.
        """
        self._split(frontier, out, hooks, data, dedupe=dedupe, far_out=self.far)
        return self.refill(out, hooks, data)

    def refill(self, out, hooks, data):
        """While ``out`` (the near slice) is empty and the far pile is not, raise the
        level past the pile's lowest priority and split the pile into ``out`` (the
        backend's ``near_far.refill``, the CPU's: :mod:`.bins`; else :meth:`split_refill`)."""
        return REFILL.on(self.backend, _split_refill)(self, out, hooks, data)

    def split_refill(self, out, hooks, data):
        """The plain refill: the far pile's lowest priority, then a split of the pile."""
        while out.size == 0 and self.far.size > 0:  # one read, and only when near ran dry
            lowest = self.min_far_priority(hooks, data)
            if not math.isfinite(lowest):
                break
            floor = self.level
            self.level = raise_level(self.level, lowest)
            self.refills += 1
            pile = self.far
            self.swap_piles().clear()
            # the old pile's repeats dropped, its stale entries too
            self._split(pile, out, hooks, data, dedupe=True, far_out=self.far, floor=floor)
        return out

    def advance_next(self, frontier, out, hooks, data, *, limit):
        """Bucket fusion: advance ``frontier`` and split, many thin steps in one call.

        The backend's ``near_far.fused`` relaxes the out-edges of ``frontier``
        (``cond_edge``/``apply_edge``), puts improved vertices in the near band
        back to work at once and the others on the far pile, and refills from
        the far pile itself when the band runs dry, for as long as the queued
        work stays under ``limit`` edges (see
        :class:`gunpy.operators.fusion.FusionPolicy`). Returns the next near
        frontier in ``out`` (empty only when both piles are), or None when the
        work is too fat to fuse or ``limit`` is None (the caller then runs the
        advance and :meth:`next`).
        """
        if limit is None:
            return None
        frontier.ensure_queue(self.ctx.scratch)
        fused = FUSED.on(self.backend, _not_fused)
        weighted = self.backend.graph(self.ctx.graph).weighted
        return fused(self, frontier, out, hooks, data, weighted, int(limit))


def _split_refill(queue, out, hooks, data):
    return queue.split_refill(out, hooks, data)


def _not_fused(queue, frontier, out, hooks, data, weighted, limit):
    return None
