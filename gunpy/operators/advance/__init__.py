"""advance: visit the neighbours of a frontier and build the next frontier.

One module per load-balancing strategy (Gunrock section 4.4.1); this package
maps the option names to them and picks one for ``load_balance="auto"``.
Push strategies share :class:`~gunpy.operators.advance.common.PushSpec`.
"""

import inspect

from gunpy.operators.advance import merge_path, thread_mapped, twc
from gunpy.operators.advance.common import OUTPUTS, PushSpec
from gunpy.operators.common import frontier_edges

__all__ = ["STRATEGIES", "LOAD_BALANCE_OPTIONS", "register_strategy", "load_balance_options",
           "check_load_balance", "execute", "choose", "AUTO_THRESHOLD"]

#: option name -> strategy module (each exports ``execute``; the built-in ones also
#: ``cuda_kernel`` / ``cpu_kernel``). Add to it with :func:`register_strategy`.
STRATEGIES = {
    "thread_mapped": thread_mapped,
    "twc": twc,
    "merge_path": merge_path,
}

#: the valid ``load_balance`` values (kept up to date by :func:`register_strategy`)
LOAD_BALANCE_OPTIONS = tuple(STRATEGIES) + ("auto",)

#: ``auto`` switches from the fine-grained mapping to merge-path when the
#: frontier's neighbour lists hold more edges than this (Gunrock uses 4096).
AUTO_THRESHOLD = 4096


def register_strategy(name, module, *, replace=False):
    """Make ``module`` the push-advance strategy called ``name`` (``load_balance=name``).

    ``module`` needs an ``execute(ctx, dg, frontier, out, hooks, data, *, edges,
    spec)`` that push-advances ``frontier`` into ``out`` (see
    :mod:`gunpy.operators.advance.thread_mapped` for the shape): ``ctx`` gives
    the backend, ``ctx.scratch`` and ``ctx.visited_words()``; ``dg`` is the
    backend's :class:`~gunpy.backends.base.DeviceGraph`; ``hooks`` the compiled
    functor; ``spec`` a :class:`~gunpy.operators.advance.common.PushSpec`.
    On the CPU a frontier with fewer than ``CpuBackend.serial_below`` edges
    runs as one thin pass whatever the strategy.

    Raises ``ValueError`` for a bad name or an already-registered one (unless
    ``replace``) and ``TypeError`` for a module without that interface.
    """
    global LOAD_BALANCE_OPTIONS
    if not isinstance(name, str) or not name.isidentifier() or name == "auto":
        raise ValueError(f"a strategy name must be an identifier other than 'auto', "
                         f"got {name!r}")
    if name in STRATEGIES and not replace:
        raise ValueError(f"load_balance {name!r} is already registered "
                         "(register_strategy(..., replace=True) to replace it)")
    run = getattr(module, "execute", None)
    if not callable(run):
        raise TypeError(f"strategy {name!r}: {module!r} has no callable execute()")
    try:
        params = inspect.signature(run).parameters
    except (TypeError, ValueError):
        params = None
    if params is not None:
        positional = [p for p in params.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        var_kw = any(p.kind == p.VAR_KEYWORD for p in params.values())
        missing = [k for k in ("edges", "spec") if k not in params and not var_kw]
        if len(positional) < 6 and not any(p.kind == p.VAR_POSITIONAL
                                           for p in params.values()) or missing:
            raise TypeError(f"strategy {name!r}: execute must take (ctx, dg, frontier, out, "
                            f"hooks, data, *, edges, spec); it takes {inspect.signature(run)}")
    STRATEGIES[name] = module
    LOAD_BALANCE_OPTIONS = tuple(STRATEGIES) + ("auto",)
    return module


def load_balance_options():
    """The valid ``load_balance`` values now (registered strategies included)."""
    return tuple(STRATEGIES) + ("auto",)


def check_load_balance(name):
    options = load_balance_options()
    if name not in options:
        raise ValueError(f"unknown load_balance {name!r}; valid options are "
                         f"{', '.join(repr(o) for o in options)}")
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
