"""Operators: advance, filter, compute, neighbor_reduce, neighbor_mode, neighbor_best,
neighbor_mex, contract, reverse_levels, sample, intersect, reduce, bitmaps, near/far.

Each operator is a free function of a graph, frontiers, a functor and its data,
with an explicit :class:`Context` (backend, scratch arrays, stats record)::

    from gunpy import operators as ops
    ctx = ops.Context(G, backend="cpu")
    out = ops.advance(G, frontier, MyFunctor, data, context=ctx)
    out = ops.filter(G, out, MyFunctor, data, context=ctx)

``ops.advance`` and ``ops.filter`` are packages (one module per load-balancing
strategy or filter algorithm), ``ops.compute``, ``ops.neighbor_reduce``,
``ops.neighbor_mode``, ``ops.neighbor_best`` (each vertex's best-scoring key by summed
edge weights), ``ops.neighbor_mex`` (each vertex's smallest key no edge gives), ``ops.contract`` (the quotient graph by labels), ``ops.reverse_levels``
(a traversal's levels walked deepest first, many to a call), ``ops.sample``,
``ops.intersect``, ``ops.spgemm`` (a general sparse product, Gustavson's two passes)
and ``ops.reduce`` modules; each is also callable as its operator. ``ops.near_far`` is the near/far priority queue (a package) and
``ops.fusion`` the rule for fused thin steps. An :class:`~gunpy.Enactor` is the
loop around them.
"""

from gunpy.operators.context import Context

__all__ = ["Context", "advance", "filter", "compute", "neighbor_reduce", "neighbor_mode",
           "neighbor_best", "neighbor_mex", "contract", "reverse_levels", "sample", "intersect", "spgemm",
           "reduce",
           "bitmap", "near_far", "fusion"]


def __getattr__(name):
    # the operator modules import gunpy.frontier, which imports this package: load them lazily
    if name in __all__[1:]:
        import importlib
        return importlib.import_module(f"gunpy.operators.{name}")
    raise AttributeError(f"module 'gunpy.operators' has no attribute {name!r}")
