"""What every backend provides to the operators."""

import importlib
from collections import namedtuple

import numpy as np

__all__ = ["Backend", "DeviceGraph", "operator_table", "OPERATORS"]

#: every operator gunpy's framework calls, and where gunpy's own backends implement it:
#: ``{}`` is the backend's prefix (``"cpu"``, ``"cuda"``). A backend's
#: :attr:`Backend.operators` maps each name to ``"module:function"``.
OPERATORS = {
    "advance.thread_mapped": "gunpy.operators.advance.thread_mapped:{}_execute",
    "advance.twc": "gunpy.operators.advance.twc:{}_execute",
    "advance.merge_path": "gunpy.operators.advance.merge_path:{}_execute",
    "advance.pull": "gunpy.operators.advance.pull:{}_execute",
    "advance.levels": "gunpy.operators.levels:{}_levels",
    "filter.predicated": "gunpy.operators.filter.predicated:{}_execute",
    "filter.cull": "gunpy.operators.filter.cull:{}_execute",
    "compute": "gunpy.operators.compute:{}_execute",
    "neighbor_reduce": "gunpy.operators.neighbor_reduce:{}_execute",
    "intersect": "gunpy.operators.intersect:{}_execute",
    "near_far.split": "gunpy.operators.priority_queue:{}_split",
    "near_far.min_priority": "gunpy.operators.priority_queue:{}_min_priority",
    "near_far.fused": "gunpy.operators.priority_queue:{}_fused",
    "bitmap.queue_to_bitmap": "gunpy.operators.bitmap:{}_queue_to_bitmap",
    "bitmap.bitmap_to_queue": "gunpy.operators.bitmap:{}_bitmap_to_queue",
    "bitmap.or_into": "gunpy.operators.bitmap:{}_or_into",
    "bitmap.popcount": "gunpy.operators.bitmap:{}_popcount",
    "bitmap.invert": "gunpy.operators.bitmap:{}_invert",
    "degree_sum": "gunpy.operators.common:{}_degree_sum",
    "reduce": "gunpy.operators.reduce:{}_reduce",
    "iota": "gunpy.operators.reduce:{}_iota",
}


def operator_table(prefix, **extra):
    """gunpy's own implementations for backend ``prefix`` (plus ``extra``): a backend's table."""
    table = {name: where.format(prefix) for name, where in OPERATORS.items()}
    table.update(extra)
    return table


_resolved = {}

#: The arrays of a graph as one backend sees them. ``values`` is a one-element
#: dummy when the graph is unweighted (kernels are specialised on ``weighted``).
#: The ``in_*`` arrays are the CSC view, or one-element dummies until a pull
#: traversal asks for them; ``no_in_edges`` is a bitmap (32-bit words) of the
#: vertices with no in-edges, which pull skips (they can never find a parent).
#: ``edge_sources`` (the COO row of every edge) is built when an edge frontier
#: is filtered, or a one-element dummy.
DeviceGraph = namedtuple(
    "DeviceGraph",
    "num_vertices num_edges weighted row_offsets column_indices values "
    "in_offsets in_indices in_edge_ids no_in_edges has_csc edge_sources has_coo")


class Backend:
    """Arrays, launch configuration and kernel compilation for one target.

    A backend also says how it runs each operator: :attr:`operators` maps an
    operator name (the keys of :data:`OPERATORS`) to ``"module:function"``,
    imported on first use by :meth:`operator`. The operators never ask which
    backend they are on; a new backend is one module with its array methods
    and its table (an operator it leaves out raises ``NotImplementedError``).
    """

    name = None
    #: operator name -> ``"module:function"`` (see :func:`operator_table`)
    operators = {}
    #: :meth:`gunpy.Enactor.advance_near_far` and :meth:`gunpy.Enactor.advance_filter`
    #: fuse steps (levels) while their work stays under this many edges
    fuse_below = 4096

    def operator(self, name, default=None):
        """This backend's implementation of operator ``name``.

        ``default``: returned when the table has no entry (``None`` raises
        ``NotImplementedError`` naming the backend and the operator).
        """
        key = (type(self), name)
        fn = _resolved.get(key)
        if fn is None:
            where = self.operators.get(name)
            if where is None:
                if default is not None:
                    return default
                raise NotImplementedError(f"the {self.name!r} backend does not implement "
                                          f"operator {name!r}")
            module, _, attr = where.partition(":")
            fn = _resolved[key] = getattr(importlib.import_module(module), attr)
        return fn

    # -- arrays -----------------------------------------------------------------
    def asarray(self, host):
        """A device copy of a host array."""
        raise NotImplementedError

    def empty(self, n, dtype):
        raise NotImplementedError

    def full(self, n, value, dtype):
        raise NotImplementedError

    def zeros(self, n, dtype):
        return self.full(n, 0, dtype)

    def fill(self, arr, value):
        raise NotImplementedError

    def to_host(self, arr):
        """A NumPy copy of a device array."""
        raise NotImplementedError

    def read(self, arr, i=0):
        """One element of a device array, as a Python number."""
        raise NotImplementedError

    def write(self, arr, i, value):
        raise NotImplementedError

    def copy_in(self, arr, at, host):
        """Copy the host array ``host`` into ``arr[at:at + len(host)]``."""
        raise NotImplementedError

    def head_to_host(self, arr, n):
        """A NumPy copy of ``arr[:n]``."""
        raise NotImplementedError

    def read_head(self, arr, n):
        """``arr[:n]`` as host values in one read (a few counters at once: one sync)."""
        return self.head_to_host(arr, n)

    def synchronize(self):
        pass

    #: kernel launches, host synchronisations (device-to-host copies and explicit
    #: waits) and small host-to-device writes so far; a backend that launches
    #: kernels counts them, and an Enactor logs each iteration's share
    launches = syncs = uploads = 0
    counts_launches = False

    def counts(self):
        """``(launches, syncs, uploads)`` so far, or None where the backend does not count."""
        if not self.counts_launches:
            return None
        return self.launches, self.syncs, self.uploads

    def work_splits(self):
        """Yield once per way this backend can cut work (warm-up runs a call under each),
        so that the kernels of any default call are among those compiled."""
        yield

    def copy(self, src, dst, n):
        """``dst[:n] = src[:n]`` between two arrays of this backend."""
        raise NotImplementedError

    # -- graphs -----------------------------------------------------------------
    def graph(self, G, *, csc=False, coo=False):
        """The backend's (cached) copy of ``G``.

        ``csc=True`` adds the reverse view (pull), ``coo=True`` the source of
        every edge (edge frontiers). Each is copied once and kept in
        ``G``'s :class:`~gunpy.graph.DeviceCache`, keyed by this backend object (never its name: two
        backends called "cuda" get separate copies). The graph drops the copy
        when its arrays are rebound (they are read-only in place) or on
        :meth:`~gunpy.Graph.release_device`.
        """
        cached = G._device.graph(self)
        if cached is not None and (cached.has_csc or not csc) and (cached.has_coo or not coo):
            return cached
        try:
            return self._upload(G, cached, csc, coo)
        except MemoryError as exc:
            raise MemoryError(self._graph_memory_message(G, csc, coo)) from exc

    def memory_info(self):
        """``(free, total)`` bytes of device memory, or None where it does not apply."""
        return None

    def _graph_memory_message(self, G, csc, coo):
        n, m = G.num_vertices, G.num_edges
        idx = G.column_indices.dtype.itemsize
        parts = {"CSR": 8 * (n + 1) + idx * m + (8 * m if G.values is not None else 0)}
        if csc:
            parts["reverse graph"] = 8 * m + (0 if not G.directed else 8 * (n + 1) + idx * m)
        if coo:
            parts["edge sources"] = idx * m
        need = sum(parts.values())
        detail = ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in parts.items())
        msg = (f"the graph ({n:,} vertices, {m:,} edges) needs about {need / 2**20:,.1f} MiB "
               f"on the {self.name} device ({detail}), plus working frontiers")
        info = self.memory_info()
        if info is not None:
            msg += f"; {info[0] / 2**20:,.0f} MiB of {info[1] / 2**20:,.0f} MiB are free"
        return msg

    def _upload(self, G, cached, csc, coo):
        if cached is not None and cached.has_csc and not csc:
            csc = True
        if cached is not None and cached.has_coo:
            coo = True
        dummy_f = np.zeros(1, dtype=np.float64)
        dummy_i = np.zeros(1, dtype=G.column_indices.dtype)
        if cached is None:
            ro = self.asarray(G.row_offsets)
            ci = self.asarray(G.column_indices)
            vals = self.asarray(G.values if G.values is not None else dummy_f)
        else:
            ro, ci, vals = cached.row_offsets, cached.column_indices, cached.values
        if csc and cached is not None and cached.has_csc:
            io, ii, ie, nie = (cached.in_offsets, cached.in_indices, cached.in_edge_ids,
                               cached.no_in_edges)
        elif csc:
            c = G.csc()
            if G.directed:
                io, ii = self.asarray(c.in_offsets), self.asarray(c.in_indices)
            else:
                io, ii = ro, ci  # an undirected graph is its own reverse
            ie = self.asarray(c.in_edge_ids)
            empty = np.diff(c.in_offsets) == 0
            nwords = max(1, (G.num_vertices + 31) // 32)
            packed = np.packbits(np.pad(empty, (0, nwords * 32 - empty.shape[0])),
                                 bitorder="little")
            nie = self.asarray(packed.view(np.uint32))
        else:
            io = self.asarray(np.zeros(1, dtype=np.int64))
            ii = self.asarray(dummy_i)
            ie = self.asarray(np.zeros(1, dtype=np.int64))
            nie = self.asarray(np.zeros(1, dtype=np.uint32))
        if coo:
            es = cached.edge_sources if cached is not None and cached.has_coo else \
                self.asarray(np.repeat(np.arange(G.num_vertices, dtype=G.column_indices.dtype),
                                       G.out_degrees()))
        else:
            es = self.asarray(dummy_i)
        dg = DeviceGraph(G.num_vertices, G.num_edges, G.values is not None, ro, ci, vals,
                         io, ii, ie, nie, csc, es, coo)
        return G._device.keep_graph(self, dg)

    # -- compilation ------------------------------------------------------------
    def device_function(self, pyfunc):
        """Compile a functor hook into a device function of this target."""
        raise NotImplementedError

    def value_function(self, pyfunc):
        """Compile a value function (a GraphBLAS op) with IEEE arithmetic: a division by
        zero gives inf or nan, as on a GPU, never an exception."""
        return self.device_function(pyfunc)

    def __repr__(self):
        return f"<gunpy backend {self.name!r}>"
