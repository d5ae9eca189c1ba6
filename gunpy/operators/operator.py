"""One object per operator: its arguments and its implementation on each backend.

An :class:`Operator` is what the framework runs: the operator modules make one
for each operator they provide (``gunpy.operators.compute.COMPUTE``,
``gunpy.operators.filter.cull.CULL``, ...) with the function that implements it
on each backend, and call it. Backends do not list operators: they hold arrays,
compile and launch; the operator picks its implementation from the backend's
class (its ``name``, along the class hierarchy).

**The one calling convention.** An implementation is a plain function called
``impl(on, *arguments)``. ``on`` comes first and says where it runs: the
operator's :class:`~gunpy.operators.Context` (``ctx``: backend, graph, scratch
arrays, the stats record) for the operators over a graph, or the
:class:`~gunpy.backends.base.Backend` itself (``backend``) for those over bare
device arrays. The other arguments are device arrays,
:class:`~gunpy.Frontier` objects, the compiled functor (``hooks``), its
``data`` tuple and plain numbers, in the order the operator's ``args`` give;
keyword-only ones follow ``*``. Results are written into the output
arrays / frontiers; an implementation returns host numbers only where the
operator's caller needs them (sizes, sums). Statistics are not such numbers: a
kernel adds them to a device counter from ``ctx.tally(key)``, read once per run
(``ctx.flush()``). It never asks which backend it is on.

**Extending.** ``op.implement("mine", f)`` gives the backend registered as
``"mine"`` (and its subclasses) an implementation, ``"*"`` every backend. A
backend class may also override operators in a table of its own,
``operators = {"compute": f, "neighbor_reduce": None}`` (``None`` hides an
inherited one: the operator then raises ``NotImplementedError`` naming both).
Load-balancing strategies are operators too (``"advance.push.<name>"``,
``"advance.pull.<name>"``), made by
:func:`gunpy.operators.advance.register_strategy`.

>>> import numpy as np
>>> from gunpy.backends import get_backend
>>> from gunpy.operators.operator import operator
>>> popcount = operator("bitmap.popcount")
>>> popcount.args
'backend, words'
>>> popcount(get_backend("cpu"), np.array([3, 1], dtype=np.uint32))
3
"""

import importlib
import inspect

__all__ = ["Operator", "operator", "operators", "check_implementation"]

#: name -> Operator, filled as the operator modules load
_REGISTRY = {}



class Operator:
    """One operator: ``name``, the arguments its implementations take (``args``, a
    string as a ``def`` writes them) and an implementation per backend name.

    ``op.on(backend)`` is the function that runs it on ``backend`` (checked once,
    then kept per backend class); ``op(on, *arguments)`` calls it, ``on`` being
    the context or the backend (see the module docstring).
    """

    __slots__ = ("name", "args", "_builtin", "_added", "_bound")

    def __init__(self, name, args, **implementations):
        self.name, self.args = name, args
        self._builtin = {backend: check_implementation(self, impl)
                         for backend, impl in implementations.items() if impl is not None}
        self._added = {}
        self._bound = {}
        _REGISTRY[name] = self  # once every implementation fits

    def implement(self, backend, impl):
        """Make ``impl`` this operator's implementation on the backend called ``backend``
        (its subclasses inherit it), or on every backend (``"*"``), ahead of the one it
        was made with."""
        self._added[backend] = check_implementation(self, impl)
        self._bound.clear()
        return impl

    def retract(self, backend=None):
        """Drop what :meth:`implement` gave ``backend`` (every backend when None); the
        implementations the operator was made with stay."""
        if backend is None:
            self._added.clear()
        else:
            self._added.pop(backend, None)
        self._bound.clear()

    def on(self, backend, default=None):
        """The function that runs this operator on ``backend``: the nearest entry along
        its class hierarchy (a class's own ``operators`` table, then the implementation
        for its ``name``), then the one for every backend. ``default`` is returned when
        there is none (None: ``NotImplementedError`` naming the backend)."""
        cls = type(backend)
        fn = self._bound.get(cls)
        if fn is None:
            fn = self._resolve(cls)
            if fn is None:
                if default is not None:
                    return default
                raise NotImplementedError(f"the {backend.name!r} backend does not implement "
                                          f"operator {self.name!r}")
            fn = self._bound[cls] = backend.bind(fn)
        return fn

    def _resolve(self, cls):
        for klass in cls.__mro__:
            table = klass.__dict__.get("operators")
            if table and self.name in table:
                return _load(table[self.name], self)
            name = klass.__dict__.get("name")
            impl = self._added.get(name) or self._builtin.get(name)
            if impl is not None:
                return impl
        return self._added.get("*") or self._builtin.get("*")

    def __call__(self, on, *args, **kwargs):
        return self.on(getattr(on, "backend", on))(on, *args, **kwargs)

    def __repr__(self):
        return f"<gunpy operator {self.name!r} ({self.args})>"


def _load(entry, op):
    # a backend table's entry: a function, None, or "module:function" (imported once)
    if entry is None or callable(entry):
        return entry
    module, _, attr = entry.partition(":")
    return check_implementation(op, getattr(importlib.import_module(module), attr))


def operator(name):
    """The :class:`Operator` called ``name`` (``ValueError`` naming them when unknown)."""
    op = _REGISTRY.get(name)
    if op is None:
        op = operators().get(name)
    if op is None:
        raise ValueError(f"unknown operator {name!r}; the operators are "
                         f"{', '.join(sorted(_REGISTRY))}")
    return op


def operators():
    """Every operator's name -> :class:`Operator` (registered strategies included): the
    operator modules make theirs as they load, so every module of the package is loaded."""
    import pkgutil

    import gunpy.operators as package
    for info in pkgutil.walk_packages(package.__path__, "gunpy.operators."):
        importlib.import_module(info.name)
    return dict(_REGISTRY)


def forget(name):
    """Remove operator ``name`` (a strategy that was unregistered)."""
    _REGISTRY.pop(name, None)


def check_implementation(op, impl, *, who=None):
    """Return ``impl``, or raise ``TypeError`` unless it can be called with the
    arguments of ``op`` (an :class:`Operator` or its name)."""
    if not isinstance(op, Operator):
        op = operator(op)
    name, args = op.name, op.args
    if not callable(impl):
        raise TypeError(f"{who or name}: {impl!r} is not callable")
    try:
        params = inspect.signature(impl).parameters
    except (TypeError, ValueError):  # a builtin or a jitted dispatcher: trust it
        return impl
    positional, _, keywords = args.partition("*")
    npos = len([a for a in positional.split(",") if a.strip()])
    kw = [a.strip() for a in keywords.split(",") if a.strip()]
    kinds = [p.kind for p in params.values()]
    P = inspect.Parameter
    takes = sum(k in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD) for k in kinds)
    required = sum(p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
                   and p.default is P.empty for p in params.values())
    var_kw = P.VAR_KEYWORD in kinds
    fits = (takes >= npos or P.VAR_POSITIONAL in kinds) and required <= npos \
        and all(k in params or var_kw for k in kw)
    if not fits:
        raise TypeError(f"{who or name}: an implementation of {name!r} must take ({args}); "
                        f"{getattr(impl, '__name__', impl)!r} takes {inspect.signature(impl)}")
    return impl
