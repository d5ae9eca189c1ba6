"""gunpy: a Numba-CUDA graph traversal framework in the Gunrock advance/filter style.

Frontier-centric operators (advance, filter, compute) compiled with
``numba.cuda`` (or numba's parallel CPU target) run user functors; BFS, SSSP,
BC, CC, PageRank and triangle counting are built on them in :mod:`gunpy.primitives`.
"""
from gunpy._version import __version__
from gunpy.errors import INVALID, GraphFormatError
from gunpy.graph import Graph
from gunpy.io import read_edgelist, read_mtx
from gunpy import datasets, generators
from gunpy import atomics
from gunpy.functor import Functor
from gunpy.problem import Problem
from gunpy.enactor import Enactor
from gunpy.frontier import Frontier
from gunpy.result import Result, Stats
from gunpy import registry
from gunpy.primitives.triangles import triangle_count

__all__ = ["__version__", "Graph", "GraphFormatError", "INVALID", "read_mtx", "read_edgelist",
           "datasets", "generators", "atomics", "Functor",
           "Problem", "Enactor", "Frontier", "Result", "Stats", "registry", "triangle_count"]

# every registered primitive as gunpy.NAME (bfs, sssp, bc, cc, pagerank, triangles, ...)
for _entry in registry.primitives():
    globals()[_entry.name] = _entry.function
    __all__.append(_entry.name)
del _entry


def __getattr__(name):
    # a primitive registered after import (gunpy.registry.register_primitive) is gunpy.NAME too
    entry = registry._registry.get(name)
    if entry is None:
        raise AttributeError(f"module 'gunpy' has no attribute {name!r}")
    return entry.function
