"""filter: choose the subset of a frontier that satisfies the functor's ``cond_vertex``.

A filter whose functor leaves ``cond_vertex`` at its default would remove
nothing, so it runs as a plain compute (``apply_vertex`` only) and returns its
input: Gunrock's filter bypass.
"""

from gunpy.operators import compute
from gunpy.operators.filter import predicated

__all__ = ["MODES", "execute"]

#: option name -> filter module
MODES = {
    "predicated": predicated,
}


def execute(ctx, frontier, out, hooks, data, *, mode="predicated"):
    """Filter ``frontier`` into ``out``; returns the frontier that holds the result."""
    if mode not in MODES:
        raise ValueError(f"unknown filter mode {mode!r}; valid modes are "
                         f"{', '.join(repr(m) for m in MODES)}")
    if hooks.default_cond_vertex:
        # bypass: nothing would be removed
        if not hooks.default_apply_vertex:
            compute.execute(ctx, frontier, hooks, data)
        return frontier
    MODES[mode].execute(ctx, frontier, out, hooks, data)
    return out
