"""Helpers for gunpy's tests and for users testing their own primitives (a package of
its own, out of the runtime's way: nothing in gunpy's runtime imports it).

* :data:`ON_CUDASIM`: whether numba's CUDA simulator is active.
* :func:`install_simulator_shims`: the warp intrinsics numba's simulator lacks
  (explicit: nothing in gunpy installs them on import).
* :class:`PtxBackend`: a "cuda" backend that compiles every kernel it is asked
  to launch to PTX (``compile_ptx(..., cc=(9, 0))``) instead of running it, on
  a machine with no GPU or driver. Its ``read`` never returns 0, so a primitive
  driven through it walks every operator path for a couple of iterations.
* :func:`check_bfs_tree`: Graph500's five checks of a BFS parent tree.
* :func:`reference_depths`, :func:`reference_distances`: networkx oracles as arrays.
* :func:`to_nx`, :func:`reference_edges`: a graph's networkx twin and edge list, built
  from the raw edge list it was made from (:func:`raw_edges`), not from its CSR.
* :func:`nasty_graphs`: small graphs that break careless traversals (each remembers
  its raw edge list; :func:`graph_from_edges`, :func:`graph_from_networkx` and
  :func:`weighted_copy` make more that do).

Modules: :mod:`~gunpy.testing.simulator` (and :mod:`~gunpy.testing.simwarp`, the
shims), :mod:`~gunpy.testing.ptx` (compile-only backends, machine code),
:mod:`~gunpy.testing.oracles` (raw edge lists, networkx references, Graph500
checks), :mod:`~gunpy.testing.graphs` (the nasty graphs).

Importing this package imports numba; set ``NUMBA_ENABLE_CUDASIM`` before that
if you want the simulator.
"""

from gunpy.testing.simulator import ON_CUDASIM, install_simulator_shims
from gunpy.testing.ptx import (PtxBackend, machine_code_records, machine_code_reports,
                               machine_code_table, oldest_ptxas, ptxas_version,
                               OLDEST_CUDA13_NVCC)
from gunpy.testing.oracles import (RawEdges, check_bfs_tree, check_sssp_tree,
                                   graph_from_edges, graph_from_networkx, raw_edges,
                                   reference_depths, reference_distances, reference_edges,
                                   to_nx, weighted_copy)
from gunpy.testing.graphs import SIM_GRAPHS, graph_names, nasty_graphs

__all__ = ["ON_CUDASIM", "install_simulator_shims", "PtxBackend", "oldest_ptxas",
           "ptxas_version", "machine_code_reports", "machine_code_records", "machine_code_table",
           "check_bfs_tree",
           "check_sssp_tree", "reference_depths", "reference_distances", "reference_edges",
           "nasty_graphs", "to_nx", "graph_names", "SIM_GRAPHS", "RawEdges", "raw_edges",
           "graph_from_edges", "graph_from_networkx", "weighted_copy", "OLDEST_CUDA13_NVCC"]
