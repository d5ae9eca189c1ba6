"""Graphs derived from a graph (its reverse, its oriented or simple forms), built once per
graph: the primitives that run on such a graph build it on their first call and find it
again, with its device copy, on the next."""

import functools
import weakref

__all__ = ["per_graph"]


def per_graph(build):
    """``build(G)`` kept per graph: dropped with ``G``, built again when ``G``'s
    ``row_offsets`` or ``column_indices`` were rebound (their identity is checked).

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.primitives._cache import per_graph
    >>> @per_graph
    ... def degrees(G):
    ...     return G.out_degrees()
    >>> G = gunpy.Graph.from_edges([0, 0], [1, 2])
    >>> degrees(G) is degrees(G)
    True
    """
    kept = weakref.WeakKeyDictionary()

    @functools.wraps(build)
    def cached(G):
        hit = kept.get(G)
        if hit is not None and hit[0] is G.row_offsets and hit[1] is G.column_indices:
            return hit[2]
        made = build(G)
        kept[G] = (G.row_offsets, G.column_indices, made)
        return made
    return cached
