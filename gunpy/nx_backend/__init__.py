"""gunpy as a NetworkX backend: ``nx.bfs_edges(G, 0, backend="gunpy")`` and friends.

Registered through the ``networkx.backends`` entry point (like nx-cugraph and
graphblas-algorithms), so networkx dispatches these functions to gunpy when a
call says ``backend="gunpy"`` (or ``nx.config.backend_priority`` lists it): the functions
of ``_functions.py`` (BFS and reachability, components, shortest paths, centrality, link
analysis, link prediction, clustering, assortativity, communities, cores, spanning trees,
tree recognition, structure, ego graphs, complements and reverses),
each with what it supports in ``docs/networkx.md``.

Results are exactly networkx's (``louvain_communities`` excepted: another partition of
about the same modularity, see its entry below): the same dict / generator / list shapes, the
original node labels, unreachable nodes left out, and the same iteration order
where networkx defines one (BFS edges and layers follow networkx's queue order,
which is rebuilt from gunpy's depths level by level in NumPy; Dijkstra's lengths and
paths its heap's pop order and parents, rebuilt from gunpy's distances). Calls that use
an option gunpy does not implement (``sort_neighbors``, a weight function,
betweenness with ``endpoints=True``, several sources, multigraphs where parallel edges change
the answer) or weights gunpy's float64 would not answer exactly (zero or negative where
Dijkstra is asked, NaN, infinite, non-numeric or NumPy scalars where networkx sums them,
integers whose sums pass 2**53) are declined by :func:`can_run`; networkx then runs them
itself where it chose gunpy (``nx.config.backend_priority``), and a call that said
``backend="gunpy"`` raises networkx's ``NotImplementedError``. The audit of every function
against these inputs is ``docs/networkx.md``'s "What gunpy declines".

One module per family (``traversal``, ``paths``, ``allpairs``, ``components``,
``centrality``, ``cluster``, ``community``, ``tree``, ``structure``, ``linkpred``,
``subgraphs``, ``assortativity``); ``dispatch`` holds ``can_run``, ``_functions`` the table
``_FUNCTIONS`` of what gunpy answers.
The gunpy backend used is ``$GUNPY_NX_BACKEND`` (``auto``, ``cpu`` or ``cuda``;
default ``auto``).
"""

from ._functions import _FUNCTIONS


def get_info():
    """networkx's ``networkx.backend_info`` entry point."""
    return {
        "backend_name": "gunpy",
        "project": "gunpy",
        "package": "gunpy",
        "url": "https://github.com/gunpy/gunpy",
        "short_summary": "GPU (numba.cuda) and parallel CPU graph traversal, Gunrock-style",
        "functions": {name: {"additional_docs": doc} for name, doc in _FUNCTIONS.items()},
    }


# networkx, imported by what follows, may call get_info while this package is importing

import gunpy  # noqa: E402,F401  (tests patch gunpy.<primitive> through this name)

from ._graph import GunpyGraph, convert_from_nx, convert_to_nx
from . import (allpairs, assortativity, centrality, cluster, community, components, linkpred,
               paths, structure, subgraphs, traversal, tree)
from .dispatch import can_run, should_run

__all__ = ["BackendInterface", "GunpyGraph", "get_info"]


class BackendInterface:
    """What networkx loads from the ``networkx.backends`` entry point."""

    convert_from_nx = staticmethod(convert_from_nx)
    convert_to_nx = staticmethod(convert_to_nx)
    can_run = staticmethod(can_run)
    should_run = staticmethod(should_run)

    @staticmethod
    def on_start_tests(items):
        """networkx's test-suite hook: nothing to mark; unsupported calls are declined."""


_FAMILIES = (traversal, paths, allpairs, components, centrality, cluster, community, tree,
             structure, linkpred, subgraphs, assortativity)
for _name in _FUNCTIONS:  # every dispatched function, under its networkx name
    _family = next(m for m in _FAMILIES if hasattr(m, _name))
    setattr(BackendInterface, _name, staticmethod(getattr(_family, _name)))
