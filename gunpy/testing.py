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
* :func:`to_nx`, :func:`reference_edges`: a graph's networkx twin and edge list, built
  from the raw edge list it was made from (:func:`raw_edges`), not from its CSR.
* :func:`nasty_graphs`: small graphs that break careless traversals (each remembers
  its raw edge list; :func:`graph_from_edges`, :func:`graph_from_networkx` and
  :func:`weighted_copy` make more that do).

Importing this module imports numba; set ``NUMBA_ENABLE_CUDASIM`` before that
if you want the simulator.
"""

import math
import sys
import time
import weakref
from collections import namedtuple

import networkx as nx
import numba
import numpy as np

from gunpy._jitcache import cpu_jit
from gunpy.graph import Graph

__all__ = ["ON_CUDASIM", "install_simulator_shims", "PtxBackend", "oldest_ptxas",
           "machine_code_reports", "machine_code_table", "check_bfs_tree", "check_sssp_tree",
           "reference_depths", "reference_distances", "reference_edges", "nasty_graphs", "to_nx",
           "graph_names", "SIM_GRAPHS", "RawEdges", "raw_edges", "graph_from_edges",
           "graph_from_networkx", "weighted_copy"]

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

    ``link=True`` also turns each kernel into a cubin for ``cc`` the way a launch
    does (numba-cuda's linker: nvJitLink) and checks it at the launch's block size
    (``block_size``, default 256); ``ptxas=PATH`` also assembles the PTX a driver
    would be handed (capped to that ptxas's ISA) with NVIDIA's assembler. Both
    fail on spills, local memory, static shared memory over 48 KB or a block too
    large for the kernel (:class:`gunpy.backends.toolchain.ToolchainError`);
    ``resources`` maps kernel names to their :class:`KernelReport`.
    """

    #: what a ``PtxBackend()`` made without ``link`` / ``ptxas`` gets (the cubin test mode
    #: sets these so that every compile-only run also links and assembles)
    defaults = {"link": False, "ptxas": None}

    def __new__(cls, cc=(9, 0), *, block_size=256, link=None, ptxas=None):
        from gunpy.backends.cuda import CudaBackend

        class _Ptx(_PtxMixin, CudaBackend):
            pass

        obj = object.__new__(_Ptx)
        obj._setup(cc, block_size=block_size, link=link, ptxas=ptxas)
        return obj


class _PtxMixin:
    name = "cuda"
    #: reads that return a non-zero value after each :meth:`synchronize` (see :meth:`read`)
    read_budget = 24

    def _setup(self, cc, *, block_size=256, link=None, ptxas=None):
        if link is None:
            link, ptxas = PtxBackend.defaults["link"], ptxas or PtxBackend.defaults["ptxas"]
        self.cc = tuple(cc)
        self.block_size = block_size
        self.link = bool(link or ptxas)
        self.ptxas = ptxas
        self.resources = {}
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
            bounds = getattr(kernel, "targetoptions", {}).get("launch_bounds")
            ptx, _ = cuda.compile_ptx(pyfunc, argtypes, cc=self.cc, launch_bounds=bounds)
            self.compiled[key] = ptx
        if self.link and items > 0:
            threads = block_size or self.block_size
            name = (pyfunc.__module__.replace("gunpy.", "") + ":"
                    + pyfunc.__qualname__.replace("<locals>.", ""))
            res = _machine_code(self.compiled[key], self.cc, self.ptxas, name, threads)
            self.resources[pyfunc.__qualname__] = res

    def kernel_names(self):
        return sorted({f.__qualname__ for f, _ in self.compiled})


#: every distinct kernel linked in this process: PTX hash -> KernelReport (the cubin mode's table)
machine_code_reports = {}


class KernelReport:
    """One kernel as machine code: nvJitLink's cubin (the launch path), and ptxas's view of
    the PTX a driver would get (capped to the oldest CUDA 13 driver's ISA) when a ptxas is given."""

    def __init__(self, name, linked, assembled, cubin_bytes, ptxas_version):
        self.name, self.linked, self.assembled = name, linked, assembled
        self.cubin_bytes, self.ptxas_version = cubin_bytes, ptxas_version
        self.block_sizes = set()



def machine_code_table():
    """The cubin mode's table: one row per kernel (its variants' worst case), as
    ``(kernel, variants, registers, spills, local, static shared, largest block,
    block used, ptxas registers)``; and the seconds spent linking and assembling."""
    by_name = {}
    for rep in machine_code_reports.values():
        by_name.setdefault(rep.name, []).append(rep)
    rows = []
    for name, reps in sorted(by_name.items()):
        ptxas_regs = [r.assembled.registers for r in reps if r.assembled is not None]
        rows.append((name, len(reps), max(r.linked.registers for r in reps),
                     max(r.linked.spills for r in reps), max(r.linked.stack for r in reps),
                     max(r.linked.shared for r in reps), min(r.linked.max_threads for r in reps),
                     max(max(r.block_sizes, default=0) for r in reps),
                     max(ptxas_regs) if ptxas_regs else "-"))
    return rows, sum(getattr(r, "seconds", 0.0) for r in machine_code_reports.values())


def _machine_code(ptx, cc, ptxas, name, threads):
    """Link ``ptx`` to a cubin (and assemble it with ``ptxas``) once; check it runs ``threads``.

    Raises :class:`gunpy.backends.toolchain.ToolchainError` on a failed link or
    assembly, any spill, any local memory, static shared memory over 48 KB, or a
    block larger than the kernel can launch.
    """
    import hashlib

    from gunpy.backends import toolchain as tc
    key = hashlib.sha256(ptx.encode()).hexdigest()
    rep = machine_code_reports.get(key)
    if rep is None:
        t0 = time.perf_counter()
        cubin, linked, _ = tc.link_cubin(ptx, cc)
        if len(linked) != 1:
            raise tc.ToolchainError(f"kernel {name}: expected one entry in the link log, "
                                    f"got {sorted(linked)}")
        linked = next(iter(linked.values()))
        assembled = version = None
        if ptxas:
            oldest = tc.isa_for_cuda(ptxas_version(ptxas))
            found, _ = tc.assemble(tc.cap_ptx(ptx, oldest), ptxas, arch=f"sm_{cc[0]}{cc[1]}")
            assembled = next(iter(found.values()))
            version = ptxas_version(ptxas)
        rep = KernelReport(name, linked, assembled, len(cubin), version)
        rep.seconds = time.perf_counter() - t0
        machine_code_reports[key] = rep
        for what, res in (("nvJitLink", linked), ("ptxas", assembled)):
            if res is None:
                continue
            if res.spills or res.stack:
                raise tc.ToolchainError(
                    f"kernel {name} ({what}): {res.spill_stores} B spill stores, {res.spill_loads} B "
                    f"spill loads, {res.stack} B stack (local memory) a thread")
            if res.shared > tc.SHARED_STATIC_LIMIT:
                raise tc.ToolchainError(f"kernel {name} ({what}): {res.shared} B of static shared "
                                        f"memory, over the {tc.SHARED_STATIC_LIMIT} B limit")
    if threads > rep.linked.max_threads:
        raise tc.ToolchainError(
            f"kernel {name} cannot run {threads} threads a block: it uses {rep.linked.registers} "
            f"registers a thread, so at most {rep.linked.max_threads}")
    rep.block_sizes.add(int(threads))
    return rep


#: the oldest CUDA 13 release: its assembler is what a R580 driver's PTX JIT matches
OLDEST_CUDA13_NVCC = "13.0.48"


def oldest_ptxas(*, install=True):
    """Path to the ptxas of CUDA ``OLDEST_CUDA13_NVCC`` (``$GUNPY_PTXAS`` first), or None.

    Fetched once from PyPI's ``nvidia-cuda-nvcc`` wheel (no dependencies, about
    37 MB) into ``toolchains/`` beside gunpy's kernel cache; never imported:
    only the executable is used.
    """
    import os
    import subprocess

    from gunpy import _jitcache
    env = os.environ.get("GUNPY_PTXAS")
    if env:
        return env if os.path.exists(env) else None
    root = os.path.join(os.path.dirname(_jitcache.cache_dir()), "toolchains",
                        f"nvidia-cuda-nvcc-{OLDEST_CUDA13_NVCC}")
    exe = os.path.join(root, "nvidia", "cu13", "bin", "ptxas")
    if not os.path.exists(exe) and install:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--disable-pip-version-check", "--target", root,
                        f"nvidia-cuda-nvcc=={OLDEST_CUDA13_NVCC}"],
                       capture_output=True, timeout=600)
    return exe if os.path.exists(exe) else None


def ptxas_version(ptxas):
    """``(major, minor)`` of a ptxas executable (``ptxas --version``)."""
    import re
    import subprocess
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    if m is None:
        raise RuntimeError(f"{ptxas} --version printed no release: {out!r}")
    return int(m.group(1)), int(m.group(2))


# ----------------------------------------------------------------------------- oracles
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

    Each graph remembers the edge list it was built from (:func:`raw_edges`), so
    :func:`to_nx` and the ``reference_*`` oracles do not depend on gunpy's CSR build.

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
    out["path_undirected"] = graph_from_edges(np.arange(n - 1), np.arange(1, n), directed=False)
    out["path_directed"] = graph_from_edges(np.arange(n - 1), np.arange(1, n), directed=True)
    out["star_hub"] = graph_from_edges(np.zeros(hub, dtype=np.int64), np.arange(1, hub + 1),
                                       directed=False)
    out["star_directed_in"] = graph_from_edges(np.arange(1, hub + 1), np.zeros(hub, dtype=np.int64),
                                               directed=True)
    # two components, a triangle, and isolated vertices 10..14
    s = [0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16]
    d = [1, 2, 3, 4, 0, 6, 7, 8, 5, 16, 17]
    out["disconnected"] = graph_from_edges(s, d, num_vertices=20, directed=False)
    c = 12 if small else 40
    out["directed_cycle"] = graph_from_edges(np.arange(c), (np.arange(c) + 1) % c, directed=True)
    s = [0, 0, 0, 1, 1, 2, 3, 3, 4]
    d = [0, 1, 1, 1, 2, 2, 4, 4, 0]
    out["self_loops_duplicates"] = graph_from_edges(s, d, num_vertices=6, directed=True)
    out["edgeless"] = graph_from_edges([], [], num_vertices=7, directed=False)
    out["single_vertex"] = graph_from_edges([], [], num_vertices=1, directed=True)
    m = random_n * 4
    out["random_directed"] = graph_from_edges(rng.integers(0, random_n, m),
                                              rng.integers(0, random_n, m), directed=True)
    out["random_undirected"] = graph_from_edges(rng.integers(0, random_n, m // 2),
                                                rng.integers(0, random_n, m // 2),
                                                num_vertices=random_n, directed=False)
    ba = nx.barabasi_albert_graph(random_n, 3, seed=seed)
    out["preferential_hubs"] = graph_from_networkx(ba)
    side = int(math.sqrt(random_n))
    out["grid"] = graph_from_networkx(nx.convert_node_labels_to_integers(
        nx.grid_2d_graph(side, side)))
    return out
