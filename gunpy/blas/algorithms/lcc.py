"""Local clustering coefficient in GraphBLAS (LAGraph's LCC): a masked ``plus_pair`` product.

``U`` is the undirected simple graph (``N(v)`` as row ``v``) and ``D`` the directed
one (``U`` itself for an undirected graph); both without self-loops::

    C<U>  = U plus.pair D.T        # C(v, u) = |N(v) & N_out(u)|: edges u -> w inside N(v)
    num   = C.reduce_rowwise()     # the edges between v's neighbours
    d     = U.reduce_rowwise()     # |N(v)| (U's entries are 1)
    lcc   = num ./ (d .* (d - 1))  # rows with no such edge are 0

The mask is applied before the multiply (:func:`gunpy.operators.intersect`), so the
product is formed only on ``U``'s entries, as :func:`gunpy.lcc` does natively.
"""

import numpy as np

from gunpy.blas import binary, semiring
from gunpy.blas.algorithms._common import Timer, as_matrix
from gunpy.blas.matrix import Matrix
from gunpy.primitives.lcc import LCCResult, neighbourhoods

__all__ = ["lcc"]


def lcc(G, *, backend="auto"):
    """Coefficients with :func:`gunpy.lcc`'s meaning (LDBC's LCC; networkx's ``clustering``
    on undirected graphs), and their mean in ``average``.

    Examples
    --------
    >>> import gunpy
    >>> from gunpy.blas import algorithms
    >>> G = gunpy.Graph.from_edges([0, 0, 1, 2], [1, 2, 2, 3], directed=False)
    >>> algorithms.lcc(G, backend="cpu").lcc.round(4).tolist()
    [1.0, 1.0, 0.3333, 0.0]
    """
    A, graph = as_matrix(G, backend)
    timer = Timer(A)
    U, D = _structure(A, graph)
    C = semiring.plus_pair(U @ D.T).new(mask=U.S)
    num = C.reduce_rowwise().new()
    d = U.reduce_rowwise().new()
    pairs = d.ewise_mult(d.apply(binary.minus, right=1.0).new(), binary.times).new()
    values = num.ewise_mult(pairs, binary.truediv).new().to_dense(0.0).astype(np.float64)
    n = A.nrows
    result = LCCResult(graph, timer.stats(1, edges=C.nvals), lcc=values)
    result.average = float(values.sum()) / n if n else float("nan")
    return result


def _structure(A, graph):
    """``(U, D)`` as matrices of ones, kept with ``A`` (LAGraph's cached properties)."""
    cached = A.properties.get("lcc.UD")
    if cached is not None and cached[0] is graph.row_offsets and cached[1] is graph.column_indices:
        return cached[2]
    Ug, Dg = neighbourhoods(graph)
    U = Matrix.from_graph(Ug, backend=A.backend)
    D = U if Dg is Ug else Matrix.from_graph(Dg, backend=A.backend)
    A.properties["lcc.UD"] = (graph.row_offsets, graph.column_indices, (U, D))
    return U, D
