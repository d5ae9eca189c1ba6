"""Problems: the per-vertex (and per-edge) state of one primitive.

A :class:`Problem` owns the arrays a primitive computes (depths, distances,
ranks...), allocates them once in :meth:`Problem.init`, resets them for each
run in :meth:`Problem.reset`, and copies results back in :meth:`Problem.extract`.
Its :attr:`Data` namedtuple names the attributes that functors see as ``data``.
"""

import operator
import weakref
from collections import namedtuple

import numpy as np

from gunpy.backends import get_backend
from gunpy.backends.base import Backend
from gunpy.graph import Graph

__all__ = ["Problem", "WeightSummary", "weight_summary"]

#: what a primitive asks of a graph's weights before a run, computed once per weights array
WeightSummary = namedtuple("WeightSummary", "valid first_bad min mean")

#: graph -> (its values array, WeightSummary): dropped with the graph, renewed with new weights
_weight_summaries = weakref.WeakKeyDictionary()


def weight_summary(graph):
    """Whether ``graph``'s weights are all finite and non-negative, the first edge that is
    not (``first_bad``, -1 if none), their minimum and their mean; ``None`` when unweighted.

    A graph's weights are read-only and a new ``G.values`` is a new array, so the
    passes over every edge are made once per weights array, not once per call
    (an SSSP call on RMAT-18 spent ~80 ms of a loaded 2-core machine on them).

    >>> import gunpy
    >>> from gunpy.problem import weight_summary
    >>> G = gunpy.Graph.from_edges([0, 1], [1, 2], [0.5, 2.0], num_vertices=3)
    >>> weight_summary(G)
    WeightSummary(valid=True, first_bad=-1, min=0.5, mean=1.25)
    >>> G.values = [0.5, float("nan")]
    >>> weight_summary(G).valid, weight_summary(G).first_bad
    (False, 1)
    """
    dev = graph._on_device
    on_device = dev is not None and graph._values is None  # not copied down
    values = dev.values if on_device else graph.values
    if values is None:
        return None
    kept = _weight_summaries.get(graph)
    if kept is not None and kept[0] is values:
        return kept[1]
    summary = _device_weight_summary(values) if on_device else None
    if summary is None:  # a device graph's bad weights copied down, to name the first
        values = graph.values
        summary = _host_weight_summary(values)
    _weight_summaries[graph] = (values, summary)
    return summary


def _host_weight_summary(values):
    if values.size == 0:
        return WeightSummary(True, -1, np.inf, np.nan)
    lo, hi = values.min(), values.max()  # NaN propagates: not (lo >= 0) then
    valid = bool(lo >= 0 and hi < np.inf)
    bad = -1 if valid else int(np.flatnonzero(~np.isfinite(values) | (values < 0))[0])
    with np.errstate(over="ignore"):  # weights near 1e308: an inf mean, no warning
        mean = float(values.mean())
    return WeightSummary(valid, bad, float(lo), mean)


def _device_weight_summary(values):
    """:class:`WeightSummary` of weights in device memory, by three reductions there; None
    when one is bad (NaN, infinite or negative: the host then names it) or there are none."""
    if values.shape[0] == 0:
        return None
    from gunpy.backends import get_backend
    from gunpy.operators.reduce import reduce_array
    backend = get_backend("cuda")
    lo, hi, total = (reduce_array(backend, values, op=op) for op in ("min", "max", "sum"))
    if not (lo >= 0 and hi < np.inf and total == total):  # a NaN makes the sum NaN
        return None
    return WeightSummary(True, -1, float(lo), float(total) / values.shape[0])


#: Data class -> the getter of its fields from a problem (dropped with the class)
_getters = weakref.WeakKeyDictionary()


def _getter(Data, owner):
    """One C call that reads ``Data``'s fields off a problem (instead of a generator)."""
    if Data is None:
        raise TypeError(f"{owner}.Data is not set: define a namedtuple "
                        "class naming the arrays the functors use")
    get = _getters.get(Data)
    if get is None:
        fields = Data._fields
        get = _getters[Data] = operator.attrgetter(*fields) if len(fields) > 1 else \
            (lambda obj, _f=fields: tuple(getattr(obj, f) for f in _f))
    return get


class Problem:
    """Base class for a primitive's state.

    Subclasses set ``Data`` (a namedtuple class whose fields are attribute
    names of the problem: device arrays or scalars) and override ``init``,
    ``reset`` and ``extract``.

    Parameters
    ----------
    graph : gunpy.Graph
    backend : {"auto", "cuda", "cpu"} or backend object
    **options
        Passed to :meth:`init` (a problem's own settings, e.g. PageRank's ``dtype``).
    """

    Data = None

    def __init__(self, graph, *, backend="auto", **options):
        if not isinstance(graph, Graph):
            raise TypeError(f"expected a gunpy.Graph, got {type(graph).__name__}; build one "
                            "with Graph.from_edges / from_scipy / from_networkx")
        self.graph = graph
        self.backend = backend if isinstance(backend, Backend) else get_backend(backend)
        self.num_vertices = graph.num_vertices
        self.num_edges = graph.num_edges
        self.init(**options)

    # -- lifecycle (override) ---------------------------------------------------
    def init(self):
        """Allocate arrays once per problem (with the constructor's ``**options``)."""

    def reset(self, **params):
        """Prepare for one run (fill arrays, store the source...)."""

    def extract(self):
        """Copy results to the host and return them."""
        raise NotImplementedError

    # -- helpers ----------------------------------------------------------------
    def data(self):
        """The functors' ``data``: :attr:`Data` filled from this problem's attributes."""
        # called for every operator of every level: the getter is kept on the problem
        # (a plain attribute read; a WeakKeyDictionary look-up cost ~3 us a call)
        kept = self.__dict__.get("_data_getter")
        if kept is None or kept[0] is not self.Data:
            kept = self._data_getter = (self.Data, _getter(self.Data, type(self).__name__))
        try:
            return tuple.__new__(kept[0], kept[1](self))
        except AttributeError:
            missing = [f for f in self.Data._fields if not hasattr(self, f)]
            if not missing:
                raise
            raise AttributeError(
                f"{type(self).__name__}.Data ({self.Data.__name__}) names "
                f"{', '.join(repr(f) for f in missing)}, but the problem has no such "
                f"attribute: set self.{missing[0]} in init() or reset(), or drop the field "
                f"from {self.Data.__name__}") from None

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

    def take(self, arr):
        """``arr`` for a result to keep: on a host backend the array itself, not a copy
        (the problem gives it up: do not reset or run it again), a host copy elsewhere.
        What a primitive's function uses once its problem is done (a road network's BFS
        copied two arrays of 114,599 items a call for nothing: ~80 us of ~2.5 ms)."""
        return self.backend.take(arr)

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
        return self.graph.index_dtype
