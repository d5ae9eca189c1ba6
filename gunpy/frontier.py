"""Frontiers: the active set of vertices (or edges) an operator reads or writes.

A :class:`Frontier` is a sparse queue of ids on the backend, with its length
kept **on the device** (``length``, a one-element array), so one operator can
hand its output to the next without a trip through the host. The host learns
the length only when someone asks for :attr:`Frontier.size` (one small copy).

A vertex frontier may instead (or also) hold a dense **bitmap** (one bit per
vertex in 32-bit words), which is what pull traversal produces and reads.
:meth:`Frontier.ensure_queue` and :meth:`Frontier.ensure_bitmap` convert on
demand (popcount + scan one way, atomic OR the other), so an operator asks for
the form it needs and pays for a conversion only when one is due.
"""

import sys

import numpy as np

from gunpy.operators import bitmap as bitmap_op

__all__ = ["Frontier", "FrontierStore", "FrontierPool"]


class Frontier:
    """A queue (and/or bitmap) of vertex or edge ids on one backend.

    Parameters
    ----------
    backend : gunpy backend
    capacity : int
        Initial number of queue slots; :meth:`reserve` grows it.
    kind : {"vertex", "edge"}
    dtype : numpy dtype
        Id type: the graph's index type for vertices, int64 for edges.
    num_vertices : int, optional
        Needed for the bitmap form.
    """

    def __init__(self, backend, capacity, *, kind="vertex", dtype=np.int32, name="",
                 num_vertices=0):
        if kind not in ("vertex", "edge"):
            raise ValueError(f"frontier kind must be 'vertex' or 'edge', got {kind!r}")
        self.backend = backend
        self.kind = kind
        self.dtype = np.dtype(dtype)
        self.name = name
        self.num_vertices = int(num_vertices)
        self.queue = backend.empty(max(int(capacity), 1), self.dtype)
        #: ``[size, out-degree sum, largest out-degree]`` on the device; a push kernel
        #: that emits vertices adds their degrees to slot 1 and raises slot 2 (-1 after
        #: :meth:`clear`: none yet) to the largest, so one read gives all three
        #: (see :meth:`touched`)
        self.length = backend.zeros(3, np.int64)
        self.bitmap = None
        self.has_queue = True
        self.has_bitmap = False
        #: out-degree sum of the frontier's vertices when an operator already knows it
        self.known_edges = None
        #: the largest out-degree among the frontier's vertices when a kernel counted it
        self.known_max_degree = None
        self._size = 0          # host copy of length; None when a kernel changed it
        self._counted = False   # the kernel that wrote length also counted the degrees
        self._bound = None      # an upper bound on the size while it is unread

    @classmethod
    def view(cls, backend, queue, size, *, kind="vertex", name="", num_vertices=0, length=None):
        """A frontier over an existing array of ids (no copy); ``size`` of them are valid.

        ``length``: a device array already holding ``size`` in its first slot (and
        zeros after), used as the view's :attr:`length`; by default one is made."""
        f = cls.__new__(cls)
        f.backend = backend
        f.kind = kind
        f.dtype = np.dtype(queue.dtype)
        f.name = name
        f.num_vertices = int(num_vertices)
        f.queue = queue
        f.length = backend.asarray(np.array([size, 0, -1], dtype=np.int64)) if length is None \
            else length
        f.bitmap = None
        f.has_queue = True
        f.has_bitmap = False
        f.known_edges = None
        f.known_max_degree = None
        f._size = int(size)
        f._counted = False
        f._bound = None
        return f

    # ------------------------------------------------------------------ recycling
    # A Context lends frontiers (Context.frontier): when one goes, its arrays come back
    # for the next (no allocation per level in a loop that makes frontiers per step).
    @staticmethod
    def _retire(state, free):
        """``state`` (a gone frontier's ``__dict__``) goes to ``free`` with the arrays no one
        else holds (a bitmap lent by set_bitmap, or taken by another, is left out)."""
        for key in ("queue", "length", "bitmap"):
            arr = state.get(key)
            # three references: the dict, ``arr`` and getrefcount's argument
            if arr is not None and sys.getrefcount(arr) > 3:
                state[key] = None
            arr = None
        if state.get("queue") is not None and state.get("length") is not None:
            free.append(state)

    @classmethod
    def _revive(cls, state, capacity):
        """A cleared frontier on a retired one's arrays, with room for ``capacity`` ids."""
        f = cls.__new__(cls)
        f.__dict__.update(state)
        f.__dict__.pop("examined", None)
        f.name = ""
        f._bound = None
        f.clear()
        f.reserve(capacity)
        return f

    # ------------------------------------------------------------------ size
    @property
    def capacity(self):
        return self.queue.shape[0]

    @property
    def size(self):
        """Number of ids in the frontier (reads the device length if needed)."""
        if self._size is None:
            if self._counted:  # one read: the size, the degree sum and the largest degree
                size, edges, largest = self.backend.read_head(self.length, 3)
                self.known_edges = int(edges)
                self.known_max_degree = int(largest) if largest >= 0 else None
                self._size = int(size)
            else:
                self._size = int(self.backend.read(self.length, 0))
        return self._size

    def __len__(self):
        return self.size

    def _queue_written(self):
        self.has_queue = True
        self.has_bitmap = False
        self.known_edges = None
        self.known_max_degree = None

    def touched(self, *, counted=False, bound=None):
        """Note that a kernel wrote the queue and ``length``; :attr:`size` re-reads it.

        ``counted``: the kernel also summed the out-degrees of what it wrote into
        ``length[1]`` and kept their largest in ``length[2]`` (after :meth:`clear`),
        so reading the size also sets :attr:`known_edges` and
        :attr:`known_max_degree`. ``bound``: what the host knows the size cannot
        exceed (see :meth:`size_bound`).
        """
        self._queue_written()
        self._size = None
        self._counted = bool(counted)
        self._bound = None if bound is None else int(bound)

    def size_bound(self):
        """The size if known, else an upper bound recorded by :meth:`touched` (no device read
        unless neither is known)."""
        if self._size is not None:
            return self._size
        if self._bound is not None:
            return self._bound
        return self.size

    def assume_size(self, n):
        """Record a length a kernel has already written to ``length``."""
        self._queue_written()
        self._size = int(n)

    def set_size(self, n):
        """Set the length on both sides (the host already knows it); zero the degree count
        and forget the largest degree."""
        self._queue_written()
        self.backend.set_length(self.length, n)
        self._size = int(n)
        self._counted = False

    def clear(self):
        """Empty the frontier (its capacity is kept)."""
        self.set_size(0)

    def reserve(self, n, *, keep=False):
        """Make room for ``n`` ids (contents are kept only with ``keep=True``)."""
        if n <= self.capacity:
            return
        new_cap = max(int(n), int(self.capacity * 1.5))
        if keep and self.has_queue and self.size:
            old = self.backend.head_to_host(self.queue, self.size)
            self.queue = self.backend.empty(new_cap, self.dtype)
            self._copy_in(old, 0)
        else:
            self.queue = self.backend.empty(new_cap, self.dtype)

    # ------------------------------------------------------------------ bitmap form
    def _words(self):
        nwords = bitmap_op.num_words(self.num_vertices)
        if self.bitmap is None or self.bitmap.shape[0] != nwords:
            self.bitmap = self.backend.zeros(nwords, np.uint32)
        return self.bitmap

    def set_bitmap(self, words, size, *, known_edges=None):
        """Make ``words`` the frontier (bitmap form only); ``size`` is its popcount."""
        self.bitmap = words
        self.has_bitmap = True
        self.has_queue = False
        self._size = int(size)
        self.known_edges = known_edges
        self.known_max_degree = None

    def ensure_bitmap(self):
        """Build the bitmap form from the queue if it is missing; returns the words."""
        if self.kind != "vertex":
            raise ValueError("only vertex frontiers have a bitmap form")
        if not self.has_bitmap:
            words = self._words()
            bitmap_op.queue_to_bitmap(self.backend, self.queue, self.length, self.size, words)
            self.has_bitmap = True
        return self.bitmap

    def ensure_queue(self, scratch):
        """Build the queue form from the bitmap if it is missing (sorted ids)."""
        if not self.has_queue:
            self.reserve(self.size)
            total = bitmap_op.bitmap_to_queue(self.backend, self.bitmap, self.queue,
                                              self.length, scratch)
            self._size = int(total)
            self.has_queue = True
        return self.queue

    # ------------------------------------------------------------------ host I/O
    def _copy_in(self, host, at):
        self.backend.copy_in(self.queue, at, np.ascontiguousarray(host, dtype=self.dtype))

    def push(self, items):
        """Append host ids (an int or an array) to the frontier."""
        arr = np.atleast_1d(np.asarray(items, dtype=self.dtype))
        if not self.has_queue:
            raise ValueError("push() needs the queue form: call ensure_queue() first")
        n = self.size
        self.reserve(n + arr.shape[0], keep=True)
        if arr.shape[0]:
            self._copy_in(arr, n)
        self.set_size(n + arr.shape[0])
        return self

    def to_numpy(self):
        """The frontier's ids as a NumPy array (a copy; sorted if it is in bitmap form)."""
        if self.has_queue:
            return self.backend.head_to_host(self.queue, self.size)
        words = self.backend.to_host(self.bitmap)
        bits = np.unpackbits(words.view(np.uint8), bitorder="little")[:self.num_vertices]
        return np.flatnonzero(bits).astype(self.dtype)

    def __repr__(self):
        size = "?" if self._size is None else self._size
        form = "+".join(f for f, h in (("queue", self.has_queue), ("bitmap", self.has_bitmap)) if h)
        return f"<Frontier {self.kind} {self.name} {form} size={size} capacity={self.capacity}>"


class FrontierStore:
    """Copies of frontiers kept in one growing array (Gunrock's frontier storage, 4.4.3).

    :meth:`save` appends a frontier's ids; :meth:`get` returns the ``i``-th as a
    view (no copy). BC's backward phase walks its BFS levels this way.
    """

    def __init__(self, backend, num_vertices):
        self.backend = backend
        self.num_vertices = int(num_vertices)
        self._store = None
        #: each saved frontier's device length, a row of _ROW counters (the views' ``length``)
        self._lengths = None
        self._offsets = [0]
        #: the offsets on the device (for operators over many stored frontiers) and
        #: whether they match ``_offsets``
        self._offsets_dev = None
        self._offsets_synced = True
        self._rows = None
        self._filled = False  # the last frontiers came from set_offsets, not save

    _ROW = 4

    def clear(self):
        self._offsets = [0]
        self._offsets_synced = False
        self._rows = None

    def __len__(self):
        return len(self._offsets) - 1

    def save(self, frontier, scratch):
        """Append a copy of ``frontier`` (queue form); returns its index.

        Its ids and its device length are copied on the device (no host read
        beyond its size); the arrays grow only past the largest run so far."""
        frontier.ensure_queue(scratch)
        if self._filled and self._lengths is not None:
            # a fill's rows hold degree counts past the size: back to zeros, as saves expect
            self.backend.fill(self._lengths, 0)
        self._filled = False
        n = frontier.size
        used = self._offsets[-1]
        store = self._store
        if store is None or store.shape[0] < used + n:
            grown = self.backend.empty(max(used + n, self.num_vertices, 1), frontier.dtype)
            if store is not None and used:
                self.backend.copy(store, grown, used)
            self._store = store = grown
        if n:
            self.backend.copy(frontier.queue, store[used:], n)
        i = len(self._offsets) - 1
        lengths, row = self._lengths, self._ROW
        if lengths is None or lengths.shape[0] < row * (i + 1):
            # zeros: a view's degree counter is 0; the old rows are rewritten by later saves
            grown = self.backend.zeros(row * max(2 * (i + 1), 8), np.int64)
            if lengths is not None:
                self.backend.copy(lengths, grown, row * i)
            self._lengths = lengths = grown
        self.backend.copy(frontier.length, lengths[row * i:], 1)
        self._offsets.append(used + n)
        self._offsets_synced = False
        self._rows = None
        return i

    def _grow_lengths(self, count):
        lengths, row = self._lengths, self._ROW
        if lengths is None or lengths.shape[0] < row * count:
            self._lengths = self.backend.zeros(row * max(2 * count, 8), np.int64)
        return self._lengths

    # -- filled at once (gunpy.operators.reverse_levels.group) ------------------------
    def layout(self, n, count, dtype):
        """``(ids, offsets, lengths, row)``: arrays an operator fills with ``count``
        frontiers of ``n`` ids in all at once, in place of the store's (grown only
        past the largest so far; the old contents are dropped): frontier ``i`` is
        ``ids[offsets[i]:offsets[i + 1]]``, its device length ``lengths[row * i]``
        (then its out-degree sum and largest out-degree, the last slot free for the
        operator's use). Then :meth:`set_offsets`."""
        store = self._store
        if store is None or store.shape[0] < n or store.dtype != np.dtype(dtype):
            self._store = self.backend.empty(max(n, self.num_vertices, 1), dtype)
        dev = self._offsets_dev
        if dev is None or dev.shape[0] < count + 1:
            self._offsets_dev = self.backend.empty(max(2 * (count + 1), 16), np.int64)
        return self._store, self._offsets_dev, self._grow_lengths(count), self._ROW

    def set_offsets(self, offsets, *, rows=None):
        """The frontiers an operator wrote through :meth:`layout` (``offsets``: host
        ints, ``count + 1`` of them, also in the device offsets). ``rows``: their
        length rows on the host (size, out-degree sum, largest out-degree), when the
        operator counted them (see :attr:`level_rows`)."""
        self._offsets = offsets.tolist() if hasattr(offsets, "tolist") else list(offsets)
        self._offsets_synced = True
        self._rows = rows
        self._filled = True

    @property
    def level_rows(self):
        """A host ``(count, row)`` array of the frontiers' (size, out-degree sum, largest
        out-degree) when the store was filled at once with them counted, else None
        (frontiers saved one by one)."""
        return self._rows

    @property
    def ids(self):
        """Every stored id, frontier after frontier (see :meth:`offsets_array`)."""
        return self._store

    @property
    def offsets(self):
        """The host offsets: frontier ``i`` is ``ids[offsets[i]:offsets[i + 1]]``."""
        return self._offsets

    @property
    def sizes(self):
        """The stored frontiers' sizes (host ints), indexable by frontier."""
        return _Sizes(self._offsets)

    def offsets_array(self):
        """The ``len(self) + 1`` offsets on the device: frontier ``i`` is
        ``ids[offsets[i]:offsets[i + 1]]`` (uploaded when frontiers were saved since)."""
        count = len(self)
        if not self._offsets_synced:
            dev = self._offsets_dev
            if dev is None or dev.shape[0] < count + 1:
                self._offsets_dev = dev = self.backend.empty(max(2 * (count + 1), 16),
                                                             np.int64)
            self.backend.copy_in(dev, 0, np.asarray(self._offsets, dtype=np.int64))
            self._offsets_synced = True
        return self._offsets_dev

    def get(self, i):
        """The ``i``-th saved frontier (a view on the storage, not a copy)."""
        lo, hi = self._offsets[i], self._offsets[i + 1]
        row = self._ROW
        return Frontier.view(self.backend, self._store[lo:max(hi, lo + 1)], hi - lo,
                             name=f"saved{i}", num_vertices=self.num_vertices,
                             length=self._lengths[row * i:row * (i + 1)])


class _Sizes:
    """``sizes[i]``: the ``i``-th stored frontier's size, read off the host offsets."""

    __slots__ = ("offsets",)

    def __init__(self, offsets):
        self.offsets = offsets

    def __getitem__(self, i):
        return self.offsets[i + 1] - self.offsets[i]

    def __len__(self):
        return len(self.offsets) - 1


def _refs_when_unheld():
    # what sys.getrefcount says of a pool's frontier nobody else holds, read the way
    # FrontierPool.output_for reads it (the list's reference, the loop's, the call's)
    pool = [object()]
    for f in pool:
        return sys.getrefcount(f)


_UNHELD = _refs_when_unheld()


class FrontierPool:
    """The frontiers an enactor's operators write their output to.

    An operator's output goes to a frontier of the pool that **no one holds**: not its
    input, and not one the caller still keeps in a variable (a loop that keeps
    ``winners = self.filter(frontier, ...)`` and filters ``frontier`` again gets a third
    frontier, never ``frontier`` overwritten). A loop that keeps only the frontier it is
    given (``return self.filter(self.advance(frontier, F), F)``) cycles through three,
    so it allocates nothing after its first iteration. The frontiers are kept with the
    context's scratch arrays (:meth:`~gunpy.operators.Context.kept`), grown capacity and
    bitmaps included, so a later run on the same graph and backend allocates none.
    """

    def __init__(self, context):
        self.context = context
        self._vertex = context.kept("pool.vertex", lambda: [self._new(name) for name in "AB"])
        self._edge = None

    def _new(self, name, kind="vertex"):
        ctx = self.context
        if kind == "edge":
            return Frontier(ctx.backend, max(ctx.graph.num_edges, 1), kind="edge",
                            dtype=np.int64, name=name)
        return Frontier(ctx.backend, max(ctx.num_vertices, 1), dtype=ctx.index_dtype, name=name,
                        num_vertices=ctx.num_vertices)

    def first(self):
        """A vertex frontier no one holds, emptied."""
        out = self.output_for(None)
        out.clear()
        return out

    def output_for(self, frontier, kind="vertex"):
        """A frontier of ``kind`` that is not ``frontier`` and that no one else holds
        (one more is made when every frontier of the pool is held)."""
        if kind == "edge":
            if self._edge is None:
                self._edge = self.context.kept(
                    "pool.edge", lambda: [self._new(name, "edge") for name in ("E0", "E1")])
            pool = self._edge
        else:
            pool = self._vertex
        for f in pool:
            if f is not frontier and sys.getrefcount(f) <= _UNHELD:
                return f
        f = self._new(f"{'E' if kind == 'edge' else ''}{len(pool)}", kind)
        pool.append(f)
        return f
