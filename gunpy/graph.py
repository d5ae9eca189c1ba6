"""The CSR graph that every operator traverses.

A :class:`Graph` holds Gunrock's CSR arrays (``row_offsets`` int64,
``column_indices`` int32 where the vertex count allows, optional ``values``),
builds its reverse (CSC) view on demand for pull traversal, and caches one copy
of its arrays per backend object so repeated runs pay the host-to-device copy
once. The arrays are read-only; rebinding one drops every cached copy.
"""

from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from gunpy._csr import build_csr, reverse_edge_ids, transpose_csr
from gunpy._inputs import (_as_column_indices, _as_count, _as_id_array, _as_row_offsets,
                           _as_weights, _check_offsets, _device_backend, _host,
                           _index_dtype, _is_symmetric, _nx_weights, table_edges)
from gunpy.backends.cache import DeviceCache

__all__ = ["Graph", "CSC", "DeviceCache"]

#: Reverse (in-edge) view: ``in_offsets[v]..in_offsets[v+1]`` index
#: ``in_indices`` (the sources of v's in-edges) and ``in_edge_ids`` (their CSR ids).
CSC = namedtuple("CSC", "in_offsets in_indices in_edge_ids")


def _frozen(arr):
    """``arr`` made read-only (arrays the graph owns: never a caller's array)."""
    if arr is not None:
        arr.flags.writeable = False
    return arr


class Graph:
    """A graph in CSR form (Gunrock's ``row_offsets`` / ``column_indices`` / ``values``).

    Build one with :meth:`from_edges`, :meth:`from_scipy`, :meth:`from_networkx`,
    :func:`gunpy.read_mtx`, :func:`gunpy.read_edgelist` or
    :func:`gunpy.datasets.load`. Undirected graphs store both directions, so
    ``num_edges`` counts an undirected edge twice.

    Attributes
    ----------
    num_vertices, num_edges : int
    directed : bool
    row_offsets : ndarray of int64, shape (num_vertices + 1,)
    column_indices : ndarray of int32 (int64 past 2**31 - 1 vertices)
    values : ndarray of float64 or None
        Edge weights, ``None`` for an unweighted graph.
    node_labels : list or ndarray or None
        Original node labels (networkx nodes, file ids) when they are not 0..n-1.

    Notes
    -----
    The graph copies the arrays it is given (it never aliases or changes the
    caller's) and keeps ``row_offsets``, ``column_indices`` and ``values``
    read-only, as well as the arrays :meth:`csc` and :meth:`out_degrees`
    return: ``G.values[0] = 2.0`` raises ``ValueError: assignment destination
    is read-only``. Each backend copies the arrays on first use and keeps the
    copy (on the GPU for ``"cuda"``), so an edit in place would not reach the
    next run. To change the weights (or the structure), assign a new array:
    ``G.values = new_weights`` (validated and copied like the constructor's;
    ``None`` makes the graph unweighted) drops every backend's copy, the reverse
    view and the degrees, and the next run uses the new arrays. A structural
    change must keep ``row_offsets[-1] == len(column_indices)``, so changing the
    edge count means building a new graph. :meth:`release_device` drops the
    backend copies without changing anything.

    **Arrays in GPU memory.** ``Graph(row_offsets, column_indices, values)`` also takes
    the three arrays in GPU memory (CuPy, PyTorch CUDA tensors, JAX, numba device
    arrays: anything with ``__cuda_array_interface__`` or, in CUDA memory, DLPack's
    ``__dlpack__``) and keeps them there (:attr:`on_device`): one kernel checks them
    as the host path does and converts, on the device, what is not already int64 /
    int32 / float64. ``copy=True`` (the
    default) gives the graph arrays of its own; ``copy=False`` reads the caller's in
    place where their types already match (no device memory spent; the caller must
    not write them while the graph is used). The CUDA backend runs on them with no
    host copy; a host backend refuses them (``G.to_host()`` makes a host graph), and
    the NumPy views (``G.row_offsets``, :meth:`csc`, :meth:`to_scipy`...) are copied
    down when first read.
    """

    def __init__(self, row_offsets, column_indices, values=None, *, directed=True,
                 node_labels=None, copy=True, _trusted=False):
        self.directed = bool(directed)
        self.node_labels = node_labels
        self._csc = None
        self._device = DeviceCache()
        self._degrees = None
        self._on_device = None
        backend = None if _trusted else _device_backend(
            {"row_offsets": row_offsets, "column_indices": column_indices, "values": values})
        if backend is not None:
            self._adopt(backend, row_offsets, column_indices, values, copy)
            return
        # _trusted: arrays gunpy has just built (build_csr, a reader), owned by nobody else
        if _trusted:
            row_offsets = np.asarray(row_offsets)
            column_indices = np.asarray(column_indices)
        else:
            # every check on the caller's own arrays, before any conversion
            row_offsets = _as_row_offsets(row_offsets)
            n = row_offsets.shape[0] - 1
            column_indices = _as_column_indices(column_indices, n)
            _check_offsets(row_offsets, column_indices.shape[0])
            if values is not None:
                values = _as_weights(values, column_indices.shape[0])
            if node_labels is not None and len(node_labels) != n:
                raise ValueError(f"node_labels has {len(node_labels)} entries for {n} vertices")
        self._row_offsets = _frozen(row_offsets)
        self._column_indices = _frozen(column_indices)
        self._values = _frozen(values)

    def _adopt(self, backend, row_offsets, column_indices, values, copy):
        """Keep a CSR given in device memory there, checked and typed on the device."""
        from gunpy.backends.interop import adopt_csr
        dev = adopt_csr(backend, row_offsets, column_indices, values, _index_dtype, copy=copy)
        n = dev.row_offsets.shape[0] - 1
        if self.node_labels is not None and len(self.node_labels) != n:
            raise ValueError(f"node_labels has {len(self.node_labels)} entries for {n} "
                             "vertices")
        self._row_offsets = self._column_indices = self._values = None
        self._on_device = dev

    #: True when gunpy built the structure symmetric (``from_edges(directed=False)``
    #: stores every edge both ways): the twins map of :meth:`csc` then skips its symmetry
    #: check. Cleared when ``row_offsets`` or ``column_indices`` is rebound.
    _symmetric = False

    # ------------------------------------------------------------------ build
    @classmethod
    def from_edges(cls, src, dst, weights=None, *, num_vertices=None, directed=True,
                   remove_self_loops=True, remove_duplicates=True, node_labels=None):
        """Build a graph from parallel arrays of edge endpoints.

        Parameters
        ----------
        src, dst : array_like of int
            Edge endpoints, vertex ids in ``0..num_vertices-1``. Integer arrays
            only: floats, booleans, strings and objects are refused, not converted
            (``astype`` would truncate ``1.5``, parse ``"7"`` and wrap ``2**32 + 2``).
        weights : array_like of float, optional
            One real weight per edge (integers within +-2**53, the ones float64
            holds exactly); ``None`` for an unweighted graph. NaN and infinite
            weights are stored; the primitives that cannot use them refuse them.
        num_vertices : int, optional
            Defaults to ``max(src, dst) + 1`` (0 for no edges).
        directed : bool, default True
            If False, each edge is stored in both directions.
        remove_self_loops, remove_duplicates : bool, default True
            Duplicate edges keep their minimum weight.

        Raises
        ------
        ValueError
            Length mismatch, ids that are not integers, negative ids, ids past
            ``num_vertices`` or int64, weights that are not real numbers; the
            message names the array, the index and the value.

        Examples
        --------
        >>> import gunpy
        >>> G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=False)
        >>> G.num_vertices, G.num_edges
        (3, 6)
        """
        backend = _device_backend({"src": src, "dst": dst, "weights": weights})
        if backend is not None:  # the CSR built on the device
            from gunpy.backends.interop import adopt_edges
            n = None if num_vertices is None else _as_count("num_vertices", num_vertices)
            dev = adopt_edges(backend, src, dst, weights, n, _index_dtype, mirror=not directed,
                              remove_self_loops=remove_self_loops,
                              remove_duplicates=remove_duplicates)
            G = cls(dev.row_offsets, dev.column_indices, dev.values, directed=directed,
                    node_labels=node_labels, copy=False)
            G._symmetric = not directed
            return G
        # validated, never converted blindly, and only read: build_csr writes new arrays
        s = _as_id_array("src", src)
        d = _as_id_array("dst", dst)
        if s.shape[0] != d.shape[0]:
            raise ValueError(f"src and dst differ in length ({s.shape[0]} vs {d.shape[0]})")
        if s.dtype != d.dtype:
            s, d = s.astype(np.int64, copy=False), d.astype(np.int64, copy=False)
        w = None if weights is None else _as_weights(weights, s.shape[0])
        top = int(max(s.max(initial=-1), d.max(initial=-1))) + 1
        if num_vertices is None:
            n = top
        else:
            n = _as_count("num_vertices", num_vertices)
            if top > n:
                which = "src" if s.max(initial=-1) >= n else "dst"
                arr = s if which == "src" else d
                bad = int(np.flatnonzero(arr >= n)[0])
                raise ValueError(f"{which}[{bad}] = {arr[bad]} is out of range for "
                                 f"num_vertices = {n}")
        # undirected: every edge also stored reversed (a self-loop once), without
        # building the reversed list
        ro, ci, vals = build_csr(s, d, w, n, remove_self_loops=remove_self_loops,
                                 remove_duplicates=remove_duplicates,
                                 index_dtype=_index_dtype(n), mirror=not directed)
        if node_labels is not None and len(node_labels) != n:
            raise ValueError(f"node_labels has {len(node_labels)} entries for {n} vertices")
        G = cls(ro, ci, vals, directed=directed, node_labels=node_labels, _trusted=True)
        G._symmetric = not directed  # mirrored by build_csr: symmetric by construction
        return G

    @classmethod
    def from_scipy(cls, A, *, directed=None, remove_self_loops=True, remove_duplicates=True):
        """Build a graph from a square scipy sparse matrix (``A[i, j]`` is edge i -> j).

        Every stored entry is an edge whose weight is the entry; boolean matrices
        give unweighted graphs. ``directed=None`` means undirected exactly when
        ``A`` is symmetric (structure and values). Entries must be real numbers
        (integers within +-2**53): complex or object matrices raise ``ValueError``.
        """
        if not sp.issparse(A):
            raise ValueError(f"expected a scipy sparse matrix, got {type(A).__name__}")
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"adjacency matrix must be square, got shape {A.shape}")
        coo = sp.coo_array(A)
        symmetric = _is_symmetric(A) if directed is not True else False
        if directed is None:
            directed = not symmetric
        weighted = coo.dtype != np.bool_
        # validated (and converted) by from_edges: a complex entry is refused, not cut
        w = coo.data if weighted else None
        src = coo.row.astype(np.int64)
        dst = coo.col.astype(np.int64)
        if not directed:
            # one copy of each unordered pair; from_edges mirrors it again
            if symmetric:
                keep = src <= dst
                src, dst = src[keep], dst[keep]
                w = None if w is None else w[keep]
            else:
                src, dst = np.minimum(src, dst), np.maximum(src, dst)
        return cls.from_edges(src, dst, w, num_vertices=A.shape[0], directed=directed,
                              remove_self_loops=remove_self_loops,
                              remove_duplicates=remove_duplicates)

    @classmethod
    def from_networkx(cls, nxg, *, weight="weight", remove_self_loops=True,
                      remove_duplicates=True):
        """Build a graph from a networkx graph.

        Nodes are numbered 0..n-1 in ``nxg``'s node order; ``G.node_labels`` keeps
        the original nodes. The graph is weighted when any edge has the ``weight``
        attribute (missing weights count as 1). A weight must be a real number
        (``None``, strings and integers beyond +-2**53, which float64 would round,
        raise ``ValueError`` naming the edge).
        """
        nodes = list(nxg.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        edges = list(nxg.edges(data=True))
        src = np.fromiter((index[u] for u, _, _ in edges), dtype=np.int64, count=len(edges))
        dst = np.fromiter((index[v] for _, v, _ in edges), dtype=np.int64, count=len(edges))
        w = None
        if weight is not None and any(weight in d for _, _, d in edges):
            w = _nx_weights([d.get(weight, 1) for _, _, d in edges], edges)
        labels = None if nodes == list(range(len(nodes))) else nodes
        return cls.from_edges(src, dst, w, num_vertices=len(nodes),
                              directed=nxg.is_directed(), remove_self_loops=remove_self_loops,
                              remove_duplicates=remove_duplicates, node_labels=labels)

    @classmethod
    def from_edge_index(cls, edge_index, edge_weight=None, *, num_nodes=None, directed=True,
                        remove_self_loops=True, remove_duplicates=True):
        """Build a graph from a PyTorch Geometric style ``edge_index`` (shape ``(2, E)``).

        ``edge_index[0]`` holds the sources and ``edge_index[1]`` the targets;
        ``edge_weight`` (optional) one weight per column, ``num_nodes`` the vertex
        count (default: the largest id + 1). PyG stores an undirected graph with both
        directions: pass ``directed=False`` and the duplicates merge. Any array in host
        memory works (NumPy, a PyTorch CPU tensor, anything with ``__dlpack__``), and a
        tensor on the GPU is built into a graph there; the rest is :meth:`from_edges`.

        >>> import numpy as np, gunpy
        >>> G = gunpy.Graph.from_edge_index(np.array([[0, 1, 1, 2], [1, 0, 2, 1]]),
        ...                                 directed=False)
        >>> G.num_vertices, G.num_edges
        (3, 4)
        """
        if _device_backend({"edge_index": edge_index}) is not None:
            from gunpy.backends.interop import device_view
            ei = device_view("edge_index", edge_index)
        else:
            ei = _host("edge_index", edge_index)
        if ei.ndim != 2 or ei.shape[0] != 2:
            raise ValueError(f"edge_index must have shape (2, E) (sources, then targets), "
                             f"got shape {ei.shape}")
        return cls.from_edges(ei[0], ei[1], edge_weight, num_vertices=num_nodes,
                              directed=directed, remove_self_loops=remove_self_loops,
                              remove_duplicates=remove_duplicates)

    @classmethod
    def from_pandas(cls, df, source="source", target="target", edge_attr=None, *,
                    directed=True, renumber=True, remove_self_loops=True,
                    remove_duplicates=True):
        """Build a graph from a table of edges: one row per edge (networkx's
        ``from_pandas_edgelist`` arguments).

        Parameters
        ----------
        df : pandas.DataFrame, or any table whose ``df[column]`` is array-like
            (a pyarrow ``Table``, a polars ``DataFrame``, a dict of arrays), or a table in
            GPU memory (a cuDF ``DataFrame``), built there: integer labels renumbered on
            the GPU, others (strings, floats) on the host (the label columns copied down
            once, their ids up once).
        source, target : column names
        edge_attr : column name, optional
            The weight column (one column; ``None`` for an unweighted graph).
        directed : bool, default True
        renumber : bool, default True
            Vertices are the distinct labels of ``source`` and ``target`` (any
            hashable values: strings, integers...), numbered in sorted order
            (labels that cannot be sorted: in order of first appearance), kept in
            ``G.node_labels``; the same vertex set as networkx's. ``False``: the
            columns are integer vertex ids ``0..n-1`` used as they are.

        >>> import pandas as pd, gunpy
        >>> df = pd.DataFrame({"source": ["a", "b"], "target": ["b", "c"], "w": [2.0, 3.0]})
        >>> G = gunpy.Graph.from_pandas(df, edge_attr="w", directed=False)
        >>> G.node_labels, G.num_edges
        (['a', 'b', 'c'], 4)
        """
        if edge_attr is not None and not isinstance(edge_attr, (str, int)):
            raise ValueError(f"edge_attr must name one column (the weight), got {edge_attr!r}")
        cols = {}
        for role, col in (("source", source), ("target", target), ("edge_attr", edge_attr)):
            if col is None:
                continue
            try:
                cols[f"column {col!r}"] = df[col]
            except (KeyError, IndexError):
                have = list(getattr(df, "columns", getattr(df, "keys", lambda: [])()))
                raise ValueError(f"{role}={col!r} is not a column of the table "
                                 f"(columns: {have})") from None
        s, d, weights, labels, n = table_edges(cols, renumber)
        return cls.from_edges(s, d, weights, num_vertices=n, directed=directed,
                              remove_self_loops=remove_self_loops,
                              remove_duplicates=remove_duplicates, node_labels=labels)

    # ---------------------------------------------------------------- convert
    def to_scipy(self):
        """The adjacency matrix as a ``scipy.sparse.csr_array`` (weights, or ones)."""
        data = self.values if self.values is not None else np.ones(self.num_edges)
        return sp.csr_array((data.copy(), self.column_indices.copy(), self.row_offsets.copy()),
                            shape=(self.num_vertices, self.num_vertices))

    def to_networkx(self):
        """A ``networkx.Graph`` (or ``DiGraph``) with the original node labels."""
        import networkx as nx
        g = nx.DiGraph() if self.directed else nx.Graph()
        labels = self.labels()
        g.add_nodes_from(labels)
        src = np.repeat(np.arange(self.num_vertices), self.out_degrees())
        if self.values is None:
            g.add_edges_from((labels[u], labels[v]) for u, v in zip(src, self.column_indices))
        else:
            g.add_weighted_edges_from((labels[u], labels[v], float(w)) for u, v, w in
                                      zip(src, self.column_indices, self.values))
        return g

    def labels(self):
        """Node labels as a list (0..n-1 when the graph has none)."""
        if self.node_labels is None:
            return list(range(self.num_vertices))
        return list(self.node_labels)

    # ----------------------------------------------------------------- arrays
    # Read-only; assigning a new array validates and copies it, then drops what
    # was derived from the old one (backend copies, the reverse view, degrees).
    @property
    def row_offsets(self):
        ro = self._row_offsets
        return ro if ro is not None else self._host_view()[0]

    @row_offsets.setter
    def row_offsets(self, a):
        ro = _as_row_offsets(a)
        n = ro.shape[0] - 1
        ci = self._leave_device()[1]
        _check_offsets(ro, ci.shape[0])
        if ci.size and ci.max() >= n:
            i = int(np.argmax(ci >= n))
            raise ValueError(f"column_indices[{i}] = {ci[i]} is out of range for {n} vertices "
                             f"(ids 0..{n - 1})")
        if ci.dtype != _index_dtype(n):
            ci = ci.astype(_index_dtype(n))
        if self.node_labels is not None and len(self.node_labels) != n:
            raise ValueError(f"node_labels has {len(self.node_labels)} entries for {n} vertices")
        self._row_offsets, self._column_indices = _frozen(ro), _frozen(ci)
        self._symmetric = False
        self._invalidate()

    @property
    def column_indices(self):
        ci = self._column_indices
        return ci if ci is not None else self._host_view()[1]

    @column_indices.setter
    def column_indices(self, a):
        ci = _as_column_indices(a, self.num_vertices)
        _check_offsets(self._leave_device()[0], ci.shape[0])
        self._column_indices = _frozen(ci)
        self._symmetric = False
        self._invalidate()

    @property
    def values(self):
        dev = self._on_device
        if dev is not None and self._row_offsets is None and dev.values is not None:
            return self._host_view()[2]
        return self._values

    @values.setter
    def values(self, a):
        self._leave_device()
        self._values = None if a is None else _frozen(_as_weights(a, self.num_edges))
        self._invalidate()

    # ------------------------------------------------------------ device memory
    @property
    def on_device(self):
        """Where the graph's arrays were given, when that is device memory (``"CUDA
        device 0"``), else None.

        A graph built from arrays in GPU memory keeps them there: the CUDA backend reads
        them in place, and a host copy (``G.row_offsets`` and the other NumPy views,
        ``csc()``, ``to_scipy()``...) is made only when one of those is first read.
        """
        return None if self._on_device is None else self._on_device.device

    @property
    def index_dtype(self):
        """``column_indices``' dtype (int32, or int64 past 2**31 - 1 vertices), read
        without a host copy."""
        if self._on_device is not None:
            return self._on_device.column_indices.dtype
        return self._column_indices.dtype

    def _host_view(self):
        """The host arrays of a graph given in device memory, copied down on first use."""
        if self._row_offsets is None:
            dev = self._on_device
            self._row_offsets = _frozen(dev.row_offsets.copy_to_host())
            self._column_indices = _frozen(dev.column_indices.copy_to_host())
            self._values = None if dev.values is None else _frozen(dev.values.copy_to_host())
        return self._row_offsets, self._column_indices, self._values

    def _leave_device(self):
        """Host arrays from now on (an array is being rebound): the device ones dropped."""
        arrays = (self._row_offsets, self._column_indices, self._values) \
            if self._on_device is None else self._host_view()
        self._on_device = None
        return arrays

    def to_host(self):
        """This graph with its arrays in host memory (itself when they are there already)."""
        if self._on_device is None:
            return self
        ro, ci, vals = self._host_view()
        return Graph(ro, ci, vals, directed=self.directed, node_labels=self.node_labels,
                     _trusted=True)

    def _invalidate(self):
        self._device.clear()
        self._csc = None
        self._degrees = None

    # pickle / copy.deepcopy: the host arrays only (backend copies are per process)
    def __getstate__(self):
        self._host_view() if self._on_device is not None else None
        state = self.__dict__.copy()
        state.update(_device=None, _csc=None, _degrees=None, _on_device=None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_row_offsets", "_column_indices", "_values"):
            _frozen(getattr(self, name))
        self._device = DeviceCache()

    # ------------------------------------------------------------- properties
    @property
    def num_vertices(self):
        ro = self._row_offsets
        return (ro if ro is not None else self._on_device.row_offsets).shape[0] - 1

    @property
    def num_edges(self):
        ci = self._column_indices
        return (ci if ci is not None else self._on_device.column_indices).shape[0]

    @property
    def weighted(self):
        if self._on_device is not None:
            return self._on_device.values is not None
        return self._values is not None

    def out_degrees(self):
        """Out-degree of every vertex (int64)."""
        if self._degrees is None:
            self._degrees = _frozen(np.diff(self.row_offsets))
        return self._degrees

    def in_degrees(self):
        """In-degree of every vertex (int64); an undirected graph's are its out-degrees
        (no reverse graph is built)."""
        return np.diff(self.csc().in_offsets if self.directed else self.row_offsets)

    def csc(self, *, edge_ids=True):
        """The reverse (in-edge) view, built once on first use (pull needs it).

        An undirected graph is its own reverse: ``in_offsets`` and ``in_indices`` are
        ``row_offsets`` and ``column_indices`` themselves, and only ``in_edge_ids`` (the
        CSR id of the edge ``u -> v`` stored at ``v``'s in-edge from ``u``, the "twins"
        map) is built. ``edge_ids=False``: a caller that never reads ``in_edge_ids``
        (a pull whose hooks read neither ``edge`` nor ``weight``) gets it as ``None``
        unless it is built already, and an undirected graph then builds nothing. A
        directed graph's transpose always comes with its edge ids (the same pass).
        """
        if self._csc is None:
            if not self.directed and not edge_ids:
                return CSC(self.row_offsets, self.column_indices, None)
            if self.directed:
                c = CSC(*transpose_csr(self.row_offsets, self.column_indices,
                                       self.num_vertices))
            else:
                # the graph is its own reverse; edge ids still map to the CSR edge u->v
                c = CSC(self.row_offsets, self.column_indices,
                        reverse_edge_ids(self.row_offsets, self.column_indices,
                                         self.num_vertices, symmetric=self._symmetric))
            for arr in c:
                _frozen(arr)
            self._csc = c
        return self._csc

    def nbytes(self, *, with_csc=False):
        """Bytes the graph's arrays take on a device (counted, not read: a graph in device
        memory makes no host copy for it)."""
        csr = 8 * (self.num_vertices + 1) + self.index_dtype.itemsize * self.num_edges
        return csr + 8 * self.num_edges * (self.weighted + with_csc) + csr * with_csc

    def release_device(self):
        """Drop the copies backends keep for this graph (GPU memory included).

        A backend copies the graph once, on first use, and keeps it (with the
        reverse graph and the all-edges id array that CC's edge frontier
        starts from) so that later runs start at once; this frees them, for
        every backend object. They are rebuilt when needed.

        The copies never go stale: the graph's arrays are read-only, and
        assigning a new ``row_offsets``, ``column_indices`` or ``values``
        drops them (and the reverse view) by itself. Copies are keyed by
        the backend object (two backends of one name never share one) and
        held as long as the graph is.
        """
        self._device.clear()

    def __repr__(self):
        kind = "directed" if self.directed else "undirected"
        w = ", weighted" if self.weighted else ""
        where = "" if self._on_device is None else f", on {self.on_device}"
        return (f"<gunpy.Graph {kind}{w}: {self.num_vertices} vertices, {self.num_edges} "
                f"edges{where}>")
