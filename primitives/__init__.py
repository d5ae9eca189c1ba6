"""Graph primitives built on gunpy's operators (installed as ``gunpy.primitives``).

Each module is one primitive and registers one :class:`gunpy.registry.Primitive`
entry at its end; importing this package registers the built-in ones.
"""
from gunpy.primitives import bfs, sssp, bc, cc, pagerank, triangles, lcc, cdlp, louvain, kcore, hits, ppr, spmv, color, scc, mst, geo  # noqa: F401,E501  (register)
