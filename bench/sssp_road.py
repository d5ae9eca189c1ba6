"""SSSP on the road network and the mesh: gunpy against scipy's Dijkstra, interleaved.

    python bench/sssp_road.py

Wall time per call, 5 rounds of 3 roots, the order alternating; the distances of
the last root are compared. (bench/road.py has the other primitives.)
"""
import time, statistics, numpy as np, scipy.sparse as sp, scipy.sparse.csgraph as csg, gunpy
from gunpy.bench.graphs import graph, weighted_twin
for name in ("luxembourg_osm", "delaunay_n16"):
    G = weighted_twin(graph(name, 1), 1)
    A = sp.csr_matrix((G.values, G.column_indices, G.row_offsets), shape=(G.num_vertices,)*2)
    roots = [0, 7, 1234]
    gunpy.sssp(G, 0, backend="cpu"); csg.dijkstra(A, indices=0)
    t = {"gunpy": [], "scipy": []}
    for rep in range(5):
        for r in roots:
            for lib in (("gunpy", "scipy") if rep % 2 else ("scipy", "gunpy")):
                s = time.perf_counter()
                if lib == "gunpy": d = gunpy.sssp(G, r, backend="cpu").distance
                else: e = csg.dijkstra(A, indices=r)
                t[lib].append((time.perf_counter() - s) * 1e3)
    assert np.allclose(np.where(np.isinf(e), np.inf, e), d)
    g, s = statistics.median(t["gunpy"]), statistics.median(t["scipy"])
    print(f"{name} SSSP gunpy {g:.2f} ms scipy {s:.2f} ms  gunpy x{s/g:.2f} of scipy")
