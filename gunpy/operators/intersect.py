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
arrays). One edge ``e`` is handled by one thread, so a hook that writes only
slot ``e`` of a per-edge array needs no atomics (masked mxm); triangle
counting adds into per-vertex counters with atomics.

Neighbour lists must be sorted by column (graphs from ``Graph.from_edges``,
``from_scipy``, ``from_networkx`` and the readers are); a graph built directly
from CSR arrays is checked once (the result is kept with the graph) and a
``ValueError`` names the first unsorted row. A column repeated within a row is
matched copy by copy (the r-th copy with the r-th copy).

CUDA: a grid-stride loop with a thread per edge of ``graph`` (edge sources from
the COO view); the match and work counters are summed per warp and added with
one atomic per warp. CPU: a ``prange`` over chunks of consecutive edges (rows
cut where the edge count says, so every chunk has the same number of merges),
per-chunk counters; work that fits one chunk runs serially (see
:func:`gunpy.backends.cpu.run_thin`).
"""

import numpy as np
from numba import cuda  # a module global: the simulator swaps it for its fake module

from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import compile_functor, hooks_cache
from gunpy.graph import Graph
from gunpy.operators.advance.common import cpu_weight, cuda_warp_sum, cuda_weight
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for

__all__ = ["intersect", "run", "check_sorted", "cuda_kernel", "cpu_kernel", "cpu_source",
           "execute", "cuda_execute", "cpu_execute"]

_SORTED = ("intersect", "sorted")  # the key of the sortedness verdict kept with a graph


def _merge(apply_intersection, jit):
    """``found, walked = merge(i, j, e, ...)``: the two-pointer merge of both kernels.

    Walks i's sorted list in left and j's in right, calls ``apply_intersection``
    on each common neighbour, and returns the matches and the entries read;
    ``jit`` compiles it for the target (a CUDA device function or an njit one).
    """

    def merge(i, j, e, l_offsets, l_indices, r_offsets, r_indices, data):
        p = l_offsets[i]
        p_end = l_offsets[i + 1]
        q = r_offsets[j]
        q_end = r_offsets[j + 1]
        p0 = p
        q0 = q
        found = 0
        while p < p_end and q < q_end:
            a = l_indices[p]
            b = r_indices[q]
            if a == b:
                apply_intersection(i, j, e, a, p, q, data)
                found += 1
                p += 1
                q += 1
            elif a < b:
                p += 1
            else:
                q += 1
        return found, (p - p0) + (q - q0)

    return jit(merge)


@hooks_cache
def cuda_kernel(hooks, weighted, with_counts=False):
    from gunpy.backends.cuda import kernel
    cond_edge = hooks.cond_edge
    merge = _merge(hooks.apply_intersection, cuda.jit(device=True, inline="always"))
    weight = cuda_weight(weighted)

    def intersect(m, edge_sources, column_indices, values, l_offsets, l_indices, r_offsets,
                  r_indices, counters, per_edge, data):
        matches = np.int64(0)
        read = np.int64(0)
        for e in range(cuda.grid(1), m, cuda.gridsize(1)):
            # 1. the mask: edge e = (i, j), kept when cond_edge holds
            i = edge_sources[e]
            j = column_indices[e]
            if not cond_edge(i, j, e, weight(values, e), data):
                continue
            # 2. two-pointer merge of i's list in left and j's list in right
            found, walked = merge(i, j, e, l_offsets, l_indices, r_offsets, r_indices, data)
            matches += found
            if with_counts:
                per_edge[e] = found
            read += walked
        # 3. one atomic per warp for the counters (every lane reaches here)
        matches = cuda_warp_sum(matches)
        read = cuda_warp_sum(read)
        if cuda.laneid == 0:
            cuda.atomic.add(counters, 0, matches)
            cuda.atomic.add(counters, 1, read)

    return kernel(intersect)


def cpu_kernel(hooks, weighted, with_counts=False):
    """``(parallel, serial)`` builds of the CPU kernel."""
    return functor_pair(cpu_source, hooks, (weighted, with_counts))


def cpu_source(hooks, weighted, with_counts=False):
    """The CPU kernel's Python source for ``hooks`` (compiled by the callers)."""
    from numba import njit, prange

    cond_edge = hooks.cond_edge
    merge = _merge(hooks.apply_intersection, njit(inline="always"))
    weight = cpu_weight(weighted)

    def intersect(n, m, row_offsets, column_indices, values, l_offsets, l_indices, r_offsets,
                  r_indices, counts, nchunks, per_edge, data):
        size = (m + nchunks - 1) // nchunks
        for c in prange(nchunks):
            start = c * size
            stop = min(m, start + size)
            matches = 0
            read = 0
            if start < stop:
                # 1. the chunk's first row: the last row starting at or before edge `start`
                lo = 0
                hi = n
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if row_offsets[mid] <= start:
                        lo = mid
                    else:
                        hi = mid
                i = lo
                for e in range(start, stop):
                    # 2. the mask: edge e = (i, j) (rows in order), kept when cond_edge holds
                    while row_offsets[i + 1] <= e:
                        i += 1
                    j = column_indices[e]
                    if not cond_edge(i, j, e, weight(values, e), data):
                        continue
                    # 3. two-pointer merge of i's list in left and j's list in right
                    found, walked = merge(i, j, e, l_offsets, l_indices, r_offsets, r_indices,
                                          data)
                    matches += found
                    if with_counts:
                        per_edge[e] = found
                    read += walked
            # 4. the chunk's own counters: no shared total
            counts[c, 0] = matches
            counts[c, 1] = read

    return intersect


def check_sorted(G, name="graph"):
    """Raise ``ValueError`` unless every neighbour list of ``G`` is sorted by column.

    Checked once per graph (the verdict is kept with the graph's device copies,
    which rebinding its arrays drops).
    """
    if G._device.knows(_SORTED):
        return
    ci, ro = G.column_indices, G.row_offsets
    m = ci.shape[0]
    if m > 1:
        down = ci[1:] < ci[:-1]
        # a drop where a new row starts is no disorder
        starts = ro[1:-1]
        starts = starts[(starts > 0) & (starts < m)]
        down[starts - 1] = False
        bad = np.flatnonzero(down)
        if bad.size:
            e = int(bad[0]) + 1
            row = int(np.searchsorted(ro, e, side="right")) - 1
            raise ValueError(
                f"intersect needs every neighbour list sorted by column, but row {row} of "
                f"the {name} is not (column_indices[{e - 1}] = {int(ci[e - 1])} > "
                f"column_indices[{e}] = {int(ci[e])}); Graph.from_edges, from_scipy and "
                f"from_networkx build sorted lists")
    G._device.learn(_SORTED)


def execute(ctx, hooks, data, left, right, counts=None):
    """Intersect over every edge of ``ctx.graph``; returns ``(matches, list entries read)``.

    ``counts``: an int64 array with a slot per edge of ``ctx.graph``, which
    receives each edge's number of matches (0 for edges ``cond_edge`` drops
    is not written)."""
    if ctx.graph.num_edges == 0:
        return 0, 0
    return ctx.backend.operator("intersect")(ctx, hooks, data, left, right, counts)


def cuda_execute(ctx, hooks, data, left, right, counts=None):
    backend = ctx.backend
    dg = backend.graph(ctx.graph, coo=True)
    lg = backend.graph(left)
    rg = backend.graph(right)
    counters = ctx.scratch("intersect.counters", 2, np.int64)
    backend.fill(counters, 0)
    m = dg.num_edges
    with_counts = counts is not None
    per_edge = counts if with_counts else counters
    backend.run(cuda_kernel(hooks, dg.weighted, with_counts), m, m, dg.edge_sources,
                dg.column_indices, dg.values, lg.row_offsets, lg.column_indices, rg.row_offsets,
                rg.column_indices, counters, per_edge, data)
    c = backend.to_host(counters)
    return int(c[0]), int(c[1])


def cpu_execute(ctx, hooks, data, left, right, counts=None):
    backend = ctx.backend
    with_counts = counts is not None
    dg = backend.graph(ctx.graph)
    lg = backend.graph(left)
    rg = backend.graph(right)
    n, m = dg.num_vertices, dg.num_edges
    args = (dg.row_offsets, dg.column_indices, dg.values, lg.row_offsets, lg.column_indices,
            rg.row_offsets, rg.column_indices)
    per_edge = counts if with_counts else np.zeros(1, dtype=np.int64)
    if m < backend.serial_below:
        tally = np.zeros((1, 2), dtype=np.int64)
        ctx.log(build=run_thin(backend, cpu_source, hooks, (dg.weighted, with_counts),
                               lambda k: k(n, m, *args, tally, 1, per_edge, data)))
    else:
        # many small chunks: a merge costs the two lists' lengths, which vary a lot
        nchunks = backend.chunks(m, min_chunk=256, per_thread=32)
        tally = np.zeros((nchunks, 2), dtype=np.int64)
        cpu_kernel(hooks, dg.weighted, with_counts)[0](n, m, *args, tally, nchunks, per_edge,
                                                       data)
    tot = tally.sum(axis=0)
    return int(tot[0]), int(tot[1])


def intersect(graph, functor, data=None, *, left=None, right=None, counts=None, context=None):
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
        The mask: one merge per edge (one thread per edge on CUDA, so a hook
        may store into slot ``e`` of a per-edge array without atomics).
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
    ...         data.common[edge] += 1  # one thread per edge: a plain store
    >>> ctx = Context(G, backend="cpu")
    >>> data = namedtuple("Data", "common")(np.zeros(G.num_edges, dtype=np.int64))
    >>> intersect(G, Common, data, context=ctx)
    6
    >>> data.common.tolist()
    [1, 1, 1, 1, 1, 1, 0, 0]
    >>> ctx.record["strategy"], ctx.record["edges"] > 0
    ('intersect', True)
    """
    for name, g in (("graph", graph), ("left", left), ("right", right)):
        if g is not None and not isinstance(g, Graph):
            raise TypeError(f"intersect's {name} must be a gunpy.Graph, got "
                            f"{type(g).__name__}")
    ctx = context_for(graph, None, context)
    left = graph if left is None else left
    right = graph if right is None else right
    for name, g in (("left", left), ("right", right)):
        if g.num_vertices != graph.num_vertices:
            raise ValueError(f"intersect's {name} graph has {g.num_vertices} vertices, the "
                             f"mask graph {graph.num_vertices}")
        check_sorted(g, f"{name} graph")
    if counts is not None and (getattr(counts, "dtype", None) != np.int64 or
                               counts.shape[0] < graph.num_edges):
        raise ValueError(f"counts must be an int64 array with at least {graph.num_edges} "
                         "slots (one per edge of the mask graph)")
    return run(ctx, compile_functor(functor, ctx.backend), problem_data(data), left, right,
               counts)


def run(ctx, hooks, data, left, right, counts=None):
    """:func:`intersect` once its arguments are checked (``hooks``: the compiled functor)."""
    matches, read = execute(ctx, hooks, data, left, right, counts)
    ctx.log(edges=read, strategy="intersect")
    return matches


callable_module(__name__, intersect)
