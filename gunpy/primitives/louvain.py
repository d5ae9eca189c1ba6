"""Community detection by modularity: the Louvain method.

Blondel et al.'s two phases, repeated on ever smaller graphs. **Local moving**:
every vertex starts in a community of its own and moves to the neighbouring
community that raises the modularity most, until a sweep moves nobody or gains
little. **Contraction**: each community becomes a vertex of the next level's
graph, the edges between two communities one edge of their summed weight, the
edges inside one its self-loop. A level's partition is kept; the method stops
when a level raises the modularity by no more than ``threshold`` (networkx's
``louvain_partitions`` rule) or after ``max_level`` levels. **Refinement**
(NetworKit's PLM with refinement, Rotta and Noack's multi-level refinement): the
final partition is projected back down, level by level, and at each level the
vertices move again from there; the last level's partition is the refined one.

Moving one vertex at a time (networkx, igraph) makes the result depend on the
order threads run in. Here a sweep runs in ``BUCKETS`` sub-rounds: every vertex
has a seeded pseudo-random bucket, and in a sub-round the vertices of one bucket
all choose against the communities as they stand (the gain of each neighbouring
community), then move together, the community totals updated before the next
bucket: a sweep is one call of :func:`gunpy.operators.neighbor_best` with a
round a bucket. A vertex alone in its community joins another
lone vertex only if that one's id is smaller, so two lone neighbours never swap.
A level of at most ``SEQUENTIAL_BELOW`` vertices (the coarse ones, where a vertex
is a whole community) runs ``SMALL_BUCKETS`` sub-rounds, one vertex each when it
has no more vertices than that (networkx's sequential moves). Between levels,
:func:`gunpy.operators.contract` builds the quotient graph.
"""

from collections import namedtuple

import numpy as np

from gunpy.progress import bar
from gunpy import Enactor, Functor, Graph, Problem, atomics
from gunpy import operators as ops
from gunpy.registry import Option, Primitive, register_primitive
from gunpy.result import Result, Stats

__all__ = ["louvain", "LouvainResult", "LouvainProblem", "LouvainEnactor", "LouvainLevel"]

#: sub-rounds a sweep (each a seeded share of the vertices moving together; a sweep is one
#: operator call, so finer rounds cost little on the CPU and choose better: 8 -> 32 gave
#: rmat14 / rmat18 modularity 0.1052 / 0.0859 -> 0.1066 / 0.0867 in fewer sweeps)
BUCKETS = 32
#: a level with at most this many vertices (the coarse levels, where one vertex is a large
#: community) runs finer sub-rounds:
SEQUENTIAL_BELOW = 256
#: ... this many, or one a vertex where it has fewer (sequential: no vertices move together)
SMALL_BUCKETS = 64
#: sweeps a level at most (a sweep that moves nobody ends the level before)
MAX_SWEEPS = 100
#: a sweep gaining less than this share of its level's gain so far ends the level (the
#: tail of a level's sweeps moves a few vertices back and forth for little)
TAIL = 0.1
#: added to the seed of the refining passes (their buckets differ from the level's own)
REFINE_SEED = 1 << 20
#: a refining pass's sweep gaining less than this share of the modularity ends it
REFINE_TAIL = 1e-2

LouvainData = namedtuple("LouvainData", "initial comm next k tot size bucket_of moves inner "
                                        "buckets guard seed m resolution")

#: one level: its communities (on the input graph's vertices: ``labels``), their number,
#: the partition's modularity, and the sweeps and moves of its local moving
LouvainLevel = namedtuple("LouvainLevel", "labels communities modularity sweeps moves")


class Degree(Functor):
    """A vertex's weighted degree: a self-loop counts twice (networkx's degree); their sum
    is twice the graph's total weight."""

    @staticmethod
    def gather_edge(v, u, edge, weight, data):
        return 2.0 * weight if u == v else weight

    @staticmethod
    def apply_vertex(v, data):
        return (data.k[v],)  # one aggregate


class Start(Functor):
    """The starting communities (``initial``: one a vertex, or the level above's); the
    vertex's bucket from a seeded hash of its id."""

    @staticmethod
    def apply_vertex(v, data):
        data.comm[v] = data.initial[v]
        data.next[v] = data.initial[v]
        data.tot[v] = 0.0
        data.size[v] = 0
        x = (np.int64(v) ^ data.seed) & 0xFFFFFFFF  # two rounds of a 32-bit integer mix
        x = (((x >> 16) ^ x) * 0x45D9F3B) & 0xFFFFFFFF
        x = (((x >> 16) ^ x) * 0x45D9F3B) & 0xFFFFFFFF
        data.bucket_of[v] = ((x >> 16) ^ x) % data.buckets


class Join(Functor):
    """Each vertex's weighted degree to its starting community's total."""

    @staticmethod
    def apply_vertex(v, data):
        atomics.add(data.tot, data.comm[v], data.k[v])
        atomics.add(data.size, data.comm[v], 1)


class Choose(Functor):
    """A bucket a round: its vertices choose the neighbouring community of the largest
    modularity gain, then move there together (the totals follow)."""

    @staticmethod
    def round_of(v, data):
        return data.bucket_of[v]

    @staticmethod
    def gather_edge(v, u, edge, weight, data):
        if u == v:
            return np.int64(-1)  # a self-loop joins v to no community
        return data.comm[u]

    @staticmethod
    def score(v, c, total, data):
        own = data.comm[v]
        tot = data.tot[c]
        if c == own:
            tot -= data.k[v]  # v's gain of staying is against its community without it
        elif data.guard and c > own and data.size[c] == 1 and data.size[own] == 1:
            return -np.inf  # lone vertices moving together join the smaller id: no swaps
        return total - data.resolution * tot * data.k[v] / (2.0 * data.m)

    @staticmethod
    def apply_vertex(v, data):
        c, d = data.comm[v], data.next[v]
        if c != d:
            atomics.add(data.tot, c, -data.k[v])
            atomics.add(data.tot, d, data.k[v])
            atomics.add(data.size, c, -1)
            atomics.add(data.size, d, 1)
            data.comm[v] = d
            atomics.add(data.moves, 0, 1)


class Inner(Functor):
    """Twice the weight inside ``v``'s community at ``v`` (a self-loop twice), and ``v``'s
    share of the sum of squared community totals: summed, the modularity."""

    @staticmethod
    def gather_edge(v, u, edge, weight, data):
        if data.comm[u] != data.comm[v]:
            return 0.0
        return 2.0 * weight if u == v else weight

    @staticmethod
    def apply_vertex(v, data):
        return data.inner[v], data.tot[data.comm[v]] * data.k[v]


class LouvainProblem(Problem):
    """One level's state: communities (``comm``, ``next``: the choice), weighted degrees
    (``k``), community totals and sizes, each vertex's bucket, the sweep's move count."""

    Data = LouvainData

    def init(self):
        self.comm = self.vertex_array(np.int64)
        self.next = self.vertex_array(np.int64)
        self.k = self.vertex_array(np.float64)
        self.tot = self.vertex_array(np.float64)
        self.size = self.vertex_array(np.int64)
        self.bucket_of = self.vertex_array(np.int64)
        self.moves = self.backend.zeros(1, np.int64)
        self.inner = self.vertex_array(np.float64)

    def reset(self, *, m=None, resolution=1.0, seed=0, threshold=1e-7, initial=None):
        """``m``: the graph's total weight (None: summed from the weighted degrees);
        ``initial``: each vertex's starting community, a vertex id (None: its own; else
        a refining pass, which ends on a gain under ``REFINE_TAIL`` of the modularity)."""
        self.refining = initial is not None
        self.initial = self.backend.asarray(np.arange(self.num_vertices, dtype=np.int64)
                                            if initial is None else initial)
        self.m = None if m is None else float(m)
        self.resolution, self.seed = float(resolution), int(seed)
        self.threshold = float(threshold)
        small = self.num_vertices <= SEQUENTIAL_BELOW
        self.buckets = min(self.num_vertices, SMALL_BUCKETS) if small else BUCKETS
        self.guard = self.buckets < self.num_vertices  # vertices move together
        self.moved = self.total_moves = 0
        self.modularity = self.gain = self.start = None

    def modularity_of(self, inner, squares):
        """The modularity from the sums :class:`Inner` gives (NaN without weight: only a
        compile-only backend, whose reads are zeros, gets here with none)."""
        m = self.m
        if not m:
            return float("nan")
        return inner / (2.0 * m) - self.resolution * squares / (4.0 * m * m)

    def extract(self):
        return self.to_host(self.comm)


class LouvainEnactor(Enactor):
    """One sweep an iteration: each bucket chooses, then moves; until nobody moved."""

    def __init__(self, problem):
        super().__init__(problem, max_iterations=MAX_SWEEPS)

    def prepare_frontier(self, frontier):
        two_m, = ops.neighbor_reduce(self.graph, None, Degree, self.problem, self.problem.k,
                                     edges="out", aggregates=1, context=self.context)
        if self.problem.m is None:
            self.problem.m = two_m / 2.0
        self.compute(None, Start)
        self.compute(None, Join)
        self.problem.modularity = self.problem.start = self.modularity()

    def modularity(self):
        """The modularity of the communities as they stand (one pass over the edges)."""
        sums = ops.neighbor_reduce(self.graph, None, Inner, self.problem, self.problem.inner,
                                   edges="out", aggregates=2, context=self.context)
        return self.problem.modularity_of(*sums)

    def loop(self, frontier):
        p = self.problem
        self.backend.fill(p.moves, 0)
        # a bucket a round
        ops.neighbor_best(self.graph, None, Choose, p, p.next, rounds=p.buckets,
                          context=self.context)
        p.moved = self.backend.read(p.moves)
        p.total_moves += p.moved
        before, p.modularity = p.modularity, self.modularity()
        p.gain = p.modularity - before
        self.context.record.update(frontier=self.num_vertices, strategy="neighbor_best",
                                   moves=p.moved, modularity=p.modularity)
        return frontier

    def is_converged(self, frontier):
        # a sweep that moved nobody, or gained no more than the threshold or a TAIL share
        # of the level's gain (moving together, vertices may trade places for ever where
        # one at a time they would settle)
        p = self.problem
        floor = REFINE_TAIL * abs(p.start) if p.refining else TAIL * (p.modularity - p.start)
        return self.iteration >= MAX_SWEEPS or (self.iteration > 0 and (
            p.moved == 0 or p.gain <= max(p.threshold, floor)))

    def finalize(self):
        self.stats.load_balance, self.stats.direction = "neighbor_best", ""


class LouvainResult(Result):
    """``labels`` (int64: each vertex's community, ``0..k-1``), ``modularity`` (float) and
    ``levels`` (a list of :data:`LouvainLevel`, the last one the result's)."""

    _fields = ("labels",)
    _main = "labels"
    _columns = {"labels": "community"}

    def communities(self):
        """The partition as a list of sets of node labels (networkx's form), in label order."""
        names = self.graph.labels()
        groups = [set() for _ in range(int(self.labels.max(initial=-1)) + 1)]
        for v, c in enumerate(self.labels.tolist()):
            groups[c].add(names[v])
        return groups


def _check(G, resolution, threshold, max_level, seed):
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    if G.directed:
        raise ValueError("louvain needs an undirected graph (directed modularity is not "
                         "implemented); build it with directed=False")
    if G.values is not None and not (G.values >= 0).all():
        raise ValueError("louvain needs non-negative, non-NaN edge weights")
    for name, x in (("resolution", resolution), ("threshold", threshold)):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.number)) \
                or not np.isfinite(x):
            raise ValueError(f"{name} must be a finite number, got {x!r}")
    if resolution <= 0:
        raise ValueError(f"resolution must be positive, got {resolution!r}")
    if max_level is not None and (isinstance(max_level, (bool, np.bool_)) or not isinstance(
            max_level, (int, np.integer)) or max_level <= 0):
        raise ValueError(f"max_level must be a positive integer or None, got {max_level!r}")
    if seed is None:
        return 0
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return int(seed) & 0x7FFFFFFF


def louvain(G, resolution=1.0, threshold=1e-7, max_level=None, seed=None, *, backend="auto",
            progress=False):
    """Communities of high modularity (the Louvain method).

    Parameters
    ----------
    G : gunpy.Graph
        Undirected, weighted (non-negative weights) or not. A self-loop is kept only if
        the graph was built with its self-loops: it then counts as weight already
        inside its vertex's community, as in networkx.
    resolution : float, default 1.0
        Above 1 favours smaller communities, below 1 larger ones.
    threshold : float, default 1e-7
        Stop when a level raises the modularity by no more than this.
    max_level : int, optional
        At most this many levels (None: until the threshold stops it).
    seed : int, optional
        Seeds the order of the moves (vertices' buckets). None means seed 0: every
        call with the same arguments gives the same partition.
    backend : {"auto", "cuda", "cpu"}, default "auto"
    progress : bool or None, default False
        A bar of the levels on standard error (``None``: only on a terminal;
        :mod:`gunpy.progress`).

    Returns
    -------
    LouvainResult
        ``labels`` (int64: each vertex's community, ``0..k-1``), ``modularity`` (that of
        ``labels``, as ``networkx.community.modularity`` computes it, with the same
        ``resolution`` and weights; NaN on a graph without edges), ``levels`` (a
        :data:`LouvainLevel` per level: ``labels``, ``communities``, ``modularity``,
        ``sweeps``, ``moves``), ``communities()`` (a list of sets of node labels) and
        ``stats`` (a record per sweep, with its level and moves).

    Raises
    ------
    TypeError
        ``G`` is not a :class:`gunpy.Graph`.
    ValueError
        ``G`` is directed or has a negative or NaN weight; ``resolution`` not positive,
        ``threshold`` not finite, ``max_level`` not a positive integer, ``seed`` not a
        non-negative integer; an unknown backend.

    See Also
    --------
    networkx.algorithms.community.louvain_communities : the sequential method (one vertex
        at a time, in a random order): another partition of about the same modularity.
    cdlp : label propagation, faster and of lower modularity.

    Notes
    -----
    A level's local moving is a series of sweeps until one moves nobody or gains no
    more than ``threshold`` or ``TAIL`` (10 %) of the level's gain so far (at most
    ``MAX_SWEEPS``); a sweep is ``BUCKETS`` sub-rounds, each letting a seeded share of
    the vertices move at once to the neighbouring community of largest gain
    :math:`k_{v,c} - \\gamma \\, k_v \\Sigma_c / 2m` (networkx's gain times :math:`m`),
    staying on ties, the smallest community id among equal gains. So the partition
    depends on the seed but not on the backend or its number of threads (for integer
    weights exactly; for others up to the order of floating-point sums). A level that
    moves nobody after the first ends the method, as in networkx. Then the final
    partition is refined from the coarsest level down (each pass until a sweep gains
    under ``REFINE_TAIL``, 1 %, of the modularity): the last entry of ``levels`` is the
    refined partition, which scores at least what the unrefined one did.

    References
    ----------
    .. [1] V. D. Blondel, J.-L. Guillaume, R. Lambiotte and E. Lefebvre, "Fast unfolding of
       communities in large networks", J. Stat. Mech. P10008, 2008.
    .. [2] H. Lu, M. Halappanavar and A. Kalyanaraman, "Parallel heuristics for scalable
       community detection", Parallel Computing 47, 2015.
    .. [3] R. Rotta and A. Noack, "Multilevel local search algorithms for modularity
       clustering", ACM J. Exp. Algorithmics 16, 2011; C. L. Staudt and H. Meyerhenke,
       "Engineering parallel algorithms for community detection in massive networks",
       IEEE TPDS 27(1), 2016 (PLM, PLMR).

    Examples
    --------
    Two triangles joined by one edge are two communities:

    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 0, 1, 2, 3, 3, 4], [1, 2, 2, 3, 4, 5, 5],
    ...                            directed=False)
    >>> r = gunpy.louvain(G, backend="cpu")
    >>> r.labels.tolist(), round(r.modularity, 4)
    ([0, 0, 0, 1, 1, 1], 0.3571)
    >>> [(level.communities, round(level.modularity, 4)) for level in r.levels]
    [(2, 0.3571)]
    """
    seed = _check(G, resolution, threshold, max_level, seed)
    n = G.num_vertices
    stats, levels = Stats(load_balance="neighbor_best"), []
    if G.num_edges == 0 or (G.values is not None and not G.values.any()):  # m = 0
        stats.backend = Problem(G, backend=backend).backend.name
        labels = np.arange(n, dtype=np.int64)  # a community a vertex
        levels.append(LouvainLevel(labels.copy(), n, float("nan"), 0, 0))
        return LouvainResult(G, stats, labels=labels, modularity=float("nan"), levels=levels)
    _levels(G, seed, max_level, levels, progress, m=None, resolution=resolution,
            threshold=threshold, backend=backend, stats=stats)
    return LouvainResult(G, stats, labels=levels[-1].labels, modularity=levels[-1].modularity,
                         levels=levels)


def _levels(G, seed, max_level, levels, progress, **options):
    """The levels: local moving, then the graph contracted by its communities, until a
    level moves nobody, gains no more than the threshold or ``max_level`` is reached,
    each appended to ``levels`` (a :data:`LouvainLevel`); then the last partition
    refined from the coarsest level down, which replaces the last level where it
    scores higher. ``options``: :func:`_local_moving`'s (``m``, the total weight, is
    set by the first level)."""
    labels = np.arange(G.num_vertices, dtype=np.int64)  # each input vertex's community
    graphs, maps = [G], []
    shown = bar(max_level, "louvain", unit="level", enabled=progress)
    while max_level is None or len(levels) < max_level:
        shown.update()
        problem, enactor = _local_moving(graphs[-1], None, seed + len(levels), len(levels),
                                         **options)
        if options["m"] is None:  # the first level summed the total weight, and started
            options["m"], mod = problem.m, problem.start  # from one community a vertex
        if levels and problem.total_moves == 0:
            break  # nothing moved: the last level stands (networkx's rule)
        new_mod = problem.modularity  # its partition's, as its last sweep summed it
        # comm renumbered 0..k-1 in place
        graphs.append(ops.contract(enactor.graph, problem.comm, context=enactor.context))
        maps.append(problem.extract())
        labels = maps[-1][labels]
        levels.append(LouvainLevel(labels, graphs[-1].num_vertices, new_mod, enactor.iteration,
                                   problem.total_moves))
        if new_mod - mod <= options["threshold"]:
            break
        mod = new_mod
    shown.close()
    refined = _refine(graphs[:len(maps)], maps, seed, **options)
    if refined is not None and refined.modularity > levels[-1].modularity:
        last = levels[-1]
        levels[-1] = refined._replace(sweeps=last.sweeps + refined.sweeps,
                                      moves=last.moves + refined.moves)


def _local_moving(graph, initial, seed, number, *, m, resolution, threshold, backend, stats):
    """One level's local moving on ``graph`` from the communities ``initial`` (None: one a
    vertex); its sweeps go to ``stats`` as level ``number``."""
    problem = LouvainProblem(graph, backend=backend)
    problem.reset(m=m, resolution=resolution, seed=seed, threshold=threshold, initial=initial)
    enactor = LouvainEnactor(problem)
    _add(stats, enactor.enact(), number)
    return problem, enactor


def _refine(graphs, maps, seed, **options):
    """The final partition improved level by level, coarse to fine (NetworKit's PLM with
    refinement): each level's vertices start in their final community and move again.
    Returns the partition of the input graph as a :data:`LouvainLevel`, or None (one level)."""
    if len(maps) < 2:
        return None
    part, sweeps, moves = maps[-1], 0, 0
    for number in reversed(range(len(maps) - 1)):
        problem, enactor = _local_moving(graphs[number], part[maps[number]],
                                         seed + REFINE_SEED + number, number, **options)
        part, sweeps, moves = problem.extract(), sweeps + enactor.iteration, \
            moves + problem.total_moves
    # the input graph's: labels 0..k-1
    quotient = ops.contract(enactor.graph, problem.comm, context=enactor.context)
    labels = problem.extract()
    return LouvainLevel(labels, quotient.num_vertices, problem.modularity, sweeps, moves)


def _add(stats, level, number):
    # a level's sweeps go to the call's records, each marked with its level
    stats.backend = level.backend
    for record in level.per_iteration:
        record["level"] = number
        record["iteration"] = stats.iterations
        stats.log(record)
        stats.iterations += 1
    stats.edges_visited += level.edges_visited
    stats.elapsed_ms += level.elapsed_ms


def _summary(r, G, source):
    lines = [f"{r.labels.max(initial=-1) + 1} communities, modularity {r.modularity:.6f}, "
             f"{len(r.levels)} levels",
             "level  communities  modularity  sweeps    moves"]
    lines += [f"{i:5d} {lv.communities:12d} {lv.modularity:11.6f} {lv.sweeps:7d} {lv.moves:8d}"
              for i, lv in enumerate(r.levels)]
    return lines


register_primitive(Primitive(
    "louvain", louvain, fields=LouvainResult._fields, summary=_summary, weighted=True,
    networkx=("louvain_communities",),
    options=(Option("resolution", 1.0, "modularity resolution (above 1: smaller communities)"),
             Option("threshold", 1e-7, "stop when a level gains no more modularity than this"),
             Option("max_level", None, "at most this many levels", type=int))))
