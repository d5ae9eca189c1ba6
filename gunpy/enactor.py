"""Enactors: the loop that sequences operators until a primitive converges.

A subclass fills the first frontier in :meth:`Enactor.prepare_frontier` and
writes one iteration in :meth:`Enactor.loop` as a sentence of operator calls::

    def loop(self, frontier):
        frontier = self.advance(frontier, BFSFunctor)
        return self.filter(frontier, BFSFunctor)

:meth:`Enactor.enact` repeats ``loop`` until :meth:`Enactor.is_converged` (by
default: the frontier is empty), timing the run and logging every iteration.

The enactor also owns what several operators share: two ping-pong frontiers
(and two edge frontiers on demand), scratch arrays, the **visited bitmap**
(when a traversal pulls or culls, every vertex that enters a frontier gets its
bit) and the **direction** state of a push-pull traversal.
"""

import time
from dataclasses import dataclass

import numpy as np

from gunpy.frontier import Frontier
from gunpy.functor import compile_functor
from gunpy.operators import bitmap as bitmap_op
from gunpy.operators import advance as advance_op
from gunpy.operators import compute as compute_op
from gunpy.operators import filter as filter_op
from gunpy.operators import neighbor_reduce as neighbor_reduce_op
from gunpy.operators import reduce as reduce_op
from gunpy.operators.priority_queue import NearFarQueue
from gunpy.operators.advance import pull as pull_op
from gunpy.operators.common import frontier_edges
from gunpy.result import Stats

__all__ = ["Enactor", "DirectionPolicy", "DIRECTIONS"]

DIRECTIONS = ("push", "pull", "auto")


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
    vertices however small the frontier is, so on long-diameter graphs (roads,
    meshes) the thin last levels, where ``m_u`` has dwindled, stay in push.

    Measured fallback (both heuristics): a pull level that examined more edges
    than push would have visited (the frontier's out-edges) sends the run back
    to push at once, and auto pulls again only on a frontier with more
    out-edges than that one. Pull pays off only when most unvisited vertices
    sit next to the frontier; when they do not (a mesh's tail), it scans their
    whole in-lists for nothing, and the cost it reported says so.

    ``pull_mapping``: ``"thread"``, ``"warp"`` or ``"auto"`` (CUDA: a warp per
    vertex when the average degree is 16 or more).
    """

    heuristic: str = "beamer"
    alpha: float = 15.0
    beta: float = 18.0
    ratio: float = 0.01
    min_pull: float = 1.0 / 32
    pull_mapping: str = "auto"

    def __post_init__(self):
        if self.heuristic not in ("beamer", "ratio"):
            raise ValueError(f"unknown direction heuristic {self.heuristic!r}; "
                             "valid: 'beamer', 'ratio'")
        if not (self.alpha > 0 and self.beta > 0 and self.ratio > 0):
            raise ValueError("direction policy alpha, beta and ratio must be positive")
        if not self.min_pull >= 0:
            raise ValueError("direction policy min_pull must be non-negative")
        if self.pull_mapping not in pull_op.MAPPINGS:
            raise ValueError(f"unknown pull mapping {self.pull_mapping!r}; "
                             f"valid: {pull_op.MAPPINGS}")


class Enactor:
    """Base class for a primitive's main loop.

    Parameters
    ----------
    problem : gunpy.Problem
    load_balance : {"auto", "thread_mapped", "twc", "merge_path"}, default "auto"
        Push advance workload mapping (see :mod:`gunpy.operators.advance`).
    direction : {"push", "pull", "auto"}, default "push"
        ``pull`` and ``auto`` track a visited bitmap and build the reverse graph.
    direction_policy : DirectionPolicy, optional
        Switching rule and pull kernel mapping for ``direction="auto"``.
    max_iterations : int, optional
        Stop after this many iterations even if not converged.
    auto_threshold : int, default 4096
        ``load_balance="auto"`` uses merge-path above this many frontier edges.
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
        self.direction = _check_direction(direction)
        self.policy = direction_policy or DirectionPolicy()
        if not isinstance(self.policy, DirectionPolicy):
            raise TypeError("direction_policy must be a gunpy.enactor.DirectionPolicy")
        self.max_iterations = max_iterations
        self.auto_threshold = int(auto_threshold)
        self.iteration = 0
        self._scratch = {}
        self._record = None
        self._edge_frontiers = None
        self._visited = None
        self._pq = None
        #: the near/far queue's first level (items with priority below it are near)
        self.initial_level = 1.0
        self._saved_store = None
        self._saved_offsets = [0]
        self.idempotent = bool(idempotent)
        #: keep a visited bitmap (pull traversal and culling filters read it)
        self.track_visited = self.direction != "push" or self.idempotent
        self._mark_in_push = self.track_visited and not self.idempotent
        self.stats = Stats(backend=self.backend.name)
        cap = max(self.num_vertices, 1)
        dtype = problem.index_dtype
        self._frontiers = [Frontier(self.backend, cap, dtype=dtype, name="A",
                                    num_vertices=self.num_vertices),
                           Frontier(self.backend, cap, dtype=dtype, name="B",
                                    num_vertices=self.num_vertices)]
        # for compute over all vertices: a queue that is never read, and the count n
        self.dummy_queue = self.backend.zeros(1, dtype)
        self.vertex_count = self.backend.asarray(np.array([self.num_vertices], dtype=np.int64))
        self._reset_direction_state()

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
            return self.iteration >= 3
        return frontier.size == 0

    def finalize(self):
        """Hook run once after the loop, inside the timed run (e.g. a last pass)."""

    # -- the loop -------------------------------------------------------------------
    def enact(self):
        """Run the primitive to convergence; returns :class:`gunpy.result.Stats`."""
        self.iteration = 0
        self.stats = Stats(backend=self.backend.name, load_balance=self.load_balance,
                           direction=self.direction)
        self._reset_direction_state()
        self._pq = None
        self._saved_offsets = [0]
        frontier = self._frontiers[0]
        frontier.clear()
        self.backend.synchronize()
        # the timed run includes setting up the first frontier (CC's edge frontier, ...)
        start = time.perf_counter()
        self.prepare_frontier(frontier)
        if self.track_visited:
            self.mark_visited(frontier, clear=True)
        while not self.is_converged(frontier):
            self._record = {"iteration": self.iteration, "frontier": frontier.size,
                            "edges": 0, "direction": None, "strategy": None}
            t0 = time.perf_counter()
            frontier = self.loop(frontier)
            # the size read syncs with the device, so the time covers the iteration's kernels
            frontier.size
            self._record["ms"] = (time.perf_counter() - t0) * 1e3
            self.stats.per_iteration.append(self._record)
            self.stats.edges_visited += self._record["edges"]
            self.iteration += 1
        self._record = None
        self.stats.iterations = self.iteration
        self.finalize()
        self.backend.synchronize()
        # finalize is part of the run (SSSP's parents, CC's relabelling)
        self.stats.elapsed_ms = (time.perf_counter() - start) * 1e3
        return self.stats

    # -- operators ------------------------------------------------------------------
    def advance(self, frontier, functor, *, load_balance=None, direction=None, output="vertex",
                pull_input="visited", early_exit=True):
        """Visit the edges of ``frontier``; returns the frontier of accepted items.

        Push: for each out-edge ``(src, dst, e)`` of the frontier whose
        ``cond_edge`` holds, ``apply_edge`` runs and the output gains ``dst``
        (``output="vertex"``), the edge id ``e`` (``output="edge"``) or nothing
        (``output="none"``).

        Pull (``direction="pull"``, or chosen by ``"auto"``): every unvisited
        vertex ``dst`` scans its in-edges ``(src, dst, e)`` whose ``src`` is in
        the input set (the visited set with ``pull_input="visited"``, Gunrock's
        operand reuse; the frontier itself with ``"frontier"``), runs
        ``cond_edge``/``apply_edge`` and joins the output if one held; with
        ``early_exit`` it stops at the first. The output is a bitmap frontier.
        """
        direction = _check_direction(direction or self.direction)
        if pull_input not in ("visited", "frontier"):
            raise ValueError(f"unknown pull_input {pull_input!r}; valid: 'visited', 'frontier'")
        hooks = compile_functor(functor, self.backend)
        data = self.problem.data()
        if direction == "auto":
            if self._current_direction == "push" and frontier.has_queue:
                # the common case on long-diameter graphs (thin frontiers that cannot
                # reach min_pull), kept as cheap as push itself
                dg = self.backend.graph(self.graph)
                edges = frontier.known_edges
                if edges is None:
                    edges = frontier.known_edges = frontier_edges(self, dg, frontier)
                if edges < self._pull_floor:
                    self._unvisited_edges -= edges  # clamped at 0 where it is read
                    self._prev_size = frontier.size
                    self._prev_edges = edges
                    return self._push(frontier, functor, hooks, data, dg, edges, output,
                                      load_balance)
            direction = self._choose_direction(frontier)
        elif direction == "pull" or self.track_visited:
            if not self.track_visited:
                self._start_visited(frontier)
            self._account(frontier)
        if direction == "pull":
            if output != "vertex":
                raise ValueError("pull advance produces vertex frontiers only")
            return self._pull(frontier, hooks, data, pull_input, early_exit)
        frontier.ensure_queue(self.scratch)
        dg = self.backend.graph(self.graph)
        edges = frontier.known_edges
        if edges is None:
            edges = frontier_edges(self, dg, frontier)
        return self._push(frontier, functor, hooks, data, dg, edges, output, load_balance)

    def _push(self, frontier, functor, hooks, data, dg, edges, output, load_balance):
        out = self._output_for(frontier, kind="edge" if output == "edge" else "vertex")
        strategy, edges = advance_op.execute(
            self, dg, frontier, out, hooks, data, load_balance=load_balance or self.load_balance,
            output=output,
            # with culling it is the filter that marks survivors visited
            mark_visited=self._mark_in_push and output == "vertex",
            skip_visited=self.track_visited and functor.skip_visited,
            threshold=self.auto_threshold, edges=edges)
        self._log(edges=edges, direction="push", strategy=strategy)
        return out

    def filter(self, frontier, functor, *, mode=None):
        """Keep the items of ``frontier`` whose ``cond_vertex`` holds (running ``apply_vertex``).

        ``mode="predicated"`` is exact; ``mode="cull"`` (the default of an
        idempotent enactor) also drops duplicate and already-visited vertices
        with Merrill's heuristics (see :mod:`gunpy.operators.filter`).
        """
        hooks = compile_functor(functor, self.backend)
        mode = mode or ("cull" if self.idempotent else "predicated")
        if mode == "cull":
            if not self.idempotent:
                raise ValueError("filter(mode='cull') needs an idempotent enactor "
                                 "(Enactor(..., idempotent=True))")
            if not frontier.has_queue:
                mode = "predicated"  # a bitmap (pull output) holds no duplicates
        frontier.ensure_queue(self.scratch)
        out = self._output_for(frontier, kind=frontier.kind)
        if frontier.kind == "edge":
            self._log(edges=frontier.size)  # an edge filter visits each of its edges once
        return filter_op.execute(self, frontier, out, hooks, self.problem.data(), mode=mode)

    def filter_until_empty(self, frontier, functor, *, mode=None):
        """Filter repeatedly, each output feeding the next, until nothing is kept.

        For fixed-point sub-loops such as pointer jumping. Returns the number of rounds.
        """
        rounds = 0
        while frontier.size:
            frontier = self.filter(frontier, functor, mode=mode)
            rounds += 1
            if self.backend.dry_run:
                break
        return rounds

    def compute(self, frontier, functor):
        """Run ``apply_vertex`` on every item of ``frontier`` (``None``: every vertex)."""
        hooks = compile_functor(functor, self.backend)
        if frontier is not None:
            frontier.ensure_queue(self.scratch)
        compute_op.execute(self, frontier, hooks, self.problem.data())
        return frontier

    def neighbor_reduce(self, frontier, functor, out, *, edges="in", mapping="auto", op="sum"):
        """``out[v] = op of functor.gather_edge over v's in- (or out-) edges``.

        For the vertices of ``frontier`` (``None``: every vertex). A gather with
        one writer per vertex and no atomics (pull-style SpMV); ``op`` is
        ``"sum"``, ``"min"`` or ``"max"``.
        """
        hooks = compile_functor(functor, self.backend)
        if frontier is not None:
            frontier.ensure_queue(self.scratch)
        edges_read = neighbor_reduce_op.execute(self, frontier, hooks, self.problem.data(), out,
                                                edges=edges, mapping=mapping, op=op)
        self._log(edges=edges_read, direction="pull", strategy="neighbor_reduce")
        return frontier

    def near_far(self, frontier, functor):
        """Split ``frontier`` by ``functor.priority`` into the near slice (returned) and the far pile.

        When the near slice is empty the level rises past the far pile's lowest
        priority and the far pile is split again; the result is empty only when
        both are. See :mod:`gunpy.operators.priority_queue`.
        """
        hooks = compile_functor(functor, self.backend)
        if self._pq is None:
            self._pq = NearFarQueue(self, initial_level=self.initial_level)
        frontier.ensure_queue(self.scratch)
        out = self._output_for(frontier)
        return self._pq.next(frontier, out, hooks, self.problem.data())

    def reduce(self, array, op="sum", n=None):
        """``op`` ("sum", "min", "max") over a device array, as a Python number."""
        return reduce_op.reduce_array(self.backend, array, n, op)

    # -- frontiers the enactor keeps --------------------------------------------------
    def full_frontier(self, kind="vertex"):
        """A frontier of every vertex id (or every edge id with ``kind="edge"``).

        The id array is built once per graph and backend and kept with the
        graph's device copy (operators never write their input frontier), so a
        second run on the same graph does not pay for it again.
        """
        n = self.num_vertices if kind == "vertex" else self.graph.num_edges
        dtype = np.dtype(self.problem.index_dtype if kind == "vertex" else np.int64)
        key = ("all", kind, dtype.str, self.backend)  # the object: never another backend's ids
        ids = self.graph._device.get(key)
        if ids is None:
            ids = self.backend.empty(max(n, 1), dtype)
            reduce_op.iota(self.backend, ids, n)
            if not self.backend.dry_run:
                self.graph._device[key] = ids
        return Frontier.view(self.backend, ids, n, kind=kind, name=f"all-{kind}s",
                             num_vertices=self.num_vertices)

    def save_frontier(self, frontier):
        """Append a copy of ``frontier`` to the enactor's frontier storage (Gunrock 4.4.3).

        :meth:`saved_frontier` returns them later, e.g. BC's backward phase
        walking the BFS levels in reverse.
        """
        frontier.ensure_queue(self.scratch)
        n = frontier.size
        used = self._saved_offsets[-1]
        store = self._saved_store
        if store is None or store.shape[0] < used + n:
            grown = self.backend.empty(max(used + n, self.num_vertices, 1), frontier.dtype)
            if store is not None and used:
                copy_items(self.backend, store, grown, used)
            self._saved_store = store = grown
        copy_items(self.backend, frontier.queue, store[used:], n)
        self._saved_offsets.append(used + n)
        return len(self._saved_offsets) - 2

    @property
    def num_saved_frontiers(self):
        return len(self._saved_offsets) - 1

    def saved_frontier(self, i):
        """The ``i``-th saved frontier (a view on the storage, not a copy)."""
        lo, hi = self._saved_offsets[i], self._saved_offsets[i + 1]
        f = Frontier.view(self.backend, self._saved_store[lo:max(hi, lo + 1)], hi - lo,
                          name=f"saved{i}", num_vertices=self.num_vertices)
        return f

    # -- visited set and direction ----------------------------------------------------
    def visited_words(self):
        """The visited bitmap (32-bit words) when tracked, else a one-word dummy."""
        if self._visited is None:
            n = bitmap_op.num_words(self.num_vertices) if self.track_visited else 1
            self._visited = self.backend.zeros(n, np.uint32)
        return self._visited

    def mark_visited(self, frontier, *, clear=False):
        """Set the visited bits of ``frontier``'s vertices (``clear``: start from empty)."""
        words = self.visited_words()
        if words.shape[0] != bitmap_op.num_words(self.num_vertices):
            self._visited = None
            words = self.visited_words()
        if clear:
            self.backend.fill(words, 0)
        if frontier.has_queue:
            bitmap_op.queue_to_bitmap(self.backend, frontier.queue, frontier.length,
                                      frontier.size, words, clear=False)
        else:
            bitmap_op.or_into(self.backend, words, frontier.bitmap)

    def _start_visited(self, frontier):
        """Track the visited set from now on (a pull on an enactor built for push).

        Only possible before anything was visited beyond the first frontier: the
        visited set is then exactly that frontier. Later, the vertices earlier
        push levels reached are unknown, and a pull would take them for unvisited.
        """
        if self.iteration != 0 or self.stats.edges_visited or (
                self._record is not None and self._record["edges"]):
            raise ValueError(
                "advance(direction='pull') needs the visited set, which this enactor does not "
                "keep (it was built with direction='push'); build it with direction='pull' or "
                "'auto' (Enactor(problem, direction=...)), or pull from the first iteration on")
        self.track_visited = True
        self._mark_in_push = not self.idempotent
        self.mark_visited(frontier, clear=True)

    def _reset_direction_state(self):
        self._current_direction = "push"
        self._prev_size = 0
        self._prev_edges = 0
        self._unvisited_edges = self.graph.num_edges
        #: frontier out-edges below which auto stays in push (min_pull, raised by a lost pull)
        self._pull_floor = self.policy.min_pull * max(self.num_vertices, 1)
        self._pull_cost = None  # (edges a pull examined, edges push would have visited)

    def _account(self, frontier):
        """Update the unvisited-edge estimate with the frontier's out-edges; returns m_f."""
        m_f = frontier.known_edges
        if m_f is None:
            if frontier.has_queue:
                m_f = frontier_edges(self, self.backend.graph(self.graph), frontier)
            else:
                m_f = 0
            frontier.known_edges = m_f
        u = self._unvisited_edges - m_f
        self._unvisited_edges = u if u > 0 else 0
        return m_f

    def _choose_direction(self, frontier):
        # (advance() keeps the common case, a thin queue frontier in push, off this path)
        m_f = self._account(frontier)
        d = self._current_direction
        n_f = frontier.size
        p = self.policy
        n = max(self.num_vertices, 1)
        big_enough = m_f >= self._pull_floor
        if d == "pull" and self._pull_cost is not None:
            examined, push_edges = self._pull_cost
            self._pull_cost = None
            if examined > push_edges:
                # the last pull examined more edges than push would have visited (the
                # frontier was not next to most unvisited vertices: a mesh's or road's
                # tail); go back to push, and pull again only on a fatter frontier
                self._pull_floor = max(self._pull_floor, push_edges + 1)
                self._current_direction = "push"
                self._prev_size = n_f
                self._prev_edges = m_f
                return "push"
        m_u = max(self._unvisited_edges, 0)
        growing, shrinking = n_f > self._prev_size, n_f < self._prev_size
        if p.heuristic == "beamer":
            if d == "push" and m_f > m_u / p.alpha and m_f > self._prev_edges and big_enough:
                d = "pull"
            elif d == "pull" and n_f < n / p.beta and shrinking:
                d = "push"
        else:
            r = n_f / n
            if d == "push" and r > p.ratio and growing and big_enough:
                d = "pull"
            elif d == "pull" and r < p.ratio and shrinking:
                d = "push"
        self._current_direction = d
        self._prev_size = n_f
        self._prev_edges = m_f
        return d

    def _pull(self, frontier, hooks, data, pull_input, early_exit):
        dg = self.backend.graph(self.graph, csc=True)
        visited = self.visited_words()
        input_bits = visited if pull_input == "visited" else frontier.ensure_bitmap()
        out = self._output_for(frontier)
        next_bits = out._words()
        examined, found, found_edges, mapping = pull_op.execute(
            self, dg, visited, input_bits, next_bits, hooks, data,
            mapping=self.policy.pull_mapping, early_exit=early_exit)
        # an early-exit pull is worth it only if it examines fewer edges than push would
        # visit (the frontier's out-edges, m_f); one that reads every in-edge (BC's path
        # counts) trades edges for push's atomics instead, so its edge count decides nothing
        self._pull_cost = (examined, frontier.known_edges or 0) if early_exit else None
        bitmap_op.or_into(self.backend, visited, next_bits)
        out.set_bitmap(next_bits, found, known_edges=found_edges)
        self._log(edges=examined, direction="pull", strategy=f"pull-{mapping}")
        return out

    # -- plumbing -------------------------------------------------------------------
    def _output_for(self, frontier, kind="vertex"):
        if kind == "edge":
            if self._edge_frontiers is None:
                self._edge_frontiers = [
                    Frontier(self.backend, max(self.graph.num_edges, 1), kind="edge",
                             dtype=np.int64, name="E0"),
                    Frontier(self.backend, max(self.graph.num_edges, 1), kind="edge",
                             dtype=np.int64, name="E1")]
            a, b = self._edge_frontiers
        else:
            a, b = self._frontiers
        return b if frontier is a else a

    def _log(self, *, edges=0, direction=None, strategy=None, culled=None, build=None):
        if self._record is None:
            return
        if build is not None:
            self._record["build"] = build
        self._record["edges"] += int(edges)
        if culled is not None:
            self._record["culled"] = self._record.get("culled", 0) + int(culled)
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


def copy_items(backend, src, dst, n):
    """``dst[:n] = src[:n]`` on the backend."""
    if n == 0:
        return
    if backend.name == "cpu" or backend.dry_run:
        dst[:n] = src[:n]
    else:
        dst[:n].copy_to_device(src[:n])


def _check_direction(direction):
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}; valid directions are "
                         f"{', '.join(repr(d) for d in DIRECTIONS)}")
    return direction
