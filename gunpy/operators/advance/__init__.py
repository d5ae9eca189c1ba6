"""advance: visit the neighbours of a frontier and build the next frontier.

One module per load-balancing strategy (Gunrock section 4.4.1); this package
maps the option names to them and picks one for ``load_balance="auto"``.
Push strategies share :class:`~gunpy.operators.advance.common.PushSpec`.
"""

import inspect
from collections import namedtuple

import numpy as np

from gunpy.functor import compile_functor
from gunpy.operators import bitmap
from gunpy.operators.advance import merge_path, pull, thread_mapped, twc
from gunpy.operators.advance.common import OUTPUTS, PushSpec
from gunpy.operators.common import DEGREE_SUM, problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.operator import Operator, forget

__all__ = ["advance", "run", "STRATEGIES", "PULL_MAPPINGS", "LOAD_BALANCE_OPTIONS",
           "Strategy", "register_strategy", "unregister_strategy", "load_balance_options",
           "pull_mapping_options", "check_load_balance", "Push", "choose",
           "AUTO_THRESHOLD", "AUTO_HUB_DEGREE", "DIRECTIONS"]

#: the directions :func:`advance` takes (an Enactor also offers ``"auto"``)
DIRECTIONS = ("push", "pull")

#: A registered strategy: ``op`` is its :class:`~gunpy.operators.operator.Operator`
#: (named ``"advance.push.<name>"`` / ``"advance.pull.<name>"``),
#: ``auto(edges, frontier_size, threshold[, largest])`` says when ``load_balance="auto"``
#: takes it (None: never), ``backends`` the backend names it has implementations for.
Strategy = namedtuple("Strategy", "name kind op auto backends")

#: push strategies (``load_balance=``), in registration order; see :func:`register_strategy`
STRATEGIES = {}

#: pull mappings (``DirectionPolicy(pull_mapping=)``), in registration order
PULL_MAPPINGS = {}

#: the valid ``load_balance`` values (kept up to date by :func:`register_strategy`)
LOAD_BALANCE_OPTIONS = ("auto",)

#: ``auto`` switches from the fine-grained mapping to merge-path when the
#: frontier's neighbour lists hold more edges than this (Gunrock uses 4096).
AUTO_THRESHOLD = 4096

#: ``auto`` takes twc (a warp or the block walks a long list) for a frontier whose
#: largest out-degree, when a kernel counted it (:attr:`gunpy.Frontier.known_max_degree`),
#: is at least this: thread-per-vertex would walk that list as as many dependent steps.
#: The one-block fused kernels hand such lists to a warp themselves, at the same size.
AUTO_HUB_DEGREE = 32

_KINDS = ("push", "pull")

#: the arguments of a push strategy's and of a pull mapping's implementations
_PUSH = "ctx, dg, frontier, out, hooks, data, *, edges, spec"
_PULL = "ctx, dg, visited, input_bits, next_bits, hooks, data, *, mapping, early_exit"


def register_strategy(name, module=None, *, kind="push", auto=None, replace=False,
                      **implementations):
    """Make a strategy called ``name``: ``load_balance=name`` (``kind="push"``) or
    ``DirectionPolicy(pull_mapping=name)`` (``kind="pull"``).

    It has one implementation per backend, given as keywords named after the
    registered backends (``cpu=f, cuda=g``) or as a ``module`` with functions
    ``cpu_execute``, ``cuda_execute``, ... (a module with only ``execute`` runs
    that on every backend). gunpy's own strategies are registered this way: each is
    an :class:`~gunpy.operators.operator.Operator` called ``"advance.<kind>.<name>"``
    holding them, so an implementation never tests which backend it is on.

    A push implementation is called ``f(ctx, dg, frontier, out, hooks, data, *, edges,
    spec)`` and push-advances ``frontier`` into ``out`` (see
    :mod:`gunpy.operators.advance.thread_mapped` for the shape): ``ctx`` (a
    :class:`~gunpy.operators.Context`) gives the backend, ``ctx.scratch`` and
    ``ctx.visited_words()``; ``dg`` is the backend's
    :class:`~gunpy.backends.base.DeviceGraph`; ``hooks`` the compiled functor;
    ``spec`` a :class:`~gunpy.operators.advance.common.PushSpec`. A CUDA kernel
    appends with :func:`~gunpy.operators.advance.common.cuda_emit` and ends with
    :func:`~gunpy.operators.advance.common.cuda_count_degrees` (the emitted
    vertices' degree sum and largest degree); the launcher then calls
    ``out.touched(counted=spec.output == "vertex", bound=edges)``. On the CPU a
    frontier with fewer than ``CpuBackend.serial_below`` edges runs as one thin
    pass whatever the strategy.

    A pull implementation is called ``f(ctx, dg, visited, input_bits, next_bits,
    hooks, data, *, mapping, early_exit)``; it sets in ``next_bits`` the
    vertices outside ``visited`` with an in-neighbour in ``input_bits`` whose
    edge the functor accepts, and returns ``(in-edges examined, vertices found,
    their out-degree sum, mapping name)`` (see :mod:`.pull`).

    ``auto(edges, frontier_size, threshold)``: True when ``load_balance="auto"``
    should take this strategy for a frontier of ``frontier_size`` vertices and
    ``edges`` out-edges; a predicate that takes a fourth argument also gets
    ``largest``, the frontier's largest out-degree (None when no kernel counted
    it: :attr:`gunpy.Frontier.known_max_degree`). The most recently registered
    strategy whose ``auto`` holds wins (gunpy's: merge-path for fat, uneven
    frontiers, else twc when a list reaches :data:`AUTO_HUB_DEGREE` edges, else
    thread-mapped).

    Raises ``ValueError`` for a bad name, an unknown backend or an
    already-registered name (unless ``replace``) and ``TypeError`` for an
    implementation without that interface.
    """
    from gunpy import backends
    if kind not in _KINDS:
        raise ValueError(f"unknown strategy kind {kind!r}; valid: 'push', 'pull'")
    registry = STRATEGIES if kind == "push" else PULL_MAPPINGS
    if not isinstance(name, str) or not name.isidentifier() or name == "auto" and kind == "push":
        raise ValueError(f"a strategy name must be an identifier other than 'auto', "
                         f"got {name!r}")
    if name in registry and not replace:
        raise ValueError(f"{kind} strategy {name!r} is already registered "
                         "(register_strategy(..., replace=True) to replace it)")
    unknown = set(implementations) - set(backends.names())
    if unknown:
        raise ValueError(f"strategy {name!r}: no backend called {', '.join(sorted(unknown))}; "
                         f"the backends are {', '.join(backends.names())}")
    impls = _module_implementations(module) if module is not None else {}
    impls.update(implementations)
    if not impls:
        raise TypeError(f"strategy {name!r}: no implementation; give one per backend "
                        "(cpu=..., cuda=...) or a module with cpu_execute / cuda_execute / "
                        "execute")
    try:  # each implementation checked against the arguments; registered once all fit
        op = Operator(f"advance.{kind}.{name}", _PUSH if kind == "push" else _PULL, **impls)
    except TypeError as exc:
        raise TypeError(f"strategy {name!r}: {exc}") from None
    registry.pop(name, None)  # a replaced strategy moves to the end
    registry[name] = Strategy(name, kind, op, auto, tuple(impls))
    _options_changed()
    return registry[name]


def _module_implementations(module):
    from gunpy import backends
    impls = {b: getattr(module, f"{b}_execute") for b in backends.names()
             if callable(getattr(module, f"{b}_execute", None))}
    if not impls and callable(getattr(module, "execute", None)):
        impls["*"] = module.execute
    return impls


def unregister_strategy(name, *, kind="push", missing_ok=False):
    """Remove strategy ``name`` and its implementations from every backend."""
    registry = STRATEGIES if kind == "push" else PULL_MAPPINGS
    if registry.pop(name, None) is None and not missing_ok:
        raise KeyError(f"no {kind} strategy {name!r}")
    forget(f"advance.{kind}.{name}")
    _options_changed()


#: ``(name, auto)`` of the push strategies with an ``auto`` predicate, latest first
_AUTO = ()

#: bumped whenever a strategy is (un)registered: a kept :class:`Push` made before is stale
_generation = 0


def _options_changed():
    global LOAD_BALANCE_OPTIONS, _AUTO, _generation
    _generation += 1
    LOAD_BALANCE_OPTIONS = load_balance_options()
    _AUTO = tuple((s.name, _with_largest(s.auto)) for s in reversed(STRATEGIES.values())
                  if s.auto is not None)


def _with_largest(auto):
    """``auto`` as a predicate of ``(edges, frontier_size, threshold, largest)``."""
    try:
        inspect.signature(auto).bind(0, 0, 0, None)
        return auto
    except (TypeError, ValueError):  # three arguments (or no signature to read)
        return lambda edges, frontier_size, threshold, largest: auto(edges, frontier_size,
                                                                     threshold)


def pull_mapping_options():
    """The valid pull mappings now (registered ones included)."""
    return tuple(PULL_MAPPINGS)


def load_balance_options():
    """The valid ``load_balance`` values now (registered strategies included)."""
    return tuple(STRATEGIES) + ("auto",)


def check_load_balance(name):
    if name in STRATEGIES or name == "auto":
        return name
    raise ValueError(f"unknown load_balance {name!r}; valid options are "
                     f"{', '.join(repr(o) for o in load_balance_options())}")


def choose(load_balance, edges, frontier_size, *, threshold=AUTO_THRESHOLD, largest=None):
    """The strategy ``auto`` stands for, given the frontier's vertices, their edges and
    (``largest``, None: unknown) their largest out-degree: the most recently
    registered strategy whose ``auto`` predicate holds.

    >>> from gunpy.operators.advance import choose
    >>> choose("auto", 300, 300), choose("auto", 300, 300, largest=290)
    ('thread_mapped', 'twc')
    >>> choose("auto", 20_000, 500, largest=3_000)  # fat and uneven: equal shares of edges
    'merge_path'
    """
    if load_balance != "auto":
        return load_balance
    for name, auto in _AUTO:
        if auto(edges, frontier_size, threshold, largest):
            return name
    return next(iter(STRATEGIES))


def _always(edges, frontier_size, threshold):
    return True


def _has_hub(edges, frontier_size, threshold, largest):
    """A frontier with a list of :data:`AUTO_HUB_DEGREE` edges or more (a hub, known
    from the kernel that wrote the frontier): twc gives it a warp or a block, where
    thread-per-vertex would walk it alone, whatever the edge total."""
    return largest is not None and largest >= AUTO_HUB_DEGREE


def _fat_and_uneven(edges, frontier_size, threshold):
    """Merge-path (equal shares of edges, after a scan and a partition search) pays
    off above ``threshold`` edges when they can be uneven: more than two per
    frontier vertex on average. A frontier of at most two edges per vertex (a
    star's leaves, a tree's last levels) is even already, and thread-per-vertex
    runs it with no set-up."""
    return edges > threshold and edges > 2 * frontier_size


register_strategy("thread_mapped", thread_mapped, auto=_always)
register_strategy("twc", twc, auto=_has_hub)
register_strategy("merge_path", merge_path, auto=_fat_and_uneven)
for _mapping in ("thread", "warp", "auto"):  # pull's own kernels; "auto" picks one per level
    register_strategy(_mapping, pull, kind="pull")


def _no_thin(*args, **kwargs):
    return False


class Push:
    """A push advance bound to a context, a compiled functor and its options.

    Made once (the options are checked and the backend's implementations looked
    up here); each call advances one frontier: ``push(frontier, out, data)``
    writes ``out`` (a new frontier when None) and returns it, adding the edges
    visited and the strategy to ``ctx.record``. An Enactor keeps one per functor
    and options, so a level pays none of the checks.

    ``mark_visited`` / ``skip_visited``: set / test the destinations' bits in
    ``ctx.visited_words()`` (see :class:`~gunpy.operators.advance.common.PushSpec`).

    Examples
    --------
    A functor with no hooks accepts every edge:

    >>> import gunpy
    >>> from gunpy import Functor
    >>> from gunpy.functor import compile_functor
    >>> from gunpy.operators import Context
    >>> from gunpy.operators.advance import Push
    >>> G = gunpy.generators.path(5)
    >>> ctx = Context(G, backend="cpu")
    >>> push = Push(ctx, compile_functor(Functor, ctx.backend), load_balance="thread_mapped")
    >>> out = push(ctx.frontier([2]), None, ())
    >>> sorted(out.to_numpy().tolist()), ctx.record["edges"], ctx.record["strategy"]
    ([1, 3], 2, 'thread_mapped')
    """

    __slots__ = ("ctx", "hooks", "spec", "load_balance", "threshold", "thin", "impls",
                 "degree_sum", "generation")

    def __init__(self, ctx, hooks, *, load_balance="auto", output="vertex", mark_visited=False,
                 skip_visited=False, threshold=AUTO_THRESHOLD):
        check_load_balance(load_balance)
        if output not in OUTPUTS:
            raise ValueError(f"unknown advance output {output!r}; valid: {OUTPUTS}")
        backend = ctx.backend
        self.ctx, self.hooks = ctx, hooks
        self.spec = PushSpec(ctx.graph.weighted, output, bool(mark_visited), bool(skip_visited))
        self.load_balance, self.threshold = load_balance, threshold
        # a backend may run thin frontiers its own way whatever the strategy (the CPU: one pass)
        self.thin = thread_mapped.THIN.on(backend, _no_thin)
        self.impls = {name: s.op.on(backend) for name, s in STRATEGIES.items()
                      if load_balance in ("auto", name)}
        self.degree_sum = DEGREE_SUM.on(backend)
        self.generation = _generation

    def __call__(self, frontier, out, data):
        ctx = self.ctx
        if not frontier.has_queue:
            frontier.ensure_queue(ctx.scratch)
        dg = ctx.backend.graph(ctx.graph)
        n = frontier.size
        edges = frontier.known_edges
        if edges is None:
            edges = self.degree_sum(ctx.backend, dg.row_offsets, frontier.queue, n) if n else 0
        strategy = self.load_balance
        if strategy == "auto":
            strategy = choose(strategy, edges, n, threshold=self.threshold,
                              largest=frontier.known_max_degree)
        if out is None:
            out = _new_output(ctx, edges, self.spec.output)
        if n == 0:
            out.clear()
        else:
            out.reserve(edges)
            if not self.thin(ctx, dg, frontier, out, self.hooks, data, edges=edges,
                             spec=self.spec):
                self.impls[strategy](ctx, dg, frontier, out, self.hooks, data, edges=edges,
                                     spec=self.spec)
        ctx.log(edges=edges, direction="push", strategy=strategy)
        return out


def advance(graph, frontier, functor, data=None, *, out=None, mask=None, skip_masked=True,
            update_mask=True, load_balance="auto", direction="push", output="vertex",
            pull_input="frontier", pull_mapping="auto", early_exit=True,
            threshold=AUTO_THRESHOLD, context=None):
    """Visit the edges of ``frontier`` with ``functor``; returns the output frontier.

    Push (the default): for each out-edge ``(src, dst, e)`` of a frontier
    vertex whose ``cond_edge`` holds, ``apply_edge`` runs and the output gains
    ``dst`` (``output="vertex"``), the edge id ``e`` (``output="edge"``) or
    nothing (``output="none"``), duplicates included.

    Pull (``direction="pull"``): every vertex outside ``mask`` scans its
    in-edges ``(src, dst, e)`` whose ``src`` is in the input set (the frontier,
    or ``mask`` itself with ``pull_input="visited"``: Gunrock's operand reuse),
    runs ``cond_edge`` / ``apply_edge``, and joins the output if one held; with
    ``early_exit`` it stops at the first. The output is a bitmap frontier
    (no duplicates).

    Parameters
    ----------
    graph : gunpy.Graph
    frontier : gunpy.Frontier
        Vertex ids on the context's backend (never written).
    functor : gunpy.Functor subclass
    data : namedtuple of device arrays, or a gunpy.Problem (its ``data()``)
    out : gunpy.Frontier, optional
        Receives the result (grown as needed); a new frontier when omitted.
    mask : device array of uint32 words, optional
        A visited bitmap (one bit per vertex, e.g. ``context.new_bitmap()``).
        Push skips destinations whose bit is set (``skip_masked``) and sets the
        bit of every destination it accepts (``update_mask``, vertex output);
        pull searches only vertices outside it and adds the ones it finds
        (``update_mask``). Without a mask, pull searches every vertex outside
        the frontier.
    load_balance : str, default "auto"
        Push workload mapping: a registered strategy (:func:`load_balance_options`).
    direction : {"push", "pull"}
        (An Enactor also offers ``"auto"``: it keeps the push-pull state.)
    pull_mapping : {"auto", "thread", "warp"}
    context : gunpy.operators.Context, optional
        Backend, scratch arrays and the stats record; made for the call when omitted.

    Examples
    --------
    One BFS step from vertex 2 of the path 0-1-2-3-4, with no Enactor:

    >>> from collections import namedtuple
    >>> import numpy as np, gunpy
    >>> from gunpy import Functor, atomics, operators as ops
    >>> class Reach(Functor):
    ...     @staticmethod
    ...     def cond_edge(src, dst, edge, weight, data):
    ...         return atomics.cas(data.depth, dst, -1, data.depth[src] + 1) == -1
    >>> G = gunpy.generators.path(5)
    >>> data = namedtuple("Data", "depth")(np.array([-1, -1, 0, -1, -1], dtype=np.int32))
    >>> ctx = ops.Context(G, backend="cpu")
    >>> out = ops.advance(G, ctx.frontier([2]), Reach, data, context=ctx)
    >>> sorted(out.to_numpy().tolist()), data.depth.tolist(), ctx.record["edges"]
    ([1, 3], [-1, 1, 0, 1, -1], 2)
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown advance direction {direction!r}; valid: 'push', 'pull' "
                         "('auto' needs the push-pull state an Enactor keeps)")
    ctx = context_for(graph, frontier, context)
    if mask is not None:
        _check_mask(ctx, mask)
    return run(ctx, frontier, compile_functor(functor, ctx.backend), problem_data(data), out,
               mask, skip_masked, update_mask, load_balance, direction, output, pull_input,
               pull_mapping, early_exit, threshold)


def run(ctx, frontier, hooks, data, out, mask, skip_masked, update_mask, load_balance,
        direction, output, pull_input, pull_mapping, early_exit, threshold):
    """:func:`advance` once its arguments are checked (an Enactor's per-level entry:
    it checked its own once); ``hooks`` is the compiled functor."""
    if mask is not None:
        ctx = ctx.with_visited(mask)
    if direction == "pull":
        if output != "vertex":
            raise ValueError("pull advance produces vertex frontiers only")
        if pull_input not in ("visited", "frontier"):
            raise ValueError(f"unknown pull_input {pull_input!r}; valid: 'visited', 'frontier'")
        return _pull(ctx, frontier, hooks, data, out, mask, update_mask, pull_input,
                     pull_mapping, early_exit)
    return Push(ctx, hooks, load_balance=load_balance, output=output,
                mark_visited=mask is not None and update_mask and output == "vertex",
                skip_visited=mask is not None and skip_masked,
                threshold=threshold)(frontier, out, data)


def _pull(ctx, frontier, hooks, data, out, mask, update_mask, pull_input, mapping, early_exit):
    backend = ctx.backend
    if mapping not in PULL_MAPPINGS:
        raise ValueError(f"unknown pull mapping {mapping!r}; valid: {pull_mapping_options()}")
    impl = PULL_MAPPINGS[mapping].op.on(backend)
    # gunpy's own pull kernels read in_edge_ids only for hooks that read edge / weight (a
    # registered mapping may read them itself: it gets them)
    ids = impl not in (pull.cpu_execute, pull.cuda_execute) or \
        pull.needs_edge_ids(hooks, ctx.graph.weighted)
    dg = backend.graph(ctx.graph, csc=True, edge_ids=ids)
    if mask is None:
        # only the frontier counts as visited
        mask = ctx.scratch("pull.mask", bitmap.num_words(ctx.num_vertices), np.uint32)
        backend.fill(mask, 0)
        bitmap.or_into(backend, mask, frontier.ensure_bitmap())
        ctx = ctx.with_visited(mask)
    input_bits = mask if pull_input == "visited" else frontier.ensure_bitmap()
    if out is None:
        out = _new_output(ctx, 1, "vertex")
    next_bits = out._words()
    examined, found, found_edges, mapping = impl(
        ctx, dg, mask, input_bits, next_bits, hooks, data, mapping=mapping,
        early_exit=early_exit)
    if update_mask:
        bitmap.or_into(backend, mask, next_bits)
    out.set_bitmap(next_bits, found, known_edges=found_edges)
    out.examined = examined
    ctx.log(edges=examined, direction="pull", strategy=f"pull-{mapping}")
    return out


def _new_output(ctx, capacity, output):
    # lent by the context: its arrays come back when the caller drops it (no allocation
    # per call once warm)
    out = ctx.frontier(capacity=capacity, kind="edge" if output == "edge" else "vertex")
    out.name = "out"
    return out


def _check_mask(ctx, mask):
    words = bitmap.num_words(ctx.num_vertices)
    if getattr(mask, "dtype", None) != np.uint32 or mask.shape[0] != words:
        raise ValueError(f"mask must be a bitmap of {words} uint32 words on the context's "
                         "backend (Context.new_bitmap())")


callable_module(__name__, advance)
