"""pull: each unvisited vertex looks for a parent among its in-neighbours (bottom-up).

Gunrock section 4.4.2 (push-based and pull-based operations), Beamer's
bottom-up step, and the push-pull paper's optimisations:

* **masking**: only unvisited vertices (a zero bit in the visited bitmap) work;
* **early exit**: with ``early_exit`` the search of a vertex's in-edges stops at
  the first edge whose ``cond_edge`` holds (sound when the reduction is a
  logical OR, as in BFS);
* **operand reuse**: the input set tested for each in-neighbour may be the
  visited bitmap itself rather than the frontier: for BFS any visited
  in-neighbour of a still-unvisited vertex must be in the current frontier, so
  switching from push to pull needs no queue-to-bitmap conversion.

Newly found vertices go to a separate bitmap (``next_bits``), merged into the
visited set only after the step, so a vertex found in this step is never taken
as a parent in the same step.

CUDA mappings: ``thread`` (a thread per vertex, TurboBFS's "CSC scalar") and
``warp`` (a warp per vertex with a ballot over 32 in-edges at a time, "CSC
vector"), for graphs with long in-lists. CPU: a chunk of bitmap words per task;
each task owns its output words, so no atomics are needed.

The kernels also count the in-edges examined (the work pull really did) and the
out-degree sum of the vertices found (the next frontier's push work, for the
direction heuristic).
"""

import functools

import numpy as np

from gunpy import atomics
from gunpy.functor import hooks_cache, reads_edge_data
from gunpy.operators.advance.common import cpu_weight, cuda_weight

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["MAPPINGS", "cuda_kernel", "cpu_kernel", "execute", "cuda_execute", "cpu_execute",
           "choose_mapping", "needs_edge_ids"]

MAPPINGS = ("thread", "warp", "auto")

_FULL = 0xFFFFFFFF


@hooks_cache
def needs_edge_ids(hooks, weighted):
    """Whether a pull step with ``hooks`` reads ``in_edge_ids``: only when ``cond_edge`` or
    ``apply_edge`` may read its ``edge`` argument (or ``weight`` on a weighted graph),
    judged from their bytecode (:func:`gunpy.functor.reads_edge_data`, True whenever it
    cannot be sure). When False the kernels never touch ``in_edge_ids`` nor ``values``
    and hand the hooks ``edge = -1`` and ``weight = 1.0``, which they do not read: an
    undirected graph's pull then needs no map from an in-edge to its CSR id (the
    "twins"), a directed graph's no edge ids of its transpose."""
    return reads_edge_data(hooks, ("cond_edge", "apply_edge"), weighted=weighted)


def _in_bit(words, v):
    """Bit ``v`` of a bitmap of 32-bit words (plain Python: compiled inline by each target)."""
    return (words[v >> 5] >> np.uint32(v & 31)) & np.uint32(1)


@functools.cache
def _bit_helpers():
    """The bitmap and counter device functions of the pull kernels, made on first CUDA use."""
    from gunpy.backends.cuda import device
    from gunpy.operators.advance.common import cuda_warp_sum

    _bit = device(_in_bit)

    @device
    def _record(next_bits, v, row_offsets):
        # v joins the output bitmap; returns its out-degree (the next push's work)
        atomics.or_(next_bits, v >> 5, np.uint32(1) << np.uint32(v & 31))
        return row_offsets[v + 1] - row_offsets[v]

    @device
    def _add_counters(counters, examined, found, found_edges):
        # called by every lane of every warp once its loop is done: full-mask shuffles are safe
        examined = cuda_warp_sum(examined)
        found = cuda_warp_sum(found)
        found_edges = cuda_warp_sum(found_edges)
        if cuda.laneid == 0:
            cuda.atomic.add(counters, 0, examined)
            cuda.atomic.add(counters, 1, found)
            cuda.atomic.add(counters, 2, found_edges)

    return _bit, _record, _add_counters


def _inline_jit(device):
    """The decorator that compiles a helper inline for ``device`` ("cuda" or "cpu")."""
    if device == "cuda":
        from gunpy.backends.cuda import device as jit
        return jit
    from numba import njit
    return njit(inline="always")


def _edge_of(weighted, edge_ids, device):
    """``edge(in_edge_ids, values, p) -> (e, w)``: the in-edge at CSC position ``p``'s CSR
    id and weight, or ``(-1, 1.0)`` without reading either array (``edge_ids=False``)."""
    weight = cuda_weight(weighted) if device == "cuda" else cpu_weight(weighted)
    jit = _inline_jit(device)

    @jit
    def edge(in_edge_ids, values, p):
        if edge_ids:
            e = in_edge_ids[p]
            return e, weight(values, e)
        return np.int64(-1), 1.0

    return edge


def _pull_helpers(hooks, weighted, early_exit, edge_ids, device):
    """``(relax, search)`` for ``device`` ("cuda" or "cpu"), the inner steps every pull
    kernel shares.

    ``relax(u, v, p, in_edge_ids, values, data)``: ``cond_edge`` on the in-edge ``u -> v``
    at CSC position ``p``, ``apply_edge`` where it holds; returns whether it held.
    ``search(v, in_offsets, in_indices, in_edge_ids, values, input_bits, data, examined)``:
    ``(hit, examined)``, ``v``'s in-edges scanned for parents in the input set, each
    relaxed (``early_exit``: up to the first that holds), and counted on ``examined``.
    """
    cond_edge, apply_edge = hooks.cond_edge, hooks.apply_edge
    edge = _edge_of(weighted, edge_ids, device)
    jit = _inline_jit(device)
    bit = jit(_in_bit)

    @jit
    def relax(u, v, p, in_edge_ids, values, data):
        e, w = edge(in_edge_ids, values, p)
        if cond_edge(u, v, e, w, data):
            apply_edge(u, v, e, w, data)
            return True
        return False

    @jit
    def search(v, in_offsets, in_indices, in_edge_ids, values, input_bits, data, examined):
        hit = False
        for p in range(in_offsets[v], in_offsets[v + 1]):
            u = in_indices[p]
            examined += 1
            if bit(input_bits, u):
                if relax(u, v, p, in_edge_ids, values, data):
                    hit = True
                    if early_exit:
                        break
        return hit, examined

    return relax, search


@hooks_cache
def cuda_kernel(hooks, weighted, mapping, early_exit, edge_ids=True):
    """The CUDA pull kernel for ``mapping`` ("thread" or "warp"); ``edge_ids=False``: one
    that never reads ``in_edge_ids`` (see :func:`needs_edge_ids`)."""
    from gunpy.backends.cuda import kernel
    _bit, _record, _add_counters = _bit_helpers()
    relax, search = _pull_helpers(hooks, weighted, early_exit, edge_ids, "cuda")

    def pull_thread(n, in_offsets, in_indices, in_edge_ids, values, row_offsets, visited,
                    no_in_edges, input_bits, next_bits, counters, data):
        examined = np.int64(0)
        found = np.int64(0)
        found_edges = np.int64(0)
        for v in range(cuda.grid(1), n, cuda.gridsize(1)):
            # 1. masking: visited vertices (and those with no in-edges) have nothing to do
            if _bit(visited, v) | _bit(no_in_edges, v):
                continue
            # 2. scan in-edges for a parent in the input set
            hit, examined = search(v, in_offsets, in_indices, in_edge_ids, values, input_bits,
                                   data, examined)
            # 3. record v in the output bitmap
            if hit:
                found += 1
                found_edges += _record(next_bits, v, row_offsets)
        # 4. one atomic per warp for the counters
        _add_counters(counters, examined, found, found_edges)

    def pull_warp(n, in_offsets, in_indices, in_edge_ids, values, row_offsets, visited,
                  no_in_edges, input_bits, next_bits, counters, data):
        lane = cuda.laneid
        nwarps = cuda.gridsize(1) // 32
        examined = np.int64(0)
        found = np.int64(0)
        found_edges = np.int64(0)
        for v in range(cuda.grid(1) // 32, n, nwarps):
            if _bit(visited, v) | _bit(no_in_edges, v):
                continue  # uniform: every lane reads the same word
            hit = False
            start = in_offsets[v]
            end = in_offsets[v + 1]
            for base in range(start, end, 32):
                # 1. each lane tests one in-edge; a ballot collects the candidates
                p = base + lane
                cand = False
                u = 0
                if p < end:
                    u = in_indices[p]
                    examined += 1
                    cand = _bit(input_bits, u) != 0
                # ballots are typed int32: as uint32 the bit loop below stays 32-bit
                mask = np.uint32(cuda.ballot_sync(_FULL, cand))
                if early_exit:
                    # 2. candidates try cond_edge one by one, lowest lane first
                    while mask != 0:
                        leader = cuda.ffs(mask) - 1
                        ok = False
                        if lane == leader:
                            ok = relax(u, v, p, in_edge_ids, values, data)
                        if cuda.shfl_sync(_FULL, 1 if ok else 0, leader) != 0:
                            hit = True
                            break
                        mask &= mask - np.uint32(1)
                    if hit:
                        break
                else:
                    # 2'. no early exit: every candidate edge applies in parallel
                    ok = False
                    if cand:
                        ok = relax(u, v, p, in_edge_ids, values, data)
                    if cuda.any_sync(_FULL, ok):
                        hit = True
            # 3. lane 0 records v
            if hit and lane == 0:
                found += 1
                found_edges += _record(next_bits, v, row_offsets)
        # 4. one atomic per warp for the counters
        _add_counters(counters, examined, found, found_edges)

    return kernel(pull_warp if mapping == "warp" else pull_thread)


#: vertices whose in-lists the CPU pull kernel asks the memory for ahead of its search
#: (0: none). A search is a chain of dependent loads (the in-list's offset, its first
#: neighbours, their bits) ending in an unpredictable branch, so the core overlaps
#: little of one vertex's misses with the next's; prefetching the next vertices' first
#: in-edges lets them overlap (RMAT-18's BFS, its first pull alone on the shared
#: 2-core VM: 6.1 -> 4.5 ms; 8 to 64 ahead alike)
PREFETCH = 32


@functools.cache
def _prefetch_intrinsic():
    """``prefetch(arr, i)``: a hint that ``arr[i]`` will be read soon (LLVM's
    ``llvm.prefetch``: a read, kept in every cache level); no load, no fault."""
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def prefetch(typingctx, arr, i):
        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                           wraparound=False)
            i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                "llvm.prefetch.p0i8")
            builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()
        return types.void(arr, i), codegen

    return prefetch


@functools.cache
def _cpu_unmasked():
    """``unmasked(visited, no_in_edges, w, n)``: the bits of word ``w``'s vertices that
    a CPU pull searches (neither visited nor without in-edges, below ``n``)."""
    from numba import njit

    @njit(inline="always")
    def unmasked(visited, no_in_edges, w, n):
        # (an XOR, not ~: numba widens ~ of a uint32 to a signed 64-bit value)
        todo = (visited[w] | no_in_edges[w]) ^ np.uint32(0xFFFFFFFF)
        last = n - np.int64(w) * 32  # vertices in word w
        if last < 32:
            todo &= (np.uint32(1) << np.uint32(last)) - np.uint32(1)
        return todo

    return unmasked


def _cpu_prefetcher(depth):
    """``ahead, pending = run_ahead(w, ahead, end, pending, n, visited, no_in_edges,
    in_offsets, in_indices)``: the in-lists of the vertices a CPU pull task will search
    next (those outside the mask in words ``ahead`` on), prefetched until ``pending``
    (prefetched, not yet searched) reaches ``depth`` or the task's words ``end``."""
    from numba import njit
    from numba.cpython.unsafe.numbers import trailing_zeros
    prefetch = _prefetch_intrinsic()  # made once: numba types one intrinsic object
    unmasked = _cpu_unmasked()

    @njit(inline="always")
    def run_ahead(w, ahead, end, pending, n, visited, no_in_edges, in_offsets, in_indices):
        while pending < depth and ahead < end:
            todo = unmasked(visited, no_in_edges, ahead, n)
            while todo != np.uint32(0):
                prefetch(in_indices, in_offsets[np.int64(ahead) * 32 + trailing_zeros(todo)])
                pending += 1
                todo &= todo - np.uint32(1)
            ahead += 1
        return ahead, pending

    return run_ahead


@hooks_cache
def cpu_kernel(hooks, weighted, early_exit, edge_ids=True, prefetch=0):
    """The CPU pull kernel; ``edge_ids=False``: one that never reads ``in_edge_ids`` (see
    :func:`needs_edge_ids`); ``prefetch``: the in-lists of up to that many vertices asked
    for ahead of the search (:data:`PREFETCH`; 0: none)."""
    from numba import prange
    from numba.cpython.unsafe.numbers import trailing_zeros

    from gunpy.backends.cpu import kernel
    search = _pull_helpers(hooks, weighted, early_exit, edge_ids, "cpu")[1]
    unmasked = _cpu_unmasked()
    depth = int(prefetch)
    run_ahead = _cpu_prefetcher(max(depth, 1))

    def pull(n, in_offsets, in_indices, in_edge_ids, values, row_offsets, visited, no_in_edges,
             input_bits, next_bits, counts, nchunks, data):
        nwords = next_bits.shape[0]
        size = (nwords + nchunks - 1) // nchunks
        for c in prange(nchunks):
            examined = 0
            found = 0
            found_edges = 0
            end = min(nwords, (c + 1) * size)
            # the words [w, ahead) hold `pending` vertices to search, their in-lists asked for
            ahead = c * size
            pending = 0
            for w in range(c * size, end):
                if depth > 0:
                    ahead, pending = run_ahead(w, ahead, end, pending, n, visited, no_in_edges,
                                               in_offsets, in_indices)
                # 1. masking: visited vertices (and those with no in-edges) are skipped,
                #    a step per vertex searched (no branch on each bit of the word)
                todo = unmasked(visited, no_in_edges, w, n)
                out = np.uint32(0)
                while todo != np.uint32(0):
                    b = trailing_zeros(todo)
                    todo &= todo - np.uint32(1)
                    v = np.int64(w) * 32 + b
                    pending -= 1
                    # 2. scan in-edges for a parent in the input set
                    hit, examined = search(v, in_offsets, in_indices, in_edge_ids, values,
                                           input_bits, data, examined)
                    if hit:
                        out |= np.uint32(1) << np.uint32(b)
                        found += 1
                        found_edges += row_offsets[v + 1] - row_offsets[v]
                # 3. this task owns word w of the output: a plain store
                next_bits[w] = out
            counts[c, 0] = examined
            counts[c, 1] = found
            counts[c, 2] = found_edges

    return kernel(pull)


def choose_mapping(mapping, dg):
    """``auto``: a warp per vertex when in-lists are long on average, else a thread."""
    if mapping not in MAPPINGS:
        raise ValueError(f"unknown pull mapping {mapping!r}; valid: {MAPPINGS}")
    if mapping != "auto":
        return mapping
    avg = dg.num_edges / max(dg.num_vertices, 1)
    return "warp" if avg >= 16 else "thread"


def execute(ctx, dg, visited, input_bits, next_bits, hooks, data, *, mapping="auto",
            early_exit=True):
    """One pull step with a registered mapping; returns ``(edges examined, vertices found,
    their out-degree sum, mapping)``.

    ``dg`` must carry the CSC view; ``next_bits`` receives the found vertices.
    """
    from gunpy.operators.advance import PULL_MAPPINGS  # (which imports this module)
    return PULL_MAPPINGS[mapping].op(ctx, dg, visited, input_bits, next_bits, hooks, data,
                                     mapping=mapping, early_exit=early_exit)


_ZEROS3 = np.zeros(3, dtype=np.int64)


def cuda_execute(ctx, dg, visited, input_bits, next_bits, hooks, data, *, mapping, early_exit):
    backend = ctx.backend
    n = dg.num_vertices
    mapping = choose_mapping(mapping, dg)
    backend.fill(next_bits, 0)
    counters = ctx.scratch("pull.counters", 3, np.int64)
    backend.copy_in(counters, 0, _ZEROS3)  # an upload, not a launch
    k = cuda_kernel(hooks, dg.weighted, mapping, bool(early_exit),
                    needs_edge_ids(hooks, dg.weighted))
    items = n * 32 if mapping == "warp" else n
    backend.run(k, items, n, dg.in_offsets, dg.in_indices, dg.in_edge_ids, dg.values,
                dg.row_offsets, visited, dg.no_in_edges, input_bits, next_bits, counters,
                data)
    c = backend.to_host(counters)
    return int(c[0]), int(c[1]), int(c[2]), mapping


def cpu_execute(ctx, dg, visited, input_bits, next_bits, hooks, data, *, mapping, early_exit):
    backend = ctx.backend
    n = dg.num_vertices
    nwords = next_bits.shape[0]
    nchunks = backend.chunks(nwords, min_chunk=16, per_thread=16)
    counts = np.zeros((nchunks, 3), dtype=np.int64)
    cpu_kernel(hooks, dg.weighted, bool(early_exit), needs_edge_ids(hooks, dg.weighted),
               PREFETCH)(
        n, dg.in_offsets, dg.in_indices, dg.in_edge_ids, dg.values, dg.row_offsets, visited,
        dg.no_in_edges, input_bits, next_bits, counts, nchunks, data)
    tot = counts.sum(axis=0)
    return int(tot[0]), int(tot[1]), int(tot[2]), "cpu"
