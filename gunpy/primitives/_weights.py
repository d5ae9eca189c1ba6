"""The one check of edge weights shared by the primitives that need them non-negative and
finite (SSSP's sums, PageRank's transition shares): a clear ``ValueError`` naming the first
bad edge, instead of distances or ranks quietly turned NaN."""

import numpy as np

from gunpy.problem import weight_summary

__all__ = ["check_weights"]


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
