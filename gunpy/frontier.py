"""Frontiers: the active set of vertices (or edges) an operator reads or writes.

A :class:`Frontier` is a sparse queue of ids on the backend, with its length
kept **on the device** (``length``, a one-element array), so one operator can
hand its output to the next without a trip through the host. The host learns
the length only when someone asks for :attr:`Frontier.size` (one small copy).

A frontier may also carry a dense **bitmap** view (one bit per vertex, 32-bit
words), which pull traversal reads; :meth:`Frontier.to_bitmap` and
:meth:`Frontier.from_bitmap` convert between the two (popcount + scan).
"""

import numpy as np

__all__ = ["Frontier"]


class Frontier:
    """A queue of vertex (or edge) ids on one backend.

    Parameters
    ----------
    backend : gunpy backend
    capacity : int
        Initial number of slots; :meth:`reserve` grows it.
    kind : {"vertex", "edge"}
    dtype : numpy dtype
        Id type: the graph's index type for vertices, int64 for edges.
    """

    def __init__(self, backend, capacity, *, kind="vertex", dtype=np.int32, name=""):
        if kind not in ("vertex", "edge"):
            raise ValueError(f"frontier kind must be 'vertex' or 'edge', got {kind!r}")
        self.backend = backend
        self.kind = kind
        self.dtype = np.dtype(dtype)
        self.name = name
        self.queue = backend.empty(max(int(capacity), 1), self.dtype)
        self.length = backend.zeros(1, np.int64)
        self._size = 0          # host copy of length; None when a kernel changed it

    # ------------------------------------------------------------------ size
    @property
    def capacity(self):
        return self.queue.shape[0]

    @property
    def size(self):
        """Number of ids in the frontier (reads the device length if needed)."""
        if self._size is None:
            self._size = int(self.backend.read(self.length, 0))
        return self._size

    def __len__(self):
        return self.size

    def touched(self):
        """Note that a kernel wrote ``length``; the next :attr:`size` re-reads it."""
        self._size = None

    def assume_size(self, n):
        """Record a length a kernel has already written to ``length``."""
        self._size = int(n)

    def set_size(self, n):
        """Set the length on both sides (the host already knows it)."""
        self.backend.write(self.length, 0, n)
        self._size = int(n)

    def clear(self):
        self.set_size(0)

    def reserve(self, n, *, keep=False):
        """Make room for ``n`` ids (contents are kept only with ``keep=True``)."""
        if n <= self.capacity:
            return
        new_cap = max(int(n), int(self.capacity * 1.5))
        if keep and self.size:
            old = self.backend.to_host(self.queue)[:self.size]
            self.queue = self.backend.empty(new_cap, self.dtype)
            self._copy_in(old, 0)
        else:
            self.queue = self.backend.empty(new_cap, self.dtype)

    # ------------------------------------------------------------------ host I/O
    def _copy_in(self, host, at):
        self.backend.copy_in(self.queue, at, np.ascontiguousarray(host, dtype=self.dtype))

    def push(self, items):
        """Append host ids (an int or an array) to the frontier."""
        arr = np.atleast_1d(np.asarray(items, dtype=self.dtype))
        n = self.size
        self.reserve(n + arr.shape[0], keep=True)
        if arr.shape[0]:
            self._copy_in(arr, n)
        self.set_size(n + arr.shape[0])
        return self

    def to_numpy(self):
        """The frontier's ids as a NumPy array (a copy)."""
        return self.backend.head_to_host(self.queue, self.size)

    def __repr__(self):
        size = "?" if self._size is None else self._size
        return f"<Frontier {self.kind} {self.name} size={size} capacity={self.capacity}>"
