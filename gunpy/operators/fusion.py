"""fusion: when thin steps run many to a call, and how far (levels, near/far bucket fusion).

A long-diameter graph (a road network, a mesh) runs hundreds of BFS levels or
thousands of SSSP steps of a few dozen vertices each, and per step the host
work around the operators costs more than the edges. Two operators run such
steps many to a call: :mod:`gunpy.operators.levels` (push advance + filter)
and :mod:`gunpy.operators.near_far.fused` (advance + near/far split). This
module is their rule, which an :class:`~gunpy.Enactor` asks before each call:
a fused call is tried only where the unfused operators it replaces would run
the same thin pushes, and it stops where a step's work reaches the backend's
``fuse_below`` edges (BFS levels: the backend's ``fuse_levels_below`` where it
has one; the CPU's reaches its ``serial_below``, under which one core runs a
level fused or not). A hub does not stop fusion: the fused CUDA kernels give
long lists to a warp or the whole block themselves, as twc would.
"""

from collections import namedtuple

from gunpy.operators.levels import PushRule, level_cap

__all__ = ["FusionPolicy", "LevelsPlan"]

#: a fused levels call: stop at a level of ``limit`` out-edges, after ``max_levels``,
#: or (``rule``, a :data:`~gunpy.operators.levels.PushRule`; None: none) before a level
#: the push-pull rule would pull
LevelsPlan = namedtuple("LevelsPlan", "limit max_levels rule", defaults=(None,))


class FusionPolicy:
    """When a traversal's thin steps run fused.

    Parameters
    ----------
    backend : gunpy backend
        Its ``fuse_below``: the edges a fused step may reach (``fuse_levels_below``,
        where it has one, for BFS levels).
    direction : {"push", "pull", "auto"}
        The traversal's direction; with ``"auto"``, ``push_pull`` (a
        :class:`~gunpy.direction.PushPull`) says whether it is pushing now.
    idempotent : bool
        The traversal culls in its filter (no fused levels then).
    """

    def __init__(self, backend, *, direction="push", push_pull=None, idempotent=False):
        self.backend = backend
        self.direction = direction
        self.push_pull = push_pull
        self.idempotent = bool(idempotent)

    def levels(self, *, fuse, load_balance, iterations_left=None):
        """A :class:`LevelsPlan` for fused advance + filter levels, or None: run unfused.

        Not fused: ``fuse=False``, an explicit ``load_balance`` (the strategy
        asked for runs), an idempotent traversal (its filter culls), pull, or
        ``direction="auto"`` while the push-pull rule is pulling. With
        ``direction="auto"`` every fused level is one the rule would have pushed:
        Beamer's heuristic goes with the levels (the plan's ``rule``: its pull
        floor, ``alpha``, unvisited edges and the last level's edges), which
        decide it level by level and stop before a level it would pull; the
        ``"ratio"`` heuristic caps the limit at the rule's pull floor instead.
        ``iterations_left`` (None: no cap) caps the levels, each an iteration.
        """
        pp = self.push_pull
        if not fuse or load_balance != "auto" or self.idempotent or self.direction == "pull":
            return None
        limit = getattr(self.backend, "fuse_levels_below", self.backend.fuse_below)
        rule = None
        if self.direction == "auto":
            if pp.current != "push":
                return None
            if pp.policy.heuristic == "beamer":
                rule = PushRule(pp.pull_floor, pp.policy.alpha, pp.unvisited_edges,
                                pp.prev_edges)
            else:
                limit = min(limit, pp.pull_floor)
        cap = level_cap(self.backend)
        if iterations_left is not None:
            cap = min(cap, iterations_left)
        if cap <= 0:
            return None
        return LevelsPlan(limit, cap, rule)

    def near_far(self, *, fuse, load_balance, track_visited):
        """The edge limit of fused near/far steps, or None: run unfused.

        Not fused: ``fuse=False``, an explicit ``load_balance``, or a traversal
        that keeps a visited set (the fused steps neither read nor mark it).
        """
        if not fuse or load_balance != "auto" or track_visited:
            return None
        return self.backend.fuse_below
