"""The edges a reader keeps, and the CSR graph built from them."""

import numpy as np

from gunpy._inputs import _index_dtype
from gunpy.graph import Graph
from gunpy.io._text import _INT32_MAX


class _Edges:
    """The edges a reader keeps: two id arrays (int32 while the ids fit) and the weights,
    grown in place as blocks arrive (``ndarray.resize``: a ``realloc``, no second copy)."""

    def __init__(self, capacity=1 << 16):
        self.cap = max(int(capacity), 1)
        self.src = self.dst = self.w = None
        self.m = 0
        self.top = -1            # the largest id so far, and the line it is on
        self.top_at = None

    def add(self, ids, w, blk=None, rows=None):
        k = ids.shape[0]
        if k == 0:
            return
        hi = int(ids.max())
        if self.src is None:
            dt = np.int32 if hi <= _INT32_MAX else np.int64
            self.cap = max(self.cap, k)
            self.src = np.empty(self.cap, dtype=dt)
            self.dst = np.empty(self.cap, dtype=dt)
            if w is not None:
                self.w = np.empty(self.cap, dtype=np.float64)
        elif hi > _INT32_MAX and self.src.dtype == np.int32:
            self.src = self.src.astype(np.int64)
            self.dst = self.dst.astype(np.int64)
        if self.m + k > self.cap:
            self.cap = max(self.m + k, self.cap + self.cap // 2)
            for a in (self.src, self.dst, self.w):
                if a is not None:
                    a.resize(self.cap, refcheck=False)
        m = self.m
        self.src[m:m + k] = ids[:, 0]
        self.dst[m:m + k] = ids[:, 1]
        if self.w is not None:
            self.w[m:m + k] = w
        self.m += k
        if hi > self.top:
            self.top = hi
            if blk is not None:
                self.top_at = blk.where(rows[int(np.argmax(ids.max(axis=1) == hi))])

    def _trim(self):
        if self.src is None:
            self.src = np.zeros(0, dtype=np.int32)
            self.dst = np.zeros(0, dtype=np.int32)
        for a in (self.src, self.dst, self.w):
            if a is not None and a.shape[0] != self.m:
                a.resize(self.m, refcheck=False)    # shrinks in place

    def relabel(self):
        """Number the distinct ids 0..k-1 in increasing order; returns the original ids."""
        self._trim()
        labels = np.union1d(self.src, self.dst).astype(np.int64)
        dt = _index_dtype(labels.size)
        for name in ("src", "dst"):
            a = getattr(self, name)
            out = a if a.dtype == dt else np.empty(a.shape[0], dtype=dt)
            step = 1 << 22                          # bounded scratch for searchsorted
            for i in range(0, a.shape[0], step):
                out[i:i + step] = np.searchsorted(labels, a[i:i + step])
            setattr(self, name, out)
        return labels

    def graph(self, n, *, directed, mirror, remove_self_loops, remove_duplicates,
              weighted, node_labels=None):
        """The CSR graph of the edges (``mirror``: each stored both ways, a self-loop once)."""
        from gunpy._csr import build_csr
        self._trim()
        src, dst, w = self.src, self.dst, (self.w if weighted else None)
        if weighted and w is None:                  # no edges at all
            w = np.zeros(0, dtype=np.float64)
        self.src = self.dst = self.w = None
        ro, ci, vals = build_csr(src, dst, w, n, remove_self_loops=remove_self_loops,
                                 remove_duplicates=remove_duplicates,
                                 index_dtype=_index_dtype(n), mirror=mirror)
        del src, dst, w
        return Graph(ro, ci, vals, directed=directed, node_labels=node_labels, _trusted=True)
