"""Problems: the per-vertex (and per-edge) state of one primitive.

A :class:`Problem` owns the arrays a primitive computes (depths, distances,
ranks...), allocates them once in :meth:`Problem.init`, resets them for each
run in :meth:`Problem.reset`, and copies results back in :meth:`Problem.extract`.
Its :attr:`Data` namedtuple names the attributes that functors see as ``data``.
"""

import operator
import weakref

import numpy as np

from gunpy.backends import get_backend
from gunpy.backends.base import Backend
from gunpy.graph import Graph

__all__ = ["Problem"]

#: Data class -> the getter of its fields from a problem (dropped with the class)
_getters = weakref.WeakKeyDictionary()


class Problem:
    """Base class for a primitive's state.

    Subclasses set ``Data`` (a namedtuple class whose fields are attribute
    names of the problem: device arrays or scalars) and override ``init``,
    ``reset`` and ``extract``.

    Parameters
    ----------
    graph : gunpy.Graph
    backend : {"auto", "cuda", "cpu"} or backend object
    """

    Data = None

    def __init__(self, graph, *, backend="auto"):
        if not isinstance(graph, Graph):
            raise TypeError(f"expected a gunpy.Graph, got {type(graph).__name__}; build one "
                            "with Graph.from_edges / from_scipy / from_networkx")
        self.graph = graph
        self.backend = backend if isinstance(backend, Backend) else get_backend(backend)
        self.num_vertices = graph.num_vertices
        self.num_edges = graph.num_edges
        self.init()

    # -- lifecycle (override) ---------------------------------------------------
    def init(self):
        """Allocate arrays once per problem."""

    def reset(self, **params):
        """Prepare for one run (fill arrays, store the source...)."""

    def extract(self):
        """Copy results to the host and return them."""
        raise NotImplementedError

    # -- helpers ----------------------------------------------------------------
    def data(self):
        """The functors' ``data``: :attr:`Data` filled from this problem's attributes."""
        Data = self.Data
        if Data is None:
            raise TypeError(f"{type(self).__name__}.Data is not set: define a namedtuple "
                            "class naming the arrays the functors use")
        get = _getters.get(Data)
        if get is None:
            # one C call per operator call instead of a generator over the fields
            fields = Data._fields
            get = _getters[Data] = operator.attrgetter(*fields) if len(fields) > 1 else \
                (lambda obj, _f=fields: tuple(getattr(obj, f) for f in _f))
        return tuple.__new__(Data, get(self))

    def vertex_array(self, dtype, fill=None):
        """A device array with one slot per vertex (filled when ``fill`` is given)."""
        if fill is None:
            return self.backend.empty(self.num_vertices, dtype)
        return self.backend.full(self.num_vertices, fill, dtype)

    def edge_array(self, dtype, fill=None):
        """A device array with one slot per stored edge."""
        if fill is None:
            return self.backend.empty(self.num_edges, dtype)
        return self.backend.full(self.num_edges, fill, dtype)

    def to_host(self, arr):
        return self.backend.to_host(arr)

    def check_source(self, source):
        """Validate a source vertex id and return it as an int."""
        if isinstance(source, (bool, np.bool_)) or not isinstance(source, (int, np.integer)):
            raise TypeError(f"source must be an integer vertex id, got {source!r}")
        if not 0 <= int(source) < self.num_vertices:
            raise IndexError(f"source {int(source)} is out of range for a graph with "
                             f"{self.num_vertices} vertices")
        return int(source)

    @property
    def index_dtype(self):
        return self.graph.column_indices.dtype
