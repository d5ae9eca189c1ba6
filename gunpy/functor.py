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

``data`` is the problem's namedtuple of arrays and scalars. Bodies are plain
numba-typable code; atomics come from :mod:`gunpy.atomics`. The framework, not
the user, compiles each hook for the backend in use (``inline="always"`` device
functions on CUDA, ``njit`` functions on the CPU), once per (functor, backend).
"""

import functools
from collections import namedtuple

__all__ = ["Functor", "compile_functor", "Hooks", "hooks_cache"]


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


_HOOKS = ("cond_edge", "apply_edge", "cond_vertex", "apply_vertex", "priority", "gather_edge",
          "apply_intersection")


def _pyfunc(obj):
    """Accept a plain function or an already-jitted numba dispatcher."""
    return getattr(obj, "py_func", obj)


def _check_functor(functor):
    if not (isinstance(functor, type) and issubclass(functor, Functor)):
        raise TypeError(f"expected a gunpy.Functor subclass, got {functor!r}")
    for name in _HOOKS:
        attr = functor.__dict__.get(name)
        for klass in functor.__mro__:
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                break
        if not isinstance(attr, staticmethod):
            raise TypeError(f"{functor.__name__}.{name} must be a @staticmethod "
                            f"(hooks take (src, dst, edge, weight, data) or (v, data))")


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
