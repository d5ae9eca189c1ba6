"""gunpy: a Numba-CUDA graph traversal framework in the Gunrock advance/filter style.

Frontier-centric operators (advance, filter, compute) compiled with
``numba.cuda`` (or numba's parallel CPU target) run user functors; BFS, SSSP,
BC, CC, PageRank and triangle counting are built on them in :mod:`gunpy.primitives`.

``import gunpy`` loads nothing but this table: each name below is imported the
first time it is used (``gunpy.Graph`` loads the graph model, ``gunpy.bfs`` the
BFS primitive and the operators it runs), and nothing is written anywhere.
"""
import importlib
import importlib.util

from gunpy._version import __version__

#: name -> the module that defines it (imported on first use)
_LAZY = {
    "INVALID": "gunpy.errors", "GraphFormatError": "gunpy.errors",
    "Graph": "gunpy.graph",
    "read_mtx": "gunpy.io", "read_edgelist": "gunpy.io", "read_metis": "gunpy.io",
    "Functor": "gunpy.functor", "Problem": "gunpy.problem", "Enactor": "gunpy.enactor",
    "Frontier": "gunpy.frontier", "Result": "gunpy.result", "Stats": "gunpy.result",
    "triangle_count": "gunpy.primitives.triangles",
}
#: submodules reachable as attributes (``gunpy.datasets.load``)
_SUBMODULES = ("datasets", "generators", "atomics", "registry", "backends", "operators",
               "primitives", "blas", "dist", "testing", "nx_backend", "io", "graph", "errors")


def _builtin_primitives():
    from gunpy.registry import BUILTIN
    return BUILTIN


__all__ = ["__version__", "Graph", "GraphFormatError", "INVALID", "read_mtx", "read_edgelist",
           "read_metis",
           "datasets", "generators", "atomics", "Functor", "Problem", "Enactor", "Frontier",
           "Result", "Stats", "registry", "triangle_count", *_builtin_primitives()]


def __getattr__(name):
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif name in _SUBMODULES or importlib.util.find_spec(f"gunpy.{name}") is not None:
        # a submodule (``from gunpy import _csr`` asks here first): imported, nothing else
        value = importlib.import_module(f"gunpy.{name}")
    elif name.startswith("_"):
        raise AttributeError(f"module 'gunpy' has no attribute {name!r}")
    else:
        # a primitive: built in (gunpy.bfs), or registered by a plugin or at run time
        from gunpy import registry
        try:
            value = registry.primitive(name).function
        except ValueError:
            raise AttributeError(f"module 'gunpy' has no attribute {name!r}") from None
        if name not in registry.BUILTIN:
            return value  # a later registration may replace it: not cached
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
