"""Functors: the user's per-edge and per-vertex code (Gunrock's functor API).

A functor is a class of four ``@staticmethod`` hooks with fixed argument orders::

    cond_edge(src, dst, edge, weight, data) -> bool    # advance: keep this edge?
    apply_edge(src, dst, edge, weight, data)           # advance: runs when cond_edge is True
    cond_vertex(v, data) -> bool                       # filter: keep this vertex?
    apply_vertex(v, data)                              # filter / compute: runs when kept

and three optional ones for specific operators::

    priority(v, data) -> float                         # near/far queue: v is "near" below the level
    gather_edge(src, dst, edge, weight, data) -> float # neighbor_reduce: the value an edge contributes
                                                       # (neighbor_mode: an integer key, called
                                                       # as (v, neighbour, edge, weight, data))
    apply_intersection(src, dst, edge, common, src_edge, dst_edge, data)
                                                       # intersect: per neighbour both ends share
    score(v, key, total, data) -> float                # neighbor_best: how good moving v to key is
    round_of(v, data) -> int                           # neighbor_best(rounds=r): v's sub-round

:data:`HOOKS` declares them all. When a functor is first compiled, gunpy checks
it against that table and raises a TypeError naming the class, the hook and
the fix for a name that looks like a hook but is none (``cond_edges``), a hook
that is not a ``@staticmethod`` or takes the wrong number of arguments, and a
``cond_*`` (or ``priority``, ``gather_edge``, ``score``, ``round_of``) with a
path that returns nothing: never a silent default or a silent False.

``data`` is the problem's namedtuple of arrays and scalars. Bodies are plain
numba-typable code; atomics come from :mod:`gunpy.atomics`. The framework, not
the user, compiles each hook for the backend in use (``inline="always"`` device
functions on CUDA, ``njit`` functions on the CPU), once per (functor, backend).
"""

import difflib
import dis
import functools
import inspect
from collections import namedtuple

__all__ = ["Functor", "compile_functor", "Hooks", "hooks_cache", "HOOKS", "Hook",
           "reads_params", "reads_edge_data"]


class Functor:
    """Base class: every hook defaults to "keep everything, do nothing".

    A hook left at its default lets the operators skip work: a filter whose
    ``cond_vertex`` is the default removes nothing and becomes a plain compute
    (Gunrock's filter bypass), and one whose ``apply_vertex`` is also the default
    costs nothing at all.

    Examples
    --------
    >>> from gunpy import Functor, atomics
    >>> class Reach(Functor):
    ...     @staticmethod
    ...     def cond_edge(src, dst, edge, weight, data):
    ...         return atomics.cas(data.hops, dst, -1, data.hops[src] + 1) == -1
    """

    #: Promise that ``cond_edge`` rejects every destination already visited
    #: (true of BFS). Where the enactor keeps a visited bitmap (``direction``
    #: ``"auto"``/``"pull"``, idempotent runs) push advance then tests the bit
    #: first and never calls the functor for a visited destination: one read of
    #: a small bitmap instead of, say, a failing compare-and-swap. Leave it False
    #: when a vertex found earlier in the same iteration must still see its other
    #: in-edges (BC's path counts).
    skip_visited = False

    @staticmethod
    def cond_edge(src, dst, edge, weight, data):
        return True

    @staticmethod
    def apply_edge(src, dst, edge, weight, data):
        pass

    @staticmethod
    def cond_vertex(v, data):
        return True

    @staticmethod
    def apply_vertex(v, data):
        pass

    @staticmethod
    def priority(v, data):
        return 0.0

    @staticmethod
    def gather_edge(src, dst, edge, weight, data):
        return 0.0

    @staticmethod
    def apply_intersection(src, dst, edge, common, src_edge, dst_edge, data):
        # intersect: edge src -> dst and the edges src -> common (src_edge, in the left
        # graph) and dst -> common (dst_edge, in the right graph)
        pass


class Hooks:
    """A functor compiled for one backend, plus which hooks were left at their default.

    It also owns the kernels built from it (``kernels``, filled by
    :func:`hooks_cache`), and the functor class owns it: kernels live as long as
    their functor class does, and go with it.
    """

    __slots__ = ("functor", "backend", "cond_edge", "apply_edge", "cond_vertex",
                 "apply_vertex", "priority", "gather_edge", "apply_intersection",
                 "default_cond_edge", "default_apply_edge", "default_cond_vertex",
                 "default_apply_vertex", "kernels")

    def __init__(self, functor, backend, compiled, defaults):
        self.functor = functor
        self.backend = backend
        for name in _HOOKS:
            setattr(self, name, compiled[name])
        for name in ("cond_edge", "apply_edge", "cond_vertex", "apply_vertex"):
            setattr(self, "default_" + name, defaults[name])
        self.kernels = {}

    def __repr__(self):
        return f"<Hooks of {self.functor.__qualname__} for {self.backend}>"


def hooks_cache(factory):
    """Memoise a kernel factory ``factory(hooks, *args)`` in ``hooks.kernels``.

    Replaces a process-wide ``lru_cache``, which would keep every functor class
    (and its kernels) alive forever.
    """
    @functools.wraps(factory)
    def cached(hooks, *args, **kwargs):
        key = (factory, args, tuple(sorted(kwargs.items())))
        kernel = hooks.kernels.get(key)
        if kernel is None:
            kernel = hooks.kernels[key] = factory(hooks, *args, **kwargs)
        return kernel

    return cached


class Hook(namedtuple("Hook", "params returns operators")):
    """A hook's declaration: its parameters, what it returns and which operators call it.

    ``returns``: ``"bool"`` (a ``cond_*``: must return on every path), ``"value"``
    (a number on every path), ``"any"`` (nothing, or what the operator documents:
    ``apply_vertex`` gives ``neighbor_reduce(aggregates=k)`` ``k`` floats)."""

    def signature(self, name):
        return f"{name}({', '.join(self.params)})"


_EDGE = ("src", "dst", "edge", "weight", "data")

#: every hook an operator calls, declared once: :func:`compile_functor` checks a functor
#: against this table (unknown names, argument counts, ``cond_*`` that can return None)
HOOKS = {
    "cond_edge": Hook(_EDGE, "bool", "advance, sample, the fused levels"),
    "apply_edge": Hook(_EDGE, "any", "advance, sample, the fused levels"),
    "cond_vertex": Hook(("v", "data"), "bool", "filter, neighbor_best, neighbor_mex"),
    "apply_vertex": Hook(("v", "data"), "any", "filter, compute, neighbor_reduce(apply=True), "
                                               "neighbor_best"),
    "priority": Hook(("v", "data"), "value", "near_far"),
    "gather_edge": Hook(_EDGE, "value", "neighbor_reduce (a value), neighbor_mode, "
                                        "neighbor_mex, neighbor_best (an integer key)"),
    "apply_intersection": Hook(("src", "dst", "edge", "common", "src_edge", "dst_edge", "data"),
                               "any", "intersect, spgemm"),
    "score": Hook(("v", "key", "total", "data"), "value", "neighbor_best"),
    "round_of": Hook(("v", "data"), "value", "neighbor_best(rounds=...)"),
}

#: the hooks every compiled functor carries (``score`` and ``round_of`` are compiled by
#: neighbor_best itself, into its kernels)
_HOOKS = ("cond_edge", "apply_edge", "cond_vertex", "apply_vertex", "priority", "gather_edge",
          "apply_intersection")
#: prefixes that mark a hook name: a method so named must be one of :data:`HOOKS`
_HOOK_PREFIXES = ("cond_", "apply_", "gather_")


def _pyfunc(obj):
    """Accept a plain function or an already-jitted numba dispatcher."""
    return getattr(obj, "py_func", obj)


def _check_functor(functor):
    """Check ``functor`` against :data:`HOOKS` before anything is compiled: a TypeError
    naming the class, the hook and the fix for an unknown hook name, a hook that is not a
    ``@staticmethod``, a wrong number of parameters, or a ``cond_*`` (or a hook that gives
    a value) with a path that returns nothing."""
    if not (isinstance(functor, type) and issubclass(functor, Functor)):
        raise TypeError(f"expected a gunpy.Functor subclass, got {functor!r}")
    where = functor.__qualname__
    for klass in functor.__mro__:
        if klass is Functor:
            break
        for name, attr in vars(klass).items():
            if name in HOOKS:
                _check_hook(where, name, attr)
            elif not name.startswith("_") and (
                    name.startswith(_HOOK_PREFIXES)
                    or difflib.get_close_matches(name, HOOKS, n=1, cutoff=0.8)):
                close = difflib.get_close_matches(name, HOOKS, n=1, cutoff=0.6)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise TypeError(
                    f"{where}.{name} is not a hook any gunpy operator calls ({hint}the hooks: "
                    f"{', '.join(HOOKS)}); a helper of your own needs a name that does not "
                    f"look like one (start it with '_')")


def _check_hook(where, name, attr):
    spec = HOOKS[name]
    if not isinstance(attr, staticmethod):
        raise TypeError(f"{where}.{name} must be a @staticmethod: "
                        f"{spec.signature(name)}")
    fn = _pyfunc(attr.__func__)
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin or a compiled object: nothing to read
        return
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) != len(spec.params) or any(
            p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise TypeError(f"{where}.{name} takes {len(positional)} argument(s); the operators "
                        f"call it as {spec.signature(name)}")
    if spec.returns != "any" and _can_return_none(fn):
        what = "True or False" if spec.returns == "bool" else "a value"
        raise TypeError(f"{where}.{name} can end without returning {what} (a path with no "
                        f"return statement returns None); {spec.signature(name)} must "
                        f"return {what} on every path")


def _can_return_none(fn):
    """Whether ``fn``'s code returns the constant None somewhere (a missing or bare
    ``return``): read from its bytecode, as Python compiled it."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    last = None
    for ins in dis.get_instructions(code):
        if ins.opname == "RETURN_CONST" and ins.argval is None:
            return True
        if ins.opname == "RETURN_VALUE" and last is not None and \
                last.opname == "LOAD_CONST" and last.argval is None:
            return True
        last = ins
    return False


def compile_functor(functor, backend, *, nrt=True):
    """Compile a functor's hooks for ``backend`` (once per pair, kept on the functor class).

    ``nrt=False`` (CPU only): hooks compiled without numba's reference
    counting, for the serial builds of :func:`gunpy.backends.cpu.run_thin`.
    """
    store = functor.__dict__.get("_gunpy_hooks") if isinstance(functor, type) else None
    if store is not None:
        hooks = store.get((backend, nrt))
        if hooks is not None:
            return hooks
    _check_functor(functor)
    compiled = {}
    defaults = {}
    for name in _HOOKS:
        fn = _pyfunc(getattr(functor, name))
        defaults[name] = fn is getattr(Functor, name)
        compiled[name] = backend.device_function(fn) if nrt else \
            backend.device_function(fn, nrt=False)
    hooks = Hooks(functor, backend.name, compiled, defaults)
    if store is None:
        # on the class itself (a cycle the garbage collector frees with the class)
        store = {}
        type.__setattr__(functor, "_gunpy_hooks", store)
    store[(backend, nrt)] = hooks
    return hooks


#: code flags of a function taking ``*args`` / ``**kwargs``
_VARARGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def reads_params(fn, params):
    """Whether the Python function ``fn`` may read any of its positional parameters at the
    positions ``params`` (0-based), judged from its bytecode.

    Conservative: True unless the answer is sure to be no. A parameter is read when any
    instruction other than a plain store names it (``LOAD_FAST`` and its 3.12 / 3.13
    variants, ``DELETE_FAST``, a closure cell: ``LOAD_DEREF``, ``MAKE_CELL``); a parameter
    a nested function captures is a cell, so it counts as read. Anything without Python
    bytecode (a builtin, a compiled object without ``py_func``), ``*args`` / ``**kwargs``,
    a position past the parameters, or a function that calls ``locals`` / ``vars`` /
    ``eval`` / ``exec`` counts as reading every parameter.
    """
    fn = _pyfunc(fn)
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & _VARARGS:
        return True
    nargs = code.co_argcount  # positional-only parameters included
    if any(i >= nargs for i in params):
        return True
    names = {code.co_varnames[i] for i in params}
    if names & set(code.co_cellvars):
        return True
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR") and \
                ins.argval in ("locals", "vars", "eval", "exec"):
            return True
        if ins.opname == "STORE_FAST":
            continue
        val = ins.argval
        if isinstance(val, str):
            if val in names and ("FAST" in ins.opname or "DEREF" in ins.opname
                                 or "CELL" in ins.opname):
                return True
        elif isinstance(val, tuple) and "FAST" in ins.opname:  # 3.13: LOAD_FAST_LOAD_FAST
            if names.intersection(v for v in val if isinstance(v, str)):
                return True
    return False


def reads_edge_data(functor, hooks=("cond_edge", "apply_edge"), *, weighted=True):
    """Whether any of the edge hooks ``hooks`` of ``functor`` (a :class:`Functor` class,
    or the :class:`Hooks` compiled from one) may read its ``edge`` argument, or its
    ``weight`` argument when ``weighted`` (an unweighted graph's weight is always 1.0,
    whatever edge it belongs to).

    Pull traversal of an undirected graph hands a hook the edge id of the reversed edge
    (a "twins" map built for it): when this is False that map is never needed. Judged
    from the hooks' bytecode by :func:`reads_params`, which answers True whenever it
    cannot be sure.
    """
    if isinstance(functor, Hooks):
        functor = functor.functor
    if not (isinstance(functor, type) and issubclass(functor, Functor)):
        return True
    params = (2, 3) if weighted else (2,)
    for name in hooks:
        if HOOKS.get(name) is None or HOOKS[name].params[2:4] != ("edge", "weight"):
            return True
        if reads_params(getattr(functor, name), params):
            return True
    return False
