"""Launches, syncs, uploads and allocations per iteration, the second run of each call.

    NUMBA_ENABLE_CUDASIM=1 python bench/counts.py cuda after   # the CUDA backend, simulated
    python bench/counts.py cpu after                           # the CPU backend (allocations)
    python bench/counts.py cuda after "blas bfs"               # only the calls named

On ``nasty_graphs(small=True)["preferential_hubs"]``; what the backends count
(``Backend.counts()``) is what the host asks of the device, the same on a GPU.
Prints a line per call and writes ``/tmp/counts_<backend>_<label>.json``
(docs/benchmarks.md, "What is checked without a GPU", shows such counts).
"""
import json
import sys

import gunpy, gunpy.blas.algorithms
from gunpy.testing import nasty_graphs
be = sys.argv[1]
if be == "cuda":
    from gunpy.testing import install_simulator_shims; install_simulator_shims()
backend = gunpy.backends.get_backend(be)
GR = nasty_graphs(small=True)
G = GR["preferential_hubs"]
def enact(prob_cls, en_cls, H, src, **kw):
    p = prob_cls(H, backend=backend); e = en_cls(p, **kw)
    out = []
    for _ in range(2):
        p.reset(src) if src is not None else p.reset()
        out = e.enact().per_iteration
    return out
from gunpy.primitives.bc import BCProblem, BCEnactor
from gunpy.primitives.sssp import SSSPProblem, SSSPEnactor
runs = {
 "bfs push": lambda: gunpy.bfs(G, 0, direction="push", backend=backend).stats.per_iteration,
 "bfs pull": lambda: gunpy.bfs(G, 0, direction="pull", backend=backend).stats.per_iteration,
 "bfs auto": lambda: gunpy.bfs(G, 0, backend=backend).stats.per_iteration,
 "bfs idempotent": lambda: gunpy.bfs(G, 0, direction="push", idempotent=True, backend=backend).stats.per_iteration,
 "sssp fused": lambda: enact(SSSPProblem, SSSPEnactor, G, 0),
 "sssp unfused": lambda: enact(SSSPProblem, SSSPEnactor, G, 0, fuse=False),
 "cc": lambda: gunpy.cc(G, backend=backend).stats.per_iteration,
 "pagerank": lambda: gunpy.pagerank(G, backend=backend).stats.per_iteration,
 "bc (1 source)": lambda: enact(BCProblem, BCEnactor, G, 0),
}
calls = {
 "triangles": lambda: gunpy.triangles(G.to_undirected() if G.directed else G, backend=backend),
 "blas bfs": lambda: gunpy.blas.algorithms.bfs(G, 0, backend=backend),
 "blas sssp": lambda: gunpy.blas.algorithms.sssp(G, 0, backend=backend),
}
res = {}
only = sys.argv[3:]
runs = {k: v for k, v in runs.items() if not only or k in only}
calls = {k: v for k, v in calls.items() if not only or k in only}
for k, f in runs.items():
    f(); its = f()
    keys = [c for c in ("launches", "syncs", "uploads", "allocs") if c in its[0]]
    tot = {c: sum(it[c] for it in its) for c in keys}
    mx = {c: max(it[c] for it in its) for c in keys}
    res[k] = dict(levels=len(its), total=tot, max=mx)
    print(f"{k:16s} levels={len(its):3d} total={tot} max/level={mx}", flush=True)
for k, f in calls.items():
    try:
        f(); c0 = backend.counts(); f(); c1 = backend.counts()
        d = {n: (None if a is None else b - a) for n, a, b in zip(c0._fields, c0, c1)}
        res[k] = dict(call=d); print(f"{k:16s} per call={d}", flush=True)
    except Exception as e:
        print(k, "failed", repr(e)[:200])
json.dump(res, open(f"/tmp/counts_{be}_{sys.argv[2]}.json", "w"), indent=1)
