"""What the blas algorithms share: the matrix of a graph, source checks, stats."""

import time

import numpy as np

from gunpy.blas.matrix import Matrix
from gunpy.graph import Graph
from gunpy.result import Stats

__all__ = ["as_matrix", "check_source", "Timer"]


def as_matrix(G, backend):
    """``(matrix, graph)``: the adjacency matrix of a Graph (or a Matrix itself)."""
    if isinstance(G, Matrix):
        return G, G.to_graph()
    if not isinstance(G, Graph):
        raise TypeError(f"expected a gunpy.Graph or a gunpy.blas.Matrix, got {type(G).__name__}")
    return Matrix.from_graph(G, backend=backend), G


def check_source(source, n):
    if isinstance(source, (bool, np.bool_)) or not isinstance(source, (int, np.integer)):
        raise TypeError(f"source must be an integer vertex id, got {source!r}")
    if not 0 <= int(source) < n:
        raise IndexError(f"source {int(source)} is out of range for a graph with {n} vertices")
    return int(source)


class Timer:
    """Wall time of an algorithm (device work included) into a :class:`Stats`."""

    def __init__(self, A):
        self.A = A
        self.t0 = time.perf_counter()

    def stats(self, iterations, edges=0, **extra):
        self.A.backend.synchronize()
        st = Stats(backend=self.A.backend.name, iterations=iterations, edges_visited=int(edges),
                   elapsed_ms=(time.perf_counter() - self.t0) * 1e3)
        st.extra.update(extra, formulation="graphblas")
        return st
