"""Result objects: NumPy arrays, the run's statistics, and conversions."""

import math
from dataclasses import dataclass, field

import numpy as np

from gunpy._inputs import is_device_array

__all__ = ["Stats", "Result", "component_edges", "reached_edges"]


def component_edges(G, reached):
    """Graph500's ``m`` for a traversal: the edges of the reached component (``reached``:
    a boolean array), each undirected edge counted once."""
    total = int(G.out_degrees()[reached].sum())
    return total if G.directed else total // 2


def reached_edges(G, ids):
    """:func:`component_edges` of the vertices with ``ids >= 0`` (a run's depth or parent
    array, -1 unreached). A graph in device memory and ``ids`` there are counted there:
    no copy of either to the host."""
    if G.on_device and is_device_array(ids):
        from gunpy.backends import get_backend
        from gunpy.backends.interop import reached_edges as count
        backend = get_backend("cuda")
        total = count(backend, backend.adopt(G)[0], ids)
        return total if G.directed else total // 2
    return component_edges(G, np.asarray(ids) >= 0)


@dataclass
class Stats:
    """What a run did: iterations, edges visited, time, and a per-iteration log.

    ``edges_visited`` counts the edges the operators examined (Gunrock's count: a
    pull level that stops at the first visited in-neighbour examines few), and
    :attr:`mteps` divides it by the time; for a traversal from a source,
    :attr:`graph500_mteps` divides the reached component's edges instead
    (Graph500's TEPS, what most papers report). :meth:`summary` gives both.

    ``per_iteration`` holds one dict per iteration with the keys ``iteration``,
    ``frontier`` (input frontier size), ``edges`` (edges the operators visited),
    ``direction`` and ``strategy``: the data to plot when asking why a run was
    fast or slow.

    Levels that ran fused, many to a call (:mod:`gunpy.operators.levels`), are
    kept as one block of (size, edges) rows until ``per_iteration`` is first
    read: a road network's thousand levels would otherwise cost a thousand
    dicts in every run, read or not.
    """

    backend: str = ""
    iterations: int = 0
    edges_visited: int = 0
    elapsed_ms: float = 0.0
    load_balance: str = ""
    direction: str = ""
    extra: dict = field(default_factory=dict)
    #: the records, with :class:`_FusedLevels` blocks not yet expanded (``_blocks`` of them)
    _records: list = field(default_factory=list, repr=False)
    _blocks: int = field(default=0, repr=False)

    def __init__(self, backend="", iterations=0, edges_visited=0, elapsed_ms=0.0,
                 load_balance="", direction="", per_iteration=(), extra=None):
        self.backend, self.iterations, self.edges_visited = backend, iterations, edges_visited
        self.elapsed_ms, self.load_balance, self.direction = elapsed_ms, load_balance, direction
        self.extra = {} if extra is None else extra
        self._records, self._blocks = list(per_iteration), 0
        self._graph500_edges = None

    @property
    def per_iteration(self):
        """The list of per-iteration records (a list: append to it, index it)."""
        if self._blocks:
            self._records = [rec for item in self._records
                             for rec in (item.expand() if isinstance(item, _FusedLevels)
                                         else (item,))]
            self._blocks = 0
        return self._records

    @per_iteration.setter
    def per_iteration(self, records):
        self._records, self._blocks = list(records), 0

    def log(self, record):
        """Append one iteration's record (the enactors' way in: no block is expanded)."""
        self._records.append(record)

    def log_levels(self, first, levels, counted, direction="push", strategy="fused"):
        """Append fused levels ``first, first+1, ...``: ``levels`` holds their (frontier
        size, edges) rows; ``counted``: the records carry launch/sync/upload counts
        (none of their own: their call's are in the record before them); ``direction``
        and ``strategy``: their call's (BC's backward levels pull)."""
        self._records.append(_FusedLevels(first, levels, counted, direction, strategy))
        self._blocks += 1

    @property
    def mteps(self):
        """Edges visited (examined by the operators) per microsecond: million traversed
        edges per second, Gunrock's convention. A direction-optimising BFS examines few
        edges in its pull levels, so this is below :attr:`graph500_mteps`."""
        if self.elapsed_ms <= 0:
            return math.nan
        return self.edges_visited / (self.elapsed_ms * 1e3)

    @property
    def graph500_edges(self):
        """The edges of the reached component, each undirected edge once (Graph500's
        ``m`` for TEPS), for a traversal from a source (BFS, SSSP); None otherwise."""
        edges = self.__dict__.get("_graph500_edges")
        if callable(edges):  # counted when first read, not in every run
            edges = self._graph500_edges = edges()
        return edges

    @graph500_edges.setter
    def graph500_edges(self, edges):
        """An int, or a function that counts them when first read."""
        self._graph500_edges = edges

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_graph500_edges"] = self.graph500_edges  # counted now: a function does not pickle
        return state

    @property
    def graph500_mteps(self):
        """:attr:`graph500_edges` per microsecond: TEPS as Graph500 (and most papers)
        count them, in millions; NaN where it does not apply."""
        edges = self.graph500_edges
        if edges is None or self.elapsed_ms <= 0:
            return math.nan
        return edges / (self.elapsed_ms * 1e3)

    def summary(self):
        parts = [f"backend={self.backend}", f"iterations={self.iterations}",
                 f"edges_visited={self.edges_visited}", f"time={self.elapsed_ms:.3f} ms"]
        if self.graph500_edges is not None:
            parts.append(f"Graph500 MTEPS={self.graph500_mteps:.1f}")
        if self.edges_visited:
            parts.append(f"MTEPS={self.mteps:.1f}")
        if self.load_balance:
            parts.append(f"load_balance={self.load_balance}")
        if self.direction:
            parts.append(f"direction={self.direction}")
        for k, v in self.extra.items():
            parts.append(f"{k}={v}")
        return ", ".join(parts)

    def __repr__(self):
        return f"Stats({self.summary()})"


class _FusedLevels:
    """Levels a fused call ran after its first: each one's record, made when read."""

    __slots__ = ("first", "levels", "counted", "direction", "strategy")

    def __init__(self, first, levels, counted, direction, strategy):
        self.first, self.levels, self.counted = first, levels, counted
        self.direction, self.strategy = direction, strategy

    def expand(self):
        counts = {"launches": 0, "syncs": 0, "uploads": 0} if self.counted else {}
        return [{"frontier": n, "edges": m, "direction": self.direction,
                 "strategy": self.strategy, "ms": 0.0, "iteration": self.first + i, **counts,
                 "allocs": 0}
                for i, (n, m) in enumerate(self.levels.tolist())]


class Result:
    """What a primitive returns: named per-vertex arrays, the run's ``stats`` and the graph.

    Parameters
    ----------
    graph : gunpy.Graph
        The graph the arrays describe (its ``node_labels`` key :meth:`to_dict`).
    stats : gunpy.Stats, optional
        The run's statistics (an enactor's :meth:`~gunpy.Enactor.enact` returns them).
    fields : sequence of str, optional
        The array fields, in order (default: the keyword arrays' names, in order).
    main : str, optional
        The field :meth:`to_dict` and :meth:`to_networkx` give by default (default:
        the first field).
    unreached : scalar or dict, optional
        The value that marks a vertex the run did not reach (``-1`` for depths,
        ``inf`` for distances, NaN works too), or ``{field: value}``: such entries are
        left out of :meth:`to_dict` and :meth:`to_networkx`. Default: none left out.
    **arrays
        The fields' arrays (one entry per vertex), as attributes: NumPy arrays, or
        numba device arrays, kept on the device (:meth:`device_array`, :meth:`to_cupy`,
        :meth:`to_torch`, :meth:`to_dlpack`) and copied to NumPy when the attribute is
        first read.

    A subclass may set ``fields``, ``main`` and ``unreached`` as class attributes instead
    (the built-in results do) and override :meth:`is_unreached` for other rules.

    Examples
    --------
    >>> import numpy as np, gunpy
    >>> G = gunpy.generators.path(4)
    >>> r = gunpy.Result(G, depth=np.array([0, 1, -1, -1]), unreached=-1)
    >>> r.fields, r.main, r.to_dict()
    (('depth',), 'depth', {0: 0, 1: 1})
    >>> r
    Result(depth=<int64[4]>, stats=backend=, iterations=0, edges_visited=0, time=0.000 ms)
    """

    _fields = ()
    _main = None
    #: the value (or ``{field: value}``) that marks an unreached vertex; None: none
    unreached = None

    def __init__(self, graph, stats=None, *, fields=None, main=None, unreached=None, **arrays):
        self.graph = graph
        self.stats = Stats() if stats is None else stats
        for name, arr in arrays.items():
            if is_device_array(arr):
                self.__dict__.setdefault("_on_device", {})[name] = arr
            else:
                setattr(self, name, arr)
        if fields is not None or (arrays and not type(self)._fields):
            self._fields = tuple(arrays if fields is None else fields)
        kept = self.__dict__.get("_on_device", ())
        missing = [f for f in self._fields if f not in kept and not hasattr(self, f)]
        if missing:
            raise TypeError(f"{type(self).__name__}: no array given for field(s) "
                            f"{', '.join(missing)}")
        if main is not None:
            self._main = main
        if self._main is None and self._fields:
            self._main = self._fields[0]
        if self._main is not None and self._main not in self._fields:
            raise ValueError(f"main={self._main!r} is not one of the fields {self._fields}")
        if unreached is not None:
            self.unreached = unreached

    def __getattr__(self, name):
        # a field computed on a device: copied to NumPy when first read as an attribute
        kept = self.__dict__.get("_on_device")
        if kept is None or name not in kept:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        arr = kept[name].copy_to_host()
        setattr(self, name, arr)
        return arr

    def __getstate__(self):
        for name in list(self.__dict__.get("_on_device", ())):
            getattr(self, name)  # pickled as NumPy: device memory is per process
        state = self.__dict__.copy()
        state.pop("_on_device", None)
        return state

    def device_array(self, field=None):
        """``field`` (default :attr:`main`) in GPU memory, as a numba device array (it has
        ``__cuda_array_interface__``, so CuPy, PyTorch and JAX read it in place).

        A run on the CUDA backend leaves its arrays on the device: this is that array,
        no copy (and ``r.depth`` copies it to NumPy the first time it is read, once). A
        run on a host backend's result is uploaded here (a copy each call).
        """
        name = self._field(field)
        kept = self.__dict__.get("_on_device", {})
        if name in kept:
            return kept[name]
        from numba import cuda
        return cuda.to_device(np.ascontiguousarray(getattr(self, name)))

    def to_cupy(self, field=None):
        """``field`` (default :attr:`main`) as a CuPy array: the device array itself (no
        copy) after a run on the CUDA backend, an upload otherwise. Needs CuPy."""
        try:
            import cupy
        except ImportError as exc:
            raise ImportError("to_cupy() needs CuPy: pip install cupy-cuda13x") from exc
        return cupy.asarray(self.device_array(field))

    def to_torch(self, field=None):
        """``field`` (default :attr:`main`) as a PyTorch tensor over the same memory: a
        CUDA tensor after a run on the CUDA backend, a CPU tensor after a run on the host
        (``torch.from_numpy``). Needs PyTorch."""
        try:
            import torch
        except ImportError as exc:
            raise ImportError("to_torch() needs PyTorch: pip install torch") from exc
        name = self._field(field)
        if name in self.__dict__.get("_on_device", {}):
            return torch.as_tensor(self.device_array(name), device="cuda")
        return torch.from_numpy(getattr(self, name))

    def to_dlpack(self, field=None):
        """``field`` (default :attr:`main`) as a DLPack producer, for
        ``torch.from_dlpack``, ``cupy.from_dlpack``, ``jax.dlpack.from_dlpack`` and
        every array API library: after a run on the CUDA backend, a
        :class:`gunpy.backends.dlpack.DLPackArray` over the device array itself (no
        copy; it also has ``__cuda_array_interface__``); after a run on a host backend,
        the NumPy array (host memory, which NumPy hands out through DLPack itself)."""
        name = self._field(field)
        if name in self.__dict__.get("_on_device", {}):
            from gunpy.backends.dlpack import DLPackArray
            return DLPackArray(self.device_array(name))
        return getattr(self, name)

    def _field(self, field):
        name = field or self._main
        if name not in self._fields:
            raise ValueError(f"{name!r} is not one of the fields {self._fields}")
        return name

    @property
    def fields(self):
        """The array fields, in order."""
        return tuple(self._fields)

    @property
    def main(self):
        """The field :meth:`to_dict` gives by default."""
        return self._main

    def is_unreached(self, name, arr):
        """A boolean array: the entries of field ``name`` (``arr``) that :meth:`to_dict`
        leaves out (by default those equal to :attr:`unreached`)."""
        mark = self.unreached.get(name) if isinstance(self.unreached, dict) else self.unreached
        arr = np.asarray(arr)
        if mark is None:
            return np.zeros(arr.shape[0], dtype=bool)
        if isinstance(mark, float) and math.isnan(mark):
            return np.isnan(arr)
        return arr == mark

    def _unreached(self, name, arr):  # the name subclasses overrode before is_unreached
        return self.is_unreached(name, arr)

    def to_dict(self, field=None):
        """``{node label: value}`` for ``field`` (default :attr:`main`), unreached
        vertices left out (:meth:`is_unreached`)."""
        name = field or self._main
        arr = getattr(self, name)
        labels = self.graph.labels()
        skip = self._unreached(name, arr)
        values = arr.tolist()
        return {labels[i]: values[i] for i in np.flatnonzero(~skip)}

    #: cuGraph's DataFrame column name for each field (``vertex`` is added first)
    _columns = {}

    #: fields that hold vertex ids (a BFS parent): :meth:`to_dataframe` writes them as node
    #: labels, as cuGraph does when it renumbers
    _vertex_fields = ()

    def to_dataframe(self):
        """A pandas DataFrame with cuGraph's column names (``vertex``, ``distance``, ...).

        ``vertex`` holds the node labels, and so do the columns of vertex ids (``predecessor``)
        where the graph has labels, missing where a vertex has none (unreached). Needs
        pandas.
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pandas is optional
            raise ImportError("to_dataframe() needs pandas: pip install pandas") from exc
        labels = self.graph.labels()
        cols = {"vertex": labels}
        for f in self._fields:
            arr = getattr(self, f)
            if f in self._vertex_fields and self.graph.node_labels is not None:
                arr = [labels[v] if v >= 0 else None for v in arr.tolist()]
            cols[self._columns.get(f, f)] = arr
        return pd.DataFrame(cols)

    def to_networkx(self, nxg=None, *, name=None):
        """Store the main field as a node attribute (``name``, default the field's name).

        On ``nxg`` (a networkx graph with the same nodes) or on ``G.to_networkx()``;
        unreachable vertices get no attribute. Returns the graph.
        """
        g = self.graph.to_networkx() if nxg is None else nxg
        import networkx as nx
        nx.set_node_attributes(g, self.to_dict(), name or self._main)
        return g

    def __repr__(self):
        kept = self.__dict__.get("_on_device", {})
        arrays = {f: kept[f] if f in kept else getattr(self, f) for f in self._fields}
        fields = ", ".join(f"{f}=<{a.dtype}[{a.shape[0]}]{' on device' if f in kept else ''}>"
                           for f, a in arrays.items())
        return f"{type(self).__name__}({fields}, stats={self.stats.summary()})"
