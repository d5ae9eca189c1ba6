"""advance: visit the neighbours of a frontier and build the next frontier.

One module per load-balancing strategy (Gunrock section 4.4.1); this package
maps the option names to them and picks one for ``load_balance="auto"``.
"""

from gunpy.operators.advance import thread_mapped
from gunpy.operators.common import frontier_edges

__all__ = ["STRATEGIES", "LOAD_BALANCE_OPTIONS", "check_load_balance", "execute"]

#: option name -> strategy module (each exports ``cuda_kernel``, ``cpu_kernel``, ``execute``)
STRATEGIES = {
    "thread_mapped": thread_mapped,
}

LOAD_BALANCE_OPTIONS = tuple(STRATEGIES) + ("auto",)


def check_load_balance(name):
    if name not in LOAD_BALANCE_OPTIONS:
        raise ValueError(f"unknown load_balance {name!r}; valid options are "
                         f"{', '.join(repr(o) for o in LOAD_BALANCE_OPTIONS)}")
    return name


def choose(load_balance, edges, frontier_size):
    """The strategy ``auto`` stands for, given the frontier's work."""
    if load_balance != "auto":
        return load_balance
    return "thread_mapped"


def execute(ctx, dg, frontier, out, hooks, data, *, load_balance="auto"):
    """Push-advance ``frontier`` into ``out``; returns ``(strategy used, edges visited)``."""
    check_load_balance(load_balance)
    edges = frontier_edges(ctx, dg, frontier)
    strategy = choose(load_balance, edges, frontier.size)
    if frontier.size == 0:
        out.clear()
        return strategy, 0
    STRATEGIES[strategy].execute(ctx, dg, frontier, out, hooks, data, edges=edges)
    return strategy, edges
