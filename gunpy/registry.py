"""The primitive registry: one entry per primitive, read by everything that lists them.

A primitive is its module plus one :class:`Primitive` entry, registered with
:func:`register_primitive` at the bottom of that module. ``gunpy`` exports each
registered function by its name, and the command line (``gunpy run NAME``, with
``--help`` listing the entry's options), ``gunpy warmup``, the start-up
benchmark and the benchmark suite read the registry, so a new primitive needs
no edit anywhere else:

>>> import gunpy
>>> from gunpy.registry import primitive
>>> spec = primitive("bfs")
>>> spec.function is gunpy.bfs, spec.source, spec.fields
(True, 'one', ('depth', 'parent'))
>>> [o.name for o in spec.options]
['direction', 'load_balance', 'idempotent']

A registration lasts for its process. A package of your own registers its
primitives in every process (``gunpy run`` in a shell too) by naming the module
that registers them as a ``gunpy.primitives`` entry point (``setup.cfg``)::

    [options.entry_points]
    gunpy.primitives =
        mine = mypackage.primitives
"""

import dataclasses
import importlib
import numbers
from typing import Callable

__all__ = ["Option", "Primitive", "register_primitive", "unregister_primitive", "primitive",
           "primitives", "names", "top_vertices", "BUILTIN", "RESERVED_OPTIONS"]

#: the built-in primitives, in listing order; ``gunpy.primitives.NAME`` registers each
#: (imported only when first asked for: ``gunpy.bfs`` loads BFS alone)
BUILTIN = ("bfs", "sssp", "bc", "cc", "pagerank", "triangles", "lcc", "cdlp", "louvain", "kcore",
           "hits", "ppr", "spmv", "color", "scc", "mst", "geo")


@dataclasses.dataclass(frozen=True)
class Option:
    """A keyword option of a primitive, as the command line offers it (``--load-balance``).

    ``default`` sets its type (a ``bool`` default makes a flag, ``None`` needs
    ``type``); ``choices`` limits the values; ``help`` is one line.
    """
    name: str
    default: object
    help: str = ""
    choices: tuple = None
    type: type = None

    @property
    def flag(self):
        return "--" + self.name.replace("_", "-")

    @property
    def value_type(self):
        if self.type is not None:
            return self.type
        return str if self.default is None else type(self.default)


@dataclasses.dataclass(frozen=True)
class Primitive:
    """One registry entry.

    Parameters
    ----------
    name : str
        The name users call it by (``gunpy.NAME``, ``gunpy run NAME``).
    function : callable
        ``function(G, [source,] **options, backend=...)`` returning a :class:`gunpy.Result`.
    source : {None, "one", "many"}
        Whether it takes a source vertex (``"one"``) or a list of sources
        (``"many"``, ``None`` meaning every vertex) after the graph.
    options : tuple of Option
        The keyword options the command line and the docs list.
    fields : tuple of str
        The result's arrays.
    summary : callable, optional
        ``summary(result, G, source) -> list of str``: what ``gunpy run`` prints.
    warmup : callable, optional
        ``warmup(G, source, backend)``: the calls that compile the kernels its default
        options reach (default: one call with the defaults).
    weighted : bool
        Whether it reads edge weights (warm-up and benchmarks give it a weighted graph too).
    networkx : tuple of str
        networkx functions it answers (its twins, for the networkx backend and docs).
    dist : str, optional
        The distributed variant, as ``"module:function"`` (``"gunpy.dist:bfs"``).
    source_default : str
        What the function does with no source, for ``gunpy run``'s help (``"many"``:
        default ``"every vertex"``).

    Option names may not be one of :data:`RESERVED_OPTIONS` (``gunpy run``'s own flags).
    """
    name: str
    function: Callable
    source: str = None
    options: tuple = ()
    fields: tuple = ()
    summary: Callable = None
    warmup: Callable = None
    weighted: bool = False
    networkx: tuple = ()
    dist: str = None
    source_default: str = "every vertex"

    def __post_init__(self):
        if self.source not in (None, "one", "many"):
            raise ValueError(f"source must be None, 'one' or 'many', got {self.source!r}")
        if not self.name.isidentifier():
            raise ValueError(f"a primitive's name must be an identifier, got {self.name!r}")
        for o in self.options:
            if o.name in RESERVED_OPTIONS:
                hint = _RESERVED_HINTS.get(o.name, "")
                raise ValueError(
                    f"primitive {self.name!r}: Option({o.name!r}) would collide with "
                    f"gunpy run's own {o.flag}{hint}; the reserved names are "
                    f"{', '.join(sorted(RESERVED_OPTIONS))}")

    def call(self, G, source=None, *, backend="auto", **options):
        """Run it with ``source`` where it takes one (``"many"``: an int becomes ``[int]``)."""
        if self.source == "one":
            return self.function(G, source, backend=backend, **options)
        if self.source == "many":
            sources = [int(source)] if isinstance(source, numbers.Integral) else source
            return self.function(G, sources, backend=backend, **options)
        return self.function(G, backend=backend, **options)

    def warm(self, G, source, backend):
        """The warm-up calls (see ``warmup``)."""
        if self.warmup is not None:
            return self.warmup(G, source, backend)
        return self.call(G, source, backend=backend)

    def lines(self, result, G, source):
        """What ``gunpy run`` prints about ``result``."""
        if self.summary is not None:
            return list(self.summary(result, G, source))
        return [f"{f}: {getattr(result, f)[:10]}" for f in self.fields]


def top_vertices(values, k=5, fmt="{:.4g}"):
    """``"top vertices: v (value), ..."``: the ``k`` largest of a per-vertex array (summaries)."""
    import numpy as np
    top = np.argsort(-np.asarray(values), kind="stable")[:k]
    return "top vertices: " + ", ".join(f"{v} ({fmt.format(values[v])})" for v in top)


#: the option names ``gunpy run`` takes for itself (``--seed``: the RMAT generator's, also
#: passed to a primitive whose function takes ``seed=``): a primitive's :class:`Option`
#: may not use one
RESERVED_OPTIONS = frozenset((
    "dataset", "graph", "rmat", "edge_factor", "seed", "directed", "undirected", "one_based",
    "relabel", "source", "backend", "repeat", "no_warmup", "verbose", "quiet", "help", "debug",
    "progress"))

#: what the refusal of a reserved option adds for the names a primitive may want
_RESERVED_HINTS = {"seed": " (gunpy run passes its --seed to a function that takes seed=: "
                           "drop the Option)"}

_registry = {}


def register_primitive(entry, *, replace=False):
    """Add ``entry`` (a :class:`Primitive`); returns it. A taken name needs ``replace=True``."""
    if not isinstance(entry, Primitive):
        raise TypeError(f"register_primitive takes a gunpy.registry.Primitive, got {entry!r}")
    if entry.name in _registry and not replace:
        raise ValueError(f"a primitive named {entry.name!r} is registered already "
                         f"(replace=True to replace it)")
    _registry[entry.name] = entry
    return entry


def unregister_primitive(name):
    """Remove a registered primitive (tests and notebooks that re-register)."""
    _registry.pop(name, None)


def primitive(name):
    """The entry named ``name``; ValueError listing the registered names otherwise."""
    entry = _registry.get(name)
    if entry is None and name in BUILTIN:
        importlib.import_module(f"gunpy.primitives.{name}")  # registers itself
        entry = _registry.get(name)
    if entry is None:
        _load_all()
        entry = _registry.get(name)
    if entry is None:
        raise ValueError(f"unknown primitive {name!r}; registered: {', '.join(names())}")
    return entry


def primitives():
    """Every entry, built-in ones first (in :data:`BUILTIN`'s order), then the others in
    registration order."""
    _load_all()
    order = {name: i for i, name in enumerate(BUILTIN)}
    return sorted(_registry.values(), key=lambda e: order.get(e.name, len(order)))


def names():
    """The registered primitives' names."""
    return [p.name for p in primitives()]


_plugins_loaded = False


def _load_all():
    """The built-in primitives, then those of installed packages that declare a
    ``gunpy.primitives`` entry point (a module that registers its entries on import)."""
    global _plugins_loaded
    for name in BUILTIN:
        if name not in _registry:
            importlib.import_module(f"gunpy.primitives.{name}")
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points
    for ep in entry_points(group="gunpy.primitives"):
        try:
            ep.load()
        except Exception as exc:  # a broken plugin never hides the built-in primitives
            import warnings
            warnings.warn(f"gunpy: the primitive plugin {ep.name!r} ({ep.value}) failed to "
                          f"load: {exc}")
