"""What every backend provides to the operators."""

from collections import namedtuple

import numpy as np

__all__ = ["Backend", "Counts", "DeviceGraph"]


def __getattr__(name):
    # the operator table's names, kept for one release: operators are objects now
    # (gunpy.operators.operator), and a backend no longer lists them
    moved = _MOVED.get(name)
    if moved is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings
    from gunpy.operators import operator as op
    warnings.warn(f"gunpy.backends.base.{name} is deprecated and goes in gunpy 0.3: use "
                  f"gunpy.operators.operator.{moved[0]}", DeprecationWarning, stacklevel=2)
    if name == "OPERATORS":
        return {k: v.args for k, v in op.operators().items()}
    return moved[1]


def _operator_args(name):
    from gunpy.operators.operator import operator
    return operator(name).args


def _check_implementation(name, impl, *, who=None):
    from gunpy.operators.operator import check_implementation
    return check_implementation(name, impl, who=who)


def _implement(backend, name, impl):
    from gunpy.operators.operator import operator
    return operator(name).implement(backend, impl)


def _retract(name):
    from gunpy.operators.operator import operator
    operator(name).retract()


#: name -> (what replaces it, the deprecated function)
_MOVED = {
    "OPERATORS": ("operators()", None),
    "operator_args": ("operator(name).args", _operator_args),
    "check_implementation": ("check_implementation", _check_implementation),
    "implement": ("operator(name).implement(backend, impl)", _implement),
    "retract": ("operator(name).retract()", _retract),
}


#: What a backend has done so far (:meth:`Backend.counts`): kernel launches, host
#: synchronisations (device-to-host copies, explicit waits and any blocking upload),
#: asynchronous host-to-device writes, and allocations of backend arrays. A backend
#: that does not launch kernels (the CPU) counts allocations only; the rest are None.
Counts = namedtuple("Counts", "launches syncs uploads allocs")

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
    "in_offsets in_indices in_edge_ids no_in_edges has_csc edge_sources has_coo "
    "has_edge_ids", defaults=(True,))


class Backend:
    """Arrays, launch configuration and kernel compilation for one target.

    A backend holds arrays, compiles and launches; it does not list the
    operators. Each :class:`~gunpy.operators.operator.Operator` keeps its
    implementation per backend ``name`` and finds the one for a backend along its
    class hierarchy, so a subclass inherits every operator (registered strategies
    included). A new backend is a subclass with its array methods and a ``name``,
    registered with :func:`gunpy.backends.register_backend`; its operators are given
    by ``op.implement(name, f)``, or in a class table ``operators = {op name: f}``
    (``None`` hides an inherited one: the operator then raises
    ``NotImplementedError`` naming both).
    """

    name = None
    #: operator name -> function (or None: not implemented here), overriding what the
    #: operators hold for this class's ancestors; see :mod:`gunpy.operators.operator`
    operators = {}
    #: :meth:`gunpy.Enactor.advance_near_far` and :meth:`gunpy.Enactor.advance_filter`
    #: fuse steps (levels) while their work stays under this many edges
    fuse_below = 4096
    #: the most levels one fused :mod:`~gunpy.operators.levels` call runs (their sizes
    #: come back in one array, which CUDA reads whole)
    fuse_max_levels = 512

    def bind(self, impl):
        """``impl``, an operator's implementation, as this backend calls it (once per
        operator and backend class): the CPU backend serialises it where numba's
        threading layer needs that."""
        return impl

    def operator(self, name, default=None):
        """Deprecated (goes in gunpy 0.3): call
        ``gunpy.operators.operator.operator(name).on(backend)``."""
        import warnings
        from gunpy.operators.operator import operator
        warnings.warn("Backend.operator(name) is deprecated and goes in gunpy 0.3: call "
                      "gunpy.operators.operator.operator(name).on(backend)",
                      DeprecationWarning, stacklevel=2)
        return operator(name).on(self, default)

    # -- arrays -----------------------------------------------------------------
    def asarray(self, host):
        """A device copy of a host array."""
        raise NotImplementedError

    def empty(self, n, dtype):
        """A device array of ``n`` items of ``dtype``, contents undefined."""
        raise NotImplementedError

    def full(self, n, value, dtype):
        """A device array of ``n`` items of ``dtype``, each ``value``."""
        raise NotImplementedError

    def zeros(self, n, dtype):
        """A device array of ``n`` zeros of ``dtype``."""
        return self.full(n, 0, dtype)

    def fill(self, arr, value):
        """Set every item of the device array ``arr`` to ``value`` (a kernel, no copy)."""
        raise NotImplementedError

    def to_host(self, arr):
        """A NumPy copy of a device array."""
        raise NotImplementedError

    def take(self, arr):
        """A device array as NumPy for a caller that keeps it and drops the original:
        :meth:`to_host` unless the backend's arrays are already NumPy."""
        return self.to_host(arr)

    def read(self, arr, i=0):
        """One element of a device array, as a Python number."""
        raise NotImplementedError

    def write(self, arr, i, value):
        """Set ``arr[i] = value`` on the device (a one-item upload: a source's depth)."""
        raise NotImplementedError

    def copy_in(self, arr, at, host):
        """Copy the host array ``host`` into ``arr[at:at + len(host)]``."""
        raise NotImplementedError

    def head_to_host(self, arr, n):
        """A NumPy copy of ``arr[:n]``."""
        raise NotImplementedError

    def duplicate(self, arr, n):
        """A new array of this backend's holding ``arr[:n]``: a result to hand over when
        ``arr`` is a recycled buffer (device memory stays on the device)."""
        out = self.empty(n, arr.dtype)
        self.copy(arr, out, n)
        return out

    def share(self, host):
        """The graph's host array ``host`` as kernels read it: a device copy (:meth:`asarray`)
        where the backend's memory is not the host's. Kernels never write what this returns."""
        return self.asarray(host)

    def adopt(self, G):
        """``(row_offsets, column_indices, values or None)`` of a graph given in device
        memory (``G.on_device``), as kernels read them: refused where the backend's memory
        is not that device's."""
        raise ValueError(f"the graph's arrays are on {G.on_device}; the {self.name} "
                         "backend reads host memory: run it with backend='cuda', or on a "
                         "host copy (G.to_host())")

    def device_reverse(self, G, row_offsets, column_indices):
        """The reverse view of a graph given in device memory, built there (see
        :func:`gunpy.backends.device_build.reverse_view`), or None: built on the host."""
        return None

    def set_length(self, length, n):
        """Set a frontier's device ``length`` to ``[n, 0, -1]``: its size, a zeroed degree
        count and no largest degree (one upload)."""
        self.copy_in(length, 0, np.array([n, 0, -1], dtype=np.int64))

    def read_head(self, arr, n):
        """``arr[:n]`` as host values in one read (a few counters at once: one sync)."""
        return self.head_to_host(arr, n)

    def synchronize(self):
        """Wait until the device has done all the work queued so far."""

    #: kernel launches, host synchronisations (device-to-host copies, explicit waits
    #: and blocking uploads), asynchronous host-to-device writes and array allocations
    #: so far; a backend that launches kernels counts the first three, every backend
    #: counts its allocations, and an Enactor logs each iteration's share
    launches = syncs = uploads = allocs = 0
    counts_launches = False

    def counts(self):
        """:class:`Counts` so far (``launches``, ``syncs`` and ``uploads`` are None where
        the backend does not launch kernels)."""
        # read twice a level by an Enactor: tuple.__new__ skips the namedtuple's Python __new__
        if not self.counts_launches:
            return tuple.__new__(Counts, (None, None, None, self.allocs))
        return tuple.__new__(Counts, (self.launches, self.syncs, self.uploads, self.allocs))

    def workspace(self, name, n, dtype):
        """A work array of at least ``n`` items, kept on this backend between calls.

        Operators over bare arrays (scans, reductions, bitmap conversions) take
        their scratch here instead of allocating per call: a level allocates
        nothing once every workspace has grown to its largest size. ``name``
        says whose it is; an array is reused only by the same name and dtype, so
        a caller never sees another's. :meth:`release` drops them all.
        """
        ws = self.__dict__.get("_workspace")
        if ws is None:
            ws = self._workspace = {}
        arr = ws.get(name)
        if arr is None or arr.shape[0] < n or arr.dtype != dtype:
            arr = ws[name] = self.empty(max(int(n), 1), dtype)
        return arr

    def release(self):
        """Drop this backend's workspace arrays (their memory goes back to the device)."""
        self.__dict__.pop("_workspace", None)

    def work_splits(self):
        """Yield once per way this backend can cut work (warm-up runs a call under each),
        so that the kernels of any default call are among those compiled."""
        yield

    def copy(self, src, dst, n):
        """``dst[:n] = src[:n]`` between two arrays of this backend."""
        raise NotImplementedError

    # -- graphs -----------------------------------------------------------------
    def graph(self, G, *, csc=False, coo=False, edge_ids=True):
        """The backend's (cached) copy of ``G``.

        ``csc=True`` adds the reverse view (pull), ``coo=True`` the source of
        every edge (edge frontiers). Each is copied once and kept in
        ``G``'s :class:`~gunpy.graph.DeviceCache`, keyed by this backend object (never its name: two
        backends called "cuda" get separate copies). The graph drops the copy
        when its arrays are rebound (they are read-only in place) or on
        :meth:`~gunpy.Graph.release_device`.
        """
        cached = G._device.graph(self)
        ids = csc and edge_ids  # in_edge_ids read: an undirected graph's twins map
        if cached is not None and (cached.has_csc or not csc) and (cached.has_coo or not coo) \
                and (cached.has_edge_ids or not ids):
            return cached
        try:
            return self._upload(G, cached, csc, coo, ids)
        except MemoryError as exc:
            raise MemoryError(self._graph_memory_message(G, csc, coo)) from exc

    def memory_info(self):
        """``(free, total)`` bytes of device memory, or None where it does not apply."""
        return None

    def _graph_memory_message(self, G, csc, coo):
        n, m = G.num_vertices, G.num_edges
        idx = G.index_dtype.itemsize
        parts = {"CSR": 8 * (n + 1) + idx * m + (8 * m if G.weighted else 0)}
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

    def _upload(self, G, cached, csc, coo, ids=True):
        if cached is not None and cached.has_csc and not csc:
            csc = True
            ids = cached.has_edge_ids
        if cached is not None and cached.has_coo:
            coo = True
        dummy_f = np.zeros(1, dtype=np.float64)
        dummy_i = np.zeros(1, dtype=G.index_dtype)
        if cached is None and G.on_device is not None:
            ro, ci, vals = self.adopt(G)
            if vals is None:
                vals = self.asarray(dummy_f)
        elif cached is None:
            ro = self.share(G.row_offsets)
            ci = self.share(G.column_indices)
            vals = self.share(G.values) if G.values is not None else self.asarray(dummy_f)
        else:
            ro, ci, vals = cached.row_offsets, cached.column_indices, cached.values
        if csc and cached is not None and cached.has_csc:
            io, ii, ie, nie = (cached.in_offsets, cached.in_indices, cached.in_edge_ids,
                               cached.no_in_edges)
            if ids and not cached.has_edge_ids:  # an undirected graph's twins, now needed
                ie = self.share(G.csc().in_edge_ids)
            ids = ids or cached.has_edge_ids
        elif csc and (rev := self.device_reverse(G, ro, ci)) is not None:
            io, ii, ie, nie = rev
            ids = True
        elif csc:
            c = G.csc(edge_ids=ids)
            if G.directed:
                io, ii = self.share(c.in_offsets), self.share(c.in_indices)
            else:
                io, ii = ro, ci  # an undirected graph is its own reverse
            ids = c.in_edge_ids is not None
            ie = self.share(c.in_edge_ids) if ids else self.asarray(np.zeros(1, dtype=np.int64))
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
        dg = DeviceGraph(G.num_vertices, G.num_edges, G.weighted, ro, ci, vals,
                         io, ii, ie, nie, csc, es, coo, bool(csc and ids))
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
