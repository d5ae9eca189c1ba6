"""gunpy's benchmarks, kept out of the runtime's way (nothing in gunpy's runtime imports them).

* :mod:`gunpy.bench.suite`: ``gunpy bench``, gunpy beside the libraries a user would
  otherwise pick (scipy, SuiteSparse:GraphBLAS, NetworKit, igraph, networkx), the
  strategy table, plots; its pieces :mod:`gunpy.bench.graphs`, :mod:`gunpy.bench.peers`,
  :mod:`gunpy.bench.timing` (every library by wall time per call over the same inputs,
  interleaved, and gunpy alone), :mod:`gunpy.bench.cases`, :mod:`gunpy.bench.report`,
  :mod:`gunpy.bench.strategies` and :mod:`gunpy.bench.neighbours` (``--neighbours``:
  gunpy right after each peer's call);
* :mod:`gunpy.bench.startup`: ``gunpy bench --startup``, time to first result;
* :mod:`gunpy.bench.launch`: ``gunpy bench --launch``, the Python cost of a CUDA
  kernel launch, numba's path against gunpy's cached launcher;
* :mod:`gunpy.bench.dist`: ``gunpy dist bench``, gunpy.dist's weak scaling over MPI;
* :mod:`gunpy.bench.machine`: the one :func:`machine_info` they all print, and the
  harmonic mean of TEPS.
"""
from gunpy.bench.suite import (PRIMITIVES, build_parser, main, markdown, plots,  # noqa: F401
                               run_suite, strategy_markdown, strategy_table)
from gunpy.bench.machine import copy_bandwidth, harmonic, machine_info  # noqa: F401

__all__ = ["main", "run_suite", "build_parser", "markdown", "machine_info", "harmonic",
           "PRIMITIVES", "plots", "strategy_markdown", "strategy_table", "copy_bandwidth"]
