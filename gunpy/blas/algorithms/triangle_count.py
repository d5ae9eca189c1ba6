"""Triangle counting in GraphBLAS: ``sum(L plus.pair L.T)`` masked by L (GraphBLAST section 6).

L is the strictly lower triangle of the undirected adjacency matrix, its
vertices first relabelled by decreasing degree (LAGraph's presort): a row of L
then holds only neighbours of higher degree, so a hub's row is short. The mask
is applied before the multiply: each entry (i, j) of L intersects the sorted
rows i and j of L (:func:`gunpy.operators.intersect`), so the product is never
formed outside L.
"""

import numpy as np

from gunpy.blas import semiring
from gunpy.blas.algorithms._common import as_matrix
from gunpy.blas.matrix import Matrix

__all__ = ["triangle_count"]


def triangle_count(G, *, backend="auto"):
    """The number of triangles of ``G`` taken as undirected (self-loops ignored).

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.blas import algorithms
    >>> G = gunpy.Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3], directed=False)
    >>> algorithms.triangle_count(G, backend="cpu")
    1
    """
    A, graph = as_matrix(G, backend)
    L = _presorted_lower(A, graph)
    C = semiring.plus_pair(L @ L.T).new(mask=L.S)
    total = C.reduce_scalar().value
    return int(total or 0)


def _presorted_lower(A, graph):
    """L of the degree-relabelled undirected graph, kept with the matrix (LAGraph keeps such
    "cached properties" on its graph object); rebuilt if the graph's arrays change."""
    cached = A.properties.get("tc.L")
    if cached is not None and cached[0] is graph.row_offsets and cached[1] is graph.column_indices:
        return cached[2]
    rows, cols, _ = A.to_coo()
    n = A.nrows
    if graph.directed:   # the undirected graph: both directions of every edge
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
    off = rows != cols
    rows, cols = rows[off], cols[off]
    # presort: rank vertices by decreasing degree (ties by id)
    degree = np.bincount(rows, minlength=n)
    rank = np.empty(n, dtype=np.int64)
    rank[np.argsort(-degree, kind="stable")] = np.arange(n)
    r, c = rank[rows], rank[cols]
    lower = r > c
    key = np.sort(r[lower] * max(n, 1) + c[lower])
    if graph.directed:   # each undirected edge once
        key = key[np.concatenate(([True], key[1:] != key[:-1]))] if key.size else key
    lr = key // max(n, 1)
    offsets = np.searchsorted(lr, np.arange(n + 1))
    L = Matrix.from_csr(offsets, (key % max(n, 1)).astype(graph.column_indices.dtype), None,
                        A.dtype, backend=A.backend, check=False)
    A.properties["tc.L"] = (graph.row_offsets, graph.column_indices, L)
    return L
