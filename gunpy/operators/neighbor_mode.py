"""neighbor_mode: each vertex takes the most frequent key across its edges (ties: the smallest).

A keyed neighbour reduction, the step of label propagation (LDBC Graphalytics'
CDLP, Gunrock 1.x's LP): for every vertex ``v`` of the frontier (``None``: all
vertices), the functor's ``gather_edge`` gives an integer key for each edge at
``v``, and ``out[v]`` becomes the key that occurs most often, the smallest of
those that tie. A vertex with no edges keeps ``out[v]`` as it is.

``edges`` picks the edges: ``"out"`` (``v -> u``), ``"in"`` (``u -> v``, from the
reverse graph) or ``"both"`` (each in- and each out-edge: on a directed graph a
neighbour joined both ways is counted twice, as LDBC's CDLP counts it). The hook
is always called from ``v``'s side, ``gather_edge(v, u, edge, weight, data)``
with ``u`` the neighbour, whichever way the edge points (``edge`` and ``weight``
are the stored edge's); its value is taken as an int64.

How: each vertex writes its keys into its own slots of a workspace (an edge's
slots, ``out`` positions then ``in`` positions: no two vertices share one), sorts
them in place (insertion sort up to 16 keys, heapsort beyond: no recursion, no
allocation) and scans the runs. CUDA: a thread per vertex in a grid-stride loop,
the edges read counted on a context tally (no sync); a hub's keys are one
thread's heapsort, ``O(d log d)`` steps. CPU: a ``prange`` over the threads'
shares of the vertices (each with its own table, below), one core below ``serial_below`` keys (:func:`gunpy.backends.cpu.run_thin`);
keys all equal (a settled neighbourhood) take one pass, and more than 16 are
counted in the share's own open-addressing table (Fibonacci hashing, a table of
at least twice the keys, its counts cleared through the slots used) instead of
sorted: ``O(d)`` steps instead of ``O(d log d)``.
"""

import numpy as np

from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import compile_functor, hooks_cache
from gunpy.operators.advance.common import cpu_weight, cuda_weight
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["neighbor_mode", "run", "execute", "cuda_kernel", "cpu_source", "cuda_execute",
           "cpu_execute", "EDGES"]

EDGES = ("out", "in", "both")
#: keys up to this many are sorted by insertion, longer runs by heapsort
INSERTION_MAX = 16
#: the CPU's hash table per thread: slots for the keys of a vertex with up to half as many
TABLE_SLOTS = 1 << 16


def key_sorter(jit, paired=False):
    """``sort(keys, vals, lo, n)``: sort ``keys[lo:lo + n]`` in place (insertion up to
    :data:`INSERTION_MAX` keys, heapsort past them), compiled with ``jit``; ``paired``:
    ``vals[lo:lo + n]`` moves alike, else ``vals`` is never written (pass ``keys``)."""
    @jit
    def swap(keys, vals, i, j):
        k = keys[i]
        keys[i] = keys[j]
        keys[j] = k
        if paired:
            w = vals[i]
            vals[i] = vals[j]
            vals[j] = w

    @jit
    def sift(keys, vals, lo, root, end):
        while True:
            child = 2 * root + 1
            if child > end:
                return
            if child + 1 <= end and keys[lo + child] < keys[lo + child + 1]:
                child += 1
            if keys[lo + root] >= keys[lo + child]:
                return
            swap(keys, vals, lo + root, lo + child)
            root = child

    @jit
    def sort(keys, vals, lo, n):
        if n <= INSERTION_MAX:
            for i in range(lo + 1, lo + n):
                k, w = keys[i], vals[i]
                j = i - 1
                while j >= lo and keys[j] > k:
                    keys[j + 1] = keys[j]
                    if paired:
                        vals[j + 1] = vals[j]
                    j -= 1
                keys[j + 1] = k
                if paired:
                    vals[j + 1] = w
            return
        start = n // 2 - 1
        while start >= 0:
            sift(keys, vals, lo, start, n - 1)
            start -= 1
        end = n - 1
        while end > 0:
            swap(keys, vals, lo, lo + end)
            end -= 1
            sift(keys, vals, lo, 0, end)

    return sort


def _keys(hooks, weight, outgoing, incoming, jit):
    """``base, n = keys_of(v, ...)``: the keys across ``v``'s edges, written into ``v``'s
    own slots (``keys[base:base + n]``: its out positions, then its in positions)."""
    gather_edge = hooks.gather_edge

    @jit
    def keys_of(v, row_offsets, column_indices, in_offsets, in_indices, in_edge_ids, values,
                keys, data):
        base = np.int64(0)
        if outgoing:
            base += np.int64(row_offsets[v])
        if incoming:
            base += np.int64(in_offsets[v])
        n = np.int64(0)
        if outgoing:
            for p in range(np.int64(row_offsets[v]), np.int64(row_offsets[v + 1])):
                keys[base + n] = np.int64(gather_edge(v, column_indices[p], p,
                                                      weight(values, p), data))
                n += 1
        if incoming:
            for p in range(np.int64(in_offsets[v]), np.int64(in_offsets[v + 1])):
                e = np.int64(in_edge_ids[p])
                keys[base + n] = np.int64(gather_edge(v, in_indices[p], e, weight(values, e),
                                                      data))
                n += 1
        return base, n

    return keys_of


def _sorted_mode(jit):
    """``mode(keys, base, n)``: sort ``keys[base:base + n]`` (n > 0) and return its most
    frequent key: the longest run, the first (smallest) of equally long ones."""
    sort = key_sorter(jit)

    @jit
    def mode(keys, base, n):
        sort(keys, keys, base, n)
        best, best_count = keys[base], np.int64(0)
        run_key, run_count = keys[base], np.int64(0)
        for i in range(base, base + n):
            if keys[i] == run_key:
                run_count += 1
            else:
                if run_count > best_count:
                    best, best_count = run_key, run_count
                run_key, run_count = keys[i], np.int64(1)
        if run_count > best_count:
            best = run_key
        return best

    return mode


def _vertex_mode(hooks, weight, outgoing, incoming, jit):
    """``vertex_mode(v, ...)``: ``out[v]`` = the mode of ``v``'s keys; returns its edge count."""
    keys_of = _keys(hooks, weight, outgoing, incoming, jit)
    mode = _sorted_mode(jit)

    @jit
    def vertex_mode(v, row_offsets, column_indices, in_offsets, in_indices, in_edge_ids, values,
                    keys, out, data):
        base, n = keys_of(v, row_offsets, column_indices, in_offsets, in_indices, in_edge_ids,
                          values, keys, data)
        if n > 0:  # no edges: out[v] stays
            out[v] = mode(keys, base, n)
        return n

    return vertex_mode


@hooks_cache
def cuda_kernel(hooks, weighted, outgoing, incoming, all_vertices):
    from gunpy.backends.cuda import device, kernel
    vertex_mode = _vertex_mode(hooks, cuda_weight(weighted), outgoing, incoming,
                               device)

    def mode(queue, length, row_offsets, column_indices, in_offsets, in_indices, in_edge_ids,
             values, keys, out, data, tally, slot):
        n = length[0]
        read = np.int64(0)
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            v = np.int64(i) if all_vertices else np.int64(queue[i])
            read += vertex_mode(v, row_offsets, column_indices, in_offsets, in_indices,
                                in_edge_ids, values, keys, out, data)
        if read:  # the edges read (a statistic): one atomic a thread, read once per run
            cuda.atomic.add(tally, slot, read)

    return kernel(mode)


def _hashed_mode(jit):
    """``mode(keys, base, n, table, t0, t1, bits)``: the most frequent of ``keys[base:base
    + n]`` (ties: the smallest), counted in an open-addressing table of ``2**bits`` slots
    (at least ``2 n``): keys from ``table[t0]``, counts from ``table[t1]`` (all 0 before
    and after). ``keys`` keeps the slots used, over the keys counted."""

    @jit
    def mode(keys, base, n, table, t0, t1, bits):
        size = np.int64(1) << bits
        shift = np.uint64(64 - bits)  # Fibonacci hashing: the product's top bits
        best, best_count, used = keys[base], np.int64(0), np.int64(0)
        for i in range(base, base + n):
            k = keys[i]
            h = np.int64((np.uint64(k) * np.uint64(0x9E3779B97F4A7C15)) >> shift)
            while table[t1 + h] != 0 and table[t0 + h] != k:
                h = (h + 1) & (size - 1)
            c = table[t1 + h] + 1
            if c == 1:
                table[t0 + h] = k
                keys[base + used] = h  # a slot read already: the slots to clear
                used += 1
            table[t1 + h] = c
            # a count only grows: the best so far, ties to the smaller key
            if c > best_count or (c == best_count and k < best):
                best, best_count = k, c
        for i in range(base, base + used):
            table[t1 + keys[i]] = 0
        return best

    return mode


def cpu_source(hooks, weighted, outgoing, incoming, all_vertices):
    """The CPU kernel's Python source for ``hooks`` (compiled by the callers); the kernel
    returns the number of edges it read.

    The CPU counts keys instead of sorting them where that is shorter: keys all
    equal (a settled neighbourhood) give their key after one pass; more than
    :data:`INSERTION_MAX` keys are counted in the thread's own hash table (up to
    half its :data:`TABLE_SLOTS`; longer lists are sorted as on CUDA)."""
    from numba import njit, prange
    jit = njit(inline="always")
    keys_of = _keys(hooks, cpu_weight(weighted), outgoing, incoming, jit)
    sorted_mode, hashed_mode = _sorted_mode(jit), _hashed_mode(jit)
    @jit
    def one(v, row_offsets, column_indices, in_offsets, in_indices, in_edge_ids, values, keys,
            out, table, t0, slots, data):
        """``out[v]`` = the mode of ``v``'s keys; the edges read."""
        # 1. v's keys into its own slots
        base, d = keys_of(v, row_offsets, column_indices, in_offsets, in_indices, in_edge_ids,
                          values, keys, data)
        if d == 0:
            return d  # no edges: out[v] stays
        # 2. all equal: that key
        same = True
        for x in range(base + 1, base + d):
            if keys[x] != keys[base]:
                same = False
                break
        if same:
            out[v] = keys[base]
            return d
        # 3. a few keys, or too many for the table: sorted; else counted
        bits = np.int64(5)
        while (np.int64(1) << bits) < 2 * d:
            bits += 1
        if d <= INSERTION_MAX or (np.int64(1) << bits) > slots:
            out[v] = sorted_mode(keys, base, d)
        else:
            out[v] = hashed_mode(keys, base, d, table, t0, t0 + slots, bits)
        return d

    def mode_(queue, n, row_offsets, column_indices, in_offsets, in_indices, in_edge_ids, values,
              keys, out, table, slots, data):
        parts = table.shape[0] // (2 * slots)
        per = (n + parts - 1) // parts
        read = 0
        # a table per iteration (its keys, then its counts), its vertices in turn: the table
        # is the part's own whichever thread runs it (numba's thread id: uncacheable)
        for t in prange(parts):
            t0 = np.int64(t) * 2 * slots
            r = 0
            for i in range(t * per, min(n, (t + 1) * per)):
                v = np.int64(i) if all_vertices else np.int64(queue[i])
                r += one(v, row_offsets, column_indices, in_offsets, in_indices, in_edge_ids,
                         values, keys, out, table, t0, slots, data)
            read += r
        return read

    return mode_


def execute(ctx, frontier, hooks, data, out, edges):
    """``out[v]`` = the most frequent key across ``edges`` for the frontier's vertices (``None``:
    all); returns the edges read, or None where the kernel left that count on a context
    tally (:meth:`~gunpy.operators.Context.tally`)."""
    if edges not in EDGES:
        raise ValueError(f"neighbor_mode edges must be one of {EDGES}, got {edges!r}")
    backend = ctx.backend
    outgoing, incoming = edges in ("out", "both"), edges in ("in", "both")
    dg = backend.graph(ctx.graph, csc=incoming)
    all_vertices = frontier is None
    queue, length, n = ctx.items(frontier)
    if n == 0:
        return 0
    # every vertex's keys in its own slots: an edge's out and in positions
    keys = ctx.scratch("neighbor_mode.keys", max(1, dg.num_edges * (outgoing + incoming)),
                       np.int64)
    return NEIGHBOR_MODE(ctx, dg, hooks, data, out, keys, queue, length, n,
                         all_vertices, outgoing, incoming)


def _csc(dg, incoming):
    # the reverse graph's arrays, or the forward ones as stand-ins the kernel never reads
    if incoming:
        return dg.in_offsets, dg.in_indices, dg.in_edge_ids
    return dg.row_offsets, dg.column_indices, dg.row_offsets


def cuda_execute(ctx, dg, hooks, data, out, keys, queue, length, n, all_vertices, outgoing,
                 incoming):
    tally, slot = ctx.tally("edges")
    ctx.backend.run(cuda_kernel(hooks, dg.weighted, outgoing, incoming, all_vertices), n, queue,
                    length, dg.row_offsets, dg.column_indices, *_csc(dg, incoming), dg.values,
                    keys, out, data, tally, np.int64(slot))
    return None  # the kernel counted the edges it read


def cpu_execute(ctx, dg, hooks, data, out, keys, queue, length, n, all_vertices, outgoing,
                incoming):
    from numba import config
    backend = ctx.backend
    slots, threads = TABLE_SLOTS, config.NUMBA_NUM_THREADS
    # each thread's keys and counts (the counts 0 between calls: the kernel clears its own)
    table = ctx.kept(f"neighbor_mode.table.{slots}.{threads}",
                     lambda: backend.zeros(max(1, 2 * slots * threads), np.int64))
    args = (queue, n, dg.row_offsets, dg.column_indices, *_csc(dg, incoming), dg.values, keys,
            out, table, np.int64(slots), data)
    build = (dg.weighted, outgoing, incoming, all_vertices)
    read = [0]

    def call(kernel):
        read[0] = kernel(*args)
    work = dg.num_edges * (outgoing + incoming) if all_vertices else n
    if work < backend.serial_below:
        ctx.log(build=run_thin(backend, cpu_source, hooks, build, call))
    else:
        call(functor_pair(cpu_source, hooks, build)[0])
    return int(read[0])


def neighbor_mode(graph, frontier, functor, data, out, *, edges="both", context=None):
    """``out[v]`` = the most frequent ``functor.gather_edge`` key across ``v``'s ``edges``
    (``"out"``, ``"in"`` or ``"both"``), the smallest of those that tie, for the vertices
    of ``frontier`` (``None``: every vertex); a vertex with no edges keeps ``out[v]``.

    The hook is called from ``v``'s side, ``gather_edge(v, u, edge, weight, data)`` with
    ``u`` the neighbour, and returns an integer key. ``out`` is an int64 device array
    with a slot per vertex. Returns ``out``; the edges read are logged in the
    context's record. ``context``: see :func:`gunpy.operators.advance`.

    Examples
    --------
    One round of label propagation on two triangles joined by an edge (2 - 3):

    >>> from collections import namedtuple
    >>> import numpy as np, gunpy
    >>> from gunpy import Functor, operators as ops
    >>> class Label(Functor):
    ...     @staticmethod
    ...     def gather_edge(v, u, edge, weight, data):
    ...         return data.labels[u]
    >>> G = gunpy.Graph.from_edges([0, 0, 1, 2, 3, 3, 4], [1, 2, 2, 3, 4, 5, 5],
    ...                            directed=False)
    >>> labels = np.arange(6, dtype=np.int64)
    >>> out = labels.copy()
    >>> _ = ops.neighbor_mode(G, None, Label, namedtuple("D", "labels")(labels), out,
    ...                       edges="out", context=ops.Context(G, backend="cpu"))
    >>> out.tolist()
    [1, 0, 0, 2, 3, 3]
    """
    ctx = context_for(graph, frontier, context)
    run(ctx, frontier, compile_functor(functor, ctx.backend), problem_data(data), out, edges)
    ctx.done()
    return out


def run(ctx, frontier, hooks, data, out, edges="both"):
    """:func:`neighbor_mode` once its arguments are checked (``hooks``: the compiled functor)."""
    if frontier is not None:
        frontier.ensure_queue(ctx.scratch)
    read = execute(ctx, frontier, hooks, data, out, edges)
    ctx.log(edges=read or 0, direction="pull", strategy="neighbor_mode")
    return out


NEIGHBOR_MODE = Operator("neighbor_mode",
                         "ctx, dg, hooks, data, out, keys, queue, length, n, all_vertices, "
                         "outgoing, incoming",
                         cpu=cpu_execute, cuda=cuda_execute)


callable_module(__name__, neighbor_mode)
