"""DistGraph: a graph split over MPI ranks by a 1-D block partition of the vertex ids.

Rank ``r`` owns the vertices ``starts[r] <= v < starts[r + 1]`` with
``starts[r] = r * n // P`` (blocks differ by at most one vertex), and keeps
every edge that touches an owned vertex: the owned vertices' out-edges (push
levels advance over them) and their in-edges (pull levels scan them). The
other endpoints of those edges are the rank's *ghosts*.

The rank's part is an ordinary :class:`gunpy.Graph` over local ids, owned
vertices first (local ``i`` is global ``starts[r] + i``), then the ghosts in
increasing global order, so the single-device operators and functors run on
it unchanged. ``gid`` maps local ids back to global ones.

The blocks are cut over *internal* ids. ``from_graph`` and ``from_edges``
hash-relabel by default (``relabel="hash"``: ``v -> (a v + b) mod n`` with
``a`` coprime to ``n`` near ``n / golden ratio``, a Weyl sequence), so that
a graph whose ids are ordered by degree (hubs first, as many files are) does
not load the first ranks with every hub; ``relabel=None`` keeps the ids,
better for graphs whose ids carry locality (road networks and meshes numbered
along space: neighbours land in the same block, so fewer edges cross ranks).
``rmat`` needs no relabelling: the Graph500 generator scrambles its labels.
Users never see internal ids: sources are original ids, parents and labels
come back as original ids, ``vertices`` lists the original ids of the owned
vertices in the order of a result's arrays, and gathered results are in
original order.
"""

import operator

import numpy as np

from gunpy.graph import Graph
from gunpy.dist.comm import get_comm

__all__ = ["DistGraph", "block_starts", "Relabel", "RELABEL"]

#: the ``relabel`` options of :meth:`DistGraph.from_graph` and :meth:`DistGraph.from_edges`
RELABEL = ("hash", None)


class Relabel:
    """The fixed bijection ``v -> (a * v + b) mod n`` of ``0..n-1`` and its inverse.

    ``a`` is the odd number nearest ``n / phi`` coprime to ``n``, so consecutive ids
    land about ``0.618 n`` apart (equidistributed over the blocks); ``b``
    shifts by the seed. Every rank builds the same one from ``n`` alone.
    """

    def __init__(self, n, seed=0):
        self.n = n = int(n)
        a = max(1, int(n / 1.618033988749895)) | 1
        while np.gcd(a, n) != 1:
            a += 2
        self.a = a % n if n > 1 else 0
        self.b = (int(seed) * 0x9E3779B1) % n if n > 1 else 0
        self.a_inv = pow(self.a, -1, n) if n > 1 else 0

    def _affine(self, v, mul, add):
        v = np.asarray(v, dtype=np.int64)
        if self.n <= 1:
            return v.copy()
        if self.n < 2 ** 31:  # products below 2**62: int64 is exact
            return (v * mul + add) % self.n
        return ((v.astype(object) * mul + add) % self.n).astype(np.int64)

    def forward(self, v):
        """Internal ids of original ids ``v``."""
        return self._affine(v, self.a, self.b)

    def inverse(self, u):
        """Original ids of internal ids ``u``."""
        return self._affine(np.asarray(u, dtype=np.int64) - self.b, self.a_inv, 0)


def _relabelling(relabel, n):
    if relabel not in RELABEL:
        raise ValueError(f"unknown relabel {relabel!r}; valid: 'hash' or None")
    return Relabel(n) if relabel == "hash" else None


def _edge_ids(ids, name):
    """``ids`` as a flat int64 array, or a TypeError: integer kinds only (no float truncated,
    no string parsed)."""
    a = np.asarray(ids)
    if a.size and a.dtype.kind not in "iu":
        raise TypeError(f"DistGraph.from_edges: {name} must hold integer vertex ids, "
                        f"got dtype {a.dtype}")
    if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
        raise ValueError(f"DistGraph.from_edges: {name} holds an id past int64")
    return a.astype(np.int64).ravel()


def block_starts(n, size):
    """Partition offsets: rank ``r`` owns ``starts[r]:starts[r + 1]`` of ``0..n-1``."""
    return (np.arange(size + 1, dtype=np.int64) * int(n)) // int(size)


class DistGraph:
    """One rank's part of a distributed graph.

    Build it with :meth:`from_graph`, :meth:`from_edges` or :meth:`rmat`;
    every rank must call the same constructor (they are collective).

    Attributes
    ----------
    comm : gunpy.dist.comm.Comm
    num_vertices, num_edges : int
        Of the whole graph (``num_edges`` counts stored directed edges, as
        :class:`gunpy.Graph` does).
    directed, weighted : bool
    starts : ndarray of int64, shape (P + 1,)
        Block offsets; this rank owns ``starts[rank]:starts[rank + 1]``.
    local : gunpy.Graph
        Edges touching an owned vertex, over local ids (owned first, then ghosts).
    gid : ndarray of int64
        Internal global id of each local vertex.
    vertices : ndarray of int64
        Original ids of the owned vertices, in the order of a result's arrays.
    relabel : Relabel or None
    num_owned, num_ghosts : int
    """

    def __init__(self, comm, num_vertices, directed, src, dst, weights=None, *, graph=None,
                 relabel=None):
        # src, dst: internal global ids of edges that touch an owned vertex (each once);
        # relabel: the Relabel they were made with (None: internal ids are the original ones)
        with comm.agreement("DistGraph"):  # this rank's part (memory): an error on every rank
            self._build_part(comm, num_vertices, directed, src, dst, weights, relabel)
        # whether any rank has weights, and the stored edges (each counted by its source's owner)
        weighted, edges = comm.allreduce(np.array([int(weights is not None),
                                                   int(self.out_degrees.sum())]))
        self.weighted = bool(weighted)
        self.num_edges = int(edges)
        #: the host graph this was built from (from_graph), for gathered results' labels
        self.graph = graph

    def _build_part(self, comm, num_vertices, directed, src, dst, weights, relabel):
        self.comm = comm
        self.num_vertices = int(num_vertices)
        self.directed = bool(directed)
        self.starts = block_starts(self.num_vertices, comm.size)
        self.lo = int(self.starts[comm.rank])
        self.hi = int(self.starts[comm.rank + 1])
        self.num_owned = self.hi - self.lo
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        ends = np.concatenate([src, dst])
        ghosts = np.unique(ends[(ends < self.lo) | (ends >= self.hi)])
        self.ghosts = ghosts
        self.num_ghosts = int(ghosts.shape[0])
        self.gid = np.concatenate([np.arange(self.lo, self.hi, dtype=np.int64), ghosts])
        self.relabel = relabel
        #: original id of each local vertex (what parents and labels are written in)
        self.original_gid = self.gid if relabel is None else relabel.inverse(self.gid)
        self.ghost_owner = self.owner(ghosts)
        self._ghost_bits = None
        self.local = Graph.from_edges(self.to_local(src), self.to_local(dst), weights,
                                      num_vertices=self.gid.shape[0], directed=True)
        # out-edges of the owned vertices: each stored edge counted once, by its source's owner
        self.out_degrees = np.asarray(self.local.out_degrees()[:self.num_owned], dtype=np.int64)

    # ------------------------------------------------------------------ ids
    @property
    def vertices(self):
        return self.original_gid[:self.num_owned]

    def internal(self, v):
        """Internal ids of original ids ``v`` (an int or an array)."""
        if self.relabel is None:
            return v if np.ndim(v) == 0 else np.asarray(v, dtype=np.int64)
        out = self.relabel.forward(v)
        return int(out) if np.ndim(v) == 0 else out

    def original(self, u):
        """Original ids of internal ids ``u``; negative entries (-1: none) stay as they are."""
        if self.relabel is None:
            return u
        u = np.asarray(u)
        return np.where(u >= 0, self.relabel.inverse(np.maximum(u, 0)), u).astype(u.dtype)

    def gather(self, array, root=0):
        """Every rank's per-owned-vertex ``array`` on ``root`` in original id order (collective)."""
        full = self.comm.gatherv(array, root)
        if full is None or self.relabel is None:
            return full
        return full[self.relabel.forward(np.arange(self.num_vertices))]

    def ghost_bit_positions(self):
        """Where each ghost's bit sits in a :meth:`Comm.allgather_bits` packed bitmap of all
        vertices: ``(byte index, bit shift)`` arrays, computed once."""
        if self._ghost_bits is None:
            nbytes = (np.diff(self.starts) + 7) // 8
            displ = np.concatenate(([0], np.cumsum(nbytes)[:-1]))
            off = self.ghosts - self.starts[self.ghost_owner]
            self._ghost_bits = ((displ[self.ghost_owner] + (off >> 3)).astype(np.int64),
                                (off & 7).astype(np.uint8))
        return self._ghost_bits

    def owner(self, v):
        """The rank owning each global id in ``v``."""
        return np.searchsorted(self.starts, np.asarray(v, dtype=np.int64), side="right") - 1

    def to_local(self, v):
        """Local ids of global ids ``v`` (each must be owned or a ghost)."""
        v = np.asarray(v, dtype=np.int64)
        owned = (v >= self.lo) & (v < self.hi)
        return np.where(owned, v - self.lo,
                        self.num_owned + np.searchsorted(self.ghosts, v)).astype(np.int64)

    def owns(self, v):
        return self.lo <= v < self.hi

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_graph(cls, G, comm=None, *, relabel="hash"):
        """Distribute ``G`` (every rank passes the same host graph; each keeps its part).

        Parameters
        ----------
        G : gunpy.Graph
        comm : mpi4py communicator or gunpy.dist.comm.Comm, optional
            Default ``MPI.COMM_WORLD``.
        relabel : {"hash", None}, default "hash"
            Cut the blocks over hash-relabelled ids (balances graphs whose ids
            are ordered by degree), or over the ids as they are (keeps the
            locality of road networks and meshes numbered along space).

        Raises
        ------
        ValueError
            (On every rank) the ranks passed graphs of different sizes, or an unknown
            ``relabel``.
        TypeError
            (On every rank) ``G`` is not a :class:`gunpy.Graph` on some rank.
        """
        c = get_comm(comm)
        with c.agreement("DistGraph.from_graph") as agree:  # no communication inside
            if not isinstance(G, Graph):
                raise TypeError(f"DistGraph.from_graph needs a gunpy.Graph, got "
                                f"{type(G).__name__}")
            n = G.num_vertices
            r = _relabelling(relabel, n)
            agree.same(G.num_vertices, G.num_edges, bool(G.directed), relabel,
                       what="the graph or relabel")
            starts = block_starts(n, c.size)
            lo, hi = int(starts[c.rank]), int(starts[c.rank + 1])
            rows = np.asarray(G.row_offsets, dtype=np.int64)
            src = np.repeat(np.arange(n, dtype=np.int64), np.diff(rows))
            dst = np.asarray(G.column_indices, dtype=np.int64)
            if r is not None:
                src, dst = r.forward(src), r.forward(dst)
            keep = ((src >= lo) & (src < hi)) | ((dst >= lo) & (dst < hi))
            w = None if G.values is None else np.asarray(G.values)[keep]
        return cls(c, n, G.directed, src[keep], dst[keep], w, graph=G, relabel=r)

    @classmethod
    def from_edges(cls, src, dst, weights=None, *, num_vertices, directed, comm=None,
                   relabel="hash"):
        """Build from edges scattered over the ranks (each passes any share, maybe none).

        Edges go to the owners of both their ends with one Alltoallv; the
        local graphs then drop self-loops and duplicates (a duplicate keeps
        its minimum weight) as :meth:`gunpy.Graph.from_edges` does.

        Parameters
        ----------
        src, dst : array_like of int
        weights : array_like of float, optional
            Pass them on every rank or on none.
        num_vertices : int
            The same on every rank.
        directed : bool
            ``False``: each edge is stored both ways.
        comm : optional
        relabel : {"hash", None}, default "hash"
            As :meth:`from_graph`'s.

        Raises
        ------
        ValueError
            (On every rank) an id out of range, mismatched lengths, or
            ``num_vertices`` / ``directed`` differing between ranks; a rank's own
            findings name that rank.
        TypeError
            (On every rank) ids that are not integers.
        """
        c = get_comm(comm)
        with c.agreement("DistGraph.from_edges") as agree:  # no communication inside
            n = operator.index(num_vertices)
            if n < 0:
                raise ValueError(f"DistGraph.from_edges: num_vertices must be >= 0, got {n}")
            agree.same(n, bool(directed), weights is None, relabel,
                       what="num_vertices, directed, relabel or the presence of weights")
            src, dst = _edge_ids(src, "src"), _edge_ids(dst, "dst")
            w = None if weights is None else np.asarray(weights, dtype=np.float64).ravel()
            if src.shape != dst.shape or (w is not None and w.shape != src.shape):
                raise ValueError(f"DistGraph.from_edges: src, dst and weights have lengths "
                                 f"{src.shape[0]}, {dst.shape[0]} and "
                                 f"{'-' if w is None else w.shape[0]}")
            for name, ids in (("src", src), ("dst", dst)):
                out = np.flatnonzero((ids < 0) | (ids >= n))
                if out.size:
                    raise ValueError(f"DistGraph.from_edges: {name}[{int(out[0])}] = "
                                     f"{int(ids[out[0]])} is outside 0..{n - 1}")
            r = _relabelling(relabel, n)
        if r is not None:
            src, dst = r.forward(src), r.forward(dst)
        if not directed:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            if w is not None:
                w = np.concatenate([w, w])
        starts = block_starts(n, c.size)
        so = np.searchsorted(starts, src, side="right") - 1
        do = np.searchsorted(starts, dst, side="right") - 1
        # each edge to its source's owner, and to its destination's when that differs
        two = so != do
        dest = np.concatenate([so, do[two]])
        cols = [np.concatenate([src, src[two]]), np.concatenate([dst, dst[two]])]
        if w is not None:
            cols.append(np.concatenate([w, w[two]]))
        got = c.alltoallv(cols, dest)
        c.take_counters()
        return cls(c, n, directed, got[0], got[1], got[2] if w is not None else None,
                   relabel=r)

    @classmethod
    def rmat(cls, scale_per_rank, edgefactor=16, *, seed=0, comm=None):
        """A Graph500 Kronecker graph of ``2**(scale_per_rank + log2 P)`` vertices in parallel.

        Weak scaling: each rank generates ``edgefactor * 2**scale_per_rank``
        edge tuples. The tuples come in fixed chunks seeded by their index and
        the vertex labels are scrambled by a fixed bijection, so for a given
        total scale the graph does not depend on the number of ranks. (It is
        not the graph :func:`gunpy.generators.rmat` builds for that scale,
        whose single sequential stream cannot be split.) ``P`` must be a power of two.
        """
        c = get_comm(comm)
        if c.size & (c.size - 1):
            raise ValueError(f"DistGraph.rmat needs a power-of-two number of ranks, got {c.size}")
        scale = int(scale_per_rank) + c.size.bit_length() - 1
        src, dst = _kronecker_share(scale, int(edgefactor), int(seed), c.rank, c.size)
        g = cls.from_edges(src, dst, num_vertices=1 << scale, directed=False, comm=c,
                           relabel=None)  # the generator scrambled the labels already
        g.scale = scale
        return g

    def __repr__(self):
        return (f"DistGraph(rank {self.comm.rank} of {self.comm.size}: vertices "
                f"{self.lo}..{self.hi - 1} of {self.num_vertices}, {self.num_ghosts} ghosts, "
                f"{self.local.num_edges} local edges of {self.num_edges}, "
                f"{'directed' if self.directed else 'undirected'})")


_CHUNK = 1 << 16  # edge tuples per independently seeded chunk


def _scramble(v, scale, seed):
    """A fixed bijection of ``0..2**scale-1`` (odd multiplications and xor-shifts mod 2**scale)."""
    mask = np.uint64((1 << scale) - 1)
    v = v.astype(np.uint64)
    rng = np.random.default_rng([seed, 0x5EED])
    for _ in range(3):
        a = np.uint64(int(rng.integers(1, 1 << 62)) | 1)
        b = np.uint64(int(rng.integers(0, 1 << 62)))
        v = (v * a + b) & mask
        v ^= v >> np.uint64(max(scale // 2, 1))
    return v.astype(np.int64)


def _kronecker_share(scale, edgefactor, seed, rank, size, a=0.57, b=0.19, c=0.19):
    """This rank's Graph500 edge tuples: chunks ``rank, rank + size, ...`` of the whole list."""
    m = edgefactor << scale
    nchunks = (m + _CHUNK - 1) // _CHUNK
    srcs, dsts = [], []
    ab, c_norm, a_norm = a + b, c / (1 - (a + b)), a / (a + b)
    for k in range(rank, nchunks, size):
        cnt = min(_CHUNK, m - k * _CHUNK)
        rng = np.random.default_rng([seed, k])
        s = np.zeros(cnt, dtype=np.int64)
        d = np.zeros(cnt, dtype=np.int64)
        for bit in range(scale):
            # the reference generator's quadrant choice per bit
            ii = rng.random(cnt) > ab
            jj = rng.random(cnt) > np.where(ii, c_norm, a_norm)
            s |= ii.astype(np.int64) << bit
            d |= jj.astype(np.int64) << bit
        srcs.append(s)
        dsts.append(d)
    s = np.concatenate(srcs) if srcs else np.zeros(0, dtype=np.int64)
    d = np.concatenate(dsts) if dsts else np.zeros(0, dtype=np.int64)
    return _scramble(s, scale, seed), _scramble(d, scale, seed)
