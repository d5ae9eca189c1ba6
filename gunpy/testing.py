"""Helpers for gunpy's tests and for users testing their own primitives.

* :data:`ON_CUDASIM`: whether numba's CUDA simulator is active.
* :func:`install_simulator_shims`: the warp intrinsics numba's simulator lacks
  (explicit: nothing in gunpy installs them on import).
* :class:`PtxBackend`: a "cuda" backend that compiles every kernel it is asked
  to launch to PTX (``compile_ptx(..., cc=(9, 0))``) instead of running it, on
  a machine with no GPU or driver. Its ``read`` never returns 0, so a primitive
  driven through it walks every operator path for a couple of iterations.
* :func:`check_bfs_tree`: Graph500's five checks of a BFS parent tree.
* :func:`reference_depths`, :func:`reference_distances`: networkx oracles as arrays.
* :func:`nasty_graphs`: small graphs that break careless traversals.

Importing this module imports numba; set ``NUMBA_ENABLE_CUDASIM`` before that
if you want the simulator.
"""

import math
import sys

import networkx as nx
import numba
import numpy as np

from gunpy._jitcache import cpu_jit
from gunpy.graph import Graph

__all__ = ["ON_CUDASIM", "install_simulator_shims", "PtxBackend", "check_bfs_tree", "check_sssp_tree",
           "reference_depths", "reference_distances", "nasty_graphs", "to_nx", "graph_names",
           "SIM_GRAPHS"]

ON_CUDASIM = bool(numba.config.ENABLE_CUDASIM)


# ----------------------------------------------------------------------------- simulator
def install_simulator_shims(*, switch_interval=None):
    """Make numba's CUDA simulator able to run gunpy's kernels (and yours). Test use only.

    numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) has no warp-level
    intrinsics, so a kernel that uses one fails with ``AttributeError:
    'FakeCUDAModule' object has no attribute 'shfl_sync'``, and gunpy's
    ``CudaBackend()`` refuses to start there until this has been called. It
    installs :mod:`gunpy.backends.simwarp` (see its docstring for the model),
    which monkeypatches numba's simulator for the rest of the process:

    * adds ``syncwarp``, ``activemask``, ``lanemask_lt``, ``ballot_sync``,
      ``all_sync``, ``any_sync``, ``eq_sync``, the four ``shfl_*_sync`` and
      ``match_any_sync``/``match_all_sync`` to the fake ``cuda`` module kernels
      see, and replaces its ``popc``, ``ffs``, ``clz`` and ``brev`` with
      two's-complement, width-aware versions (as on the device);
    * wraps the simulator's ``BlockManager.__init__``, ``BlockThread.run`` and
      ``BlockThread.syncthreads`` to keep per-warp state, and puts a lock around
      ``FakeCUDAShared.array``'s get-or-create (it races) when that version of
      numba-cuda still has the unlocked one.

    ``switch_interval``: if given (seconds), also calls
    ``sys.setswitchinterval(switch_interval)``, which changes the GIL switch
    interval of the **whole process**. Each simulated thread is a Python thread
    and every barrier a hand-off of the GIL, so a short interval (gunpy's test
    suite uses ``5e-4``) makes barrier-heavy kernels several times faster and
    exposes more interleavings. Left at ``None`` (the default), the interval is
    not touched; nothing in gunpy changes it otherwise.

    A no-op when the simulator is off (``NUMBA_ENABLE_CUDASIM`` was not set
    before numba was first imported): nothing is patched, the switch interval
    is not touched, and it returns False. Returns True when the shims are
    installed (now or by an earlier call). Idempotent.
    """
    from gunpy.backends import simwarp

    if not simwarp.install():
        return False
    if switch_interval is not None:
        sys.setswitchinterval(switch_interval)
    return True


# ----------------------------------------------------------------------------- PTX
class PtxBackend:
    """A compile-only CUDA backend: kernels become PTX for ``cc``, nothing runs.

    Arrays are NumPy arrays of the dtypes the GPU would use, so numba infers the
    same argument types as for device arrays. ``compiled`` maps
    ``(kernel name, argument types)`` to the PTX text.
    """

    def __new__(cls, cc=(9, 0)):
        from gunpy.backends.cuda import CudaBackend

        class _Ptx(_PtxMixin, CudaBackend):
            pass

        obj = object.__new__(_Ptx)
        obj._setup(cc)
        return obj


class _PtxMixin:
    name = "cuda"
    #: reads that return a non-zero value after each :meth:`synchronize` (see :meth:`read`)
    read_budget = 24

    def _setup(self, cc):
        self.cc = tuple(cc)
        self.block_size = 256
        self.max_blocks = 132 * 32
        self.num_sms = 132
        self.compiled = {}
        self._reads = 0

    def __init__(self, *args, **kwargs):  # CudaBackend.__init__ would query a device
        pass

    def __hash__(self):
        return id(self)

    # arrays live on the host
    def _alloc(self, n, dtype):
        return np.zeros(int(n), dtype=dtype)

    def asarray(self, host):
        return np.array(host, copy=True)

    def fill(self, arr, value):
        from gunpy.backends import cuda as cuda_backend
        arr[:] = value
        self.run(cuda_backend._fill_kernel, arr.shape[0], arr, arr.dtype.type(value),
                 arr.shape[0])

    def to_host(self, arr):
        return np.array(arr, copy=True)

    def read(self, arr, i=0):
        # Nothing runs, so what a kernel "wrote" is meaningless. The first reads after
        # a synchronize (an enactor's start) are never 0, so frontiers look non-empty and
        # the operators' paths are walked; later ones are 0, so every loop ends (an empty
        # frontier, a converged primitive) without any dry-run branch in gunpy itself.
        self._reads += 1
        if self._reads > self.read_budget:
            return 0
        return max(1, arr[i].item())

    def write(self, arr, i, value):
        arr[i] = value

    def copy_in(self, arr, at, host):
        arr[at:at + host.shape[0]] = host

    def copy(self, src, dst, n):
        dst[:n] = src[:n]

    def head_to_host(self, arr, n):
        return arr[:n].copy()

    def read_head(self, arr, n):
        # counters read together follow read()'s rule (non-zero, then 0 after the budget)
        return np.array([self.read(arr, i) for i in range(n)], dtype=arr.dtype)

    def synchronize(self):
        self._reads = 0

    def run(self, kernel, items, *args, block_size=None, blocks=None, shared=0):
        from numba import cuda
        pyfunc = kernel.py_func
        argtypes = tuple(numba.typeof(a) for a in args)
        key = (pyfunc, argtypes)
        if key not in self.compiled:
            ptx, _ = cuda.compile_ptx(pyfunc, argtypes, cc=self.cc)
            self.compiled[key] = ptx

    def kernel_names(self):
        return sorted({f.__qualname__ for f, _ in self.compiled})


# ----------------------------------------------------------------------------- oracles
def to_nx(G):
    """The networkx twin of a gunpy graph (vertices 0..n-1, ``weight`` attributes)."""
    g = nx.DiGraph() if G.directed else nx.Graph()
    g.add_nodes_from(range(G.num_vertices))
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    if G.values is None:
        g.add_edges_from(zip(src.tolist(), G.column_indices.tolist()))
    else:
        g.add_weighted_edges_from(zip(src.tolist(), G.column_indices.tolist(),
                                      G.values.tolist()))
    return g


def reference_depths(G, source, g=None):
    """networkx BFS depths as an int32 array (-1 unreachable)."""
    g = to_nx(G) if g is None else g
    depth = np.full(G.num_vertices, -1, dtype=np.int32)
    for v, d in nx.single_source_shortest_path_length(g, source).items():
        depth[v] = d
    return depth


def reference_distances(G, source, g=None):
    """networkx Dijkstra distances as a float64 array (inf unreachable; weight 1 if unweighted)."""
    g = to_nx(G) if g is None else g
    dist = np.full(G.num_vertices, np.inf)
    for v, d in nx.single_source_dijkstra_path_length(g, source, weight="weight").items():
        dist[v] = d
    return dist


# The checks scan every edge once in compiled loops, so validating a Graph500
# run costs about as much as the run itself (scale 20: tens of milliseconds).
@cpu_jit
def _rows_sorted(rows, cols):
    for u in range(rows.size - 1):
        for e in range(rows[u] + 1, rows[u + 1]):
            if cols[e - 1] > cols[e]:
                return False
    return True


@cpu_jit
def _find_edge(rows, cols, is_sorted, u, v):
    """Index of the edge ``u -> v`` in the CSR, or -1."""
    lo, hi = rows[u], rows[u + 1]
    if is_sorted:
        while lo < hi:
            mid = (lo + hi) // 2
            if cols[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        return lo if lo < rows[u + 1] and cols[lo] == v else -1
    for e in range(lo, hi):
        if cols[e] == v:
            return e
    return -1


@cpu_jit
def _first_missing_tree_edge(rows, cols, is_sorted, parent, source):
    """The first reached vertex whose parent edge ``parent[v] -> v`` is not in the graph."""
    for v in range(parent.size):
        p = parent[v]
        if p >= 0 and v != source and _find_edge(rows, cols, is_sorted, p, v) < 0:
            return v
    return -1


@cpu_jit
def _first_bad_bfs_edge(rows, cols, depth, directed):
    """(kind, u, v): 1 an out-neighbour of a reached u is unreached, 2 depths too far apart."""
    for u in range(rows.size - 1):
        du = depth[u]
        if du < 0:
            continue
        for e in range(rows[u], rows[u + 1]):
            v = cols[e]
            dv = depth[v]
            if dv < 0:
                return 1, u, v
            if dv > du + 1 or (not directed and du > dv + 1):
                return 2, u, v
    return 0, -1, -1


@cpu_jit
def _first_bad_sssp_edge(rows, cols, weights, weighted, distance, parent, source, is_sorted,
                         rtol):
    """(kind, u, v): 1 the edge could still relax v, 2 the tree edge does not realise
    the distance, 3 the tree edge is not in the graph."""
    for u in range(rows.size - 1):
        du = distance[u]
        if du == np.inf:
            continue
        for e in range(rows[u], rows[u + 1]):
            v = cols[e]
            w = weights[e] if weighted else 1.0
            if distance[v] > du + w + 1e-9 * abs(du + w):
                return 1, u, v
    for v in range(parent.size):
        p = parent[v]
        if p < 0 or v == source:
            continue
        e = _find_edge(rows, cols, is_sorted, p, v)
        if e < 0:
            return 3, p, v
        w = weights[e] if weighted else 1.0
        want = distance[p] + w
        if abs(want - distance[v]) > 1e-12 + rtol * abs(distance[v]):
            return 2, p, v
    return 0, -1, -1


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
    v = _first_missing_tree_edge(rows, cols, is_sorted, parent.astype(np.int64), source)
    assert v < 0, f"parent edge {parent[v]}->{v} is not in the graph"
    # 3
    kind, u, v = _first_bad_bfs_edge(rows, cols, depth.astype(np.int64), G.directed)
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


# ----------------------------------------------------------------------------- graphs
#: the nasty graphs a simulator run covers (every simulated launch costs tens of ms):
#: a hub larger than a block, isolated vertices and several components, a random
#: directed graph, self-loops and duplicates in the input, and the degenerate cases
SIM_GRAPHS = ("star_hub", "mixed_lists", "disconnected", "random_directed", "self_loops_duplicates",
              "edgeless", "single_vertex")


def graph_names(graphs):
    """All of ``graphs``' names, or the :data:`SIM_GRAPHS` subset under the simulator."""
    names = sorted(graphs)
    return [n for n in names if n in SIM_GRAPHS] if ON_CUDASIM else names


def nasty_graphs(*, hub=None, random_n=None, seed=7, small=None):
    """Small graphs that break careless traversals, as ``{name: Graph}``.

    Paths (long diameter), a star whose hub has ``hub`` leaves (larger than a
    CTA), disconnected pieces with isolated vertices, a directed cycle,
    self-loops and duplicate edges in the input, an edgeless graph, a single
    vertex, random directed and undirected graphs, a preferential-attachment
    graph with hubs, and a 2-D grid.

    ``small`` (default: when the CUDA simulator is on) shrinks them so that a
    simulated traversal takes seconds: paths of 16, a hub of 40 leaves (still
    more than the simulator's 32-thread block), random graphs of 40 vertices.
    """
    small = ON_CUDASIM if small is None else small
    hub = hub if hub is not None else (40 if small else 300)
    random_n = random_n if random_n is not None else (40 if small else 200)
    rng = np.random.default_rng(seed)
    out = {}
    n = 16 if small else 60
    out["path_undirected"] = Graph.from_edges(np.arange(n - 1), np.arange(1, n), directed=False)
    out["path_directed"] = Graph.from_edges(np.arange(n - 1), np.arange(1, n), directed=True)
    out["star_hub"] = Graph.from_edges(np.zeros(hub, dtype=np.int64), np.arange(1, hub + 1),
                                       directed=False)
    out["star_directed_in"] = Graph.from_edges(np.arange(1, hub + 1), np.zeros(hub, dtype=np.int64),
                                               directed=True)
    # two components, a triangle, and isolated vertices 10..14
    s = [0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16]
    d = [1, 2, 3, 4, 0, 6, 7, 8, 5, 16, 17]
    out["disconnected"] = Graph.from_edges(s, d, num_vertices=20, directed=False)
    c = 12 if small else 40
    out["directed_cycle"] = Graph.from_edges(np.arange(c), (np.arange(c) + 1) % c, directed=True)
    s = [0, 0, 0, 1, 1, 2, 3, 3, 4]
    d = [0, 1, 1, 1, 2, 2, 4, 4, 0]
    out["self_loops_duplicates"] = Graph.from_edges(s, d, num_vertices=6, directed=True)
    out["edgeless"] = Graph.from_edges([], [], num_vertices=7, directed=False)
    out["single_vertex"] = Graph.from_edges([], [], num_vertices=1, directed=True)
    m = random_n * 4
    out["random_directed"] = Graph.from_edges(rng.integers(0, random_n, m),
                                              rng.integers(0, random_n, m), directed=True)
    out["random_undirected"] = Graph.from_edges(rng.integers(0, random_n, m // 2),
                                                rng.integers(0, random_n, m // 2),
                                                num_vertices=random_n, directed=False)
    ba = nx.barabasi_albert_graph(random_n, 3, seed=seed)
    out["preferential_hubs"] = Graph.from_networkx(ba)
    side = int(math.sqrt(random_n))
    out["grid"] = Graph.from_networkx(nx.convert_node_labels_to_integers(
        nx.grid_2d_graph(side, side)))
    return out
