"""Graph algorithms written in GraphBLAS (LAGraph's style), one short file each.

Each takes a :class:`gunpy.Graph` (or a :class:`gunpy.blas.Matrix`) and returns
the native primitive's Result class, with the same meaning, so the two
formulations can be compared call for call:

=======================  ================================  ==============================
``bfs(G, source)``       levels and parents: push-pull     ``gunpy.bfs``
                         with masking, early exit and
                         operand reuse (push-pull paper,
                         algorithm 1)
``bfs_sigma(G, source)`` levels and shortest-path counts   TurboBFS
``bc(G, sources)``       Brandes on sigma                  ``gunpy.bc``
``sssp(G, source)``      Bellman-Ford on min_plus          ``gunpy.sssp``
``pagerank(G)``          plus_times, networkx's dangling   ``gunpy.pagerank``
                         rule
``triangle_count(G)``    L (L.T) masked by L               ``gunpy.triangle_count``
``lcc(G)``               U plus.pair D.T masked by U,      ``gunpy.lcc``
                         row sums over d (d - 1)
=======================  ================================  ==============================
"""

from gunpy.blas.algorithms.bc import bc
from gunpy.blas.algorithms.bfs import bfs, bfs_sigma
from gunpy.blas.algorithms.lcc import lcc
from gunpy.blas.algorithms.pagerank import pagerank
from gunpy.blas.algorithms.sssp import sssp
from gunpy.blas.algorithms.triangle_count import triangle_count

__all__ = ["bfs", "bfs_sigma", "bc", "sssp", "pagerank", "triangle_count", "lcc"]
