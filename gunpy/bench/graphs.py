"""The benchmark graphs, their weighted twins and roots, as ``gunpy bench`` builds them."""

import numpy as np

from gunpy.result import component_edges  # noqa: F401  (the suite imports it from here)

__all__ = ["graph", "weighted_twin", "roots", "component_edges"]


def graph(name, seed):
    from gunpy import datasets, generators
    if name.startswith("rmat"):
        return generators.rmat(int(name[4:]), 16, seed=seed)
    if name.startswith("grid"):
        side = int(name[4:])
        return generators.grid_2d(side, side, drop=0.03, seed=seed)
    if name in datasets.available() or name in datasets.remote():
        return datasets.load(name, download=False)
    raise ValueError(f"unknown benchmark graph {name!r}")


def weighted_twin(G, seed):
    """Graph500 kernel-2 weights, uniform in [0, 1), the same both ways on undirected graphs."""
    import gunpy
    rng = np.random.default_rng([seed, 2])
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    dst = G.column_indices.astype(np.int64)
    if G.directed:
        return gunpy.Graph(G.row_offsets, G.column_indices, rng.random(G.num_edges),
                           directed=True)
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    key = lo * G.num_vertices + hi
    uniq, inv = np.unique(key, return_inverse=True)
    w = rng.random(uniq.size)[inv]
    return gunpy.Graph(G.row_offsets, G.column_indices, w, directed=False)


def roots(G, count, seed):
    deg = G.out_degrees()
    cand = np.flatnonzero(deg > 0)
    rng = np.random.default_rng([seed, 3])
    return rng.choice(cand, size=min(count, cand.size), replace=False).tolist()



