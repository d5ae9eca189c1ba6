"""gpu_zerocopy: graphs from CuPy, PyTorch and numba device arrays, with no host copy.

    python bench/gpu_zerocopy.py [--scale 18] [--backend cuda|cpu]

For each library that is installed (numba always; CuPy and PyTorch on the GPU image; and
"dlpack": numba arrays behind an object that speaks only DLPack), an RMAT graph's CSR
is put in that library's device memory, handed to
``gunpy.Graph(row_offsets, column_indices, copy=False)`` and traversed: BFS (push and
auto) and PageRank. Each run is checked against the CPU backend on the host graph, and
every device-to-host copy numba makes during it is counted (a graph-sized one means
the path is not zero-copy). The result goes back to the library (``to_cupy``,
``to_torch`` and ``torch.from_dlpack(r.to_dlpack())``, gunpy's own DLPack reader for
"dlpack"), checked to be the same memory. Prints a markdown table; ``@@`` lines
are the GPU day's summary.

Under numba's simulator only numba (and "dlpack": BFS) runs, on a tiny graph; on the
CPU backend (``--backend cpu``, the GPU day's dry run) there is nothing to measure: it
says so and exits 0.
"""

import argparse
import time

import numpy as np


class _CopyCounter:
    """Every ``copy_to_host`` of a numba device array while active: its bytes."""

    def __init__(self, device_array):
        self.cls = next(c for c in type(device_array).__mro__ if "copy_to_host" in c.__dict__)
        self.real, self.sizes = self.cls.copy_to_host, []

    def __enter__(self):
        real, sizes = self.real, self.sizes

        def counted(arr, *args, **kw):
            out = real(arr, *args, **kw)
            sizes.append(out.nbytes)
            return out

        self.cls.copy_to_host = counted
        return self

    def __exit__(self, *exc):
        self.cls.copy_to_host = self.real


class _DLPackOnly:
    """An array that speaks only DLPack (as some array API libraries do)."""

    def __init__(self, producer):
        self.producer = producer

    def __dlpack__(self, **kw):
        return self.producer.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.producer.__dlpack_device__()


def _libraries(simulated):
    libs = {"numba": None, "dlpack": None}
    if simulated:
        return libs
    for name in ("cupy", "torch"):
        try:
            libs[name] = __import__(name)
        except ImportError:
            pass
    return libs


def _to_device(lib, name, host):
    if name in ("numba", "dlpack"):
        from numba import cuda

        from gunpy.backends.dlpack import DLPackArray
        arr = cuda.to_device(host)
        return arr if name == "numba" else _DLPackOnly(DLPackArray(arr))
    if name == "cupy":
        return lib.asarray(host)
    return lib.as_tensor(host, device="cuda")


def _pointer(obj):
    return obj.__cuda_array_interface__["data"][0] if hasattr(obj, "__cuda_array_interface__") \
        else obj._ary.__array_interface__["data"][0]  # the simulator's array


def _handed_back(lib, name, r):
    """The result's depth as the library's own array(s)."""
    if name == "cupy":
        return [r.to_cupy()]
    if name == "torch":
        return [r.to_torch(), lib.from_dlpack(r.to_dlpack())]
    from gunpy.backends.dlpack import from_dlpack
    return [from_dlpack("depth", r.to_dlpack())]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=18)
    ap.add_argument("--backend", default="cuda", choices=("cuda", "cpu"))
    args = ap.parse_args(argv)
    if args.backend == "cpu":
        print("@@ zerocopy: device arrays need the CUDA backend; nothing to measure on the CPU")
        return 0
    import numba

    import gunpy
    simulated = bool(numba.config.ENABLE_CUDASIM)
    if simulated:
        from gunpy.testing import install_simulator_shims
        install_simulator_shims()
    if simulated:  # a hub and 2,959 isolated vertices: arrays past any counter read back
        H = gunpy.Graph.from_edges(np.zeros(40, dtype=np.int64), np.arange(1, 41),
                                   num_vertices=3000, directed=False)
    else:
        H = gunpy.generators.rmat(args.scale)
    source = int(H.out_degrees().argmax())
    want_depth = gunpy.bfs(H, source, backend="cpu").depth
    want_rank = gunpy.pagerank(H, backend="cpu").rank
    graph_bytes = 4 * H.num_vertices
    rows, failures = [], 0
    for name, lib in _libraries(simulated).items():
        G = gunpy.Graph(_to_device(lib, name, H.row_offsets),
                        _to_device(lib, name, H.column_indices), directed=H.directed,
                        copy=False)
        calls = [("bfs push", lambda: gunpy.bfs(G, source, direction="push")),
                 ("bfs auto", lambda: gunpy.bfs(G, source)),
                 ("pagerank", lambda: gunpy.pagerank(G))]
        if simulated and name == "dlpack":
            calls.pop()  # numba's graph behind DLPack: PageRank adds seconds, nothing new
        for what, call in calls:
            with _CopyCounter(G._on_device.row_offsets) as seen:
                t0 = time.perf_counter()
                r = call()
                ms = (time.perf_counter() - t0) * 1e3
            host_view = G._row_offsets is not None
            main = r.main
            got = getattr(r, main)
            ok = np.array_equal(got, want_depth) if main == "depth" else \
                np.allclose(got, want_rank, atol=1e-6)
            same = ""
            if main == "depth" and name != "numba":
                outs = _handed_back(lib, name, r)
                same = "yes" if all(_pointer(o) == _pointer(r.device_array())
                                    for o in outs) else "NO"
            big = [b for b in seen.sizes if b >= graph_bytes]
            failures += (not ok) + (same == "NO")
            rows.append(f"| {name} | {what} | {'ok' if ok else 'WRONG'} | {ms:.1f} | "
                        f"{len(seen.sizes)} | {max(seen.sizes, default=0):,} | {len(big)} | "
                        f"{'yes' if host_view else 'no'} | {same or '-'} |")
    print(f"graph: {H} ({'simulator' if simulated else 'GPU'})")
    head = ("| library | call | result | ms | copies down | largest (B) | graph-sized | "
            "host view made | result shares memory |")
    for line in [head, "|" + "---|" * 9, *rows]:
        print(line)
        print("@@ " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
