"""advance: visit the neighbours of a frontier and build the next frontier.

One module per load-balancing strategy (Gunrock section 4.4.1); this package
maps the option names to them and picks one for ``load_balance="auto"``.
Push strategies share :class:`~gunpy.operators.advance.common.PushSpec`.
"""

from gunpy.operators.advance import merge_path, thread_mapped, twc
from gunpy.operators.advance.common import OUTPUTS, PushSpec
from gunpy.operators.common import frontier_edges

__all__ = ["STRATEGIES", "LOAD_BALANCE_OPTIONS", "check_load_balance", "execute", "choose",
           "AUTO_THRESHOLD"]

#: option name -> strategy module (each exports ``cuda_kernel``, ``cpu_kernel``, ``execute``)
STRATEGIES = {
    "thread_mapped": thread_mapped,
    "twc": twc,
    "merge_path": merge_path,
}

LOAD_BALANCE_OPTIONS = tuple(STRATEGIES) + ("auto",)

#: ``auto`` switches from the fine-grained mapping to merge-path when the
#: frontier's neighbour lists hold more edges than this (Gunrock uses 4096).
AUTO_THRESHOLD = 4096


def check_load_balance(name):
    if name not in LOAD_BALANCE_OPTIONS:
        raise ValueError(f"unknown load_balance {name!r}; valid options are "
                         f"{', '.join(repr(o) for o in LOAD_BALANCE_OPTIONS)}")
    return name


def choose(load_balance, edges, frontier_size, *, threshold=AUTO_THRESHOLD):
    """The strategy ``auto`` stands for, given the frontier's work."""
    if load_balance != "auto":
        return load_balance
    if edges > threshold and "merge_path" in STRATEGIES:
        return "merge_path"
    return "thread_mapped"


def execute(ctx, dg, frontier, out, hooks, data, *, load_balance="auto", output="vertex",
            mark_visited=False, skip_visited=False, threshold=AUTO_THRESHOLD, edges=None):
    """Push-advance ``frontier`` into ``out``; returns ``(strategy used, edges visited)``.

    ``edges`` is the frontier's out-degree sum when the caller already knows it.
    ``mark_visited`` / ``skip_visited``: set / test the destinations' bits in
    ``ctx.visited_words()`` (see :class:`~gunpy.operators.advance.common.PushSpec`).
    """
    check_load_balance(load_balance)
    if output not in OUTPUTS:
        raise ValueError(f"unknown advance output {output!r}; valid: {OUTPUTS}")
    if edges is None:
        edges = frontier_edges(ctx, dg, frontier)
    strategy = choose(load_balance, edges, frontier.size, threshold=threshold)
    if frontier.size == 0:
        out.clear()
        return strategy, 0
    out.reserve(edges)
    spec = PushSpec(dg.weighted, output, bool(mark_visited), bool(skip_visited))
    if ctx.backend.name == "cpu" and edges < ctx.backend.serial_below:
        # CPU: a frontier this thin is one chunk whatever the strategy: one serial pass
        thread_mapped.cpu_serial(ctx, dg, frontier, out, hooks, data, spec)
    else:
        STRATEGIES[strategy].execute(ctx, dg, frontier, out, hooks, data, edges=edges, spec=spec)
    return strategy, edges
