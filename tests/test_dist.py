"""gunpy.dist (BFS, CC, SSSP, PageRank) under ``mpiexec -n K`` (K = 1, 2, 3, 4; 3 gives uneven blocks).

Each test launches one MPI job: this file run as an SPMD script
(``mpiexec -n K python -m mpi4py tests/test_dist.py check``) checks every
case inside the job and reports failures on rank 0's stdout and in its exit
status, so a K costs one launch (and one kernel-cache load per rank), not one
per case. CPU backend, one numba thread a rank.
"""

import os
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))


def _mpiexec():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None, "mpi4py is not installed (pip install gunpy[mpi])"
    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(exe):
        exe = shutil.which("mpiexec")
    if not exe:
        return None, "no mpiexec next to the interpreter or on PATH (pip install mpich)"
    return exe, ""


def _launch(k, *args, timeout=170):
    exe, why = _mpiexec()
    if exe is None:
        pytest.skip(why)
    env = dict(os.environ, NUMBA_NUM_THREADS="1", PYTHONPATH=ROOT)
    # more ranks than cores here: MPICH's waiting ranks yield instead of spinning (K=4: 41 -> 30 s)
    env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run([exe, "-n", str(k), sys.executable, "-m", "mpi4py", HERE, *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


@pytest.fixture(autouse=True)
def _cpu_mode_only(mode):
    if mode != "cpu":
        pytest.skip("gunpy.dist runs on the CPU backend here (cpu test mode only)")


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_primitives_match_single_device_and_networkx(k):
    p = _launch(k, "check")
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "DIST-OK" in p.stdout, out[-6000:]


def test_exception_on_one_rank_ends_the_job():
    # without the abort hook the other ranks wait at a barrier forever: such a job fails by
    # _launch's timeout (subprocess.TimeoutExpired), not by a wall-clock assertion
    p = _launch(3, "crash", timeout=90)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out[-3000:]
    assert "rank 1 of 3 failed" in out and "boom on rank 1" in out, out[-3000:]


def test_ranks_share_the_cores_unless_told():
    """Without NUMBA_NUM_THREADS each rank takes cores // ranks-on-the-node threads."""
    exe, why = _mpiexec()
    if exe is None:
        pytest.skip(why)
    code = ("import numba, gunpy.dist as gd; from gunpy import generators\n"
            "DG = gd.DistGraph.from_graph(generators.path(4))\n"
            "got = DG.comm.comm.gather((numba.config.NUMBA_NUM_THREADS, numba.get_num_threads()))\n"
            "if got: print('\\n'.join(f'THREADS {c} {t}' for c, t in got))")
    for forced in (None, "2"):  # 2: more than cores // ranks here, kept as the user set it
        env = dict(os.environ, PYTHONPATH=ROOT, MPIR_CVAR_ENABLE_HEAVY_YIELD="1")
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        env.pop("NUMBA_NUM_THREADS", None)
        if forced:
            env["NUMBA_NUM_THREADS"] = forced
        p = subprocess.run([exe, "-n", "2", sys.executable, "-m", "mpi4py", "-c", code],
                           capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
        lines = [ln.split() for ln in p.stdout.splitlines() if ln.startswith("THREADS")]
        assert p.returncode == 0 and len(lines) == 2, p.stdout + p.stderr
        for _, cores, threads in lines:
            expect = int(forced) if forced else max(1, int(cores) // 2)
            assert int(threads) == expect, (forced, lines)


def test_hash_relabel_is_a_bijection_that_spreads_consecutive_ids():
    _mpiexec()[0] or pytest.skip("mpi4py is not installed")
    import mpi4py
    import numpy as np
    if "mpi4py.MPI" not in sys.modules:
        mpi4py.rc.initialize = False  # import gunpy.dist without this process joining MPI
    from gunpy.dist.graph import Relabel, block_starts
    for n in (1, 2, 3, 7, 64, 1000, 4097, 2 ** 20):
        r = Relabel(n)
        v = np.arange(n)
        u = r.forward(v)
        assert np.array_equal(np.sort(u), v), n                 # a permutation
        assert np.array_equal(r.inverse(u), v), n               # and its inverse
    # hubs first (ids 0..k-1, as degree-sorted files have them): over 4 blocks, evenly
    n, k = 2 ** 20, 1000
    owners = np.searchsorted(block_starts(n, 4), Relabel(n).forward(np.arange(k)), "right") - 1
    assert np.bincount(owners, minlength=4).min() >= k // 4 - 5
    big = Relabel(2 ** 33 + 1)  # past int64-safe products: exact object arithmetic
    v = np.array([0, 1, 2 ** 33, 6345678901])
    assert np.array_equal(big.inverse(big.forward(v)), v)


def test_missing_mpi4py_names_the_extra():
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "try:\n    import gunpy.dist\nexcept ImportError as e:\n    print(e)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       cwd=ROOT)
    assert "pip install gunpy[mpi]" in p.stdout, p.stdout + p.stderr


# ----------------------------------------------------------------------------- SPMD side
def _sources(n, starts):
    """Vertex 0, n - 1, the middle, and the first and last vertex of every rank's block."""
    s = {0, n - 1, n // 2}
    for lo, hi in zip(starts[:-1], starts[1:]):
        if hi > lo:
            s |= {int(lo), int(hi) - 1}
    return sorted(v for v in s if 0 <= v < n)


def _weighted(G, kind, seed=0):
    """A weighted copy of G (same edges; undirected stays undirected, one weight per edge)."""
    import numpy as np
    import gunpy
    rng = np.random.default_rng(seed)
    m = G.num_edges
    w = {"int": rng.integers(1, 64, m).astype(float),
         "real": rng.random(m) * 10 + 1e-3,
         "zeros": rng.integers(0, 3, m).astype(float)}[kind]
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    dst = np.asarray(G.column_indices)
    keep = slice(None) if G.directed else src <= dst
    return gunpy.Graph.from_edges(src[keep], dst[keep], w[keep], num_vertices=G.num_vertices,
                                  directed=G.directed)


def _hop_min():
    """A distributed primitive written as a user would: a DistEnactor overriding only its steps.

    Each iteration every vertex takes the smallest label (original id) of its
    neighbours' (undirected graphs): after ``k`` iterations, the smallest id
    within ``k`` hops. It stops after ``hops`` iterations (``frontier_size``)
    or once no label went down on any rank (``is_converged``).
    """
    from collections import namedtuple

    import numpy as np

    from gunpy import Functor, atomics
    from gunpy import operators as ops
    from gunpy.dist import DistEnactor
    from gunpy.dist._common import DistResult, Holders

    HopData = namedtuple("HopData", "old new")

    class HopMinFunctor(Functor):
        @staticmethod
        def cond_edge(src, dst, edge, weight, data):
            atomics.min(data.new, dst, data.old[src])
            return False

    class HopMinResult(DistResult):
        single = "gunpy.result:Result"
        fields = ("labels",)

    class HopMinEnactor(DistEnactor):
        name = "hop_min"
        Result = HopMinResult
        SETUP_BYTES = 80_000  # an exchange in setup: not the run's, so in no record

        def setup(self):
            self.holders = Holders(self.dg, self.comm)
            self.comm.allreduce(np.zeros(self.SETUP_BYTES // 8))

        def prepare(self, hops):
            self.hops = hops
            self.labels = self.dg.original_gid.astype(np.int64)
            self.lowered = 0

        def frontier_size(self):
            return None if self.iteration == self.hops else self.n_own

        def loop(self):
            dg, be, n_own = self.dg, self.be, self.n_own
            old, new = be.asarray(self.labels.copy()), be.asarray(self.labels.copy())
            if n_own:
                ops.advance(self.L, self.ctx.frontier(np.arange(n_own)), HopMinFunctor,
                            HopData(old, new), output="none", load_balance=self.load_balance,
                            context=self.ctx)
            new = be.to_host(new)
            g = np.flatnonzero(new[n_own:] < self.labels[n_own:])
            got_v, got_l = self.comm.alltoallv([dg.ghosts[g], new[n_own + g]], dg.ghost_owner[g])
            np.minimum.at(new, got_v - dg.lo, got_l)
            self.lowered = int(np.count_nonzero(new[:n_own] < self.labels[:n_own]))
            self.labels = self.holders.send(new)
            return {"lowered": self.lowered}

        def is_converged(self):
            return self.comm.allreduce(self.lowered) == 0

        def result(self):
            self.extra["hops"] = self.hops
            return {"labels": self.labels[:self.n_own].copy()}

    return HopMinEnactor


def _hop_min_reference(G, hops):
    """The smallest id within k hops of each vertex, and k: ``hops`` or where it stops changing."""
    import networkx as nx
    import numpy as np
    from gunpy.testing import to_nx
    H = to_nx(G)
    n = G.num_vertices

    def within(k):
        return np.array([min(nx.single_source_shortest_path_length(H, v, cutoff=k))
                         for v in range(n)], dtype=np.int64)

    k, prev = 1, np.arange(n)
    while k <= hops:
        cur = within(k)
        if np.array_equal(cur, prev):
            return cur, k
        k, prev = k + 1, cur
    return prev, hops


def _check():
    import numpy as np
    from mpi4py import MPI

    import gunpy
    import gunpy.dist as gd
    from gunpy.dist.graph import _kronecker_share
    from gunpy.testing import (check_bfs_tree, check_sssp_tree, nasty_graphs, reference_depths,
                               reference_distances)

    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    failures, checks = [], 0

    def expect(ok, what):
        nonlocal checks
        checks += 1
        if not ok:
            failures.append(what)

    def messages(call, kind):
        """``call()``'s ``kind`` error message on every rank ("no error" where none)."""
        try:
            call()
            msg = "no error"
        except kind as exc:
            msg = str(exc)
        return comm.allgather(msg)

    def run_cc(name, G, DG):
        r = gd.cc(DG, load_balance="twc" if G.directed else "auto", debug=True)
        lo, hi = DG.starts[rank], DG.starts[rank + 1]
        expect(r.labels.shape[0] == hi - lo and r.labels.dtype == np.int32,
               f"{name} cc: owned labels' size or dtype")
        full = r.gather(root=0)
        if rank != 0:
            expect(full is None, f"{name} cc: gather gave a result off the root")
            return
        import networkx as nx
        from gunpy.testing import to_nx
        H = to_nx(G)  # from G's raw edge list, not its CSR
        comps = list(nx.weakly_connected_components(H) if G.directed
                     else nx.connected_components(H))
        ncc = len(comps)
        groups = {}
        for v, label in enumerate(full.labels.tolist()):
            groups.setdefault(label, []).append(v)
        expect(sorted(groups.values()) == sorted(sorted(c) for c in comps),
               f"{name} cc: components != networkx")
        expect(np.array_equal(full.labels, gunpy.cc(G, backend="cpu").labels),
               f"{name} cc: labels != gunpy.cc")
        expect(full.num_components == ncc, f"{name} cc: {full.num_components} components, "
                                           f"networkx {ncc}")
        its = full.stats.per_iteration
        expect(len(its) > 0 and all("comm_ms" in it and "bytes_sent" in it for it in its),
               f"{name} cc: stats lack comm time or bytes")

    def run_graph(name, G, DG):
        run_cc(name, G, DG)
        for source in _sources(G.num_vertices, DG.starts):
            ref = reference_depths(G, source) if rank == 0 else None
            single = gunpy.bfs(G, source, backend="cpu").depth if rank == 0 else None
            for direction in ("push", "pull", "auto", "idempotent"):
                idem = direction == "idempotent"
                r = gd.bfs(DG, source, direction="push" if idem else direction, idempotent=idem,
                           debug=True)
                lo, hi = DG.starts[rank], DG.starts[rank + 1]
                try:  # the distributed validator, on the ranks' parts (one direction: time)
                    if direction == "auto":
                        gd.check_bfs_tree(DG, source, r.depth, r.parent)
                    expect(True, "")
                except AssertionError as exc:
                    expect(False, f"{name} {source} {direction}: distributed check: {exc}")
                expect(r.depth.shape[0] == hi - lo, f"{name} {source} {direction}: owned size")
                full = r.gather(root=0)
                what = f"{name} source={source} {direction}"
                if rank != 0:
                    expect(full is None, f"{what}: gather gave a result off the root")
                    continue
                expect(np.array_equal(full.depth, ref), f"{what}: depth != networkx")
                expect(np.array_equal(full.depth, single), f"{what}: depth != gunpy.bfs")
                try:
                    check_bfs_tree(G, source, full.depth, full.parent)
                    expect(True, "")
                except AssertionError as exc:
                    expect(False, f"{what}: Graph500 check: {exc}")
                its = full.stats.per_iteration
                expect(all("comm_ms" in it and "bytes_sent" in it for it in its),
                       f"{what}: stats lack comm time or bytes")
                if direction in ("push", "pull"):
                    expect(all(it["direction"] == direction for it in its), f"{what}: direction")

    graphs = nasty_graphs(small=False)
    for name, G in graphs.items():
        DG = gd.DistGraph.from_graph(G)  # hash-relabelled (the default)
        # the owned vertices' original ids: every vertex once over the ranks
        ids = np.concatenate(comm.allgather(DG.vertices))
        expect(np.array_equal(np.sort(ids), np.arange(G.num_vertices)), f"{name}: DG.vertices")
        run_graph(name, G, DG)
    for name in ("path_directed", "star_hub", "grid"):  # ids as they are (locality kept)
        G = graphs[name]
        DG = gd.DistGraph.from_graph(G, relabel=None)
        expect(np.array_equal(DG.vertices, np.arange(DG.starts[rank], DG.starts[rank + 1])),
               f"{name}: relabel=None moved ids")
        run_graph(f"relabel=None:{name}", G, DG)
    try:
        gd.DistGraph.from_graph(graphs["grid"], relabel="random")
        msg = "no error"
    except ValueError as exc:
        msg = str(exc)
    expect("relabel" in msg, f"bad relabel: {msg}")

    # from_edges: each rank passes a different share (rank r: edges r, r + P, ...), reversed
    for name in ("random_directed", "disconnected", "star_hub", "path_directed"):
        G = graphs[name]
        A = G.to_scipy().tocoo()
        src, dst = A.row, A.col
        if not G.directed:
            keep = src <= dst
            src, dst = src[keep], dst[keep]
        mine = slice(rank, None, size)
        DG = gd.DistGraph.from_edges(src[mine][::-1], dst[mine][::-1],
                                     num_vertices=G.num_vertices, directed=G.directed)
        expect(DG.num_edges == G.num_edges, f"from_edges {name}: {DG.num_edges} edges, "
                                            f"expected {G.num_edges}")
        run_graph(f"from_edges:{name}", G, DG)

    def check_pagerank(name, direction, G, G0, full):
        what = f"{name} pagerank {direction}"
        single = gunpy.pagerank(G, backend="cpu")
        err = float(np.abs(full.rank - single.rank).max()) if G.num_vertices else 0.0
        expect(err <= 1e-8 and full.iterations == single.iterations
               and full.converged == single.converged,
               f"{what}: max error {err:g}, {full.iterations} iterations "
               f"(single device {single.iterations})")
        if G.num_vertices:
            import networkx as nx
            from gunpy.testing import to_nx
            # G (weights on G0's CSR) has no raw edge list: its twin's edges are checked
            # against G0's raw one, then networkx's iteration gives the ranks to rounding
            twin = to_nx(G)
            pair = tuple if G.directed else (lambda e: tuple(sorted(e)))
            expect(sorted(map(pair, twin.edges())) == sorted(map(pair, to_nx(G0).edges()))
                   and twin.number_of_nodes() == G0.num_vertices,
                   f"{what}: edges != the raw edge list's")
            ref = nx.pagerank(twin)
            ref = np.array([ref[v] for v in range(G.num_vertices)])
            expect(np.allclose(full.rank, ref, rtol=1e-9, atol=1e-12), f"{what} != networkx")

    # SSSP (integer, real and zero weights, directed and undirected) and PageRank
    for name, G0 in graphs.items():
        for kind in ("int", "real", "zeros"):
            G = _weighted(G0, kind)
            DG = gd.DistGraph.from_graph(G)
            for source, method in [(v, "near_far") for v in sorted({0, G.num_vertices - 1})] + [
                    (G.num_vertices // 2, "bellman_ford")]:
                r = gd.sssp(DG, source, method=method, debug=True)
                lo, hi = DG.starts[rank], DG.starts[rank + 1]
                expect(r.distance.shape[0] == hi - lo, f"{name} {kind} sssp: owned size")
                full = r.gather(root=0)
                if rank != 0:
                    continue
                what = f"{name} {kind} sssp {method} source={source}"
                ref = reference_distances(G, source)
                single = gunpy.sssp(G, source, backend="cpu")
                same = np.array_equal if kind != "real" else (
                    lambda a, b: np.allclose(a, b, rtol=1e-12, atol=0))
                expect(same(full.distance, ref), f"{what}: distance != networkx")
                expect(same(full.distance, single.distance), f"{what}: distance != gunpy.sssp")
                try:
                    check_sssp_tree(G, source, full.distance, full.parent, reference=ref,
                                    rtol=1e-12)
                    expect(True, "")
                except AssertionError as exc:
                    expect(False, f"{what}: Graph500 check: {exc}")
        for direction in ("pull", "push"):
            full = gd.pagerank(DG, direction=direction, debug=True).gather(root=0)
            if rank == 0:
                check_pagerank(name, direction, G, G0, full)

    # bad weights and options: the same error on every rank
    G = _weighted(graphs["random_directed"], "int")
    w = G.values.copy()
    for bad_w, word in ((-1.0, "non-negative"), (np.nan, "non-negative")):
        w2 = w.copy()
        w2[len(w2) // 2] = bad_w
        src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
        H = gunpy.Graph.from_edges(src, G.column_indices, w2, num_vertices=G.num_vertices,
                                   directed=True)
        DG = gd.DistGraph.from_graph(H)
        for call in (lambda: gd.sssp(DG, 0), lambda: gd.sssp(DG, 0, delta=-1.0)):
            msgs = messages(call, ValueError)
            expect(len(set(msgs)) == 1 and (word in msgs[0] or "delta" in msgs[0]),
                   f"bad weight {bad_w}: {msgs}")
    DG = gd.DistGraph.from_graph(G)
    for call, kw in [(gd.pagerank, {"alpha": 1.5}), (gd.pagerank, {"tol": -1.0}),
                     (gd.pagerank, {"max_iter": -2}), (gd.pagerank, {"direction": "up"}),
                     (lambda g, **k: gd.sssp(g, 0, **k), {"method": "dijkstra"}),
                     (gd.cc, {"load_balance": "nope"})]:
        msgs = messages(lambda: call(DG, **kw), ValueError)
        expect(len(set(msgs)) == 1 and msgs[0] != "no error", f"bad option {kw}: {msgs}")
    for bad in (DG.num_vertices, -1):
        msgs = messages(lambda: gd.sssp(DG, bad), IndexError)
        expect(len(set(msgs)) == 1 and "out of range" in msgs[0], f"sssp bad source: {msgs}")

    # a bad source raises the same IndexError on every rank
    DG = gd.DistGraph.from_graph(graphs["path_undirected"], relabel=None)  # the path in blocks
    for bad in (DG.num_vertices, -1):
        msgs = messages(lambda: gd.bfs(DG, bad), IndexError)
        expect(len(set(msgs)) == 1 and "out of range" in msgs[0],
               f"bad source {bad}: {msgs}")

    # the distributed validator rejects a broken tree on every rank
    r = gd.bfs(DG, 0)
    depth, parent = r.depth.copy(), r.parent.copy()
    if rank == size - 1:
        depth[-1] += 1  # the path's last vertex: one level too deep
    try:
        gd.check_bfs_tree(DG, 0, depth, parent)
        msg = "no error"
    except AssertionError as exc:
        msg = str(exc)
    expect(f"failed on rank {size - 1}" in msg, f"validator missed a bad depth: {msg}")
    if rank == size - 1:
        parent[-1] = 0 if DG.num_vertices > 2 else parent[-1]  # not an edge of the path
        depth[-1] -= 1
    try:
        gd.check_bfs_tree(DG, 0, depth, parent)
        msg = "no error"
    except AssertionError as exc:
        msg = str(exc)
    expect("failed on rank" in msg, f"validator missed a bad parent: {msg}")

    # rank divergence is detected, on every rank
    if size > 1:
        c = gd.get_comm(DG.comm, debug=True)
        try:
            c.step("advance" if rank == 0 else "filter")
            msg = "no error"
        except RuntimeError as exc:
            msg = str(exc)
        expect("rank divergence" in msg, f"divergence not detected on rank {rank}: {msg}")

    # rmat: the tuples (and so the graph) do not depend on the rank count
    if size & (size - 1) == 0:
        DG = gd.DistGraph.rmat(7 - (size.bit_length() - 1), seed=3)
        s, d = _kronecker_share(7, 16, 3, 0, 1)
        G = gunpy.Graph.from_edges(s, d, num_vertices=128, directed=False)
        expect(DG.num_vertices == 128 and DG.num_edges == G.num_edges,
               f"rmat: {DG.num_edges} edges, serial generator {G.num_edges}")
        run_graph("rmat7", G, DG)

    # a primitive written on DistEnactor, overriding only its steps: the enactor runs its loop,
    # logs its records and counts its exchanges (not the set-up's), and closes its stats
    HopMin = _hop_min()
    for name, hops in [("path_undirected", 3), ("grid", 2), ("disconnected", 1000),
                       ("star_hub", 1000), ("path_undirected", 0)]:
        G = graphs[name]
        DG = gd.DistGraph.from_graph(G)
        r = HopMin(DG, debug=True).enact(hops)
        st, its = r.stats, r.stats.per_iteration
        what = f"{name} hop_min hops={hops}"
        keys = {"iteration", "frontier", "edges", "direction", "strategy", "lowered", "comm_ms",
                "bytes_sent"}
        expect([it["iteration"] for it in its] == list(range(st.iterations))
               and all(set(it) == keys for it in its), f"{what}: records {its}")
        expect(all(it["frontier"] == DG.num_owned and it["direction"] == "push"
                   and it["edges"] == int(DG.out_degrees.sum()) for it in its),
               f"{what}: frontier, direction or edges in {its}")
        expect(all(0 < it["bytes_sent"] < HopMin.SETUP_BYTES for it in its),
               f"{what}: bytes sent {[it['bytes_sent'] for it in its]}")
        sent = comm.allreduce(sum(it["bytes_sent"] for it in its))
        expect(st.edges_visited == st.iterations * DG.num_edges and st.elapsed_ms > 0
               and st.extra["ranks"] == size and st.extra["hops"] == hops
               and st.extra["bytes_sent_all_ranks"] == sent, f"{what}: stats {st}")
        full = r.gather(root=0)
        if rank == 0:
            ref, k = _hop_min_reference(G, hops)
            expect(np.array_equal(full.labels, ref) and st.iterations == k,
                   f"{what}: {st.iterations} iterations (expected {k}), labels {full.labels}")

    all_failures = comm.gather(failures, root=0)
    total = comm.reduce(checks, root=0)
    if rank == 0:
        flat = [f for fs in all_failures for f in fs]
        for f in flat[:50]:
            print("FAIL", f)
        if not flat:
            print(f"DIST-OK ranks={size} checks={total}")
        sys.stdout.flush()
        return 1 if flat else 0
    return 0


def _crash():
    from mpi4py import MPI

    import gunpy.dist as gd
    from gunpy import generators
    DG = gd.DistGraph.from_graph(generators.path(10))  # installs the abort hook
    if MPI.COMM_WORLD.rank == 1:
        raise ValueError("boom on rank 1")
    DG.comm.barrier()  # the other ranks would wait here forever without the hook
    time.sleep(120)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "check"
    if what == "crash":
        _crash()
    else:
        rc = _check()
        from mpi4py import MPI
        rc = MPI.COMM_WORLD.allreduce(rc, op=MPI.MAX)
        sys.exit(rc)


def test_the_distributed_page_example_runs(tmp_path):
    """docs/distributed.md's SPMD script (and its CC, SSSP and PageRank lines), as written,
    on 2 ranks."""
    import re
    text = open(os.path.join(ROOT, "docs", "distributed.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    script = (blocks[0] + blocks[2]
              + "if full is not None:\n"
                "    assert full.num_components == gunpy.cc(G, backend='cpu').num_components\n"
              + blocks[3]
              + "if full is not None:\n"
                "    assert np.array_equal(full.distance, gunpy.sssp(G, 0, backend='cpu').distance)\n"
              + blocks[4]
              + "if full is not None:\n"
                "    assert np.allclose(full.rank, gunpy.pagerank(G, backend='cpu').rank, atol=1e-8)\n"
                "    print('DOC-OK')\n")
    path = tmp_path / "bfs_dist.py"
    path.write_text(script)
    exe, why = _mpiexec()
    if exe is None:
        pytest.skip(why)
    env = dict(os.environ, NUMBA_NUM_THREADS="1", PYTHONPATH=ROOT)
    env.setdefault("MPIR_CVAR_ENABLE_HEAVY_YIELD", "1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    p = subprocess.run([exe, "-n", "2", sys.executable, "-m", "mpi4py", str(path)],
                       capture_output=True, text=True, timeout=170, env=env, cwd=ROOT)
    assert p.returncode == 0 and "DOC-OK" in p.stdout, (p.stdout + p.stderr)[-4000:]
