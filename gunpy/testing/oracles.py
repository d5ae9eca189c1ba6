"""Oracles: graphs that remember their raw edge lists, networkx twins and references built
from those lists (never from gunpy's CSR), and Graph500's checks of BFS / SSSP trees."""

import weakref
from collections import namedtuple

import networkx as nx
import numpy as np
from numba import prange

from gunpy._jitcache import cpu_jit
from gunpy.operators.common import lower_bound
from gunpy.graph import Graph

__all__ = ["RawEdges", "raw_edges", "graph_from_edges", "graph_from_networkx", "weighted_copy",
           "reference_edges", "to_nx", "reference_depths", "reference_distances",
           "check_bfs_tree", "check_sssp_tree"]


# The references are built from the edge list a test graph was made from, in plain
# Python, never from gunpy's CSR: a bug in CSR construction (a lost edge, a wrong
# dedup, a half-mirrored undirected edge, weights that do not follow their edge)
# then shows up as a disagreement instead of being copied into the oracle.

#: The input a test graph was built from: what was handed to :meth:`Graph.from_edges`
#: (``src``, ``dst`` and ``weights`` as tuples of Python numbers, ``weights`` None when
#: unweighted; ``num_vertices`` resolved to an int) and its flags.
RawEdges = namedtuple("RawEdges", "src dst weights num_vertices directed remove_self_loops "
                                  "remove_duplicates")

# Graph -> (RawEdges, the graph's arrays when recorded). Weak keys: a record lives as
# long as its graph; it is not pickled or deep-copied with it.
_RAW = weakref.WeakKeyDictionary()


def _arrays(G):
    return (G.row_offsets, G.column_indices, G.values)


def _remember(G, raw):
    _RAW[G] = (raw, _arrays(G))
    return G


def raw_edges(G):
    """The :class:`RawEdges` ``G`` was built from, or None.

    None for a graph not built by :func:`graph_from_edges` / :func:`nasty_graphs`
    (or a pickled or copied one), and for one whose arrays were rebound since
    (``G.values = w``): the record no longer describes it.
    """
    entry = _RAW.get(G)
    if entry is None:
        return None
    raw, arrays = entry
    return raw if all(a is b for a, b in zip(arrays, _arrays(G))) else None


def graph_from_edges(src, dst, weights=None, *, num_vertices=None, directed=True,
                     remove_self_loops=True, remove_duplicates=True):
    """:meth:`Graph.from_edges`, remembering its input for the oracles (:func:`raw_edges`)."""
    G = Graph.from_edges(src, dst, weights, num_vertices=num_vertices, directed=directed,
                         remove_self_loops=remove_self_loops,
                         remove_duplicates=remove_duplicates)
    s = tuple(int(x) for x in np.asarray(src).ravel())
    d = tuple(int(x) for x in np.asarray(dst).ravel())
    w = None if weights is None else tuple(float(x) for x in np.asarray(weights).ravel())
    n = max(s + d, default=-1) + 1 if num_vertices is None else int(num_vertices)
    return _remember(G, RawEdges(s, d, w, n, bool(directed), bool(remove_self_loops),
                                 bool(remove_duplicates)))


def graph_from_networkx(g):
    """:meth:`Graph.from_networkx` (nodes 0..n-1 in ``g``'s order), remembering ``g``'s edges."""
    G = Graph.from_networkx(g)
    index = {v: i for i, v in enumerate(g.nodes)}
    edges = list(g.edges(data="weight"))
    weighted = any(w is not None for _, _, w in edges)
    raw = RawEdges(tuple(index[u] for u, _, _ in edges), tuple(index[v] for _, v, _ in edges),
                   tuple(1.0 if w is None else float(w) for _, _, w in edges) if weighted
                   else None, len(index), g.is_directed(), True, True)
    return _remember(G, raw)


def weighted_copy(G, *, seed=0, low=1, high=9):
    """``G`` with integer weights in ``[low, high)``, one drawn per input edge.

    Built from ``G``'s raw edge list (so an input edge given twice gets two weights
    and the graph keeps the smaller; an undirected edge has one weight both ways),
    or from its CSR when it has none (undirected: one weight per pair ``u <= v``).
    """
    rng = np.random.default_rng(seed)
    raw = raw_edges(G)
    if raw is None:
        src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
        dst = np.asarray(G.column_indices, dtype=np.int64)
        if not G.directed:
            keep = src <= dst
            src, dst = src[keep], dst[keep]
        raw = RawEdges(tuple(src.tolist()), tuple(dst.tolist()), None, G.num_vertices,
                       G.directed, True, True)
    w = rng.integers(low, high, len(raw.src)).astype(np.float64)
    return graph_from_edges(list(raw.src), list(raw.dst), w, num_vertices=raw.num_vertices,
                            directed=raw.directed, remove_self_loops=raw.remove_self_loops,
                            remove_duplicates=raw.remove_duplicates)


def _edges_from_raw(raw):
    """The stored edges ``raw`` describes, by :meth:`Graph.from_edges`' documented rules."""
    weighted = raw.weights is not None
    edges = list(zip(raw.src, raw.dst, raw.weights if weighted else [None] * len(raw.src)))
    if not raw.directed:   # stored both ways (a self-loop once), mirrors after the input
        edges += [(v, u, w) for u, v, w in edges if u != v]
    kept = {}    # (u, v) -> weight, or a list of weights when duplicates stay
    for u, v, w in edges:
        if u == v and raw.remove_self_loops:
            continue
        if not raw.remove_duplicates:
            kept.setdefault((u, v), []).append(w)
        elif (u, v) not in kept:
            kept[u, v] = w
        elif weighted and w < kept[u, v]:   # the minimum: the first of equal minima stays
            kept[u, v] = w
    return kept


def reference_edges(G):
    """``G``'s edges as they should be stored: a sorted list of ``(u, v, weight)``.

    Computed from :func:`raw_edges` in plain Python by :meth:`Graph.from_edges`'
    documented rules: self-loops dropped and duplicates merged keeping the minimum
    weight (unless the flags said otherwise), an undirected edge listed both ways
    (a self-loop once). ``weight`` is None for an unweighted graph. A graph with no
    raw record falls back to its own CSR (then this checks nothing about the build).
    """
    raw = raw_edges(G)
    if raw is None:
        src = np.repeat(np.arange(G.num_vertices), G.out_degrees()).tolist()
        w = [None] * G.num_edges if G.values is None else G.values.tolist()
        return sorted(zip(src, G.column_indices.tolist(), w), key=_edge_key)
    out = []
    for (u, v), w in _edges_from_raw(raw).items():
        out.extend((u, v, x) for x in (w if isinstance(w, list) else [w]))
    return sorted(out, key=_edge_key)


def _edge_key(e):
    return e[0], e[1], (0.0 if e[2] is None else e[2])


def to_nx(G):
    """The networkx twin of a gunpy graph (vertices 0..n-1, ``weight`` attributes).

    Built from the edge list ``G`` was made from (:func:`raw_edges`; duplicates keep
    the minimum weight and self-loops go, as :meth:`Graph.from_edges` documents), so
    it is an oracle for the graph build too. ``nx.MultiGraph``/``MultiDiGraph`` when
    duplicates were kept. A graph with no raw record (built some other way, pickled,
    or with rebound arrays) is converted from its CSR instead.
    """
    raw = raw_edges(G)
    if raw is None:
        g = nx.DiGraph() if G.directed else nx.Graph()
        g.add_nodes_from(range(G.num_vertices))
        src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
        if G.values is None:
            g.add_edges_from(zip(src.tolist(), G.column_indices.tolist()))
        else:
            g.add_weighted_edges_from(zip(src.tolist(), G.column_indices.tolist(),
                                          G.values.tolist()))
        return g
    if raw.remove_duplicates:
        g = nx.DiGraph() if raw.directed else nx.Graph()
    else:
        g = nx.MultiDiGraph() if raw.directed else nx.MultiGraph()
    g.add_nodes_from(range(raw.num_vertices))
    for (u, v), w in _edges_from_raw(raw).items():
        if not raw.directed and u > v:
            continue     # (v, u) carries the same edge
        for x in (w if isinstance(w, list) else [w]):
            if x is None:
                g.add_edge(u, v)
            else:
                g.add_edge(u, v, weight=x)
    return g


def reference_depths(G, source, g=None):
    """networkx BFS depths as an int32 array (-1 unreachable), over :func:`to_nx`'s twin.

    One entry per vertex of the twin: a build that lost or invented vertices gives
    an array of the wrong length.
    """
    g = to_nx(G) if g is None else g
    depth = np.full(g.number_of_nodes(), -1, dtype=np.int32)
    for v, d in nx.single_source_shortest_path_length(g, source).items():
        depth[v] = d
    return depth


def reference_distances(G, source, g=None):
    """networkx Dijkstra distances as a float64 array (inf unreachable; weight 1 if
    unweighted), over :func:`to_nx`'s twin (one entry per vertex of the twin)."""
    g = to_nx(G) if g is None else g
    dist = np.full(g.number_of_nodes(), np.inf)
    for v, d in nx.single_source_dijkstra_path_length(g, source, weight="weight").items():
        dist[v] = d
    return dist


# The checks scan every edge once in compiled loops, in parallel over chunks of
# vertices: each chunk finds its own first failure and the first chunk with one names
# it, so the answer is the serial scan's. Validating a Graph500 run costs about as much
# as the run itself.
_CHUNKS = 256  # a chunk holds at most about 1/_CHUNKS of the edges and of the vertices


def _chunks(rows):
    """``(bounds, found)``: the chunks' vertex bounds (cuts by edges merged with cuts by
    vertices: at most ``2 * _CHUNKS`` chunks) and a zeroed ``(kind, u, v)`` row for each."""
    n = rows.size - 1
    by_edges = np.searchsorted(rows, np.linspace(0, rows[-1], _CHUNKS + 1))
    by_vertices = np.linspace(0, n, _CHUNKS + 1).astype(np.int64)
    bounds = np.unique(np.concatenate([np.minimum(by_edges, n), by_vertices]))
    return bounds, np.zeros((bounds.size - 1, 3), np.int64)


def _first(found):
    """The first chunk's failure ``(kind, u, v)`` (``found[:, 0] == 0``: none)."""
    hit = np.flatnonzero(found[:, 0])
    return tuple(int(x) for x in found[hit[0]]) if hit.size else (0, -1, -1)


@cpu_jit(parallel=True)
def _unsorted_rows(rows, cols, bounds, found):
    for c in prange(bounds.size - 1):
        for u in range(bounds[c], bounds[c + 1]):
            for e in range(rows[u] + 1, rows[u + 1]):
                if cols[e - 1] > cols[e]:
                    found[c, 0], found[c, 1] = 1, u
                    break
            if found[c, 0]:
                break


def _rows_sorted(rows, cols):
    bounds, found = _chunks(rows)
    _unsorted_rows(rows, cols, bounds, found)
    return _first(found)[0] == 0


_search = cpu_jit(lower_bound)


@cpu_jit
def _find_edge(rows, cols, is_sorted, u, v):
    """Index of the edge ``u -> v`` in the CSR, or -1."""
    lo, hi = rows[u], rows[u + 1]
    if is_sorted:
        lo = _search(cols, lo, hi, v)
        return lo if lo < hi and cols[lo] == v else -1
    for e in range(lo, hi):
        if cols[e] == v:
            return e
    return -1


@cpu_jit(parallel=True)
def _missing_tree_edges(rows, cols, is_sorted, parent, source, bounds, found):
    for c in prange(bounds.size - 1):
        for v in range(bounds[c], bounds[c + 1]):
            p = parent[v]
            if p >= 0 and v != source and _find_edge(rows, cols, is_sorted, p, v) < 0:
                found[c, 0], found[c, 1], found[c, 2] = 1, p, v
                break


def _first_missing_tree_edge(rows, cols, is_sorted, parent, source):
    """The first reached vertex whose parent edge ``parent[v] -> v`` is not in the graph."""
    bounds, found = _chunks(rows)
    _missing_tree_edges(rows, cols, is_sorted, parent, source, bounds, found)
    return _first(found)[2]


@cpu_jit(parallel=True)
def _bad_bfs_edges(rows, cols, depth, directed, bounds, found):
    for c in prange(bounds.size - 1):
        for u in range(bounds[c], bounds[c + 1]):
            du = depth[u]
            if du < 0:
                continue
            for e in range(rows[u], rows[u + 1]):
                v = cols[e]
                dv = depth[v]
                kind = 1 if dv < 0 else 2 if dv > du + 1 or (not directed and du > dv + 1) \
                    else 0
                if kind:
                    found[c, 0], found[c, 1], found[c, 2] = kind, u, v
                    break
            if found[c, 0]:
                break


def _first_bad_bfs_edge(rows, cols, depth, directed):
    """(kind, u, v): 1 an out-neighbour of a reached u is unreached, 2 depths too far apart."""
    bounds, found = _chunks(rows)
    _bad_bfs_edges(rows, cols, depth, directed, bounds, found)
    return _first(found)


@cpu_jit(parallel=True)
def _bad_sssp_edges(rows, cols, weights, weighted, distance, parent, source, is_sorted, rtol,
                    bounds, found):
    for c in prange(bounds.size - 1):
        for u in range(bounds[c], bounds[c + 1]):  # 1 first: no edge could still relax
            du = distance[u]
            if du == np.inf:
                continue
            for e in range(rows[u], rows[u + 1]):
                v = cols[e]
                w = weights[e] if weighted else 1.0
                if distance[v] > du + w + 1e-9 * abs(du + w):
                    found[c, 0], found[c, 1], found[c, 2] = 1, u, v
                    break
            if found[c, 0]:
                break
        for v in range(bounds[c], bounds[c + 1]):
            p = parent[v]
            if found[c, 0] or p < 0 or v == source:
                continue
            e = _find_edge(rows, cols, is_sorted, p, v)
            if e < 0:
                found[c, 0], found[c, 1], found[c, 2] = 3, p, v
            elif abs(distance[p] + (weights[e] if weighted else 1.0) - distance[v]) > \
                    1e-12 + rtol * abs(distance[v]):
                found[c, 0], found[c, 1], found[c, 2] = 2, p, v


def _first_bad_sssp_edge(rows, cols, weights, weighted, distance, parent, source, is_sorted,
                         rtol):
    """(kind, u, v): 1 the edge could still relax v, 2 the tree edge does not realise
    the distance, 3 the tree edge is not in the graph (kind 1 wherever one exists)."""
    bounds, found = _chunks(rows)
    _bad_sssp_edges(rows, cols, weights, weighted, distance, parent, source, is_sorted, rtol,
                    bounds, found)
    relax = found[found[:, 0] == 1]
    return tuple(int(x) for x in relax[0]) if relax.size else _first(found)


def _csr(G):
    rows = np.ascontiguousarray(G.row_offsets, dtype=np.int64)
    cols = np.ascontiguousarray(G.column_indices)
    return rows, cols, bool(_rows_sorted(rows, cols))


def check_bfs_tree(G, source, depth, parent, *, reference=None):
    """Assert Graph500's five checks for a BFS tree (directed graphs: edges one way).

    1. the parent array is a tree rooted at ``source`` with no cycles;
    2. each tree edge joins vertices whose depths differ by exactly one;
    3. every graph edge ``u -> v`` with ``u`` reached has ``v`` reached and
       ``depth[v] <= depth[u] + 1`` (undirected: depths differ by at most one);
    4. the tree spans exactly the vertices reachable from ``source``;
    5. each vertex and its parent are joined by a graph edge.

    ``reference`` (networkx depths) adds the stronger check depth == reference.
    Raises AssertionError naming the first failure.

    Check 4 needs no second traversal: by 2 and 5 every reached vertex has a
    path of graph edges from the source (induction on depth), and by 3 the
    reached set is closed under out-edges, so it holds everything reachable.
    """
    n = G.num_vertices
    depth = np.asarray(depth)
    parent = np.asarray(parent)
    assert depth.shape == (n,) and parent.shape == (n,), "result arrays have the wrong length"
    assert parent[source] == source, f"parent[source] = {parent[source]}, expected {source}"
    assert depth[source] == 0, f"depth[source] = {depth[source]}"
    reached = depth >= 0
    assert np.array_equal(reached, parent >= 0), \
        "depth and parent disagree on which vertices were reached"
    others = np.flatnonzero(reached)
    others = others[others != source]
    p = parent[others]
    # 2 (which with a unique root also rules out cycles: 1)
    assert np.all((p >= 0) & (p < n)), "a parent id is out of range"
    assert np.all(reached[p]), "a reached vertex has an unreached parent"
    bad = others[depth[p] + 1 != depth[others]]
    assert bad.size == 0, (f"tree edge {parent[bad[0]]}->{bad[0]} joins depths "
                           f"{depth[parent[bad[0]]]} and {depth[bad[0]]}")
    rows, cols, is_sorted = _csr(G)
    # 5
    # the arrays in their own types: no copy, half the random reads' footprint for int32
    v = _first_missing_tree_edge(rows, cols, is_sorted, np.ascontiguousarray(parent), source)
    assert v < 0, f"parent edge {parent[v]}->{v} is not in the graph"
    # 3
    kind, u, v = _first_bad_bfs_edge(rows, cols, np.ascontiguousarray(depth), G.directed)
    assert kind != 1, "an out-neighbour of a reached vertex was not reached"
    assert kind != 2, f"edge {u}->{v} joins depths {depth[u]} and {depth[v]}"
    # 4 follows from 2, 3 and 5 (see above); a reference is checked exactly
    if reference is not None:
        assert np.array_equal(depth, reference), (
            f"depth differs from the reference at vertex "
            f"{int(np.flatnonzero(depth != reference)[0])}")


def _check_rooted(parent, reached, source):
    """Every reached vertex reaches ``source`` by following parents (no cycles)."""
    idx = np.flatnonzero(reached)
    hop = parent.astype(np.int64).copy()
    for _ in range(max(1, int(np.ceil(np.log2(max(parent.shape[0], 2)))) + 1)):
        hop[idx] = hop[hop[idx]]
    stuck = idx[hop[idx] != source]
    assert stuck.size == 0, f"vertex {stuck[0]}'s parent chain never reaches the source (a cycle)"


def check_sssp_tree(G, source, distance, parent, *, reference=None, rtol=1e-9):
    """Graph500 kernel 2 checks for a shortest-path tree (and distances == reference).

    The parents form a tree rooted at ``source`` (no cycles, which zero-weight
    edges would allow), every tree edge is a graph edge that realises its
    child's distance, and no edge ``u -> v`` could still lower ``distance[v]``.
    """
    distance = np.asarray(distance)
    parent = np.asarray(parent)
    assert parent[source] == source and distance[source] == 0
    reached = np.isfinite(distance)
    assert np.array_equal(reached, parent >= 0), "distance and parent disagree on reachability"
    _check_rooted(parent, reached, source)
    if reference is not None:
        assert np.array_equal(np.isfinite(reference), reached), "reachability differs"
        assert np.allclose(distance[reached], reference[reached], rtol=rtol, atol=0), \
            "distances differ from the reference"
    rows, cols, is_sorted = _csr(G)
    weights = G.values if G.weighted else np.ones(1)
    kind, u, v = _first_bad_sssp_edge(rows, cols, np.asarray(weights, dtype=np.float64),
                                      G.weighted, distance.astype(np.float64),
                                      parent.astype(np.int64), source, is_sorted, rtol)
    assert kind != 1, f"edge {u}->{v} could still relax a distance"
    assert kind != 2, f"tree edge {u}->{v} does not realise the distance"
    assert kind != 3, f"parent edge {u}->{v} is not in the graph"
