"""filter: choose the subset of a frontier that satisfies the functor's condition.

Modes (one module each; ``unique`` reuses ``cull``'s kernels):

``predicated``
    exact: keep the items whose ``cond_vertex`` (vertex frontier) or
    ``cond_edge`` (edge frontier) holds, in order (scan + scatter);
``cull``
    for idempotent traversals: first drop duplicates and already-visited
    vertices with Merrill's warp, history and bitmask culling, then filter;
``unique``
    drop repeated vertices within this frontier only, then filter.

A ``predicated`` filter whose functor leaves the condition at its default would
remove nothing, so it runs as a plain compute (the apply hook only) and returns
its input: Gunrock's filter bypass.
"""

import numpy as np

from gunpy.functor import compile_functor
from gunpy.operators import bitmap, compute
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.filter import cull, predicated

__all__ = ["filter", "run", "bypassed", "MODES", "execute"]

#: option name -> filter module
MODES = {
    "predicated": predicated,
    "cull": cull,
    "unique": cull,
}


def execute(ctx, frontier, out, hooks, data, *, mode="predicated"):
    """Filter ``frontier`` into ``out``; returns the frontier that holds the result."""
    if mode not in MODES:
        raise ValueError(f"unknown filter mode {mode!r}; valid modes are "
                         f"{', '.join(repr(m) for m in MODES)}")
    on_edges = frontier.kind == "edge"
    if mode == "predicated":
        default_cond = hooks.default_cond_edge if on_edges else hooks.default_cond_vertex
        if default_cond:
            # bypass: nothing would be removed
            if not on_edges and not hooks.default_apply_vertex:
                compute.execute(ctx, frontier, hooks, data)
            elif on_edges and not hooks.default_apply_edge:
                predicated.execute(ctx, frontier, out, hooks, data)
                return out
            return frontier
        predicated.execute(ctx, frontier, out, hooks, data)
        return out
    if mode == "unique":
        words = ctx.scratch("filter.unique", bitmap.num_words(ctx.num_vertices), np.uint32)
        ctx.backend.fill(words, 0)
        culled = cull.execute(ctx, frontier, out, hooks, data, visited=words)
    else:
        culled = cull.execute(ctx, frontier, out, hooks, data)
    if culled is not None:  # else a kernel left it on a tally (Context.flush)
        ctx.log(culled=culled)
    return out


def filter(graph, frontier, functor, data=None, *, out=None, mode="predicated", mask=None,
           context=None):
    """Keep the items of ``frontier`` whose ``cond_vertex`` (``cond_edge`` for an
    edge frontier) holds, running ``apply_vertex`` (``apply_edge``) on them.

    Returns the frontier holding the result: ``out`` (a new frontier when
    omitted), or ``frontier`` itself when the functor's condition is the
    default and nothing would be removed (Gunrock's filter bypass).

    ``mode``: ``"predicated"`` (exact, order kept), ``"unique"`` (also drops
    repeats within the frontier) or ``"cull"`` (also drops vertices whose bit is
    set in ``mask``, a visited bitmap, and sets the bits of the survivors:
    for idempotent traversals; needs ``mask``). ``context``: see
    :func:`gunpy.operators.advance`.
    """
    ctx = context_for(graph, frontier, context)
    if mode == "cull":
        if mask is None:
            raise ValueError("filter(mode='cull') needs mask=, the visited bitmap it culls "
                             "against and updates (Context.new_bitmap())")
        ctx = ctx.with_visited(mask)
    if out is None:  # lent by the context: its arrays come back when it goes
        out = ctx.frontier(capacity=frontier.size, kind=frontier.kind)
    out = run(ctx, frontier, out, compile_functor(functor, ctx.backend), problem_data(data),
              mode)
    ctx.done()
    return out


def bypassed(frontier, hooks, mode):
    """True when filtering ``frontier`` would neither remove nor run anything: a
    predicated vertex filter whose functor leaves both hooks at their defaults."""
    return (mode == "predicated" and hooks.default_cond_vertex and hooks.default_apply_vertex
            and frontier.kind == "vertex")


def run(ctx, frontier, out, hooks, data, mode):
    """:func:`filter` once its arguments are checked (``hooks``: the compiled functor)."""
    if bypassed(frontier, hooks, mode):
        return frontier  # keep the frontier in its form
    frontier.ensure_queue(ctx.scratch)
    if frontier.kind == "edge":
        ctx.log(edges=frontier.size)  # an edge filter visits each of its edges once
    return execute(ctx, frontier, out, hooks, data, mode=mode)


callable_module(__name__, filter)
