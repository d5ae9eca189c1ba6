"""Triangle counting in GraphBLAS: ``sum(L plus.pair L.T)`` masked by L (GraphBLAST section 6).

L is the strictly lower triangle of the undirected adjacency matrix. The mask
is applied before the multiply: each entry (i, j) of L intersects the sorted
rows i and j of L (:func:`gunpy.operators.intersect`), so the product is never
formed outside L.
"""

import numpy as np

from gunpy.blas import semiring
from gunpy.blas.algorithms._common import as_matrix
from gunpy.blas.core import Matrix
from gunpy.graph import Graph

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
    if graph.directed:
        # the undirected graph: both directions of every edge
        rows, cols, _ = A.to_coo()
        sym = Graph.from_edges(np.concatenate([rows, cols]), np.concatenate([cols, rows]),
                               num_vertices=A.nrows, directed=False)
        A = Matrix.from_graph(sym, backend=A.backend)
    L = A.select("tril", -1)
    C = semiring.plus_pair(L @ L.T).new(mask=L.S)
    total = C.reduce_scalar().value
    return int(total or 0)
