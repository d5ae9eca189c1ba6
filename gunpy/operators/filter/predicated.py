"""predicated: keep the frontier items whose ``cond_vertex`` is true, in order.

Gunrock's filter with a scan-and-compact pass (section 4.4.3, "Optimizing
Filter"). Negative ids (invalid placeholders) are always dropped.

CUDA: (1) a flag per item, running ``apply_vertex`` on kept ones; (2) an
exclusive scan of the flags (:mod:`gunpy.operators.scan`); (3) a scatter of the
kept items to their scanned positions. The output keeps the input order.
CPU: chunks of the frontier compact into their own slice, then one packing pass.
"""

import functools

import numpy as np

from gunpy.operators import scan
from gunpy.operators.common import cpu_compact

from numba import cuda  # a module global: the simulator swaps it for its fake module

__all__ = ["cuda_kernels", "cpu_kernel", "execute"]


@functools.lru_cache(maxsize=None)
def cuda_kernels(hooks):
    from gunpy.backends.cuda import kernel
    cond_vertex, apply_vertex = hooks.cond_vertex, hooks.apply_vertex

    def flag(in_queue, in_length, flags, data):
        n = in_length[0]
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            v = in_queue[i]
            keep = False
            if v >= 0:
                keep = cond_vertex(v, data)
                if keep:
                    apply_vertex(v, data)
            flags[i] = 1 if keep else 0

    def scatter(in_queue, in_length, flags, positions, out_queue, out_length, total):
        n = in_length[0]
        start = cuda.grid(1)
        if start == 0:
            out_length[0] = total
        for i in range(start, n, cuda.gridsize(1)):
            if flags[i]:
                out_queue[positions[i]] = in_queue[i]

    return kernel(flag), kernel(scatter)


@functools.lru_cache(maxsize=None)
def cpu_kernel(hooks):
    from numba import prange

    from gunpy.backends.cpu import kernel
    cond_vertex, apply_vertex = hooks.cond_vertex, hooks.apply_vertex

    def filter_(in_queue, n, tmp, starts, counts, nchunks, data):
        size = (n + nchunks - 1) // nchunks
        for c in prange(nchunks):
            lo = c * size
            pos = lo
            for i in range(lo, min(n, lo + size)):
                v = in_queue[i]
                if v >= 0 and cond_vertex(v, data):
                    apply_vertex(v, data)
                    tmp[pos] = v
                    pos += 1
            starts[c] = lo
            counts[c] = pos - lo

    return kernel(filter_)


def execute(ctx, frontier, out, hooks, data):
    """Compact ``frontier`` into ``out``, keeping items whose ``cond_vertex`` holds."""
    backend = ctx.backend
    n = frontier.size
    out.reserve(n)
    if n == 0:
        out.clear()
        return
    if backend.name == "cuda":
        k_flag, k_scatter = cuda_kernels(hooks)
        flags = ctx.scratch("filter.flags", n, np.int8)
        positions = ctx.scratch("filter.positions", n, np.int64)
        backend.run(k_flag, n, frontier.queue, frontier.length, flags, data)
        total = scan.exclusive_scan(backend, "nonzero", n, flags, flags, positions)
        backend.run(k_scatter, n, frontier.queue, frontier.length, flags, positions,
                    out.queue, out.length, np.int64(total))
        out.assume_size(total)  # the scatter kernel wrote it to out.length
        return
    nchunks = backend.chunks(n)
    tmp = ctx.scratch("filter.tmp", n, frontier.dtype)
    starts = np.empty(nchunks, dtype=np.int64)
    counts = np.empty(nchunks, dtype=np.int64)
    cpu_kernel(hooks)(frontier.queue, n, tmp, starts, counts, nchunks, data)
    out.set_size(cpu_compact(tmp, starts, counts, nchunks, out.queue))
