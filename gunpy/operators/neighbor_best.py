"""neighbor_best: each vertex takes the key whose summed edge weights score best.

A keyed neighbour reduction with a choice, the local-moving step of Louvain
(modularity gain per neighbouring community): for every vertex ``v`` of the
frontier (``None``: all vertices) whose ``cond_vertex(v, data)`` holds, the
functor's ``gather_edge(v, u, edge, weight, data)`` gives an integer key for
each out-edge ``v -> u``, a vertex id (a key outside ``0..n-1``, -1 say: the
edge is left out), the edge
weights (1.0 on an unweighted graph) are summed per key, and
``score(v, key, total, data)`` rates each distinct key. ``out[v]`` holds the
incumbent key on entry: it is replaced only by a key scoring strictly higher
than the incumbent does (the incumbent scores with its own total, 0.0 when no
edge gives it); of keys that score the same, the smallest wins. So the result
depends on neither the edge order nor the number of threads.

``score`` is a hook of this operator only: a ``@staticmethod`` of the functor,
compiled here beside the functor's own hooks.

**Rounds** (``rounds=r``): one call runs ``r`` sub-rounds. The functor's
``round_of(v, data)`` (another hook of this operator) puts each vertex in one
sub-round (outside ``0..r-1``: none); in sub-round ``i`` the vertices of round
``i`` all choose against the data as it stands, then ``apply_vertex(v, data)``
runs on each of them (``out[v]`` holds its choice), before round ``i + 1``
chooses. Louvain's buckets of vertices that move together are such rounds: one
call a sweep instead of two a bucket. CPU: the vertices are counted into their
rounds once a call (one core, ``O(n)``), then each round is two parallel passes
in the same kernel. CUDA: two launches a round (a grid-wide barrier between
choosing and applying), the round's number an argument.

How (CUDA): as :mod:`gunpy.operators.neighbor_mode`, each vertex writes its
keys and weights into its own slots of two workspaces (its out-edges'
positions: no two vertices share one), sorts them in place by key (insertion
sort up to 16, heapsort beyond: no recursion, no allocation) and scans the
runs; a thread per vertex in a grid-stride loop, the edges read counted on a
context tally. CPU: each chunk of vertices (a thread's) sums the weights in a
table with a slot per key, its own, kept with the graph's scratch, and frees the
slots it used after each vertex: ``O(d)`` a vertex instead of a sort (RMAT's
hubs have thousands of edges); one core below ``serial_below`` edges
(:func:`gunpy.backends.cpu.run_thin`), a chunk per thread above.
"""

import numpy as np

from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import compile_functor, hooks_cache
from gunpy.operators.advance.common import cpu_weight, cuda_weight
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.neighbor_mode import key_sorter
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["neighbor_best", "run", "execute", "cuda_kernel", "cuda_apply_kernel", "cpu_source",
           "cpu_rounds_source", "cuda_execute", "cpu_execute", "pair_sorter"]

def pair_sorter(jit):
    """``sort(keys, vals, lo, n)``: sort ``keys[lo:lo + n]`` in place, ``vals`` moved alike
    (:func:`gunpy.operators.neighbor_mode.key_sorter`, paired)."""
    return key_sorter(jit, paired=True)


def _own_hook(hooks, name, signature, jit, needed_by="neighbor_best"):
    """A hook of this operator only (``score``, ``round_of``), compiled with ``jit``."""
    fn = getattr(hooks.functor, name, None)
    if fn is None:
        raise TypeError(f"{hooks.functor.__name__} has no {name}{signature} hook, which "
                        f"{needed_by} needs")
    return jit(getattr(fn, "py_func", fn))


def _score_hook(hooks, jit):
    return _own_hook(hooks, "score", "(v, key, total, data)", jit)


def _round_hook(hooks, jit):
    return _own_hook(hooks, "round_of", "(v, data)", jit, "neighbor_best(rounds=...)")


def _inlined(hooks, name, jit):
    # the functor's hook compiled into the kernel itself: a call to the backend's compiled
    # hook passes the data tuple, whose arrays' reference counts two threads would then
    # fight over on every edge (RMAT-16 on 2 threads: 2.3x slower than one core)
    fn = getattr(hooks.functor, name)
    return jit(getattr(fn, "py_func", fn))


def _edge_keys(gather_edge, cond_vertex, check, weight, jit):
    """``(span, key_of)``, the edges both ``vertex_best`` read: ``lo, hi = span(v,
    row_offsets, data)``, ``v``'s out-edges (none, ``hi == lo``, where ``cond_vertex``
    turns ``v`` down: then nothing is chosen and no edge read); ``key_of(v, p,
    row_offsets, column_indices, values, data)``, edge ``p``'s key, or -1 for an edge
    left out (a key outside ``0..n-1``)."""
    @jit
    def span(v, row_offsets, data):
        lo = np.int64(row_offsets[v])
        if check and not cond_vertex(v, data):
            return lo, lo
        return lo, np.int64(row_offsets[v + 1])

    @jit
    def key_of(v, p, row_offsets, column_indices, values, data):
        key = np.int64(gather_edge(v, column_indices[p], p, weight(values, p), data))
        return key if 0 <= key < row_offsets.shape[0] - 1 else np.int64(-1)

    return span, key_of


def _vertex_best(hooks, weight, jit):
    """``vertex_best(v, ...)``: ``out[v]`` = the best-scoring key; returns the edges read."""
    span, key_of = _edge_keys(hooks.gather_edge, hooks.cond_vertex,
                              not hooks.default_cond_vertex, weight, jit)
    score = _score_hook(hooks, jit)
    sort = pair_sorter(jit)

    @jit
    def vertex_best(v, row_offsets, column_indices, values, keys, sums, out, data):
        # 1. every kept edge's key and weight, into v's own slots
        lo, hi = span(v, row_offsets, data)
        n = np.int64(0)
        for p in range(lo, hi):
            key = key_of(v, p, row_offsets, column_indices, values, data)
            if key >= 0:
                keys[lo + n] = key
                sums[lo + n] = weight(values, p)
                n += 1
        # 2. sorted by key, each run summed and scored; the incumbent needs a strict win
        sort(keys, sums, lo, n)
        incumbent = out[v]
        own = 0.0
        best, best_score, found = incumbent, 0.0, False
        i = lo
        while i < lo + n:
            key, total = keys[i], 0.0
            while i < lo + n and keys[i] == key:
                total += sums[i]
                i += 1
            if key == incumbent:
                own = total
                continue
            s = score(v, key, total, data)
            if not found or s > best_score:
                best, best_score, found = key, s, True
        if found and best_score > score(v, incumbent, own, data):
            out[v] = best
        return hi - lo

    return vertex_best


@hooks_cache
def cuda_kernel(hooks, weighted, all_vertices, rounds=False):
    """The choosing kernel; ``rounds``: only the vertices whose ``round_of`` is ``rnd``."""
    from gunpy.backends.cuda import device, kernel
    vertex_best = _vertex_best(hooks, cuda_weight(weighted), device)
    round_of = _round_hook(hooks, device) if rounds else None

    def best(queue, length, row_offsets, column_indices, values, keys, sums, out, data, tally,
             slot, rnd):
        n = length[0]
        read = np.int64(0)
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            v = np.int64(i) if all_vertices else np.int64(queue[i])
            if rounds and round_of(v, data) != rnd:
                continue
            read += vertex_best(v, row_offsets, column_indices, values, keys, sums, out, data)
        if read:  # the edges read (a statistic): one atomic a thread, read once per run
            cuda.atomic.add(tally, slot, read)

    return kernel(best)


@hooks_cache
def cuda_apply_kernel(hooks, all_vertices):
    """A round's apply step: ``apply_vertex`` on the vertices whose ``round_of`` is ``rnd``."""
    from gunpy.backends.cuda import device, kernel
    round_of, apply_vertex = _round_hook(hooks, device), hooks.apply_vertex

    def apply(queue, length, data, rnd):
        for i in range(cuda.grid(1), length[0], cuda.gridsize(1)):
            v = np.int64(i) if all_vertices else np.int64(queue[i])
            if round_of(v, data) == rnd:
                apply_vertex(v, data)

    return kernel(apply)


def _table_vertex_best(hooks, weight, jit):
    """The CPU's ``vertex_best``: the weights summed in a table with a slot per key (a
    chunk's own), no sort: ``O(d)`` a vertex. The same choice as :func:`_vertex_best`."""
    span, key_of = _edge_keys(_inlined(hooks, "gather_edge", jit),
                              _inlined(hooks, "cond_vertex", jit), not hooks.default_cond_vertex,
                              weight, jit)
    score = _score_hook(hooks, jit)

    @jit
    def vertex_best(v, row_offsets, column_indices, values, keys, table, mark, base, out, data):
        # 1. each kept edge's weight into its key's slot; the keys, first seen first, into
        #    v's own slots of the workspace
        lo, hi = span(v, row_offsets, data)
        n = np.int64(0)
        for p in range(lo, hi):
            key = key_of(v, p, row_offsets, column_indices, values, data)
            if key >= 0:
                at = base + key
                if mark[at] != v:
                    mark[at] = v
                    table[at] = weight(values, p)
                    keys[lo + n] = key
                    n += 1
                else:
                    table[at] += weight(values, p)
        # 2. each key scored (ties: the smallest), its slot marked free again
        incumbent = out[v]
        own = 0.0
        best, best_score, found = incumbent, 0.0, False
        for i in range(lo, lo + n):
            key = keys[i]
            total = table[base + key]
            mark[base + key] = -1
            if key == incumbent:
                own = total
                continue
            s = score(v, key, total, data)
            if not found or s > best_score or (s == best_score and key < best):
                best, best_score, found = key, s, True
        if found and best_score > score(v, incumbent, own, data):
            out[v] = best
        return hi - lo

    return vertex_best


def cpu_source(hooks, weighted, all_vertices):
    """The CPU kernel's Python source for ``hooks``; the kernel returns the edges read.

    ``nchunks`` chunks take every ``nchunks``-th item each (hubs spread over them), each
    with its own table of ``nkeys`` slots."""
    from numba import njit, prange
    vertex_best = _table_vertex_best(hooks, cpu_weight(weighted), njit(inline="always"))

    def best_(queue, n, nchunks, row_offsets, column_indices, values, keys, table, mark, nkeys,
              out, data):
        read = 0
        for c in prange(nchunks):
            for i in range(c * n // nchunks, (c + 1) * n // nchunks):
                v = np.int64(i) if all_vertices else np.int64(queue[i])
                read += vertex_best(v, row_offsets, column_indices, values, keys, table, mark,
                                    c * nkeys, out, data)
        return read

    return best_


def cpu_rounds_source(hooks, weighted, all_vertices):
    """The CPU kernel of ``rounds=``: the items counted into their rounds (``order``, with a
    round's items at ``start[r]:start[r + 1]``), then per round a parallel choosing pass
    and a parallel ``apply_vertex`` pass; returns the edges read."""
    from numba import njit, prange
    jit = njit(inline="always")
    vertex_best = _table_vertex_best(hooks, cpu_weight(weighted), jit)
    round_of, apply_vertex = _round_hook(hooks, jit), _inlined(hooks, "apply_vertex", jit)

    def rounds_(queue, n, nchunks, rounds, order, start, row_offsets, column_indices, values,
                keys, table, mark, nkeys, out, data):
        # 1. a counting sort of the items by round (one core: O(n))
        for r in range(rounds + 1):
            start[r] = 0
        for i in range(n):
            r = round_of(np.int64(i) if all_vertices else np.int64(queue[i]), data)
            if 0 <= r < rounds:
                start[r + 1] += 1
        for r in range(rounds):
            start[r + 1] += start[r]
        for i in range(n):
            v = np.int64(i) if all_vertices else np.int64(queue[i])
            r = round_of(v, data)
            if 0 <= r < rounds:
                order[start[r]] = v
                start[r] += 1
        for r in range(rounds, 0, -1):
            start[r] = start[r - 1]
        start[0] = 0
        # 2. each round: its vertices choose, then apply their choice
        read = 0
        for r in range(rounds):
            lo, m = start[r], start[r + 1] - start[r]
            for c in prange(nchunks):
                for i in range(lo + c * m // nchunks, lo + (c + 1) * m // nchunks):
                    read += vertex_best(order[i], row_offsets, column_indices, values, keys,
                                        table, mark, c * nkeys, out, data)
            for i in range(lo, lo + m):  # one core: a few stores a vertex (inlined into a
                apply_vertex(order[i], data)  # prange body, numba 0.68 dropped them)
        return read

    return rounds_


def _tables(ctx, nchunks):
    """Each chunk's table and marks (-1: free), kept with the graph's scratch."""
    store = ctx.kept("neighbor_best.tables", dict)
    size = nchunks * max(ctx.num_vertices, 1)
    if store.get("size", 0) < size:
        store["table"] = ctx.backend.empty(size, np.float64)
        store["mark"] = ctx.backend.full(size, -1, np.int64)
        store["size"] = size
    return store["table"], store["mark"]


def execute(ctx, frontier, hooks, data, out, rounds=0):
    """``out[v]`` = the best-scoring key for the frontier's vertices (``None``: all), in
    ``rounds`` sub-rounds if given; returns the edges read, or None where the kernel left
    that count on a context tally."""
    backend = ctx.backend
    dg = backend.graph(ctx.graph)
    all_vertices = frontier is None
    queue, length, n = ctx.items(frontier)
    if n == 0:
        return 0
    keys = ctx.scratch("neighbor_best.keys", max(1, dg.num_edges), np.int64)
    sums = ctx.scratch("neighbor_best.sums", max(1, dg.num_edges), np.float64)
    return NEIGHBOR_BEST(ctx, dg, hooks, data, out, keys, sums, queue,
                         length, n, all_vertices, rounds)


def cuda_execute(ctx, dg, hooks, data, out, keys, sums, queue, length, n, all_vertices,
                 rounds=0):
    tally, slot = ctx.tally("edges")
    run = ctx.backend.run
    best = cuda_kernel(hooks, dg.weighted, all_vertices, bool(rounds))
    apply = cuda_apply_kernel(hooks, all_vertices) if rounds else None
    for r in range(max(rounds, 1)):  # two launches a round: choose, then apply
        run(best, n, queue, length, dg.row_offsets, dg.column_indices, dg.values, keys, sums,
            out, data, tally, np.int64(slot), np.int64(r))
        if rounds:
            run(apply, n, queue, length, data, np.int64(r))
    return None  # the kernel counted the edges it read


def cpu_execute(ctx, dg, hooks, data, out, keys, sums, queue, length, n, all_vertices,
                rounds=0):
    # the CPU sums in tables (a slot per key) instead of sorting: `sums` stays unused
    backend = ctx.backend
    build = (dg.weighted, all_vertices)
    read = [0]
    work = dg.num_edges if all_vertices else n
    thin = work < backend.serial_below
    nchunks = 1 if thin else min(backend.chunks(n), backend.num_threads)
    table, mark = _tables(ctx, nchunks)
    args = (dg.row_offsets, dg.column_indices, dg.values, keys, table, mark,
            max(ctx.num_vertices, 1), out, data)
    if rounds:
        source = cpu_rounds_source
        args = (queue, n, nchunks, rounds, ctx.scratch("neighbor_best.order", max(n, 1),
                                                        np.int64),
                ctx.scratch("neighbor_best.start", rounds + 1, np.int64)) + args
    else:
        source, args = cpu_source, (queue, n, nchunks) + args

    def call(kernel):
        read[0] = kernel(*args)
    if thin:
        ctx.log(build=run_thin(backend, source, hooks, build, call))
    else:
        call(functor_pair(source, hooks, build)[0])
    return int(read[0])


def neighbor_best(graph, frontier, functor, data, out, *, rounds=None, context=None):
    """``out[v]`` = the key of ``v``'s out-edges whose summed weights ``functor.score`` rates
    best, for the vertices of ``frontier`` (``None``: every vertex) where
    ``functor.cond_vertex`` holds; the incumbent ``out[v]`` stays unless beaten strictly,
    and the smallest of equally scoring keys wins.

    ``functor.gather_edge(v, u, edge, weight, data)`` gives an edge's key, a vertex id
    (outside ``0..n-1``: the edge is left out); ``functor.score(v, key, total, data)``
    rates a key whose edges' weights sum to ``total`` (the incumbent is rated too, with
    total 0.0 when no edge gives it). ``out`` is an int64 device array with a slot per
    vertex. Returns ``out``; the edges read are logged in the context's record.

    ``rounds=r`` (a positive int): ``r`` sub-rounds in one call; ``functor.round_of(v,
    data)`` gives each vertex's (outside ``0..r-1``: it takes no part), and after a
    round's vertices have chosen, ``functor.apply_vertex(v, data)`` runs on each of them
    before the next round chooses (see the module's notes). ``context``: see
    :func:`gunpy.operators.advance`.

    Examples
    --------
    Each vertex of a weighted path 0 - 1 - 2 - 3 (weights 1, 3, 1) takes the neighbour
    whose edge is heaviest (score: the total itself), the incumbent being itself:

    >>> from collections import namedtuple
    >>> import numpy as np, gunpy
    >>> from gunpy import Functor, operators as ops
    >>> class Heaviest(Functor):
    ...     @staticmethod
    ...     def gather_edge(v, u, edge, weight, data):
    ...         return u
    ...     @staticmethod
    ...     def score(v, key, total, data):
    ...         return total * data.scale
    >>> G = gunpy.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, 3.0, 1.0], directed=False)
    >>> out = np.arange(4, dtype=np.int64)
    >>> _ = ops.neighbor_best(G, None, Heaviest, namedtuple("D", "scale")(1.0), out,
    ...                       context=ops.Context(G, backend="cpu"))
    >>> out.tolist()
    [1, 2, 1, 2]
    """
    ctx = context_for(graph, frontier, context)
    run(ctx, frontier, compile_functor(functor, ctx.backend), problem_data(data), out,
        rounds=rounds)
    ctx.done()
    return out


def run(ctx, frontier, hooks, data, out, rounds=None):
    """:func:`neighbor_best` once its arguments are checked (``hooks``: the compiled functor)."""
    if rounds is not None and (isinstance(rounds, (bool, np.bool_)) or not isinstance(
            rounds, (int, np.integer)) or rounds < 1):
        raise ValueError(f"rounds must be a positive integer or None, got {rounds!r}")
    if frontier is not None:
        frontier.ensure_queue(ctx.scratch)
    read = execute(ctx, frontier, hooks, data, out, int(rounds or 0))
    ctx.log(edges=read or 0, direction="pull", strategy="neighbor_best")
    return out


NEIGHBOR_BEST = Operator("neighbor_best",
                         "ctx, dg, hooks, data, out, keys, sums, queue, length, n, "
                         "all_vertices, rounds",
                         cpu=cpu_execute, cuda=cuda_execute)


callable_module(__name__, neighbor_best)
