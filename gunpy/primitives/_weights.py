"""The one check of edge weights shared by the primitives that need them non-negative and
finite (SSSP's sums, PageRank's transition shares): a clear ``ValueError`` naming the first
bad edge, instead of distances or ranks quietly turned NaN; and the check of a vector of
vertex weights (PageRank's personalisation, dangling and start vectors)."""

import numpy as np

from gunpy._inputs import device_memory
from gunpy.problem import weight_summary

__all__ = ["check_weights", "vertex_weights", "vertex_weights_on", "restart_vectors"]


def check_weights(G, algorithm):
    """``G``'s :func:`~gunpy.problem.weight_summary` (None when unweighted), or raise.

    Raises
    ------
    ValueError
        A negative, NaN or infinite weight: the message names ``algorithm``, the edge
        (vertex ids) and its weight.

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.primitives._weights import check_weights
    >>> G = gunpy.Graph.from_edges([0, 1], [1, 2], [0.5, float("nan")], num_vertices=3)
    >>> check_weights(G, "PageRank")
    Traceback (most recent call last):
        ...
    ValueError: PageRank needs non-negative finite weights; edge 1->2 has weight nan
    """
    summary = weight_summary(G)
    if summary is None or summary.valid:
        return summary
    e = summary.first_bad
    u = int(np.searchsorted(G.row_offsets, e, side="right") - 1)
    raise ValueError(f"{algorithm} needs non-negative finite weights; edge {u}->"
                     f"{int(G.column_indices[e])} has weight {float(G.values[e])!r}")


def vertex_weights(G, values, name):
    """``values`` (a dict keyed by node label, missing nodes 0, other keys ignored, or an
    array of ``n``) as a float64 array summing to 1; ValueError if negative, not finite,
    the wrong length or summing to 0."""
    n = G.num_vertices
    if isinstance(values, dict):
        labels = G.labels()
        x = np.fromiter((values.get(label, 0) for label in labels), np.float64, count=n)
    else:
        x = np.array(values, dtype=np.float64)
        if x.shape != (n,):
            raise ValueError(f"{name} must have one value per vertex ({n}), got shape {x.shape}")
    if not (np.isfinite(x).all() and (x >= 0).all()):
        raise ValueError(f"{name} must be finite and non-negative")
    total = x.sum()
    if not total > 0:
        raise ValueError(f"{name} sums to 0: no vertex to restart at")
    return x / total


def vertex_weights_on(context, G, values, name):
    """:func:`vertex_weights` on ``context``'s backend: an array in GPU memory is checked
    and scaled where it is (no host copy), anything else on the host and uploaded."""
    if device_memory(values) is None:
        return context.upload(vertex_weights(G, values, name))
    from gunpy.backends.interop import adopt_vertex_weights
    return adopt_vertex_weights(context.backend, values, G.num_vertices, name)


def restart_vectors(context, problem, personalization, dangling, nstart):
    """Give a PageRank ``problem`` its restart, dangling and start vectors (checked, scaled
    to sum 1 and on ``context``'s backend; None: networkx's defaults)."""
    G = problem.graph
    if personalization is not None or dangling is not None:
        teleport = (context.upload(np.full(G.num_vertices, 1.0 / max(G.num_vertices, 1)))
                    if personalization is None
                    else vertex_weights_on(context, G, personalization, "personalization"))
        problem.personalize(teleport, None if dangling is None else
                            vertex_weights_on(context, G, dangling, "dangling"))
    if nstart is not None:
        problem.nstart = vertex_weights_on(context, G, nstart, "nstart")
