"""Graph generators: Graph500's Kronecker (R-MAT) graphs, 2-D grids, paths and stars.

:func:`rmat` follows the Graph500 specification (``2**scale`` vertices,
``edge_factor * 2**scale`` edge tuples, each placed by ``scale`` independent
quadrant choices with initiator probabilities ``a, b, c, d = 1 - a - b - c``,
vertex labels scrambled) the way Graph500's parallel reference generator
(``generator/graph_generator.c``) does it: every tuple is a pure function of the
seed and its index (a counter-based random stream, here SplitMix64 of
``(seed, tuple index)``), and the labels are scrambled by a keyed bijection of
``0..2**scale-1`` (odd multiplications and xor-shifts), so the tuples are
generated on every core at once and the graph depends on the seed only, never
on the number of threads. The tuples come in index order: they are independent
draws, so their order carries no information (the reference's shuffle of the
list changes nothing in distribution). :func:`rmat` then builds the CSR in
parallel (:func:`gunpy._csr.build_csr`, mirrored in place for an undirected
graph): scale 20 takes about 1 s on a 2-core machine.
:func:`grid_2d` is the large-diameter stand-in for road networks.
"""

import numpy as np
from numba import prange

from gunpy import _csr
from gunpy._jitcache import cpu_jit
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
        lo, hi = _check_weight_range(weight_range)
        return rng.integers(lo, hi + 1, m).astype(np.float64)
    if weighted:
        return rng.random(m)
    return None


def _check_weight_range(weight_range):
    lo, hi = weight_range
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 <= lo <= hi):
        raise ValueError(f"weight_range must be (lo, hi) with 0 <= lo <= hi, got {weight_range}")
    lo, hi = int(lo), int(hi)
    if hi - lo >= 1 << 53:
        raise ValueError(f"weight_range spans more than 2**53 integers: {weight_range}")
    return lo, hi


# ----------------------------------------------------------------------------- random stream
# SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): output n of the stream seeded by key is
# mix(key + (n + 1) * GOLDEN), so any output is computed directly from its index.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
#: bits of one quadrant draw: three draws per 64-bit output, probabilities to 2**-21
#: (Graph500's reference generator draws them to 10**-4)
_DRAW_BITS = 21
_DRAW_MASK = (1 << _DRAW_BITS) - 1
#: tuples per parallel block
_BLOCK = 2048


def _mix_np(z):
    """SplitMix64's finaliser of ``z`` (uint64, a scalar or an array); NumPy runs it as
    written, :func:`_mix` is the kernels' compiled copy."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


_mix = cpu_jit(inline="always")(_mix_np)


@cpu_jit(inline="always")
def _quadrant(r, u, v, t_a, t_ab, t_abc):
    """One level: ``r`` uniform in 0..2**21-1 picks (0,0) below t_a, (0,1) below t_ab,
    (1,0) below t_abc, else (1,1); the bits are appended to ``u`` and ``v`` (all int32:
    eight lanes a vector)."""
    i = np.int32(r >= t_ab)
    j = np.int32(r >= t_a) ^ i ^ np.int32(r >= t_abc)
    return (u << np.int32(1)) | i, (v << np.int32(1)) | j


@cpu_jit(inline="always")
def _levels(u, v, state0, step, w0, w1, t_a, t_ab, t_abc):
    """Words ``w0 .. w1 - 1`` (at most 10: 30 levels, an int32) of a block's tuples,
    appended to ``u`` and ``v``; tuple t's word w is output ``state0 + (w + 1) * GOLDEN +
    t * step`` of the stream, its three draws bits 1-21, 22-42 and 43-63."""
    mask = np.uint64(_DRAW_MASK)
    for w in range(w0, w1):
        state = state0 + np.uint64(w + 1) * _GOLDEN
        for t in range(u.shape[0]):
            h = _mix(state) >> np.uint64(1)
            state += step
            x, y = _quadrant(np.int32(h & mask), u[t], v[t], t_a, t_ab, t_abc)
            x, y = _quadrant(np.int32((h >> np.uint64(_DRAW_BITS)) & mask), x, y,
                             t_a, t_ab, t_abc)
            x, y = _quadrant(np.int32(h >> np.uint64(2 * _DRAW_BITS)), x, y,
                             t_a, t_ab, t_abc)
            u[t] = x
            v[t] = y


def _scramble_np(x, mask, half, k0, k1, k2, one):
    """A keyed bijection of ``0..mask`` (``mask = 2**scale - 1``): odd multiplications
    mod 2**scale carry low bits up, xor-shifts by half the width carry high bits down.
    Every argument is of one unsigned type and ``one`` is its 1: uint64 scalars or
    arrays, or uint32 for ``scale <= 32`` (the same values: a product's low 32 bits
    depend on its factors' low 32 bits only), eight lanes a vector. NumPy runs it as
    written; :func:`_scramble` is the kernels' compiled copy."""
    x = ((x ^ k0) * (k1 | one)) & mask
    x ^= x >> half
    x = ((x ^ k2) * (k0 | one)) & mask
    x ^= x >> half
    x = ((x ^ k1) * (k2 | one)) & mask
    x ^= x >> half
    return x


_scramble = cpu_jit(inline="always")(_scramble_np)


@cpu_jit(parallel=True)
def _kronecker_fill(first, src, dst, scale, t_a, t_ab, t_abc, key, permute, k0, k1, k2):
    # 1. tuple t (index first + t of the whole list) takes outputs words * (first + t) ..
    #    words * (first + t) + words - 1 of the stream, three levels per output; the
    #    loops run level-major over a block of tuples so that they vectorise, the first
    #    30 levels in one int32 pair, any more in a second
    m = src.shape[0]
    words = (scale + 2) // 3
    step = np.uint64(words) * _GOLDEN
    extra = np.uint64(3 * words - scale)  # levels drawn past scale, dropped
    later = np.uint64(3 * max(words - 10, 0))
    mask = np.uint64((1 << scale) - 1)
    half = np.uint64(max(scale // 2, 1))
    a = np.int32(t_a)
    ab = np.int32(t_ab)
    abc = np.int32(t_abc)
    narrow = scale <= 32
    mask32, half32 = np.uint32(mask & np.uint64(0xFFFFFFFF)), np.uint32(half)
    j0, j1, j2 = np.uint32(k0 & mask), np.uint32(k1 & mask), np.uint32(k2 & mask)
    one, one32 = np.uint64(1), np.uint32(1)
    for b in prange((m + _BLOCK - 1) // _BLOCK):
        lo = b * _BLOCK
        cnt = min(m, lo + _BLOCK) - lo
        state0 = key + np.uint64(first + lo) * step
        u = np.zeros(cnt, dtype=np.int32)
        v = np.zeros(cnt, dtype=np.int32)
        _levels(u, v, state0, step, 0, min(words, 10), a, ab, abc)
        u2 = np.zeros(cnt if words > 10 else 0, dtype=np.int32)
        v2 = np.zeros(cnt if words > 10 else 0, dtype=np.int32)
        if words > 10:
            _levels(u2, v2, state0, step, 10, words, a, ab, abc)
        # 2. the labels scrambled
        for t in range(cnt):
            x = np.uint64(u[t])
            y = np.uint64(v[t])
            if words > 10:
                x = (x << later) | np.uint64(u2[t])
                y = (y << later) | np.uint64(v2[t])
            x >>= extra
            y >>= extra
            if permute and narrow:
                src[lo + t] = _scramble(np.uint32(x), mask32, half32, j0, j1, j2, one32)
                dst[lo + t] = _scramble(np.uint32(y), mask32, half32, j0, j1, j2, one32)
            elif permute:
                src[lo + t] = _scramble(x, mask, half, k0, k1, k2, one)
                dst[lo + t] = _scramble(y, mask, half, k0, k1, k2, one)
            else:
                src[lo + t] = x
                dst[lo + t] = y


@cpu_jit(parallel=True)
def _uniform_fill(first, out, key, lo, span):
    # out[t] = draw first + t of the stream: uniform in [0, 1) (span 0), or an integer
    # lo .. lo + span - 1
    m = out.shape[0]
    for b in prange((m + _BLOCK - 1) // _BLOCK):
        for t in range(b * _BLOCK, min(m, (b + 1) * _BLOCK)):
            h = _mix(key + np.uint64(first + t + 1) * _GOLDEN)
            x = np.float64(h >> np.uint64(11)) * (1.0 / 9007199254740992.0)
            if span > 0:
                x = lo + min(np.floor(x * span), span - 1.0)
            out[t] = x


def _keys(seed):
    """Stream keys from ``seed`` (anything ``np.random.SeedSequence`` takes): the edges',
    the labels' and the weights'."""
    return [np.uint64(k) for k in np.random.SeedSequence(seed).generate_state(3, np.uint64)]


def _thresholds(a, b, c):
    for name, p in (("a", a), ("b", b), ("c", c)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be a probability in [0, 1], got {p}")
    if a + b + c > 1.0 + 1e-12:
        raise ValueError(f"a + b + c must be at most 1, got {a + b + c}")
    one = 1 << _DRAW_BITS
    return tuple(min(one, round(p * one)) for p in (a, a + b, a + b + c))


#: Lists up to this many tuples (scale 14 at edge factor 16) are generated with NumPy,
#: the same arithmetic on whole arrays: done before the kernel would be loaded
NUMPY_MAX_TUPLES = 1 << 18


def _kronecker_numpy(first, src, dst, scale, t_a, t_ab, t_abc, key, permute, k0, k1, k2):
    """:func:`_kronecker_fill`'s twin in NumPy (uint64 arrays wrap as the kernel does)."""
    m = src.shape[0]
    words = (scale + 2) // 3
    with np.errstate(over="ignore"):
        step = np.uint64(words) * _GOLDEN
        base = np.arange(first, first + m, dtype=np.uint64) * step
        u = np.zeros(m, dtype=np.int64)
        v = np.zeros(m, dtype=np.int64)
        for w in range(words):
            h = (_mix_np(base + (key + np.uint64(w + 1) * _GOLDEN)) >> np.uint64(1))
            h = h.astype(np.int64)
            for q in range(3):
                r = (h >> (q * _DRAW_BITS)) & _DRAW_MASK
                i = (r >= t_ab).astype(np.int64)
                j = (r >= t_a) ^ (r >= t_ab) ^ (r >= t_abc)
                u = (u << 1) | i
                v = (v << 1) | j
        extra = 3 * words - scale
        x = (u >> extra).astype(np.uint64)
        y = (v >> extra).astype(np.uint64)
        if permute:
            mask = np.uint64((1 << scale) - 1)
            half = np.uint64(max(scale // 2, 1))
            x = _scramble_np(x, mask, half, k0, k1, k2, np.uint64(1))
            y = _scramble_np(y, mask, half, k0, k1, k2, np.uint64(1))
    src[:] = x
    dst[:] = y


def _kronecker(scale, edge_factor, seed, a, b, c, permute, dtype, first=0, count=None,
               _impl=None):
    """Tuples ``first .. first + count - 1`` of the Graph500 edge list, as ``dtype`` arrays."""
    scale = _check_int("scale", scale, 1, 40)
    edge_factor = _check_int("edge_factor", edge_factor, 1)
    t_a, t_ab, t_abc = _thresholds(a, b, c)
    key, scramble, _ = _keys(seed)
    k0, k1, k2 = (x & np.uint64((1 << scale) - 1) for x in
                  np.random.SeedSequence(int(scramble)).generate_state(3, np.uint64))
    m = (edge_factor << scale) if count is None else int(count)
    src = np.empty(m, dtype=dtype)
    dst = np.empty(m, dtype=dtype)
    if _impl is None:
        _impl = "numpy" if m <= NUMPY_MAX_TUPLES else "numba"
    args = (int(first), src, dst, scale, t_a, t_ab, t_abc, key, bool(permute), k0, k1, k2)
    if _impl == "numpy":
        _kronecker_numpy(*args)
    else:
        with _csr._parallel_region():
            _kronecker_fill(*args)
    return src, dst


def kronecker_edges(scale, edge_factor=16, *, seed=0, a=0.57, b=0.19, c=0.19, permute=True):
    """Graph500 kernel-1 input: ``(src, dst)`` int64 arrays of ``edge_factor * 2**scale`` tuples.

    Self-loops and duplicates are kept, as the specification requires of the edge
    list. Tuple ``i`` depends only on ``seed`` and ``i`` (see the module notes), so
    the list is the same on any number of threads. ``permute=False`` leaves the
    labels unscrambled (vertex 0 is the largest hub).
    """
    return _kronecker(scale, edge_factor, seed, a, b, c, permute, np.int64)


def _stream_weights(seed, m, weighted, weight_range, first=0, _impl=None):
    """Weights ``first .. first + m - 1`` of the seed's weight stream (None if unweighted)."""
    if weight_range is None and not weighted:
        return None
    lo, span = 0, 0
    if weight_range is not None:
        lo, hi = _check_weight_range(weight_range)
        span = hi - lo + 1
    key = _keys(seed)[2]
    out = np.empty(m, dtype=np.float64)
    if _impl is None:
        _impl = "numpy" if m <= NUMPY_MAX_TUPLES else "numba"
    if _impl == "numba":
        with _csr._parallel_region():
            _uniform_fill(int(first), out, key, float(lo), float(span))
        return out
    with np.errstate(over="ignore"):
        h = _mix_np(key + (np.arange(first, first + m, dtype=np.uint64) + np.uint64(1))
                    * _GOLDEN)
    out[:] = (h >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
    if span > 0:
        out[:] = lo + np.minimum(np.floor(out * span), span - 1.0)
    return out


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
        Any seed ``numpy.random.SeedSequence`` takes; the graph depends on it only.
    a, b, c : float
        Initiator probabilities (Graph500: 0.57, 0.19, 0.19; ``d = 1 - a - b - c``).
    weighted : bool, default False
        Graph500 weights, uniform in [0, 1).
    directed : bool, default False
        Graph500 graphs are undirected: each tuple is stored both ways.
    permute : bool, default True
        Scramble the vertex labels (a keyed bijection, as Graph500's reference does).
    weight_range : (int, int), optional
        Uniform integer weights in ``[lo, hi]`` instead (Gunrock's SSSP uses 1..64).

    Returns
    -------
    Graph
        Self-loops and duplicate edges removed (a duplicate keeps its minimum
        weight); isolated vertices kept, so ``num_vertices == 2**scale``.

    Notes
    -----
    Generation and construction run on every core; the arrays do not depend on
    the number of threads. Peak memory is about twice the graph's (about 9 bytes
    per stored edge unweighted, the tuples included).

    Examples
    --------
    >>> from gunpy import generators
    >>> G = generators.rmat(10, seed=1)
    >>> G.num_vertices, G.directed
    (1024, False)
    """
    scale = _check_int("scale", scale, 1, 40)
    n = 1 << scale
    index = np.int32 if n - 1 <= np.iinfo(np.int32).max else np.int64
    src, dst = _kronecker(scale, edge_factor, seed, a, b, c, permute, index)
    w = _stream_weights(seed, src.shape[0], weighted, weight_range)
    ro, ci, vals = _csr.build_csr(src, dst, w, n, mirror=not directed, index_dtype=index)
    del src, dst, w
    return Graph(ro, ci, vals, directed=directed, _trusted=True)


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
