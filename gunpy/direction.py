"""Push-pull direction optimisation: when a traversal switches between push and pull.

:class:`DirectionPolicy` holds the rule and its parameters (user-facing);
:class:`PushPull` is one traversal's state (the enactor keeps one, reset per
run): the current direction, the previous frontier's size and edges, the
estimate of edges left unvisited, and the cost a pull last reported.
"""

from dataclasses import dataclass

from gunpy.operators.common import frontier_edges

__all__ = ["DirectionPolicy", "PushPull", "DIRECTIONS", "check_direction"]

DIRECTIONS = ("push", "pull", "auto")


def check_direction(direction):
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}; valid directions are "
                         f"{', '.join(repr(d) for d in DIRECTIONS)}")
    return direction


@dataclass(frozen=True)
class DirectionPolicy:
    """When ``direction="auto"`` switches between push and pull.

    ``heuristic="beamer"`` (Beamer et al., used by Gunrock and Ligra): go to
    pull when the frontier's out-edges ``m_f`` exceed ``m_u / alpha`` (``m_u``:
    edges of the unvisited vertices) and grew since the last iteration, back to
    push when the frontier has fewer than ``n / beta`` vertices and is shrinking
    (GraphBLAST's table 9 gives Beamer's rule with both growth conditions).

    ``heuristic="ratio"`` (the push-pull GraphBLAS paper, section 6.3): with
    ``r = |frontier| / n``, pull when ``r > ratio`` and ``r`` grew, push when
    ``r < ratio`` and ``r`` shrank.

    ``min_pull``: either heuristic goes to pull only when the frontier has at
    least ``min_pull * n`` out-edges. A pull pass walks bitmaps over all ``n``
    vertices however small the frontier is, and scans the whole in-lists of the
    unvisited vertices the frontier does not touch, so on long-diameter graphs
    (roads, meshes) the last levels, where ``m_u`` has dwindled, stay in push.
    The default, ``n / 4``, keeps a mesh's widest frontiers in push (delaunay_n16
    on the CPU: 0.75 pulls a BFS, each ~1 ms against ~0.05 ms for the push
    level; n / 32 let them pull) and changes nothing on scale-free graphs, whose
    frontiers pass ``n`` out-edges long before Beamer's rule pulls (RMAT-18:
    the same pulls).

    Measured fallback (both heuristics): a pull level that examined more edges
    than push would have visited (the frontier's out-edges) sends the run back
    to push at once, and auto pulls again only on a frontier with twice its
    out-edges (four times after a second lost pull, and so on). Pull pays off only when most unvisited vertices
    sit next to the frontier; when they do not (a mesh's tail), it scans their
    whole in-lists for nothing, and the cost it reported says so.

    ``pull_mapping``: ``"thread"``, ``"warp"`` or ``"auto"`` (CUDA: a warp per
    vertex when the average degree is 16 or more), or a mapping added with
    :func:`gunpy.operators.advance.register_strategy` (``kind="pull"``).
    """

    heuristic: str = "beamer"
    alpha: float = 15.0
    beta: float = 18.0
    ratio: float = 0.01
    min_pull: float = 1.0 / 4
    pull_mapping: str = "auto"

    def __post_init__(self):
        if self.heuristic not in ("beamer", "ratio"):
            raise ValueError(f"unknown direction heuristic {self.heuristic!r}; "
                             "valid: 'beamer', 'ratio'")
        if not (self.alpha > 0 and self.beta > 0 and self.ratio > 0):
            raise ValueError("direction policy alpha, beta and ratio must be positive")
        if not self.min_pull >= 0:
            raise ValueError("direction policy min_pull must be non-negative")
        from gunpy.operators.advance import pull_mapping_options
        if self.pull_mapping not in pull_mapping_options():
            raise ValueError(f"unknown pull mapping {self.pull_mapping!r}; "
                             f"valid: {pull_mapping_options()}")


class PushPull:
    """The push-pull state of one traversal under a :class:`DirectionPolicy`.

    :meth:`choose` takes the frontier's size ``n_f`` and out-edges ``m_f`` and
    returns the direction of the next advance; :meth:`account` only updates
    the unvisited-edge estimate (an advance whose direction was forced);
    :meth:`pulled` records what a pull examined.
    """

    def __init__(self, policy, num_vertices, num_edges):
        self.policy = policy
        self.num_vertices = max(int(num_vertices), 1)
        self.num_edges = int(num_edges)
        self.reset()

    def reset(self):
        self.current = "push"
        self.prev_size = 0
        self.prev_edges = 0
        self.unvisited_edges = self.num_edges
        #: frontier out-edges below which auto stays in push (min_pull, raised by a lost pull)
        self.pull_floor = self.policy.min_pull * self.num_vertices
        self.pull_cost = None  # (edges a pull examined, edges push would have visited)
        self.lost_pulls = 0  # pulls that examined more than push would have visited

    def account(self, m_f):
        """Take the frontier's out-edges off the unvisited-edge estimate."""
        u = self.unvisited_edges - m_f
        self.unvisited_edges = u if u > 0 else 0

    def pushed(self, levels):
        """Levels that ran as pushes without asking (fused: each one :meth:`decide`
        would have pushed, the levels having asked the same rule themselves):
        ``(frontier size, out-edges)`` rows, accounted as :meth:`decide` would have."""
        if len(levels):
            # one subtraction for them all: the estimate only falls, and stops at zero
            self.account(int(levels[:, 1].sum()))
            self.prev_size, self.prev_edges = int(levels[-1, 0]), int(levels[-1, 1])

    def pulled(self, examined, push_edges):
        """A pull examined ``examined`` in-edges where push would visit ``push_edges``.

        Pass ``examined=None`` for a pull without early exit (BC's path counts
        read every in-edge: that trades edges for push's atomics, so its edge
        count decides nothing).
        """
        self.pull_cost = None if examined is None else (examined, push_edges)

    def decide(self, context, frontier, direction):
        """The direction of an advance over ``frontier`` asked for ``direction`` (``"auto"``:
        :meth:`choose`; a forced one is only accounted)."""
        m_f = frontier.known_edges
        if m_f is None:
            m_f = 0
            if frontier.has_queue:
                m_f = frontier_edges(context, context.backend.graph(context.graph), frontier)
            frontier.known_edges = m_f
        if direction != "auto":
            self.account(m_f)
            return direction
        if self.current == "push" and m_f < self.pull_floor:
            # the common case on long-diameter graphs, as cheap as push itself: thin
            # frontiers stay in push (choose() would say so too)
            u = self.unvisited_edges - m_f
            self.unvisited_edges = u if u > 0 else 0
            self.prev_size, self.prev_edges = frontier.size, m_f
            return "push"
        return self.choose(frontier.size, m_f)

    def choose(self, n_f, m_f):
        """The direction for a frontier of ``n_f`` vertices and ``m_f`` out-edges."""
        self.account(m_f)
        d = self.current
        if d == "push" and m_f < self.pull_floor:
            # the common case on long-diameter graphs: thin frontiers stay in push
            self.prev_size, self.prev_edges = n_f, m_f
            return "push"
        p = self.policy
        n = self.num_vertices
        if d == "pull" and self.pull_cost is not None:
            examined, push_edges = self.pull_cost
            self.pull_cost = None
            if examined > push_edges:
                # the last pull examined more edges than push would have visited (the
                # frontier was not next to most unvisited vertices: a mesh's or road's
                # tail); go back to push, and pull again only on a frontier 2**k times
                # fatter after the k-th lost pull (a mesh's frontier grows a little a
                # level: a floor of just the loser's edges let it pull, lose and push in
                # turn, ~0.3 ms a lost pull on delaunay_n16)
                self.lost_pulls += 1
                self.pull_floor = max(self.pull_floor, push_edges * 2 ** self.lost_pulls + 1)
                self.current = "push"
                self.prev_size, self.prev_edges = n_f, m_f
                return "push"
        m_u = self.unvisited_edges
        big_enough = m_f >= self.pull_floor
        if p.heuristic == "beamer":
            if d == "push" and m_f > m_u / p.alpha and m_f > self.prev_edges and big_enough:
                d = "pull"
            elif d == "pull" and n_f < n / p.beta and n_f < self.prev_size:
                d = "push"
        else:
            r = n_f / n
            if d == "push" and r > p.ratio and n_f > self.prev_size and big_enough:
                d = "pull"
            elif d == "pull" and r < p.ratio and n_f < self.prev_size:
                d = "push"
        self.current = d
        self.prev_size, self.prev_edges = n_f, m_f
        return d
