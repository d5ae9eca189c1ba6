"""intersect: each edge i -> j merges i's and j's sorted neighbour lists (segmented intersection).

Gunrock's segmented intersection (Wang et al., "Gunrock: GPU Graph
Analytics", section 5.1.6, triangle counting) and GraphBLAST's masked SpGEMM
(Yang, Buluc and Owens, "GraphBLAST", section 6): ``C<M> = A * B^T`` with the
mask ``M`` applied *before* the multiply, so only the entries the mask keeps
are ever computed. Here the mask is ``graph`` (its edges ``e = (i, j)``, each
filtered by the functor's ``cond_edge``), ``A`` is ``left`` and ``B`` is
``right``: for every kept edge, the sorted out-neighbour lists of ``i`` in
``left`` and of ``j`` in ``right`` are walked with a two-pointer merge, and
each common neighbour ``k`` calls::

    apply_intersection(i, j, e, k, p, q, data)

where ``p`` is the edge id of ``i -> k`` in ``left`` and ``q`` that of
``j -> k`` in ``right`` (so a hook can read both edges' weights or per-edge
arrays). An edge's matches call the hook one at a time, in the merge's order
(increasing ``k``), so a hook that writes only slot ``e`` of a per-edge array
needs no atomics (masked mxm) and folds in the same order on every backend;
triangle counting adds into per-vertex counters with atomics.

Neighbour lists must be sorted by column (graphs from ``Graph.from_edges``,
``from_scipy``, ``from_networkx`` and the readers are); a graph built directly
from CSR arrays is checked once (the result is kept with the graph) and a
``ValueError`` names the first unsorted row. A column repeated within a row is
matched copy by copy (the r-th copy with the r-th copy).

CUDA: a grid-stride loop over the edges of ``graph`` (edge sources from the
COO view), balanced for skewed degrees. A warp's round lasts as long as its
longest merge, so the warp takes pairs of at least :data:`LONG_PAIR` entries
off their threads, longest first, while that shortens the round: it sweeps
each such pair whole, the shorter list 32 entries at a time, each lane
binary-searching the longer list for its entry (a hub's pair costs about
``min / 32 * log(max)`` steps instead of ``min + max``); the other pairs are
merged by their edge's thread. Pairs of similar long lists stay with their
threads (a sweep would not be shorter than the merge). The warp's matches
call the hook one lane at a time, lowest first, and the entries a merge would
have read are counted without walking them, so the hooks and the counters
see exactly what the merge gives. The match and work counters are summed per
warp and added with one atomic per warp. CPU (:mod:`gunpy.operators.intersect_cpu`):
chunks of consecutive edges, each row's left list marked once and its edges'
right lists looked up in it (the same calls, order and counters).
"""

import functools

import numpy as np

from gunpy._csr import row_order
from gunpy.functor import compile_functor, hooks_cache
from gunpy.graph import Graph
from gunpy.operators.advance.common import cuda_weight
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.intersect_cpu import (_STRICT, _merge, _span, cpu_execute, cpu_kernel,
                                           cpu_source)
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["intersect", "run", "check_sorted", "sorted_rows", "cuda_kernel", "cpu_kernel", "cpu_source",
           "execute", "cuda_execute", "cpu_execute"]

_SORTED = ("intersect", "sorted")  # the key of the sortedness verdict kept with a graph


#: pairs whose two lists hold at least this many entries together may go to a whole
#: warp (read by :func:`cuda_execute` at each call and passed to the kernel; 0 sends
#: every pair of non-empty lists to a warp)
LONG_PAIR = 64

_FULL = 0xFFFFFFFF


@functools.cache
def _search_helpers():
    """The binary searches and warp reductions of :func:`cuda_kernel`, made on first CUDA use."""
    from gunpy.backends.cuda import device
    from gunpy.backends.device_build import lower_bound as _lower_bound

    @device
    def _merge_reads(l_indices, p, p_end, r_indices, q, q_end):
        """The entries the two-pointer merge of two non-empty sorted lists reads, without
        walking them: it stops at the smaller of the two last values ``v``, having read
        everything below ``v`` in both lists and ``v``'s copies as far as they pair up (all
        of them in the list that ends first)."""
        a_last = l_indices[p_end - 1]
        b_last = r_indices[q_end - 1]
        v = min(a_last, b_last)
        below_a = _lower_bound(l_indices, p, p_end, v)
        below_b = _lower_bound(r_indices, q, q_end, v)
        copies_a = _lower_bound(l_indices, below_a, p_end, v + 1) - below_a
        copies_b = _lower_bound(r_indices, below_b, q_end, v + 1) - below_b
        paired = min(copies_a, copies_b)
        read = (below_a - p) + (below_b - q) + 2 * paired
        if a_last < b_last:
            read += copies_a - paired
        elif b_last < a_last:
            read += copies_b - paired
        return read

    @device
    def _warp_max(x):
        """The largest ``x`` over the warp, in every lane (all 32 lanes call it)."""
        off = 16
        while off > 0:
            x = max(x, cuda.shfl_xor_sync(_FULL, x, off))
            off //= 2
        return x

    @device
    def _sweep_cost(la, lb):
        """A warp sweep's steps for lists of ``la`` and ``lb`` entries (the model the warp
        chooses by): a binary search of the longer list per round of 32 shorter-list
        entries, and one hook call per possible match."""
        short = min(la, lb)
        depth = np.int64(64 - cuda.clz(np.int64(max(la, lb))))
        return (short + 31) // 32 * depth + short

    return _lower_bound, _merge_reads, _warp_max, _sweep_cost


def _warp_sweep(apply_intersection):
    """``found = sweep(...)``: a warp's matches of a short sorted list in a long one.

    All 32 lanes call it. The short list is taken 32 entries at a time, a lane
    an entry; each lane binary-searches the long list (from where the previous
    round's last entry landed) for its entry's copy of the same rank, so matches
    pair up as in the merge. Matches then call the hook one lane at a time, in
    list order: the hook sees exactly the merge's calls in the merge's order,
    and a hook writing only slot ``e`` still has one writer at a time.
    """
    from gunpy.backends.cuda import device
    _lower_bound = _search_helpers()[0]

    @device
    def sweep(s_idx, s0, s_end, g_idx, g0, g_end, swapped, i, j, e, lane, data):
        found = np.int64(0)
        lo = g0
        for base in range(s0, s_end, 32):
            # 1. each lane looks its entry up in the long list
            s = base + lane
            k = s_idx[s0]
            low = g_end
            g = g_end
            if s < s_end:
                k = s_idx[s]
                rank = 0  # which copy of k this is (lists may repeat a column)
                if s > s0 and s_idx[s - 1] == k:
                    rank = s - _lower_bound(s_idx, s0, s, k)
                low = _lower_bound(g_idx, lo, g_end, k)
                g = low + rank
            hit = g < g_end and g_idx[g] == k
            # 2. the matches call the hook lowest lane (smallest k) first, one at a time
            mask = np.uint32(cuda.ballot_sync(_FULL, hit))
            found += np.int64(cuda.popc(mask))
            while mask != 0:
                if lane == cuda.ffs(mask) - 1:
                    if swapped:
                        apply_intersection(i, j, e, k, g, s, data)
                    else:
                        apply_intersection(i, j, e, k, s, g, data)
                cuda.syncwarp()
                mask &= mask - np.uint32(1)
            # 3. the next round's entries are larger: their searches start here
            lo = cuda.shfl_sync(_FULL, low, 31)
        return found

    return sweep


@hooks_cache
def cuda_kernel(hooks, weighted, with_counts=False, lower=False):
    from gunpy.backends.cuda import device, kernel
    from gunpy.operators.advance.common import cuda_warp_sum
    _, _merge_reads, _warp_max, _sweep_cost = _search_helpers()
    cond_edge = hooks.cond_edge
    merge = _merge(hooks.apply_intersection, device, lower)
    span = _span(lower, device)
    sweep = _warp_sweep(hooks.apply_intersection)
    weight = cuda_weight(weighted)

    def intersect(m, long_pair, edge_sources, column_indices, values, l_offsets, l_indices,
                  r_offsets, r_indices, counters, per_edge, data):
        lane = cuda.laneid
        matches = np.int64(0)
        read = np.int64(0)
        # a warp-uniform grid-stride loop (all 32 lanes take every round): a warp
        # shares its lanes' long pairs
        for base in range(cuda.grid(1) - lane, m, cuda.gridsize(1)):
            e = base + lane
            i = 0
            j = 0
            p = p_end = q = q_end = 0  # i's list in left, j's in right (their spans)
            kept = False
            cost = np.int64(0)  # the merge's steps (0: an empty list, no steps)
            by_warp = np.int64(0)  # a sweep's steps instead (cost: never swept)
            # 1. the mask: edge e = (i, j), kept when cond_edge holds
            if e < m:
                i = edge_sources[e]
                j = column_indices[e]
                kept = (not lower or j < i) and cond_edge(i, j, e, weight(values, e), data)
                if kept:
                    p, p_end = span(l_offsets, l_indices, i, i)
                    q, q_end = span(r_offsets, r_indices, j, j)
                    la = p_end - p
                    lb = q_end - q
                    if la > 0 and lb > 0:
                        cost = la + lb
                        if cost >= long_pair:
                            # the merge's exact steps (it stops at the smaller last
                            # entry: a star's leaf-hub pair is one step)
                            cost = _merge_reads(l_indices, p, p_end, r_indices, q, q_end)
                    by_warp = cost
                    if cost > 0 and cost >= long_pair:
                        # long_pair 0: every pair swept (the tests' way to the sweep)
                        by_warp = np.int64(-1) if long_pair == 0 else _sweep_cost(la, lb)
            # 2. the warp takes pairs longest first (taken = its turn), and sweeps the
            # first `best_t` of them: the round lasts the sweeps plus the longest merge left
            taken = 0
            t = 0
            sweeps = np.int64(0)
            best = np.int64(-1)
            best_t = 0
            while True:
                top = _warp_max(np.int64(0) if taken > 0 else cost)
                if best < 0 or sweeps + top < best:
                    best = sweeps + top
                    best_t = t
                if top == 0 or top < long_pair or sweeps >= best:
                    break
                owner = cuda.ffs(np.uint32(cuda.ballot_sync(_FULL, taken == 0 and
                                                            cost == top))) - 1
                by_owner = cuda.shfl_sync(_FULL, by_warp, owner)
                if by_owner >= top:
                    break  # no sweep beats this merge, nor a shorter one's
                t += 1
                sweeps += by_owner
                if lane == owner:
                    taken = t
            swept = 0 < taken <= best_t
            # 3. the pairs left: each thread's own two-pointer merge
            if kept and not swept:
                found, walked = merge(i, j, e, p, p_end, l_indices, q, q_end, r_indices, data)
                matches += found
                read += walked
                if with_counts:
                    per_edge[e] = found
            # 4. the pairs taken, one at a time by the whole warp: the shorter list's
            # entries looked up in the longer one
            pending = np.uint32(cuda.ballot_sync(_FULL, swept))
            while pending != 0:
                owner = cuda.ffs(pending) - 1
                pending &= pending - np.uint32(1)
                oe = cuda.shfl_sync(_FULL, e, owner)
                oi = cuda.shfl_sync(_FULL, i, owner)
                oj = cuda.shfl_sync(_FULL, j, owner)
                op, op_end = span(l_offsets, l_indices, oi, oi)
                oq, oq_end = span(r_offsets, r_indices, oj, oj)
                if oq_end - oq < op_end - op:
                    found = sweep(r_indices, oq, oq_end, l_indices, op, op_end, True, oi, oj,
                                  oe, lane, data)
                else:
                    found = sweep(l_indices, op, op_end, r_indices, oq, oq_end, False, oi, oj,
                                  oe, lane, data)
                if lane == owner:
                    matches += found
                    read += cost  # the merge's reads, counted in step 1
                    if with_counts:
                        per_edge[oe] = found
        # 5. one atomic per warp for the counters (every lane reaches here)
        matches = cuda_warp_sum(matches)
        read = cuda_warp_sum(read)
        if lane == 0:
            cuda.atomic.add(counters, 0, matches)
            cuda.atomic.add(counters, 1, read)

    return kernel(intersect)


def sorted_rows(G):
    """2 when every neighbour list of ``G`` is strictly increasing, 1 when every one is
    sorted but some repeat a column, 0 when some list goes down.

    One parallel pass, once per graph: a sorted verdict is kept with the graph's
    device copies (which rebinding its arrays drops), and so is whether no list
    repeats a column (:data:`_STRICT`: the CPU may then mark lists instead of
    merging them).
    """
    if G._device.knows(_SORTED):
        return 2 if G._device.knows(_STRICT) else 1
    order = row_order(G.row_offsets, G.column_indices)
    if order:
        G._device.learn(_SORTED)
    if order == 2:
        G._device.learn(_STRICT)
    return order


def check_sorted(G, name="graph"):
    """Raise ``ValueError`` unless every neighbour list of ``G`` is sorted by column
    (:func:`sorted_rows`, checked once per graph)."""
    if sorted_rows(G):
        return
    ci, ro = G.column_indices, G.row_offsets
    m = ci.shape[0]
    # not sorted: the NumPy below only names the first culprit
    down = ci[1:] <= ci[:-1]
    starts = ro[1:-1]  # a drop where a new row starts is no disorder
    down[starts[(starts > 0) & (starts < m)] - 1] = False
    bad = np.flatnonzero(down)
    e = int(bad[ci[bad + 1] < ci[bad]][0]) + 1  # (repeats are sorted)
    row = int(np.searchsorted(ro, e, side="right")) - 1
    raise ValueError(
        f"intersect needs every neighbour list sorted by column, but row {row} of the "
        f"{name} is not (column_indices[{e - 1}] = {int(ci[e - 1])} > column_indices[{e}] = "
        f"{int(ci[e])}); Graph.from_edges, from_scipy and from_networkx build sorted lists")


def execute(ctx, hooks, data, left, right, counts=None, lower=False):
    """Intersect over every edge of ``ctx.graph``; returns ``(matches, list entries read)``.

    ``counts``: an int64 array with a slot per edge of ``ctx.graph``, which
    receives each edge's number of matches (0 for edges ``cond_edge`` drops
    is not written)."""
    if ctx.graph.num_edges == 0:
        return 0, 0
    return INTERSECT(ctx, hooks, data, left, right, counts, lower)


def cuda_execute(ctx, hooks, data, left, right, counts=None, lower=False):
    backend = ctx.backend
    dg = backend.graph(ctx.graph, coo=True)
    lg = backend.graph(left)
    rg = backend.graph(right)
    counters = ctx.scratch("intersect.counters", 2, np.int64)
    backend.fill(counters, 0)
    m = dg.num_edges
    with_counts = counts is not None
    per_edge = counts if with_counts else counters
    backend.run(cuda_kernel(hooks, dg.weighted, with_counts, lower), m, m, np.int64(LONG_PAIR),
                dg.edge_sources, dg.column_indices, dg.values, lg.row_offsets, lg.column_indices,
                rg.row_offsets, rg.column_indices, counters, per_edge, data)
    c = backend.to_host(counters)
    return int(c[0]), int(c[1])


def intersect(graph, functor, data=None, *, left=None, right=None, counts=None, lower=False,
              context=None):
    """For each edge ``i -> j`` of ``graph``, call the functor on every common neighbour.

    The mask-first masked SpGEMM ``C<graph> = left * right^T`` of GraphBLAST
    (section 6) and Gunrock's segmented intersection: for every edge ``e = (i,
    j)`` of ``graph`` (in CSR order; ``w = graph.values[e]``, or 1.0 when
    unweighted) whose ``functor.cond_edge(i, j, e, w, data)`` holds, the sorted
    out-neighbour lists of ``i`` in ``left`` and of ``j`` in ``right`` are
    merged, and every common neighbour ``k`` calls
    ``functor.apply_intersection(i, j, e, k, p, q, data)``, with ``p`` the edge
    id of ``i -> k`` in ``left`` and ``q`` that of ``j -> k`` in ``right``.

    Parameters
    ----------
    graph : gunpy.Graph
        The mask: one intersection per edge, whose matches call the hook one
        at a time (a hook may store into slot ``e`` of a per-edge array
        without atomics).
    functor : gunpy.Functor subclass
        Its ``cond_edge`` filters the mask's edges (default: every edge) and its
        ``apply_intersection`` runs once per match.
    data : namedtuple, Problem or None
        What the hooks see as ``data``.
    left, right : gunpy.Graph, optional
        Graphs with ``graph``'s vertex count whose rows are intersected
        (default: ``graph`` itself). Neighbour lists must be sorted by column.
    counts : int64 device array, optional
        One slot per edge of ``graph``: receives the edge's number of common
        neighbours (slots of edges ``cond_edge`` drops are left as they are).
        With the default hooks this is ``C<graph> = left plus.pair right^T``
        with no per-match work at all.
    lower : bool, default False
        Intersect the strict lower triangles: only the edges ``i -> j`` of
        ``graph`` with ``j < i`` (the others are not offered to ``cond_edge``),
        and of each list only its entries below its own row (``k < i`` in
        ``i``'s, ``k < j`` in ``j``'s). Over a symmetric graph that is
        ``C<L> = L * L^T`` with ``L = tril(A)``, read in place instead of
        building ``L``: each triangle ``k < j < i`` is found once, along
        ``i -> j`` (GAP's ordered count).
    context : gunpy.operators.Context, optional
        Backend, scratch and stats record (a fresh ``"auto"`` one when omitted).

    Returns
    -------
    int
        The number of matches ``(e, k)``. The list entries read are logged in
        the context's record (``edges``, with ``strategy="intersect"``).

    Raises
    ------
    ValueError
        ``left`` / ``right`` with another vertex count, a neighbour list not
        sorted by column, a context made for another graph.
    TypeError
        A graph that is not a :class:`gunpy.Graph`, a functor that is not a
        :class:`gunpy.Functor` subclass.

    See Also
    --------
    gunpy.triangles : triangle counting built on this operator.

    Examples
    --------
    Common neighbours of the two ends of each edge of a triangle plus a tail:

    >>> from collections import namedtuple
    >>> import numpy as np, gunpy
    >>> from gunpy import Functor
    >>> from gunpy.operators import Context, intersect
    >>> G = gunpy.Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3], directed=False)
    >>> class Common(Functor):
    ...     @staticmethod
    ...     def apply_intersection(src, dst, edge, common, src_edge, dst_edge, data):
    ...         data.common[edge] += 1  # one call at a time per edge: a plain store
    >>> ctx = Context(G, backend="cpu")
    >>> data = namedtuple("Data", "common")(np.zeros(G.num_edges, dtype=np.int64))
    >>> intersect(G, Common, data, context=ctx)
    6
    >>> data.common.tolist()
    [1, 1, 1, 1, 1, 1, 0, 0]
    >>> ctx.record["strategy"], ctx.record["edges"] > 0
    ('intersect', True)
    """
    ctx = context_for(_check(graph, left, right, counts, lower), None, context)
    return run(ctx, compile_functor(functor, ctx.backend), problem_data(data),
               graph if left is None else left, graph if right is None else right, counts,
               bool(lower))


def _check(graph, left, right, counts, lower):
    """:func:`intersect`'s arguments checked (returns ``graph``)."""
    for name, g in (("graph", graph), ("left", left), ("right", right)):
        if g is not None and not isinstance(g, Graph):
            raise TypeError(f"intersect's {name} must be a gunpy.Graph, got "
                            f"{type(g).__name__}")
    for name, g in (("left", graph if left is None else left),
                    ("right", graph if right is None else right)):
        if g.num_vertices != graph.num_vertices:
            raise ValueError(f"intersect's {name} graph has {g.num_vertices} vertices, the "
                             f"mask graph {graph.num_vertices}")
        check_sorted(g, f"{name} graph")
    if lower:
        check_sorted(graph, "mask graph")  # a row's part below it is its first entries
    if counts is not None and (getattr(counts, "dtype", None) != np.int64 or
                               counts.shape[0] < graph.num_edges):
        raise ValueError(f"counts must be an int64 array with at least {graph.num_edges} "
                         "slots (one per edge of the mask graph)")
    return graph


def run(ctx, hooks, data, left, right, counts=None, lower=False):
    """:func:`intersect` once its arguments are checked (``hooks``: the compiled functor)."""
    matches, read = execute(ctx, hooks, data, left, right, counts, lower)
    ctx.log(edges=read, strategy="intersect")
    return matches


INTERSECT = Operator("intersect", "ctx, hooks, data, left, right, counts, lower",
                     cpu=cpu_execute,
                     cuda=cuda_execute)


callable_module(__name__, intersect)
