"""Graph generators: Graph500's Kronecker (R-MAT) graphs, 2-D grids, paths and stars.

:func:`rmat` follows the Graph500 specification's reference generator
(``octave/kronecker_generator.m``): ``2**scale`` vertices, ``edge_factor *
2**scale`` edge tuples, each placed by ``scale`` independent quadrant choices
with initiator probabilities ``a, b, c, d = 1 - a - b - c``, then a random
vertex permutation and an edge shuffle. It is vectorised NumPy (a loop over the
``scale`` bits only): scale 20 takes about 3 s on a 2-core machine.
:func:`grid_2d` is the large-diameter stand-in for road networks.
"""

import numpy as np

from gunpy.graph import Graph

__all__ = ["rmat", "kronecker_edges", "grid_2d", "path", "star"]


def _check_int(name, value, lo, hi=None):
    if isinstance(value, (bool, np.bool_)) or int(value) != value:
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise ValueError(f"{name} must be {rng}, got {value}")
    return value


def _weights(rng, m, weighted, weight_range):
    if weight_range is not None:
        lo, hi = weight_range
        if not (np.isfinite(lo) and np.isfinite(hi) and 0 <= lo <= hi):
            raise ValueError(f"weight_range must be (lo, hi) with 0 <= lo <= hi, got {weight_range}")
        return rng.integers(int(lo), int(hi) + 1, m).astype(np.float64)
    if weighted:
        return rng.random(m)
    return None


def kronecker_edges(scale, edge_factor=16, *, seed=0, a=0.57, b=0.19, c=0.19, permute=True):
    """Graph500 kernel-1 input: ``(src, dst)`` int64 arrays of ``edge_factor * 2**scale`` tuples.

    Self-loops and duplicates are kept, as the specification requires of the edge list.
    """
    scale = _check_int("scale", scale, 1, 40)
    edge_factor = _check_int("edge_factor", edge_factor, 1)
    for name, p in (("a", a), ("b", b), ("c", c)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be a probability in [0, 1], got {p}")
    if a + b + c > 1.0 + 1e-12:
        raise ValueError(f"a + b + c must be at most 1, got {a + b + c}")
    rng = np.random.default_rng(seed)
    n = 1 << scale
    m = edge_factor * n
    ab = a + b
    acc = np.uint32 if scale <= 32 else np.uint64
    src = np.zeros(m, dtype=acc)
    dst = np.zeros(m, dtype=acc)
    for bit in range(scale):
        # The reference flips ii with P(ii) = c + d, then jj given ii; the joint law is
        # just the quadrant (0,0) a, (0,1) b, (1,0) c, (1,1) d: one draw per level.
        u = rng.random(m, dtype=np.float32)
        ii = u >= ab
        jj = (u >= a) & ~ii | (u >= ab + c)
        src |= ii.astype(acc) << acc(bit)
        dst |= jj.astype(acc) << acc(bit)
    src = src.astype(np.int64)
    dst = dst.astype(np.int64)
    if permute:
        perm = rng.permutation(n)
        src = perm[src]
        dst = perm[dst]
        order = rng.permutation(m)
        src, dst = src[order], dst[order]
    return src, dst


def rmat(scale, edge_factor=16, *, seed=0, a=0.57, b=0.19, c=0.19, weighted=False,
         directed=False, permute=True, weight_range=None):
    """A Graph500 Kronecker graph with ``2**scale`` vertices.

    Parameters
    ----------
    scale : int
        log2 of the vertex count (1..40).
    edge_factor : int, default 16
        Edge tuples per vertex (half the average degree of the undirected graph).
    seed : int, default 0
    a, b, c : float
        Initiator probabilities (Graph500: 0.57, 0.19, 0.19; ``d = 1 - a - b - c``).
    weighted : bool, default False
        Graph500 weights, uniform in [0, 1).
    directed : bool, default False
        Graph500 graphs are undirected: each tuple is stored both ways.
    permute : bool, default True
        Randomly relabel the vertices and shuffle the tuples.
    weight_range : (int, int), optional
        Uniform integer weights in ``[lo, hi]`` instead (Gunrock's SSSP uses 1..64).

    Returns
    -------
    Graph
        Self-loops and duplicate edges removed (a duplicate keeps its minimum
        weight); isolated vertices kept, so ``num_vertices == 2**scale``.

    Examples
    --------
    >>> from gunpy import generators
    >>> G = generators.rmat(10, seed=1)
    >>> G.num_vertices, G.directed
    (1024, False)
    """
    src, dst = kronecker_edges(scale, edge_factor, seed=seed, a=a, b=b, c=c, permute=permute)
    w = _weights(np.random.default_rng([seed, 1]), src.shape[0], weighted, weight_range)
    return Graph.from_edges(src, dst, w, num_vertices=1 << int(scale), directed=directed)


def grid_2d(rows, cols, *, drop=0.0, seed=0, weighted=False, weight_range=None):
    """A 4-neighbour lattice (vertex ``r * cols + c``): a large-diameter, road-like graph.

    ``drop`` removes that fraction of the edges at random.

    Examples
    --------
    >>> from gunpy import generators
    >>> G = generators.grid_2d(3, 4)
    >>> G.num_vertices, G.num_edges // 2
    (12, 17)
    """
    rows = _check_int("rows", rows, 1)
    cols = _check_int("cols", cols, 1)
    if not 0.0 <= drop < 1.0:
        raise ValueError(f"drop must be in [0, 1), got {drop}")
    ids = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    rng = np.random.default_rng(seed)
    if drop > 0:
        keep = rng.random(src.shape[0]) >= drop
        src, dst = src[keep], dst[keep]
    w = _weights(rng, src.shape[0], weighted, weight_range)
    return Graph.from_edges(src, dst, w, num_vertices=rows * cols, directed=False)


def path(n, *, directed=False):
    """The path 0 - 1 - ... - (n-1)."""
    n = _check_int("n", n, 1)
    return Graph.from_edges(np.arange(n - 1), np.arange(1, n), num_vertices=n,
                            directed=directed)


def star(leaves, *, directed=False):
    """Vertex 0 joined to ``leaves`` leaves 1..leaves (a hub larger than a CTA when big)."""
    leaves = _check_int("leaves", leaves, 0)
    return Graph.from_edges(np.zeros(leaves, dtype=np.int64), np.arange(1, leaves + 1),
                            num_vertices=leaves + 1, directed=directed)
