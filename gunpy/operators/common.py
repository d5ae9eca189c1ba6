"""Small pieces several operators share: frontier edge counts and CPU compaction."""

import functools
from collections import namedtuple

import numpy as np

from gunpy.operators.operator import Operator

__all__ = ["frontier_edges", "degree_sum", "cpu_compact", "chunk_bounds", "problem_data",
           "lower_bound", "device_attributes"]


def device_attributes(module, names, make):
    """A ``__getattr__`` for ``module`` whose device functions ``names`` are made on first
    use (``from module import name`` in a kernel factory; ``make()`` returns them by
    name), so that a CPU run, which never asks for them, never imports numba.cuda."""
    def __getattr__(name):
        if name in names:
            return make()[name]
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


def lower_bound(values, lo, hi, k):
    """The first position in ``values[lo:hi]`` (sorted) holding ``k`` or more (``hi`` if
    none): plain Python, compiled inline by each target that searches a sorted list."""
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo


@functools.lru_cache(maxsize=None)
def _cpu_helpers():
    from numba import prange

    from gunpy.backends.cpu import kernel, serial_kernel

    def degree_sum(row_offsets, queue, n):
        s = 0
        for i in prange(n):
            v = queue[i]
            s += row_offsets[v + 1] - row_offsets[v]
        return s

    def compact(tmp, starts, counts, nchunks, out):
        # chunk c left counts[c] items at tmp[starts[c]:]; pack them in chunk order
        offsets = np.zeros(nchunks + 1, dtype=np.int64)
        for c in range(nchunks):
            offsets[c + 1] = offsets[c] + counts[c]
        for c in prange(nchunks):
            src = starts[c]
            dst = offsets[c]
            for k in range(counts[c]):
                out[dst + k] = tmp[src + k]
        return offsets[nchunks]

    # one source, two builds: prange runs as a plain loop when not parallel
    return kernel(degree_sum), kernel(compact), serial_kernel(degree_sum, nrt=False)


def frontier_edges(ctx, dg, frontier):
    """Total out-degree of the frontier's vertices (the push work, Gunrock's m_f)."""
    return degree_sum(ctx.backend, dg.row_offsets, frontier.queue, frontier.size)


def degree_sum(backend, offsets, queue, n):
    """``sum(offsets[v + 1] - offsets[v] for v in queue[:n])`` as a Python int."""
    if n == 0:
        return 0
    return DEGREE_SUM(backend, offsets, queue, n)


def cpu_degree_sum(backend, offsets, queue, n):
    helpers = _cpu_helpers()
    build = helpers[2] if n < backend.serial_below else helpers[0]
    return int(build(offsets, queue, n))


def cuda_degree_sum(backend, offsets, queue, n):
    from gunpy.operators import scan  # (scan imports this module)
    return scan.total(backend, "degrees", n, offsets, queue)


def cpu_compact(tmp, starts, counts, nchunks, out):
    """Pack per-chunk outputs (``counts[c]`` items at ``tmp[starts[c]:]``) into ``out``."""
    return int(_cpu_helpers()[1](tmp, starts, counts, nchunks, out))


def chunk_bounds(n, nchunks):
    """Chunk size so that ``nchunks`` chunks cover ``n`` items."""
    return (n + nchunks - 1) // max(nchunks, 1)


def problem_data(data):
    """The functors' ``data``: ``data`` itself, or a Problem's ``data()``, without the fields
    that are ``None``.

    A namedtuple's ``None`` fields (an optional array a run does not use) are left out of
    the tuple the functors see (:func:`without_none`): no kernel launch on a device can
    pass a ``None``, and a functor that reads one fails to compile on every backend, as it
    would with the ``None`` in place.
    """
    fields = getattr(data, "data", None)
    if callable(fields) and not isinstance(data, tuple):
        data = fields()
    elif data is None:
        return ()
    for item in data:  # a loop: cheaper than any(map(...)) on a few fields
        if item is None:
            return without_none(data)
    return data


_WITHOUT = {}  # (namedtuple class, which fields are None) -> the class of the others


def without_none(data):
    """``data`` (a namedtuple) as a namedtuple of the same name without its ``None``
    fields; a plain tuple as it is (its items are read by position)."""
    cls = type(data)
    if not hasattr(cls, "_fields"):
        return data
    absent = tuple(item is None for item in data)
    kept = _WITHOUT.get((cls, absent))
    if kept is None:
        kept = namedtuple(cls.__name__, [f for f, a in zip(cls._fields, absent) if not a])
        kept.__module__, kept.__qualname__ = cls.__module__, cls.__qualname__
        _WITHOUT[(cls, absent)] = kept
    return tuple.__new__(kept, [item for item in data if item is not None])


DEGREE_SUM = Operator("degree_sum", "backend, offsets, queue, n", cpu=cpu_degree_sum,
                      cuda=cuda_degree_sum)
