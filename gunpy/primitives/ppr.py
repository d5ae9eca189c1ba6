"""Personalised PageRank from many sources in one call (Gunrock's batched PPR).

For each source ``s``, PageRank whose walks restart at ``s`` (and whose dangling
mass goes there): networkx's ``pagerank(G, personalization={s: 1})``. One
:class:`~gunpy.primitives.pagerank.PageRankProblem` and enactor serve every
source: the restart goes to ``s`` alone (pulling, the update adds it at ``s``:
no restart vector is read; pushing, a device array set to ``s``), and the
personalised power iteration of :mod:`gunpy.primitives.pagerank` runs (a
neighbour reduction an iteration, pulling; its arrays lent once), so a call
allocates nothing per source but its row of the result. Each source's rank is
copied into its row where it is: a CUDA run's result stays on the device.
"""

import numpy as np

from gunpy import Graph
from gunpy._inputs import few_to_host
from gunpy.primitives.pagerank import DIRECTIONS, PageRankEnactor, PageRankProblem
from gunpy.registry import Option, Primitive, register_primitive, top_vertices
from gunpy.result import Result, Stats

__all__ = ["ppr", "PPRResult"]


class PPRResult(Result):
    """``rank`` (float64, one row per source, each summing to 1; also ``ranks``),
    ``sources``, ``iterations`` and ``converged`` (one per source)."""

    _fields = ("rank",)
    _main = "rank"
    _columns = {"rank": "pagerank"}

    @property
    def ranks(self):
        return self.rank

    def to_dict(self, field=None):
        """``{source label: {node label: rank}}``."""
        labels = self.graph.labels()
        return {labels[s]: dict(zip(labels, row))
                for s, row in zip(self.sources.tolist(), getattr(self, field or "rank").tolist())}

    def to_dataframe(self):
        """A long pandas DataFrame: ``source``, ``vertex`` (node labels) and ``pagerank``."""
        import pandas as pd
        labels = np.asarray(self.graph.labels(), dtype=object)
        k, n = self.rank.shape
        return pd.DataFrame({"source": np.repeat(labels[self.sources], n),
                             "vertex": np.tile(labels, k), "pagerank": self.rank.ravel()})

    def __repr__(self):
        kept = self.__dict__.get("_on_device", {})
        rank = kept.get("rank", self.__dict__.get("rank"))
        where = " on device" if "rank" in kept else ""
        return (f"PPRResult(rank=<float64[{rank.shape[0]}, {rank.shape[1]}]{where}>, "
                f"stats={self.stats.summary()})")


def _sources(G, sources):
    n = G.num_vertices
    if sources is None:
        return np.arange(n, dtype=np.int64)
    ids = np.atleast_1d(np.asarray(few_to_host("sources", sources)))
    if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
        raise TypeError(f"sources must be a list of vertex ids, got {sources!r}")
    ids = ids.astype(np.int64)
    bad = ids[(ids < 0) | (ids >= n)]
    if bad.size:
        raise IndexError(f"source {int(bad[0])} is out of range for a graph with {n} vertices")
    return ids


def ppr(G, sources=None, *, alpha=0.85, tol=1e-6, max_iter=100, direction="pull",
        backend="auto"):
    """Personalised PageRank from each of ``sources``: one PageRank vector per source.

    Parameters
    ----------
    G : gunpy.Graph
        Edge weights (if any) weight the transitions, as in :func:`pagerank`.
    sources : list of int, optional
        Vertex ids (a list, or an array in host or GPU memory); None: every vertex (an
        ``n`` by ``n`` result: small graphs).
    alpha, tol, max_iter, direction, backend
        As :func:`pagerank`'s (each source stops on its own L1 test).

    Returns
    -------
    PPRResult
        ``rank`` (float64, shape ``(len(sources), n)``: row ``i`` is PageRank
        restarting at ``sources[i]``; ``ranks`` is the same array), ``sources``,
        ``iterations`` and ``converged`` (arrays, one entry per source) and ``stats``
        (summed over the sources). ``to_dict()`` maps each source's label to
        ``{node label: rank}``.

    Raises
    ------
    IndexError
        A source out of range.
    TypeError
        ``G`` is not a :class:`gunpy.Graph`, or ``sources`` are not vertex ids.
    ValueError
        Bad ``alpha``, ``tol``, ``max_iter``, ``direction`` or backend.

    See Also
    --------
    networkx.pagerank : row ``i`` is ``pagerank(G, personalization={sources[i]: 1})``.
    pagerank : ``personalization=`` any restart vector.

    Notes
    -----
    The rank of a walk that reaches a vertex without out-edges restarts at the
    source too (networkx's rule when ``dangling`` is not given). Every source runs
    networkx's power iteration from the uniform rank, on one problem.

    References
    ----------
    .. [1] G. Jeh and J. Widom, "Scaling personalized web search", WWW 2003.

    Examples
    --------
    >>> import gunpy
    >>> G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=True)
    >>> r = gunpy.ppr(G, [0, 2], backend="cpu")
    >>> r.rank.round(4).tolist()
    [[0.3887, 0.3304, 0.2809], [0.3304, 0.2809, 0.3887]]
    >>> r.iterations.tolist(), r.converged.tolist()
    ([70, 70], [True, True])
    """
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph, got {type(G).__name__}; build one with "
                        "Graph.from_edges / from_scipy / from_networkx")
    ids = _sources(G, sources)
    problem = PageRankProblem(G, backend=backend)
    enactor = PageRankEnactor(problem, tol=tol, max_iter=max_iter, direction=direction)
    n, backend = G.num_vertices, problem.backend
    pull = direction == "pull"
    teleport = enactor.context.recycled(max(n, 1), np.float64)
    problem.personalize(teleport)
    # the rows, one source's after another, in the backend's memory (a CUDA run's
    # result stays on the device: each source's rank is copied there, not down)
    rank = backend.empty(ids.size * n, np.float64)
    iterations = np.zeros(ids.size, dtype=np.int64)
    converged = np.zeros(ids.size, dtype=bool)
    total = Stats(backend=backend.name, load_balance="neighbor_reduce", direction=direction)
    for i, s in enumerate(ids.tolist()):
        if pull:  # restart at s alone: the update adds it there, no restart vector read
            problem.restart_vertex = s
        else:
            backend.fill(teleport, 0.0)
            backend.write(teleport, s, 1.0)
        problem.reset(alpha)
        stats = enactor.enact()
        backend.copy(enactor.rank, rank[i * n:(i + 1) * n], n)
        iterations[i], converged[i] = stats.iterations, enactor.converged
        total.iterations += stats.iterations
        total.edges_visited += stats.edges_visited
        total.elapsed_ms += stats.elapsed_ms
    total.extra["sources"] = int(ids.size)
    result = PPRResult(G, total, rank=rank.reshape(ids.size, n))
    result.sources, result.iterations, result.converged = ids, iterations, converged
    return result


def _summary(r, G, source):
    lines = [f"{r.sources.size} sources, {int(r.iterations.sum())} iterations in all, "
             f"{int(r.converged.sum())} converged"]
    for s, row in list(zip(r.sources.tolist(), r.rank))[:3]:
        lines.append(f"source {s}: " + top_vertices(row))
    return lines


register_primitive(Primitive(
    "ppr", ppr, source="many", fields=PPRResult._fields, summary=_summary,
    warmup=lambda G, source, backend: ppr(G, [0] if G.num_vertices else [], max_iter=3,
                                          backend=backend),
    options=(Option("alpha", 0.85, "damping"), Option("tol", 1e-6, "L1 tolerance"),
             Option("max_iter", 100, "iteration cap"),
             Option("direction", "pull", "pull (no atomics) or push", choices=DIRECTIONS))))
