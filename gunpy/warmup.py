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

__all__ = ["warmup", "PRIMITIVES"]

PRIMITIVES = ("bfs", "sssp", "bc", "cc", "pagerank")


def _calls(graphs):
    import gunpy
    from gunpy.enactor import DirectionPolicy

    def each(f):
        # from the vertex of highest degree, so that the traversals go somewhere
        return lambda be: [f(g, int(g.out_degrees().argmax()), be) for g in graphs]

    # direction="auto" that never pulls: its push kernels (which keep the visited set)
    # on levels fat enough for merge-path, where the default would pull instead
    pushy = DirectionPolicy(alpha=1e-12)
    return {
        "bfs": each(lambda g, s, be: (gunpy.bfs(g, s, backend=be),
                                      gunpy.bfs(g, s, direction_policy=pushy, backend=be),
                                      gunpy.bfs(g, s, direction="push", backend=be))),
        "sssp": each(lambda g, s, be: gunpy.sssp(g, s, backend=be)),
        "bc": each(lambda g, s, be: gunpy.bc(g, [s], backend=be)),
        "cc": each(lambda g, s, be: gunpy.cc(g, backend=be)),
        "pagerank": each(lambda g, s, be: gunpy.pagerank(g, max_iter=3, backend=be)),
    }


def warmup(backend="auto", primitives=None, *, scale=10, progress=None):
    """Compile (or load) every kernel the default calls of ``primitives`` use.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}
    primitives : sequence of str, optional
        Names from :data:`PRIMITIVES` (default: all).
    scale : int, default 10
        RMAT scale of the graph the primitives run on.
    progress : callable, optional
        Called as ``progress(name, seconds)`` after each primitive.

    Returns
    -------
    dict
        Seconds per primitive.
    """
    from gunpy import generators
    from gunpy.backends import get_backend
    names = list(PRIMITIVES if primitives is None else primitives)
    unknown = [p for p in names if p not in PRIMITIVES]
    if unknown:
        raise ValueError(f"unknown primitive {unknown[0]!r}; valid: {', '.join(PRIMITIVES)}")
    be = get_backend(backend)
    # unweighted and weighted graphs reach different kernels (edge weights are read or not)
    calls = _calls([generators.rmat(scale, seed=1),
                    generators.rmat(scale, seed=1, weighted=True)])
    times = {}
    for name in names:
        t0 = time.perf_counter()
        for _ in be.work_splits():
            calls[name](be)
        times[name] = time.perf_counter() - t0
        if progress is not None:
            progress(name, times[name])
    return times
