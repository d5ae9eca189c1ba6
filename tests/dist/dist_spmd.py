"""The SPMD side of tests/dist/test_dist.py: every gunpy.dist check, inside one MPI job.

``mpiexec -n K python -m mpi4py tests/dist/dist_spmd.py check`` runs every case on
the K ranks and reports on rank 0's stdout (``FAIL ...`` lines, or
``DIST-OK ranks=K checks=N``) and in the exit status; ``crash`` raises on rank
1 to show that the job ends; ``errors`` (2 ranks or more) makes every
distributed call fail on rank 1 only, in its checks (every rank must raise the
same error and go on) and, with the abort stubbed, in its run on every rank,
reports, then fails a BFS's run on rank 1 only, which must end the job. CPU backend
(the launcher sets one numba thread a rank). Not collected by pytest: MPI
starts when this module is imported.
"""

import faulthandler
import sys
import time

import numpy as np
from mpi4py import MPI

import gunpy
import gunpy.dist as gd
from gunpy.testing import (check_bfs_tree, check_sssp_tree, nasty_graphs, reference_depths,
                           reference_distances, to_nx)


class Checks:
    """The checks this rank made and the ones that failed; collective helpers."""

    def __init__(self, comm):
        self.comm, self.rank, self.size = comm, comm.rank, comm.size
        self.failures, self.count = [], 0

    def expect(self, ok, what):
        self.count += 1
        if not ok:
            self.failures.append(what)

    def passes(self, call, kind, what):
        """``expect`` that ``call()`` raises no ``kind`` (e.g. AssertionError: a failed check)."""
        try:
            call()
            self.expect(True, "")
        except kind as exc:
            self.expect(False, f"{what}: {exc}")

    def messages(self, call, kind):
        """``call()``'s ``kind`` error message on every rank ("no error" where none)."""
        try:
            call()
            msg = "no error"
        except kind as exc:
            msg = str(exc)
        return self.comm.allgather(msg)

    def report(self):
        """Print the job's failures (or DIST-OK) on rank 0; the exit status (collective)."""
        failures = self.comm.gather(self.failures, root=0)
        total = self.comm.reduce(self.count, root=0)
        rc = 0
        if self.rank == 0:
            flat = [f for fs in failures for f in fs]
            for f in flat[:50]:
                print("FAIL", f)
            if not flat:
                print(f"DIST-OK ranks={self.size} checks={total}")
            sys.stdout.flush()
            rc = 1 if flat else 0
        return self.comm.allreduce(rc, op=MPI.MAX)


def sources(n, starts):
    """Vertex 0, n - 1, the middle, and the first and last vertex of every rank's block."""
    s = {0, n - 1, n // 2}
    for lo, hi in zip(starts[:-1], starts[1:]):
        if hi > lo:
            s |= {int(lo), int(hi) - 1}
    return sorted(v for v in s if 0 <= v < n)


def weighted(G, kind, seed=0):
    """A weighted copy of G (same edges; undirected stays undirected, one weight per edge)."""
    src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
    dst = np.asarray(G.column_indices)
    if not G.directed:  # each undirected edge once: from_edges adds its other direction
        src, dst = src[src <= dst], dst[src <= dst]
    rng = np.random.default_rng(seed)
    draw = {"int": lambda m: rng.integers(1, 64, m).astype(float),
            "real": lambda m: rng.random(m) * 10 + 1e-3,
            "zeros": lambda m: rng.integers(0, 3, m).astype(float)}[kind]
    return gunpy.Graph.from_edges(src, dst, draw(src.shape[0]), num_vertices=G.num_vertices,
                                  directed=G.directed)


def owned_size(DG, rank):
    return DG.starts[rank + 1] - DG.starts[rank]


def gather_owned(c, what, r, DG, part, dtype=None):
    """Checks ``part`` (this rank's share of r) for size and, given one, dtype; gathers r.

    Rank 0 gets the whole result; any other rank gets None, and checks that it did.
    """
    c.expect(part.shape[0] == owned_size(DG, c.rank) and (dtype is None or part.dtype == dtype),
             f"{what}: owned size or dtype")
    full = r.gather(root=0)
    if c.rank != 0:
        c.expect(full is None, f"{what}: gather gave a result off the root")
    return full


# ----------------------------------------------------------------------------- BFS and CC
def check_cc(c, name, G, DG):
    import networkx as nx
    r = gd.cc(DG, load_balance="twc" if G.directed else "auto", debug=True)
    full = gather_owned(c, f"{name} cc", r, DG, r.labels, np.int32)
    if c.rank != 0:
        return
    H = to_nx(G)  # from G's raw edge list, not its CSR
    comps = list(nx.weakly_connected_components(H) if G.directed else nx.connected_components(H))
    groups = {}
    for v, label in enumerate(full.labels.tolist()):
        groups.setdefault(label, []).append(v)
    c.expect(sorted(groups.values()) == sorted(sorted(comp) for comp in comps),
             f"{name} cc: components != networkx")
    c.expect(np.array_equal(full.labels, gunpy.cc(G, backend="cpu").labels),
             f"{name} cc: labels != gunpy.cc")
    c.expect(full.num_components == len(comps),
             f"{name} cc: {full.num_components} components, networkx {len(comps)}")
    its = full.stats.per_iteration
    c.expect(len(its) > 0 and all("comm_ms" in it and "bytes_sent" in it for it in its),
             f"{name} cc: stats lack comm time or bytes")


def check_bfs(c, name, G, DG, source):
    ref = reference_depths(G, source) if c.rank == 0 else None
    single = gunpy.bfs(G, source, backend="cpu").depth if c.rank == 0 else None
    for direction in ("push", "pull", "auto", "idempotent"):
        idem = direction == "idempotent"
        r = gd.bfs(DG, source, direction="push" if idem else direction, idempotent=idem,
                   debug=True)
        what = f"{name} source={source} {direction}"
        if direction == "auto":  # the distributed validator, on the ranks' parts (once: time)
            c.passes(lambda: gd.check_bfs_tree(DG, source, r.depth, r.parent), AssertionError,
                     f"{what}: distributed check")
        full = gather_owned(c, what, r, DG, r.depth)
        if c.rank != 0:
            continue
        c.expect(np.array_equal(full.depth, ref), f"{what}: depth != networkx")
        c.expect(np.array_equal(full.depth, single), f"{what}: depth != gunpy.bfs")
        c.passes(lambda: check_bfs_tree(G, source, full.depth, full.parent), AssertionError,
                 f"{what}: Graph500 check")
        its = full.stats.per_iteration
        c.expect(all("comm_ms" in it and "bytes_sent" in it for it in its),
                 f"{what}: stats lack comm time or bytes")
        if direction in ("push", "pull"):
            c.expect(all(it["direction"] == direction for it in its), f"{what}: direction")


def check_cdlp(c, name, G, DG):
    r = gd.cdlp(DG, 3, debug=True)
    full = gather_owned(c, f"{name} cdlp", r, DG, r.labels, np.int64)
    if c.rank != 0:
        return
    c.expect(np.array_equal(full.labels, gunpy.cdlp(G, 3, backend="cpu").labels),
             f"{name} cdlp: labels != gunpy.cdlp")
    c.expect(full.stats.iterations == 3 and all(
        "comm_ms" in it for it in full.stats.per_iteration), f"{name} cdlp: rounds or stats")


def check_graph(c, name, G, DG):
    check_cc(c, name, G, DG)
    check_cdlp(c, name, G, DG)
    for source in sources(G.num_vertices, DG.starts):
        check_bfs(c, name, G, DG, source)


def check_partitions(c, graphs):
    """Hash-relabelled, as they are, from any share of the edges, and rmat's."""
    for name, G in graphs.items():
        DG = gd.DistGraph.from_graph(G)  # hash-relabelled (the default)
        # the owned vertices' original ids: every vertex once over the ranks
        ids = np.concatenate(c.comm.allgather(DG.vertices))
        c.expect(np.array_equal(np.sort(ids), np.arange(G.num_vertices)), f"{name}: DG.vertices")
        check_graph(c, name, G, DG)
    for name in ("path_directed", "star_hub", "grid"):  # ids as they are (locality kept)
        G = graphs[name]
        DG = gd.DistGraph.from_graph(G, relabel=None)
        c.expect(np.array_equal(DG.vertices, np.arange(DG.starts[c.rank], DG.starts[c.rank + 1])),
                 f"{name}: relabel=None moved ids")
        check_graph(c, f"relabel=None:{name}", G, DG)
    msg = c.messages(lambda: gd.DistGraph.from_graph(graphs["grid"], relabel="random"),
                     ValueError)[c.rank]
    c.expect("relabel" in msg, f"bad relabel: {msg}")

    # from_edges: each rank passes a different share (rank r: edges r, r + P, ...), reversed
    for name in ("random_directed", "disconnected", "star_hub", "path_directed"):
        G = graphs[name]
        A = G.to_scipy().tocoo()
        src, dst = A.row, A.col
        if not G.directed:
            keep = src <= dst
            src, dst = src[keep], dst[keep]
        mine = slice(c.rank, None, c.size)
        DG = gd.DistGraph.from_edges(src[mine][::-1], dst[mine][::-1],
                                     num_vertices=G.num_vertices, directed=G.directed)
        c.expect(DG.num_edges == G.num_edges,
                 f"from_edges {name}: {DG.num_edges} edges, expected {G.num_edges}")
        check_graph(c, f"from_edges:{name}", G, DG)

    # rmat: the tuples (and so the graph) do not depend on the rank count
    if c.size & (c.size - 1) == 0:
        from gunpy.dist.graph import _kronecker_share
        DG = gd.DistGraph.rmat(7 - (c.size.bit_length() - 1), seed=3)
        s, d = _kronecker_share(7, 16, 3, 0, 1)
        G = gunpy.Graph.from_edges(s, d, num_vertices=128, directed=False)
        c.expect(DG.num_vertices == 128 and DG.num_edges == G.num_edges,
                 f"rmat: {DG.num_edges} edges, serial generator {G.num_edges}")
        check_graph(c, "rmat7", G, DG)


# ----------------------------------------------------------------------------- SSSP, PageRank
def check_sssp(c, what, kind, G, DG, source, method):
    r = gd.sssp(DG, source, method=method, debug=True)
    c.expect(r.distance.shape[0] == owned_size(DG, c.rank), f"{what}: owned size")
    full = r.gather(root=0)
    if c.rank != 0:
        return
    ref = reference_distances(G, source)
    single = gunpy.sssp(G, source, backend="cpu")
    same = np.array_equal if kind != "real" else (
        lambda a, b: np.allclose(a, b, rtol=1e-12, atol=0))
    c.expect(same(full.distance, ref), f"{what}: distance != networkx")
    c.expect(same(full.distance, single.distance), f"{what}: distance != gunpy.sssp")
    c.passes(lambda: check_sssp_tree(G, source, full.distance, full.parent, reference=ref,
                                     rtol=1e-12), AssertionError, f"{what}: Graph500 check")
    # the band (near/far's rule): whole multiples of delta, moving up; Bellman-Ford: one band
    upper = np.array([it["upper"] for it in full.stats.per_iteration])
    levels = upper / full.stats.extra["delta"]
    c.expect(np.all(np.isinf(upper)) if method == "bellman_ford" else
             np.all(np.diff(upper) >= 0) and np.allclose(levels, np.round(levels))
             and levels.min() >= 1, f"{what}: bands {upper}")


def check_pagerank(c, what, G, G0, full):
    import networkx as nx
    single = gunpy.pagerank(G, backend="cpu")
    err = float(np.abs(full.rank - single.rank).max()) if G.num_vertices else 0.0
    c.expect(err <= 1e-8 and full.iterations == single.iterations
             and full.converged == single.converged,
             f"{what}: max error {err:g}, {full.iterations} iterations "
             f"(single device {single.iterations})")
    if G.num_vertices:
        # G (weights on G0's CSR) has no raw edge list: its twin's edges are checked
        # against G0's raw one, then networkx's iteration gives the ranks to rounding
        twin = to_nx(G)
        pair = tuple if G.directed else (lambda e: tuple(sorted(e)))
        c.expect(sorted(map(pair, twin.edges())) == sorted(map(pair, to_nx(G0).edges()))
                 and twin.number_of_nodes() == G0.num_vertices,
                 f"{what}: edges != the raw edge list's")
        ref = nx.pagerank(twin)
        ref = np.array([ref[v] for v in range(G.num_vertices)])
        c.expect(np.allclose(full.rank, ref, rtol=1e-9, atol=1e-12), f"{what} != networkx")


def check_weighted(c, graphs):
    """SSSP (integer, real and zero weights, directed and undirected) and PageRank."""
    for name, G0 in graphs.items():
        for kind in ("int", "real", "zeros"):
            G = weighted(G0, kind)
            DG = gd.DistGraph.from_graph(G)
            for source, method in [(v, "near_far") for v in sorted({0, G.num_vertices - 1})] + [
                    (G.num_vertices // 2, "bellman_ford")]:
                check_sssp(c, f"{name} {kind} sssp {method} source={source}", kind, G, DG,
                           source, method)
        for direction in ("pull", "push"):
            full = gd.pagerank(DG, direction=direction, debug=True).gather(root=0)
            if c.rank == 0:
                check_pagerank(c, f"{name} pagerank {direction}", G, G0, full)


# ----------------------------------------------------------------------------- errors
def check_bad_input(c, graphs):
    """Bad weights, options and sources: the same error on every rank."""
    G = weighted(graphs["random_directed"], "int")
    for bad_w, word in ((-1.0, "non-negative"), (np.nan, "non-negative")):
        w = G.values.copy()
        w[len(w) // 2] = bad_w
        src = np.repeat(np.arange(G.num_vertices), G.out_degrees())
        H = gunpy.Graph.from_edges(src, G.column_indices, w, num_vertices=G.num_vertices,
                                   directed=True)
        DG = gd.DistGraph.from_graph(H)
        for call in (lambda: gd.sssp(DG, 0), lambda: gd.sssp(DG, 0, delta=-1.0)):
            msgs = c.messages(call, ValueError)
            c.expect(len(set(msgs)) == 1 and (word in msgs[0] or "delta" in msgs[0]),
                     f"bad weight {bad_w}: {msgs}")
    DG = gd.DistGraph.from_graph(G)
    for call, kw in [(gd.pagerank, {"alpha": 1.5}), (gd.pagerank, {"tol": -1.0}),
                     (gd.pagerank, {"max_iter": -2}), (gd.pagerank, {"direction": "up"}),
                     (lambda g, **k: gd.sssp(g, 0, **k), {"method": "dijkstra"}),
                     (gd.cc, {"load_balance": "nope"}),
                     (gd.cdlp, {"max_iterations": -1}), (gd.cdlp, {"max_iterations": 2.5})]:
        msgs = c.messages(lambda: call(DG, **kw), ValueError)
        c.expect(len(set(msgs)) == 1 and msgs[0] != "no error", f"bad option {kw}: {msgs}")
    for bad in (DG.num_vertices, -1):
        msgs = c.messages(lambda: gd.sssp(DG, bad), IndexError)
        c.expect(len(set(msgs)) == 1 and "out of range" in msgs[0], f"sssp bad source: {msgs}")
    DG = gd.DistGraph.from_graph(graphs["path_undirected"], relabel=None)  # the path in blocks
    for bad in (DG.num_vertices, -1):
        msgs = c.messages(lambda: gd.bfs(DG, bad), IndexError)
        c.expect(len(set(msgs)) == 1 and "out of range" in msgs[0], f"bad source {bad}: {msgs}")


def check_validator_and_divergence(c, graphs):
    """The distributed validator rejects a broken tree on every rank; so does a divergence."""
    DG = gd.DistGraph.from_graph(graphs["path_undirected"], relabel=None)  # the path in blocks
    r = gd.bfs(DG, 0)
    depth, parent = r.depth.copy(), r.parent.copy()
    last = c.size - 1
    if c.rank == last:
        depth[-1] += 1  # the path's last vertex: one level too deep
    msg = c.messages(lambda: gd.check_bfs_tree(DG, 0, depth, parent), AssertionError)[c.rank]
    c.expect(f"failed on rank {last}" in msg, f"validator missed a bad depth: {msg}")
    if c.rank == last:
        parent[-1] = 0 if DG.num_vertices > 2 else parent[-1]  # not an edge of the path
        depth[-1] -= 1
    msg = c.messages(lambda: gd.check_bfs_tree(DG, 0, depth, parent), AssertionError)[c.rank]
    c.expect("failed on rank" in msg, f"validator missed a bad parent: {msg}")
    if c.size > 1:
        comm = gd.get_comm(DG.comm, debug=True)
        msg = c.messages(lambda: comm.step("advance" if c.rank == 0 else "filter"),
                         RuntimeError)[c.rank]
        c.expect("rank divergence" in msg, f"divergence not detected on rank {c.rank}: {msg}")


# ----------------------------------------------------------------------------- DistEnactor
def hop_min():
    """A distributed primitive written as a user would: a DistEnactor overriding only its steps.

    Each iteration every vertex takes the smallest label (original id) of its
    neighbours' (undirected graphs): after ``k`` iterations, the smallest id
    within ``k`` hops. It stops after ``hops`` iterations (``frontier_size``)
    or once no label went down on any rank (``is_converged``).
    """
    from collections import namedtuple

    from gunpy import Functor, atomics
    from gunpy import operators as ops
    from gunpy.dist._common import Holders

    HopData = namedtuple("HopData", "old new")

    class HopMinFunctor(Functor):
        @staticmethod
        def cond_edge(src, dst, edge, weight, data):
            atomics.min(data.new, dst, data.old[src])
            return False

    class HopMinResult(gd.DistResult):
        single = "gunpy.result:Result"
        fields = ("labels",)

    class HopMinEnactor(gd.DistEnactor):
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


def hop_min_reference(G, hops):
    """The smallest id within k hops of each vertex, and k: ``hops`` or where it stops changing."""
    import networkx as nx
    H, n = to_nx(G), G.num_vertices

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


def check_enactor(c, graphs):
    """A primitive written on DistEnactor, overriding only its steps: the enactor runs its
    loop, logs its records, counts its exchanges (not the set-up's) and closes its stats."""
    HopMin = hop_min()
    keys = {"iteration", "frontier", "edges", "direction", "strategy", "lowered", "comm_ms",
            "bytes_sent"}
    for name, hops in [("path_undirected", 3), ("grid", 2), ("disconnected", 1000),
                       ("star_hub", 1000), ("path_undirected", 0)]:
        G = graphs[name]
        DG = gd.DistGraph.from_graph(G)
        r = HopMin(DG, debug=True).enact(hops)
        st, its = r.stats, r.stats.per_iteration
        what = f"{name} hop_min hops={hops}"
        c.expect([it["iteration"] for it in its] == list(range(st.iterations))
                 and all(set(it) == keys for it in its), f"{what}: records {its}")
        c.expect(all(it["frontier"] == DG.num_owned and it["direction"] == "push"
                     and it["edges"] == int(DG.out_degrees.sum()) for it in its),
                 f"{what}: frontier, direction or edges in {its}")
        c.expect(all(0 < it["bytes_sent"] < HopMin.SETUP_BYTES for it in its),
                 f"{what}: bytes sent {[it['bytes_sent'] for it in its]}")
        sent = c.comm.allreduce(sum(it["bytes_sent"] for it in its))
        c.expect(st.edges_visited == st.iterations * DG.num_edges and st.elapsed_ms > 0
                 and st.extra["ranks"] == c.size and st.extra["hops"] == hops
                 and st.extra["bytes_sent_all_ranks"] == sent, f"{what}: stats {st}")
        full = r.gather(root=0)
        if c.rank == 0:
            ref, k = hop_min_reference(G, hops)
            c.expect(np.array_equal(full.labels, ref) and st.iterations == k,
                     f"{what}: {st.iterations} iterations (expected {k}), labels {full.labels}")


# ----------------------------------------------------------------------------- one rank's error
#: seconds a case may take before the rank dumps its stack and exits (a hang fails in seconds)
WATCHDOG = 30


def raised(call):
    """``"Type: message"`` of what ``call()`` raised, or ``"no error"``."""
    try:
        call()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "no error"


def check_one_rank_errors(c, graphs):
    """Rank 1 alone passes something wrong to each distributed call: every rank raises the
    same error, naming rank 1 (no rank is left in a collective), and the job goes on."""
    bad = c.rank == 1
    G = graphs["random_directed"]
    n = G.num_vertices
    DG = gd.DistGraph.from_graph(G)
    # a NaN weight on an out-edge of a vertex rank 1 owns (ids kept in blocks): its edge only
    src = np.repeat(np.arange(n), G.out_degrees())
    e = int(np.flatnonzero(src >= gd.block_starts(n, c.size)[1])[0])
    w = np.ones(G.num_edges)
    w[e] = np.nan
    GW = gunpy.Graph.from_edges(src, G.column_indices, w, num_vertices=n, directed=True)
    DW = gd.DistGraph.from_graph(GW, relabel=None)
    r = gd.bfs(DG, 0)  # loads the kernels before the watchdog's short cases
    enactor = gd.DistEnactor(DG)
    cases = [
        ("bfs source", lambda: gd.bfs(DG, n if bad else 0), IndexError, "out of range"),
        ("bfs source type", lambda: gd.bfs(DG, "0" if bad else 0), TypeError, "integer"),
        ("bfs direction", lambda: gd.bfs(DG, 0, direction="up" if bad else "push"),
         ValueError, "'up'"),
        ("bfs backend", lambda: gd.bfs(DG, 0, backend="abacus" if bad else "cpu"),
         ValueError, "abacus"),
        ("bfs options differ", lambda: gd.bfs(DG, 0, direction="pull" if bad else "push"),
         ValueError, "not the same on every rank: the source, direction"),
        ("bfs on no DistGraph", lambda: gd.bfs(G if bad else DG, 0), TypeError, "DistGraph"),
        ("sssp method", lambda: gd.sssp(DG, 0, method="dijkstra" if bad else "near_far"),
         ValueError, "dijkstra"),
        ("sssp delta", lambda: gd.sssp(DG, 0, delta=-1.0 if bad else None), ValueError,
         "delta must be a positive number"),
        ("sssp weight on one rank", lambda: gd.sssp(DW, 0), ValueError,
         f"edge {src[e]}->{G.column_indices[e]} has weight nan"),
        ("cc load_balance", lambda: gd.cc(DG, load_balance="nope" if bad else "auto"),
         ValueError, "nope"),
        ("cdlp rounds", lambda: gd.cdlp(DG, -1 if bad else 2), ValueError, "-1"),
        ("pagerank alpha", lambda: gd.pagerank(DG, alpha=1.5 if bad else 0.85), ValueError,
         "alpha"),
        ("pagerank weight on one rank", lambda: gd.pagerank(DW), ValueError,
         f"edge {src[e]}->{G.column_indices[e]} has weight nan"),
        ("check_bfs_tree source",
         lambda: gd.check_bfs_tree(DG, n if bad else 0, r.depth, r.parent), IndexError,
         "out of range"),
        ("gather root", lambda: r.gather(root=7 if bad else 0), ValueError, "root 7"),
        ("from_graph", lambda: gd.DistGraph.from_graph(None if bad else G), TypeError,
         "gunpy.Graph"),
        ("from_edges id", lambda: gd.DistGraph.from_edges([0, n if bad else 1], [1, 2],
                                                          num_vertices=n, directed=True),
         ValueError, f"src[1] = {n}"),
        ("from_edges float ids", lambda: gd.DistGraph.from_edges(
            np.array([0.0, 1.5]) if bad else [0, 1], [1, 2], num_vertices=n, directed=True),
         TypeError, "integer"),
        ("DistEnactor.check_source", lambda: enactor.check_source(-1 if bad else 0),
         IndexError, "out of range"),
    ]
    for what, call, kind, word in cases:
        faulthandler.dump_traceback_later(WATCHDOG, exit=True)
        got = c.comm.allgather(raised(call))
        # the rank that failed is named, unless the ranks only disagree
        named = f"rank 1 of {c.size}:" in got[0]
        c.expect(len(set(got)) == 1 and got[0].startswith(kind.__name__ + ":")
                 and word in got[0] and named == ("differ" not in what), f"{what}: {got}")
    # every rank failing alike keeps its own error, with no rank named
    got = c.comm.allgather(raised(lambda: gd.bfs(DG, n)))
    c.expect(len(set(got)) == 1 and got[0].startswith("IndexError: source") and
             "rank" not in got[0], f"bfs source bad everywhere: {got}")
    # and the ranks are still in step: a run after all that is right (the warm-up's run:
    # no kernel to compile under the watchdog)
    faulthandler.dump_traceback_later(WATCHDOG, exit=True)
    full = gd.bfs(DG, 0).gather(root=0)
    if c.rank == 0:
        c.expect(np.array_equal(full.depth, reference_depths(G, 0)), "bfs after the errors")
    faulthandler.cancel_dump_traceback_later()


class Aborted(Exception):
    """Raised by the stubbed Comm.abort: where the job would have ended."""


def check_errors_in_the_run(c, graphs):
    """An error inside each call's run (after its checks): the collective guard calls
    Comm.abort, stubbed here to raise, with every rank failing alike so that none waits.
    Agreed errors (every rank raising after a collective) are not aborts."""
    from gunpy.dist import validate
    from gunpy.dist.bfs import DistBFSEnactor
    from gunpy.dist.cc import DistCCEnactor
    from gunpy.dist.cdlp import DistCDLPEnactor
    from gunpy.dist.comm import Comm
    from gunpy.dist.graph import DistGraph
    from gunpy.dist.pagerank import DistPageRankEnactor
    from gunpy.dist.sssp import DistSSSPEnactor

    G = graphs["grid"]
    DG = gd.DistGraph.from_graph(G)
    r = gd.bfs(DG, 0)
    HopMin = hop_min()

    def injected(*args, **kwargs):
        raise RuntimeError("injected failure")

    # each fails in its first step of the run (before any kernel is loaded: cheap)
    cases = [("bfs", DistBFSEnactor, "setup", lambda: gd.bfs(DG, 0)),
             ("sssp", DistSSSPEnactor, "prepare", lambda: gd.sssp(DG, 0)),
             ("cc", DistCCEnactor, "setup", lambda: gd.cc(DG)),
             ("pagerank", DistPageRankEnactor, "setup", lambda: gd.pagerank(DG)),
             ("cdlp", DistCDLPEnactor, "setup", lambda: gd.cdlp(DG, 2)),
             ("hop_min", HopMin, "setup", lambda: HopMin(DG).enact(2)),
             ("DistBFSResult.gather", DistGraph, "gather", lambda: r.gather()),
             ("check_bfs_tree", validate, "_problems",
              lambda: gd.check_bfs_tree(DG, 0, r.depth, r.parent))]

    def abort(self, error, where):
        raise Aborted(f"{where}: {error}")

    real_abort = Comm.abort
    Comm.abort = abort
    try:
        for name, owner, attr, call in cases:
            faulthandler.dump_traceback_later(WATCHDOG, exit=True)
            real = getattr(owner, attr)
            setattr(owner, attr, injected)
            try:
                got = raised(call)
            finally:
                setattr(owner, attr, real)
            where = name if "." in name else f"gunpy.dist.{name}"
            c.expect(got == f"Aborted: {where}: injected failure", f"run of {name}: {got}")
        # agreed errors in a run pass through: a rank divergence, a failed tree check
        debug = gd.get_comm(DG.comm, debug=True)
        depth = r.depth.copy()
        if c.rank == 1:
            depth[:] = -1
        for call, expect in [(lambda: debug.step(f"step of rank {c.rank}"),
                              "RuntimeError: rank divergence"),
                             (lambda: gd.check_bfs_tree(DG, 0, depth, r.parent),
                              "AssertionError: BFS tree check failed on rank")]:
            def run(call=call):
                with DG.comm.collective("a test's run"):
                    call()
            got = raised(run)
            c.expect(got.startswith(expect), f"agreed error in a run: {got}")
    finally:
        Comm.abort = real_abort
        faulthandler.cancel_dump_traceback_later()


def abort_in_run():
    """Rank 1's BFS fails inside its run and rank 1 catches the error: the job must end
    (Comm.collective's abort) instead of leaving rank 0 in a collective."""
    from gunpy import generators
    from gunpy.dist.bfs import DistBFSEnactor
    DG = gd.DistGraph.from_graph(generators.path(50))
    gd.bfs(DG, 0)  # kernels loaded: what follows takes seconds
    faulthandler.dump_traceback_later(WATCHDOG, exit=True)
    if MPI.COMM_WORLD.rank == 1:
        def loop(self):
            raise ValueError("injected on rank 1")
        DistBFSEnactor.loop = loop
    try:
        gd.bfs(DG, 0)
    except ValueError:
        pass  # a user catching it and going on: rank 0 waits in the BFS's collectives
    print(f"rank {MPI.COMM_WORLD.rank}: the job went on", flush=True)
    time.sleep(WATCHDOG + 5)


# ----------------------------------------------------------------------------- entry points
def check(parts=None):
    c = Checks(MPI.COMM_WORLD)
    graphs = nasty_graphs(small=False)
    for part in parts or (check_partitions, check_weighted, check_bad_input,
                          check_validator_and_divergence, check_enactor):
        part(c, graphs)
    return c.report()


def crash():
    from gunpy import generators
    DG = gd.DistGraph.from_graph(generators.path(10))  # installs the abort hook
    if MPI.COMM_WORLD.rank == 1:
        raise ValueError("boom on rank 1")
    DG.comm.barrier()  # the other ranks would wait here forever without the hook
    time.sleep(120)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "check"
    if what == "crash":
        sys.exit(crash())
    if what == "errors":  # reported like "check", then the job must end in abort_in_run
        check((check_one_rank_errors, check_errors_in_the_run))
        sys.exit(abort_in_run())
    # "partitions": BFS, CC and CDLP on every partition only (an odd rank count's share)
    sys.exit(check((check_partitions,) if what == "partitions" else None))
