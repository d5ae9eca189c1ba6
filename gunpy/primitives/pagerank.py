"""PageRank: the power iteration, exactly as networkx's ``pagerank``.

Gunrock section 5.1.5 and GraphBLAST's SpMV formulation. Each iteration:

1. every vertex splits its rank over its out-edges (``contrib = rank / out-weight``);
   vertices with no out-weight are *dangling* and their rank is summed;
2. the contributions travel along the edges, either **push** (advance over all
   vertices, ``atomic add`` into each destination) or **pull** (a
   neighbor-reduce over in-edges: one writer per vertex, no atomics);
3. ``rank = alpha * received + (alpha * dangling + 1 - alpha) / n``: networkx's
   uniform redistribution of dangling mass and teleportation;
4. stop when the L1 change is below ``n * tol`` (networkx's test) or after
   ``max_iter`` iterations; ``tol=0`` runs exactly ``max_iter``. Never raises.

**Pull** makes one pass over the vertices an iteration: the neighbor-reduce
runs step 3 as its apply step (``PullUpdate``), which also splits the new rank
for the next iteration (step 1, as networkx: ``rank * (1 / out-weight)``) and
returns the L1 change and the next dangling mass as the pass's two sums
(``aggregates=2``: no per-vertex array, no reduction pass). The contributions
are double-buffered (the pass reads the last iteration's); the gathered sum
lands in the next contribution's slot, and the rank is updated in place (each
vertex reads and writes only its own): three vertex arrays, not four. What
depends on the graph alone (the inverse out-weights, the uniform first rank's
split and dangling mass: ``Split``) is computed on a graph's first call and
kept with its scratch (new weights make it anew); the first iteration
(``FirstUpdate``) reads it and the uniform rank as a number. **Push** splits
before its loop and in its update pass, and sums with two reductions.
"""

from collections import namedtuple

import numba
import numpy as np

from gunpy import Enactor, Functor, Problem, atomics
from gunpy import operators as ops
from gunpy.primitives._weights import check_weights, restart_vectors
from gunpy.registry import Option, Primitive, register_primitive, top_vertices
from gunpy.result import Result

__all__ = ["pagerank", "PageRankResult", "PageRankProblem", "PageRankEnactor", "DIRECTIONS",
           "PullUpdate", "FirstUpdate", "Split"]

DIRECTIONS = ("pull", "push")

#: ``row_offsets`` (FirstSplit's out-degrees) defaults to None for callers that run the
#: other functors only (gunpy.dist's PageRank builds its own PRData); the personalised
#: update's ``teleport`` (the personalization vector), ``dangle_to`` (where dangling mass
#: goes: ``teleport`` unless ``dangling`` is given), ``restart`` (1 - alpha) and ``spread``
#: (alpha * dangling mass) default to nothing
PRData = namedtuple("PRData", "rank received contrib dangling change out_weight alpha base "
                               "row_offsets teleport dangle_to restart spread",
                    defaults=(None, None, None, 0.0, 0.0))


#: the pull iteration's data: ``rank`` (updated in place), last iteration's ``contrib`` in,
#: ``next``: where the gather leaves each vertex's sum, then its next contribution
PullData = namedtuple("PullData", "rank next contrib inv_weight alpha base first")
#: the personalised pull iteration's: PullData's and PRData's four
PersonalData = namedtuple("PersonalData", PullData._fields + ("teleport", "dangle_to", "restart",
                                                              "spread"))
#: the pull iteration's restarting at one vertex (PPR): PullData's, the vertex, and what it
#: receives each iteration (``restart``, and ``spread``: the dangling mass's share)
VertexData = namedtuple("VertexData", PullData._fields + ("source", "restart", "spread"))
#: the graph's split: ``inv_weight`` (1 / out-weight, 0 if dangling) and the contributions
#: ``contrib`` of the uniform first rank ``first`` (1 / n)
SplitData = namedtuple("SplitData", "inv_weight contrib first")


class Split(Functor):
    """Over out-edges, once per graph: ``out[v]`` (= ``inv_weight[v]``) gets the out-weight,
    then becomes its inverse; returns the uniform rank's dangling mass."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return weight

    @staticmethod
    def apply_vertex(v, data):
        w = data.inv_weight[v]
        inv = 1.0 / w if w != 0.0 else 0.0
        data.inv_weight[v] = inv
        data.contrib[v] = data.first * inv
        return (data.first if w == 0.0 else 0.0,)


#: the pull's start from a vector: ``nstart`` read, ``rank``, ``next`` (scratch) and
#: ``contrib`` written
StartData = namedtuple("StartData", "nstart rank next contrib inv_weight")


class StartSplit(Functor):
    """The pull's first split from a start vector (``nstart``, in ``rank``'s precision):
    each vertex's contribution, and its rank in ``next`` where it is dangling (summed:
    the mass; the first pass then writes over ``next``)."""

    @staticmethod
    def apply_vertex(v, data):
        inv = data.inv_weight[v]
        x = data.nstart[v]
        data.rank[v] = x
        data.contrib[v] = x * inv
        data.next[v] = x if inv == 0.0 else 0.0


@numba.njit(inline="always")
def _settled(data, v, new, old):
    """Store ``new`` as ``v``'s rank in the pull pass and its next contribution (over the
    inverse out-weight, over the gathered sum); return the pass's two sums: its L1 change
    from ``old``, its dangling mass."""
    inv = data.inv_weight[v]
    data.rank[v] = new
    data.next[v] = new * inv
    return abs(new - old), new if inv == 0.0 else 0.0


@numba.njit(inline="always")
def _personal(data, v):
    """``v``'s new rank under networkx's personalised rule."""
    return data.alpha * data.next[v] + data.restart * data.teleport[v] + \
        data.spread * data.dangle_to[v]


@numba.njit(inline="always")
def _at_source(data, v):
    """``v``'s new rank when the restart vector is the vertex ``source`` (PPR's)."""
    new = data.alpha * data.next[v]
    if v == data.source:  # as _personal's sum with teleport 1 there, 0 elsewhere
        new = new + data.restart + data.spread
    return new


class PullUpdate(Functor):
    """Gather the contributions over in-edges into ``next[v]``, then, in the same pass,
    update the rank, split it and return (its L1 change, its dangling mass)."""

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return data.contrib[src] * weight

    @staticmethod
    def apply_vertex(v, data):
        return _settled(data, v, data.alpha * data.next[v] + data.base, data.rank[v])


class FirstUpdate(PullUpdate):
    """:class:`PullUpdate` from the uniform rank ``first`` (no rank array read)."""

    @staticmethod
    def apply_vertex(v, data):
        return _settled(data, v, data.alpha * data.next[v] + data.base, data.first)


class PersonalUpdate(PullUpdate):
    """:class:`PullUpdate` with networkx's personalised rule: the restart goes to
    ``teleport`` and the dangling mass to ``dangle_to``, not uniformly."""

    @staticmethod
    def apply_vertex(v, data):
        return _settled(data, v, _personal(data, v), data.rank[v])


class FirstPersonalUpdate(PullUpdate):
    """:class:`PersonalUpdate` from the uniform rank ``first``."""

    @staticmethod
    def apply_vertex(v, data):
        return _settled(data, v, _personal(data, v), data.first)


class VertexUpdate(PullUpdate):
    """:class:`PersonalUpdate` for a restart vector that is one vertex (PPR's): the restart
    and dangling mass go to ``source``, read from no per-vertex array."""

    @staticmethod
    def apply_vertex(v, data):
        return _settled(data, v, _at_source(data, v), data.rank[v])


class FirstVertexUpdate(PullUpdate):
    """:class:`VertexUpdate` from the uniform start."""

    @staticmethod
    def apply_vertex(v, data):
        return _settled(data, v, _at_source(data, v), data.first)


@numba.njit(inline="always")
def _split(rank, w):
    """The push split of ``rank`` over out-weight ``w``: (the contribution, the dangling
    mass); all of it dangles where there is no out-weight."""
    if w != 0.0:
        return rank / w, 0.0
    return 0.0, rank


class OutWeight(Functor):
    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return weight


class Contribute(Functor):
    @staticmethod
    def apply_vertex(v, data):
        data.contrib[v], data.dangling[v] = _split(data.rank[v], data.out_weight[v])


class FirstSplit(Functor):
    """Contribute on an unweighted graph, its out-weights (out-degrees) read from the row
    offsets and kept: no pass over the edges summing ones."""

    @staticmethod
    def apply_vertex(v, data):
        w = float(data.row_offsets[v + 1] - data.row_offsets[v])
        data.out_weight[v] = w
        data.contrib[v], data.dangling[v] = _split(data.rank[v], w)


class Push(Functor):
    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        # atomic add: every in-neighbour of dst pushes at once
        atomics.add(data.received, dst, data.contrib[src] * weight)
        return False


class Pull(Functor):
    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return data.contrib[src] * weight


class Update(Functor):
    @staticmethod
    def apply_vertex(v, data):
        new = data.alpha * data.received[v] + data.base
        data.change[v] = abs(new - data.rank[v])
        data.rank[v] = new
        data.received[v] = 0.0
        # the next iteration's split (Contribute's), in the same pass
        data.contrib[v], data.dangling[v] = _split(new, data.out_weight[v])


class PersonalPushUpdate(Functor):
    """:class:`Update` with the personalised rule (:class:`PersonalUpdate`'s)."""

    @staticmethod
    def apply_vertex(v, data):
        new = data.alpha * data.received[v] + data.restart * data.teleport[v] + \
            data.spread * data.dangle_to[v]
        data.change[v] = abs(new - data.rank[v])
        data.rank[v] = new
        data.received[v] = 0.0
        data.contrib[v], data.dangling[v] = _split(new, data.out_weight[v])


class PageRankProblem(Problem):
    """The ranks and contributions (pull: the ranks, updated in place, and two of the
    contributions, one read, one written; push: its sums too), lent by the graph's free
    arrays when an enactor starts a run (:meth:`lend`: no allocation once warm; back when
    the problem goes, so read them through :meth:`extract`)."""

    Data = PRData
    #: the precisions the ranks can be kept in (:func:`pagerank`'s ``dtype``)
    DTYPES = ("float64", "float32")
    _ARRAYS = {"pull": ("rank", "contrib", "next_contrib"),
               "push": ("rank", "contrib", "received", "dangling", "change", "out_weight")}

    def init(self, dtype="float64"):
        try:
            self.dtype = np.dtype(dtype)
        except TypeError:
            self.dtype = None
        if self.dtype is None or self.dtype.name not in self.DTYPES:
            raise ValueError(f"unknown PageRank dtype {dtype!r}; valid: "
                             f"{', '.join(map(repr, self.DTYPES))}")
        for name in {*self._ARRAYS["pull"], *self._ARRAYS["push"]}:
            setattr(self, name, None)
        dg = self.backend.graph(self.graph)
        self.weighted, self.row_offsets = dg.weighted, dg.row_offsets
        self.alpha, self.base = 0.85, 0.0
        #: personalised: the restart vector and the dangling mass's (None: uniform)
        self.teleport = self.dangle_to = None
        self.restart = self.spread = 0.0
        #: personalised at one vertex (restart and dangling mass there; pull): its id
        self.restart_vertex = None
        #: the start vector (a device array summing to 1; None: uniform)
        self.nstart = None

    def personalize(self, teleport, dangle_to=None):
        """Restart to ``teleport`` and send the dangling mass to ``dangle_to`` (device
        arrays summing to 1; ``dangle_to=None``: ``teleport``, networkx's rule)."""
        self.teleport = teleport
        self.dangle_to = teleport if dangle_to is None else dangle_to

    def lend(self, context, direction="pull"):
        """Take the arrays ``direction``'s iteration uses from ``context``: slices of one
        block (:meth:`gunpy.operators.Context.recycled`) the problem holds, valid while it
        lives; every one is written before it is read."""
        names = [name for name in self._ARRAYS[direction] if getattr(self, name) is None]
        if names:
            n = self.num_vertices
            block = context.recycled(len(names) * n, self.dtype)
            self._blocks = (*getattr(self, "_blocks", ()), block)  # what keeps the slices
            for i, name in enumerate(names):
                setattr(self, name, block[i * n:(i + 1) * n])

    def reset(self, alpha=0.85):
        """Start from the uniform rank with damping factor ``alpha`` (in [0, 1])."""
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
        self.alpha = float(alpha)
        self.base = 0.0
        self.restart = 1.0 - self.alpha

    def extract(self):
        return self.backend.head_to_host(self.rank, self.num_vertices)


class PageRankEnactor(Enactor):
    """The power iteration: contribute, push or pull, update, until the L1 change is small.

    Parameters
    ----------
    problem : PageRankProblem
        Reset with the damping factor before :meth:`enact`.
    tol : float, default 1e-6
        Stop when the L1 change of the ranks is below ``n * tol``; 0 runs ``max_iter`` iterations.
    max_iter : int, default 100
    direction : {"pull", "push"}, default "pull"
        Gather over in-edges (no atomics) or scatter over out-edges (atomic adds).
    load_balance : {"auto", "thread_mapped", "twc", "merge_path"}, default "auto"
        Push advance mapping.
    **kw
        Other :class:`gunpy.Enactor` options (``auto_threshold``).

    Attributes
    ----------
    rank : numpy.ndarray
        The last run's ranks on the host, copied in :meth:`finalize` (inside the timed run).
    error : float
        The last iteration's L1 change of the ranks.
    """

    def __init__(self, problem, *, tol=1e-6, max_iter=100, direction="pull", load_balance="auto",
                 **kw):
        if direction not in DIRECTIONS:
            raise ValueError(f"unknown PageRank direction {direction!r}; valid: "
                             f"{', '.join(map(repr, DIRECTIONS))}")
        if not (tol >= 0.0):
            raise ValueError(f"tol must be >= 0, got {tol!r}")
        if int(max_iter) != max_iter or max_iter < 0:
            raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
        check_weights(problem.graph, "PageRank")  # a NaN would turn every rank NaN
        # the push variant advances over every vertex: a push traversal for the base class
        super().__init__(problem, load_balance=load_balance, direction="push", **kw)
        self.pagerank_direction = direction
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        #: the last iteration's L1 change of the ranks
        self.error = np.inf
        #: the last run's ranks on the host (copied inside the timed run)
        self.rank = None

    @property
    def converged(self):
        """True when the last run's L1 change fell below ``n * tol`` (always on no vertices)."""
        return bool(self.num_vertices == 0 or self.error < self.num_vertices * self.tol)

    def prepare_frontier(self, frontier):
        self.problem.lend(self.context, self.pagerank_direction)
        self.vertices = self.full_frontier("vertex")
        self.error = np.inf
        if self.pagerank_direction == "pull":
            # the graph's split in the ranks' precision, kept with its scratch (made on
            # its first call)
            self.split = self.context.kept(f"pagerank.split.{self.problem.dtype}",
                                           lambda: _SplitStore(self.problem.dtype))
            self.dangling = self.split.made(self)
            if self.problem.nstart is not None:
                self._start_split()
            return
        p = self.problem
        if p.nstart is None:
            self.backend.fill(p.rank, 1.0 / max(p.num_vertices, 1))
        else:
            self.backend.copy(p.nstart, p.rank, p.num_vertices)
        self.backend.fill(p.received, 0.0)
        # the first split (Update makes the next ones)
        if p.weighted:
            ops.neighbor_reduce(self.graph, None, OutWeight, p, p.out_weight, edges="out",
                                context=self.context)
            self.compute(None, Contribute)
        else:
            self.compute(None, FirstSplit)

    def loop(self, frontier):
        if self.pagerank_direction == "pull":
            return self._pull()
        p = self.problem
        dangling = ops.reduce(p.dangling, context=self.context)
        self.advance(self.vertices, Push, output="none")
        p.base = (p.alpha * dangling + 1.0 - p.alpha) / p.num_vertices
        p.spread = p.alpha * dangling
        self.compute(None, Update if p.teleport is None else PersonalPushUpdate)
        self.error = ops.reduce(p.change, context=self.context)
        return self.vertices

    def _start_split(self):
        # from nstart: its split and dangling mass (the uniform start's are the graph's)
        p = self.problem
        ops.compute(self.graph, None, StartSplit,
                    StartData(p.nstart, p.rank, p.next_contrib, p.contrib,
                              self.split.inv_weight), context=self.context)
        self.dangling = ops.reduce(p.next_contrib, n=p.num_vertices, context=self.context)

    def _pull(self):
        # one pass: gather, update, split, and the two sums (L1 change, dangling mass)
        p, split = self.problem, self.split
        # the first iteration reads the graph's split (from the uniform start)
        first = self.iteration == 0 and p.nstart is None
        # the numbers in the ranks' precision: a float32 update converts nothing
        dt = p.dtype.type
        data = PullData(p.rank, p.next_contrib, split.contrib if first else p.contrib,
                        split.inv_weight, dt(p.alpha),
                        dt((p.alpha * self.dangling + 1.0 - p.alpha) / p.num_vertices),
                        dt(split.first))
        update = FirstUpdate if first else PullUpdate
        if p.restart_vertex is not None:  # restart and dangling mass all to one vertex
            data = VertexData(*data, p.restart_vertex, p.restart, p.alpha * self.dangling)
            update = FirstVertexUpdate if first else VertexUpdate
        elif p.teleport is not None:  # restart and dangling mass to their vectors
            data = PersonalData(*data, p.teleport, p.dangle_to, p.restart,
                                p.alpha * self.dangling)
            update = FirstPersonalUpdate if first else PersonalUpdate
        self.error, self.dangling = ops.neighbor_reduce(
            self.graph, None, update, data, p.next_contrib, edges="in", aggregates=2,
            context=self.context)
        p.contrib, p.next_contrib = p.next_contrib, p.contrib
        return self.vertices

    def is_converged(self, frontier):
        if self.iteration >= self.max_iter or self.num_vertices == 0:
            return True
        return self.error < self.num_vertices * self.tol

    def finalize(self):
        self.stats.direction = self.pagerank_direction
        if self.iteration == 0 and self.pagerank_direction == "pull" and \
                self.problem.nstart is None:  # max_iter=0
            self.backend.fill(self.problem.rank, self.split.first)
        # the rank in an array of its own (the problem's is a recycled buffer), part of
        # the run and of its time: NumPy on a host backend, left on the device by CUDA
        self.rank = self.backend.duplicate(self.problem.rank, self.num_vertices)


class _SplitStore:
    """A graph's pull split (:class:`Split`) in one precision, kept with its scratch arrays."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.inv_weight = None

    def made(self, enactor):
        """Make the split on first use; returns the uniform rank's dangling mass."""
        if self.inv_weight is None:
            backend, n = enactor.backend, enactor.num_vertices
            self.first = 1.0 / max(n, 1)
            self.inv_weight, self.contrib = (backend.empty(max(n, 1), self.dtype)
                                             for _ in range(2))
            data = SplitData(self.inv_weight, self.contrib, self.first)
            self.dangling, = ops.neighbor_reduce(enactor.graph, None, Split, data,
                                                 self.inv_weight, edges="out", aggregates=1,
                                                 context=enactor.context)
        return self.dangling


class PageRankResult(Result):
    """``rank`` (float64, or float32 with ``dtype="float32"``; sums to 1), ``iterations``
    and ``converged``."""

    _fields = ("rank",)
    _main = "rank"
    _columns = {"rank": "pagerank"}


def pagerank(G, *, alpha=0.85, personalization=None, tol=1e-6, max_iter=100, dangling=None,
             nstart=None, direction="pull", load_balance="auto", dtype="float64",
             backend="auto", progress=False):
    """PageRank with networkx's semantics, personalised or not.

    Parameters
    ----------
    G : gunpy.Graph
        Edge weights (if any) weight the transitions, as networkx's default ``weight="weight"``.
    alpha : float, default 0.85
        Damping factor.
    personalization : dict or array_like, optional
        Where a walk restarts (``1 - alpha`` of the rank): a dict ``{node: weight}``
        (node labels, missing nodes 0, other keys ignored) or one weight per vertex,
        normalised to sum 1; None: uniformly (networkx's ``personalization``). An array
        in GPU memory (CuPy, PyTorch, DLPack) is checked and scaled there by a CUDA run.
    tol : float, default 1e-6
        Stop when the L1 change of the ranks is below ``n * tol``; 0 runs ``max_iter`` iterations.
    max_iter : int, default 100
    dangling : dict or array_like, optional
        Where the rank of vertices without out-edges goes, as ``personalization``;
        None: where a walk restarts (networkx's ``dangling``).
    nstart : dict or array_like, optional
        The starting ranks, as ``personalization`` (normalised to sum 1); None:
        uniform (networkx's ``nstart``).
    direction : {"pull", "push"}, default "pull"
        Gather over in-edges (no atomics) or scatter over out-edges (atomic adds).
    load_balance : str, default "auto"
        Push advance mapping.
    dtype : {"float64", "float32"}, default "float64"
        The precision of the ranks and of the contributions every iteration gathers
        (pull only). ``"float32"`` halves the memory an iteration reads (GAP's and
        Gunrock's choice); sums, the L1 change and the dangling mass stay float64, and
        the ranks agree with float64's to about 1e-7 relative, so a ``tol`` far below
        that may not be reached (``converged`` says so).
    backend : {"auto", "cuda", "cpu"}, default "auto"
    progress : bool or None, default False
        A bar of the iterations on standard error (``None``: only on a terminal;
        :mod:`gunpy.progress`).

    Returns
    -------
    PageRankResult
        ``rank``, ``iterations``, ``converged`` (never raises for non-convergence)
        and ``stats`` (per-iteration times in ``stats.per_iteration``).

    Raises
    ------
    ValueError
        A negative, NaN or infinite edge weight (as :func:`~gunpy.sssp`); an ``alpha``
        outside [0, 1], a negative ``tol``, a bad ``personalization`` / ``dangling`` /
        ``nstart`` vector, an unknown option.

    Notes
    -----
    ``direction="pull"`` makes one pass over the graph an iteration (a neighbor-reduce
    whose apply step updates, splits and sums: one launch and one read on a GPU) and
    keeps what depends on the graph alone (the inverse out-weights and the first
    split) with the graph's scratch arrays, so a repeated call allocates nothing but
    its result. Personalised, the update adds ``(1 - alpha) * personalization[v]``
    and the dangling mass times ``dangling[v]`` instead of uniform shares (networkx's
    ``_pagerank_scipy`` rule, from the same uniform start).

    See Also
    --------
    networkx.pagerank
    ppr : personalised PageRank from many sources in one call.

    Examples
    --------
    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=True)
    >>> r = gunpy.pagerank(G, backend="cpu")
    >>> r.rank.round(4).tolist(), r.converged
    ([0.3333, 0.3333, 0.3333], True)

    Restarting at vertex 0 only (its rank is then the largest):

    >>> gunpy.pagerank(G, personalization={0: 1}, backend="cpu").rank.round(4).tolist()
    [0.3887, 0.3304, 0.2809]
    """
    problem = PageRankProblem(G, backend=backend, dtype=dtype)
    if direction == "push" and problem.dtype != np.float64:
        raise ValueError("dtype='float32' runs the pull iteration (direction='pull'); the "
                         "push iteration accumulates with float64 atomics")
    enactor = PageRankEnactor(problem, tol=tol, max_iter=max_iter, direction=direction,
                              load_balance=load_balance)
    problem.reset(alpha)
    restart_vectors(enactor.context, problem, personalization, dangling, nstart)
    stats = enactor.enact(progress=progress)
    result = PageRankResult(G, stats, rank=enactor.rank)
    result.iterations = stats.iterations
    result.converged = enactor.converged
    return result


def _summary(r, G, source):
    return [f"{r.iterations} iterations, converged={r.converged}", top_vertices(r.rank)]


register_primitive(Primitive(
    "pagerank", pagerank, fields=PageRankResult._fields, summary=_summary,
    warmup=lambda G, source, backend: pagerank(G, max_iter=3, backend=backend),
    options=(Option("alpha", 0.85, "damping"), Option("tol", 1e-6, "L1 tolerance"),
             Option("max_iter", 100, "iteration cap"),
             Option("direction", "pull", "pull (no atomics) or push", choices=DIRECTIONS),
             Option("load_balance", "auto", "advance strategy (push)"),
             Option("dtype", "float64", "rank precision (pull)", choices=("float64", "float32"))),
    networkx=("pagerank",), dist="gunpy.dist:pagerank"))
