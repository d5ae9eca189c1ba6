"""Precompile the built-in primitives' kernels into the persistent cache.

``gunpy warmup`` (or :func:`warmup`) runs each primitive with its default
options on a small Graph500 RMAT graph, unweighted and weighted; on the CPU
twice, once with every level as one thin chunk (the single-pass builds) and
once with the work cut into as many chunks as possible (the parallel builds),
so that every kernel build a default call reaches is compiled and written to the kernel cache
(:mod:`gunpy._jitcache`). The kernels depend on the argument types, not on the
graph, so any graph with fewer than 2**31 vertices then starts from the cache.
For containers and CI: run it once after installing.
"""

import time

__all__ = ["warmup"]


def warmup(backend="auto", primitives=None, *, scale=10, progress=None):
    """Compile (or load) every kernel the default calls of ``primitives`` use.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}
    primitives : sequence of str, optional
        Registered primitives' names (:func:`gunpy.registry.names`; default: all).
    scale : int, default 10
        RMAT scale of the graph the primitives run on.
    progress : callable, optional
        Called as ``progress(name, seconds)`` after each primitive.

    Returns
    -------
    dict
        Seconds per primitive.
    """
    from gunpy import generators, registry
    from gunpy.backends import get_backend
    entries = [registry.primitive(name) for name in (primitives or registry.names())]
    be = get_backend(backend)
    # unweighted and weighted graphs reach different kernels (edge weights are read or not)
    graphs = [generators.rmat(scale, seed=1), generators.rmat(scale, seed=1, weighted=True)]
    times = {}
    for entry in entries:
        name = entry.name
        t0 = time.perf_counter()
        for _ in be.work_splits():
            for g in graphs:
                # from the vertex of highest degree, so that the traversals go somewhere
                entry.warm(g, int(g.out_degrees().argmax()), be)
        times[name] = time.perf_counter() - t0
        if progress is not None:
            progress(name, times[name])
    return times
