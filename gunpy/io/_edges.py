"""The edges a reader keeps, and the CSR graph built from them."""

import sys

import numpy as np

from gunpy._inputs import _index_dtype
from gunpy.graph import Graph
from gunpy.io._text import _INT32_MAX

#: Unweighted directed graphs with more edges than this are built inside the buffer that
#: holds the edges (:func:`gunpy._csr.build_csr_in_place`); smaller ones by
#: :func:`gunpy._csr.build_csr`'s NumPy path, which has no kernels to load.
IN_PLACE_MIN_EDGES = 200_000


class _Edges:
    """The edges a reader keeps: one (m, 2) array of ``(dst, src)`` rows (int32 while the
    ids fit; as int64 keys ``src << 32 | dst`` the rows sort by source, then target) and
    the weights, grown in place as blocks arrive (``ndarray.resize``: a ``realloc``, no
    second copy)."""

    def __init__(self, capacity=1 << 16):
        self.cap = max(int(capacity), 1)
        self.pairs = self.w = None
        self.m = 0
        self.top = -1            # the largest id so far, and the line it is on
        self.top_at = None

    def add(self, ids, w, blk=None, rows=None):
        k = ids.shape[0]
        if k == 0:
            return
        hi = int(ids.max())
        if self.pairs is None:
            dt = np.int32 if hi <= _INT32_MAX else np.int64
            self.cap = max(self.cap, k)
            self.pairs = np.empty((self.cap, 2), dtype=dt)
            if w is not None:
                self.w = np.empty(self.cap, dtype=np.float64)
        elif hi > _INT32_MAX and self.pairs.dtype == np.int32:
            wide = np.empty(self.pairs.shape, dtype=np.int64)  # room not yet used: no pages
            wide[:self.m] = self.pairs[:self.m]
            self.pairs = wide
        if self.m + k > self.cap:
            self.cap = max(self.m + k, self.cap + self.cap // 2)
            self.pairs.resize((self.cap, 2), refcheck=False)
            if self.w is not None:
                self.w.resize(self.cap, refcheck=False)
        m = self.m
        self.pairs[m:m + k, 0] = ids[:, 1]
        self.pairs[m:m + k, 1] = ids[:, 0]
        if self.w is not None:
            self.w[m:m + k] = w
        self.m += k
        if hi > self.top:
            self.top = hi
            if blk is not None:
                self.top_at = blk.where(rows[int(np.argmax(ids.max(axis=1) == hi))])

    def _trim(self):
        if self.pairs is None:
            self.pairs = np.zeros((0, 2), dtype=np.int32)
        if self.pairs.shape[0] != self.m:
            self.pairs.resize((self.m, 2), refcheck=False)    # shrinks in place
        if self.w is not None and self.w.shape[0] != self.m:
            self.w.resize(self.m, refcheck=False)

    def relabel(self):
        """Number the distinct ids 0..k-1 in increasing order; returns the original ids."""
        self._trim()
        labels = np.union1d(self.pairs[:, 0], self.pairs[:, 1]).astype(np.int64)
        dt = np.dtype(_index_dtype(labels.size))
        out = self.pairs if self.pairs.dtype == dt else np.empty((self.m, 2), dtype=dt)
        step = 1 << 22                              # bounded scratch for searchsorted
        for i in range(0, self.m, step):
            out[i:i + step] = np.searchsorted(labels, self.pairs[i:i + step])
        self.pairs = out
        return labels

    def _columns(self):
        """The sources and targets as two arrays, the targets packed left in the buffer
        (which then shrinks): at most half the buffer more, for a moment."""
        pairs, m = self.pairs, self.m
        self.pairs = None
        src = pairs[:, 1].copy()
        flat = pairs.reshape(-1)
        step = 1 << 20
        for i in range(0, m, step):  # target i moves from 2i to i: left of all unread ones
            j = min(i + step, m)
            flat[i:j] = flat[2 * i:2 * j:2]
        del flat
        pairs.resize(((m + 1) // 2, 2), refcheck=False)
        return src, pairs.reshape(-1)[:m]

    def graph(self, n, *, directed, mirror, remove_self_loops, remove_duplicates,
              weighted, node_labels=None):
        """The CSR graph of the edges (``mirror``: each stored both ways, a self-loop once)."""
        from gunpy._csr import build_csr, build_csr_in_place
        self._trim()
        dt = _index_dtype(n)
        w = self.w if weighted else None
        if weighted and w is None:                  # no edges at all
            w = np.zeros(0, dtype=np.float64)
        self.w = None
        if (not mirror and w is None and self.m > IN_PLACE_MIN_EDGES and sys.byteorder == "little"
                and self.pairs.dtype == np.int32 and np.dtype(dt) == np.int32):
            pairs, self.pairs = self.pairs, None
            ro, ci = build_csr_in_place(pairs, n, remove_self_loops=remove_self_loops,
                                        remove_duplicates=remove_duplicates)
            vals = None
        else:
            src, dst = self._columns()
            ro, ci, vals = build_csr(src, dst, w, n, remove_self_loops=remove_self_loops,
                                     remove_duplicates=remove_duplicates, index_dtype=dt,
                                     mirror=mirror)
            del src, dst, w
        return Graph(ro, ci, vals, directed=directed, node_labels=node_labels, _trusted=True)
