"""The context an operator runs in: backend, graph, scratch arrays and a stats sink.

Every operator is a free function of its graph, frontiers, functor and data
(``gunpy.operators.advance(G, frontier, F, data)``); what it needs besides
those comes from a :class:`Context`:

``backend``
    where the kernels run and the arrays live (it builds the kernels);
``graph``
    the host :class:`~gunpy.Graph` (the backend keeps its device copy);
``scratch(name, n, dtype)``
    reusable work arrays, grown on demand, kept between calls;
``record``
    the stats sink: a dict every operator adds its edges visited (and the
    strategy or build it used) to. An :class:`~gunpy.Enactor` hands in a
    fresh record per iteration; a standalone caller reads or resets it;
``tally(key)``
    a device counter for a statistic a kernel computes (cull's culled count,
    the edges a frontier's neighbor_reduce read): it reaches ``record[key]``
    when :meth:`Context.flush` reads every pending counter in one copy (an
    Enactor does so once after its loop; a standalone operator call at its
    end), so a statistic costs no launch and no sync per level;
``visited``
    the visited bitmap (32-bit words) a traversal keeps, or ``None``; the
    operators that test or set visited bits read it through :meth:`visited_words`.

A context's scratch arrays (and the frontiers an Enactor keeps in it, see
:meth:`Context.kept`) outlive it: when a context goes, they return to its graph's
device cache for the next context on the same graph and backend, so a second
run of a primitive allocates nothing per level. Two contexts alive at once never
share them. ``Graph.release_device()`` drops them with the graph's device copy.
"""

import weakref

import numpy as np

from gunpy.backends import get_backend
from gunpy.backends.base import Backend

__all__ = ["Context", "context_for", "callable_module"]


class Context:
    """Backend, graph, scratch arrays and a stats record shared by operator calls.

    Parameters
    ----------
    graph : gunpy.Graph
    backend : {"auto", "cuda", "cpu"} or backend object, default "auto"

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.operators import Context
    >>> G = gunpy.generators.path(4)
    >>> ctx = Context(G, backend="cpu")
    >>> ctx.frontier([0, 2]).to_numpy()
    array([0, 2], dtype=int32)
    >>> ctx.record
    {'edges': 0}
    """

    def __init__(self, graph, backend="auto"):
        self.graph = graph
        self.backend = backend if isinstance(backend, Backend) else get_backend(backend)
        self.num_vertices = graph.num_vertices
        self.index_dtype = np.dtype(graph.index_dtype)
        #: the stats sink: operators add to it (see :meth:`log`)
        self.record = {"edges": 0}
        #: the visited bitmap (uint32 words on the backend), or None when none is kept
        self.visited = None
        self._scratch, self._lease = _lease(graph, self.backend)
        #: statistics still on the device: ``[(record, key)]``, one per tally slot used
        self._pending = []
        #: an enactor's run holds the context: it reads the tallies once, at its end
        self.in_run = False

    def scratch(self, name, n, dtype):
        """A reusable work array of at least ``n`` items (grown on demand).

        Kept between calls, and after this context goes for the next context on
        the same graph and backend (see the module docstring)."""
        arr = self._scratch.get(name)
        if arr is not None and arr.shape[0] >= n and arr.dtype.type is dtype:
            return arr  # the common case, without building a dtype to compare
        if arr is None or arr.shape[0] < n or arr.dtype != np.dtype(dtype):
            arr = self.backend.empty(max(int(n), 1), dtype)
            self._scratch[name] = arr
        return arr

    #: tally slots: a flush is forced when this many statistics are pending
    TALLY_SLOTS = 256

    def tally(self, key):
        """``(counts, slot)``: a zeroed int64 device counter for statistic ``key`` of
        the current :attr:`record`; a kernel adds to ``counts[slot]`` and
        :meth:`flush` adds the total to ``record[key]``. No launch, no sync."""
        if len(self._pending) == self.TALLY_SLOTS:
            self.flush()
        counts = self.kept("tally", lambda: self.backend.zeros(self.TALLY_SLOTS, np.int64))
        if not self._pending:
            if self._scratch.get("tally.dirty"):  # a context went with tallies unread
                self.backend.fill(counts, 0)
            self._scratch["tally.dirty"] = True
        self._pending.append((self.record, key))
        return counts, len(self._pending) - 1

    def flush(self):
        """Read the pending tallies in one copy into their records (and zero them);
        returns ``{key: total}`` over what was read (empty when nothing was pending)."""
        pending = self._pending
        if not pending:
            return {}
        counts = self.kept("tally", None)
        host = self.backend.read_head(counts, len(pending))
        self.backend.fill(counts, 0)  # ready for the next run's kernels
        self._scratch["tally.dirty"] = False
        totals = {}
        for (record, key), value in zip(pending, host.tolist()):
            record[key] = record.get(key, 0) + value
            totals[key] = totals.get(key, 0) + value
        pending.clear()
        return totals

    def done(self):
        """End a free operator call: its device statistics reach :attr:`record` now
        (one read), unless an enactor's run holds the context (:attr:`in_run`)."""
        if not self.in_run:
            self.flush()

    def kept(self, name, make):
        """The object ``name`` kept with the scratch arrays, made by ``make()`` on first use.

        For state whose arrays should be reused by later runs (an Enactor's
        frontiers, its near/far piles). What ``make`` returns must not refer to
        this context (it outlives it)."""
        key = ("kept", name)
        obj = self._scratch.get(key)
        if obj is None:
            obj = self._scratch[key] = make()
        return obj

    def log(self, *, edges=0, direction=None, strategy=None, culled=None, build=None):
        """Add one operator call's work to :attr:`record`."""
        r = self.record
        r["edges"] = r.get("edges", 0) + int(edges)
        if build is not None:
            r["build"] = build
        if culled is not None:
            r["culled"] = r.get("culled", 0) + int(culled)
        if direction:
            r["direction"] = direction
        if strategy:
            r["strategy"] = strategy

    def visited_words(self):
        """The visited bitmap, or a one-word placeholder when none is kept.

        Kernels take the bitmap argument whether or not their spec reads it;
        the placeholder is passed only to kernels compiled not to touch it.
        """
        if self.visited is not None:
            return self.visited
        return self.kept("visited.dummy", lambda: self.backend.zeros(1, np.uint32))

    def frontier(self, ids=(), *, capacity=None, kind="vertex"):
        """A :class:`~gunpy.Frontier` on this backend holding ``ids`` (host ints).

        Frontiers are lent: when one goes, its arrays come back for the next one
        this context (or a later one on the same graph and backend) makes, so a
        loop that makes a frontier a step allocates nothing once warm.
        ``kind="edge"``: an edge frontier (int64 ids below ``num_edges``)."""
        from gunpy.frontier import Frontier
        ids = np.atleast_1d(np.asarray(ids, dtype=np.int64))
        limit = self.num_vertices if kind == "vertex" else self.graph.num_edges
        if ids.size and not (0 <= ids.min() and ids.max() < limit):
            raise IndexError(f"frontier ids must be in [0, {limit})")
        capacity = max(capacity or ids.size, 1)
        free = self.kept("frontiers", dict).setdefault(kind, [])
        if free:
            f = Frontier._revive(free.pop(), capacity)
            f.num_vertices = self.num_vertices  # a caller may have changed it
        else:
            dtype = self.index_dtype if kind == "vertex" else np.dtype(np.int64)
            f = Frontier(self.backend, capacity, kind=kind, dtype=dtype,
                         num_vertices=self.num_vertices)
        weakref.finalize(f, Frontier._retire, f.__dict__, free)
        return f.push(ids) if ids.size else f

    def recycled(self, n, dtype):
        """A device array of at least ``n`` items (contents undefined) that comes back to
        this graph's free arrays when dropped, for the next call (no allocation once warm).
        Only for arrays no other object keeps a slice of."""
        free = self.kept("arrays", dict).setdefault(np.dtype(dtype).str, [])
        best = None
        for i, arr in enumerate(free):
            if arr.shape[0] >= n and (best is None or arr.shape[0] < free[best].shape[0]):
                best = i
        base = free.pop(best) if best is not None else self.backend.empty(max(int(n), 1), dtype)
        view = base[:base.shape[0]]
        weakref.finalize(view, free.append, base)
        return view

    def upload(self, host):
        """:meth:`recycled` holding a copy of the host array ``host`` (one upload)."""
        host = np.ascontiguousarray(host)
        arr = self.recycled(host.shape[0], host.dtype)
        if host.shape[0]:
            self.backend.copy_in(arr, 0, host)
        return arr

    def new_bitmap(self):
        """A cleared bitmap with one bit per vertex (uint32 words on the backend)."""
        return self.backend.zeros(max(1, (self.num_vertices + 31) // 32), np.uint32)

    def mark(self, words, frontier, *, clear=False):
        """Set the bits of ``frontier``'s vertices in ``words`` (``clear``: empty it first)."""
        from gunpy.operators import bitmap
        if clear:
            self.backend.fill(words, 0)
        if frontier.has_queue:
            bitmap.queue_to_bitmap(self.backend, frontier.queue, frontier.length, frontier.size,
                                   words, clear=False)
        else:
            bitmap.or_into(self.backend, words, frontier.bitmap)

    def full_frontier(self, kind="vertex"):
        """A frontier of every vertex id (every edge id with ``kind="edge"``).

        The id array is built once per graph and backend and kept with the
        graph's device copy (operators never write their input frontier).
        """
        from gunpy.frontier import Frontier
        from gunpy.operators.reduce import iota
        n = self.num_vertices if kind == "vertex" else self.graph.num_edges
        dtype = self.index_dtype if kind == "vertex" else np.dtype(np.int64)

        def make():
            ids = self.backend.empty(max(n, 1), dtype)
            iota(self.backend, ids, n)
            return ids
        # keyed by the backend object: never another backend's ids
        ids = self.graph._device.array(self.backend, f"all-{kind}s-{dtype.str}", make)
        return Frontier.view(self.backend, ids, n, kind=kind, name=f"all-{kind}s",
                             num_vertices=self.num_vertices)

    # for operators over every vertex: a queue that is never read, and the count n
    @property
    def dummy_queue(self):
        return self.kept("all.dummy", lambda: self.backend.zeros(1, self.index_dtype))

    @property
    def vertex_count(self):
        return self.kept("all.count", lambda: self.backend.asarray(
            np.array([self.num_vertices], dtype=np.int64)))

    def items(self, frontier):
        """``(queue, length, n)`` of a vertex operator's input: ``frontier``'s queue, its
        device length and host size, or for ``None`` (every vertex) a queue never read,
        the vertex count on the device and ``n``."""
        if frontier is None:
            return self.dummy_queue, self.vertex_count, self.num_vertices
        return frontier.queue, frontier.length, frontier.size

    def with_visited(self, words):
        """A context sharing this one's scratch and record, with ``words`` as the visited set."""
        if words is self.visited:
            return self
        twin = object.__new__(Context)
        twin.__dict__.update(self.__dict__)
        twin.visited = words
        return twin

    def __repr__(self):
        return (f"<gunpy Context {self.backend.name} n={self.num_vertices} "
                f"edges={self.record.get('edges', 0)}>")


class _Lease:
    """Held by a context (and its :meth:`Context.with_visited` twins): when the last one
    goes, its scratch arrays go back to the graph's free list."""
    __slots__ = ("__weakref__",)


def _lease(graph, backend):
    # a free list of scratch dicts per graph and backend, in the graph's device cache
    # (so Graph.release_device() drops them); a dict is lent to one live context at a time
    free = graph._device.array(backend, "context.scratch", list)
    scratch = free.pop() if free else {}
    lease = _Lease()
    weakref.finalize(lease, free.append, scratch)
    return scratch, lease


def context_for(graph, frontier, context):
    """``context`` checked against ``graph``, or a fresh one on ``frontier``'s backend."""
    if context is None:
        backend = frontier.backend if frontier is not None else "auto"
        return Context(graph, backend)
    if not isinstance(context, Context):
        raise TypeError(f"context must be a gunpy.operators.Context, got "
                        f"{type(context).__name__}")
    if context.graph is not graph:
        raise ValueError("the context was made for another graph")
    if frontier is not None and frontier.backend is not context.backend:
        raise ValueError(f"the frontier lives on backend {frontier.backend.name!r}, the "
                         f"context on {context.backend.name!r}")
    return context


def callable_module(name, fn):
    """Make module ``name`` callable as ``fn``: ``gunpy.operators.advance(...)`` runs the
    free function while ``gunpy.operators.advance.STRATEGIES`` etc. stay module attributes."""
    import sys
    import types

    module = sys.modules[name]
    module.__class__ = type(f"{fn.__name__}_module", (types.ModuleType,),
                            {"__call__": staticmethod(fn), "__module__": name,
                             "__doc__": fn.__doc__})
    return fn
