"""The suite's cases: one function per kind of primitive, each timing every library alike.

Each case (see :mod:`gunpy.bench.timing` for the method) makes an untimed pass
first (the warm-up that compiles or loads gunpy's kernels, validation against the
Graph500 checks or a reference, the edges each root reaches), then times gunpy
**alone** over every input, then **every library, gunpy included, interleaved**
over the same inputs, and writes one row per library and mode. Every time in a
row is wall time per call; gunpy's rows add its own timer's share of it.
"""

import dataclasses
import statistics

import numpy as np

from gunpy.bench.graphs import component_edges
from gunpy.bench.machine import harmonic
from gunpy.bench.timing import alone, interleave, paired, summary

__all__ = ["Case", "traversal", "repeated"]


@dataclasses.dataclass
class Case:
    """What every case of one graph shares."""
    name: str        # the graph's name in the rows
    backend: str
    roots: list      # BFS/SSSP roots; gunpy alone runs them all
    peer_roots: int  # the first ones, run interleaved by every library (gunpy included)
    reps: int        # calls per mode for the primitives without a root
    peers: list
    rows: list
    validate: bool
    bar: object      # a progress bar (update(1) per row)

    def add(self, primitive, library, mode, **fields):
        row = {"graph": self.name, "primitive": primitive, "library": library, "mode": mode}
        if library == "gunpy":
            row["backend"] = self.backend
        row.update(fields)
        self.rows.append(row)
        self.bar.update(1)
        return row


def _teps(edges, times):
    """Graph500 TEPS per call (``edges[key]`` over its wall time), hmean and median."""
    teps = [edges[k] / (ms * 1e-3) for k, ms in times.items() if ms > 0]
    return {"hmean_teps": harmonic(teps),
            "median_teps": statistics.median(teps) if teps else float("nan")}


def traversal(case, primitive, G, call, *, check, reached, check_peer=None):
    """BFS or SSSP from every root: ``call(s)`` is gunpy's call, ``check(s, result)``
    validates one (raises when wrong), ``reached(result)`` is the reached-vertex mask,
    ``check_peer(peer, output, reference)`` returns whether it compared a peer's first
    output with gunpy's (raising when they differ)."""
    roots = case.roots
    edges, sample, ref = {}, None, None
    # 1. untimed: warm-up, validation, the edges each root's component holds (TEPS)
    for s in roots:
        r = call(s)
        if case.validate:
            check(s, r)
        edges[s] = component_edges(G, reached(r))
        ref = r if ref is None else ref
        if primitive == "bfs" and (sample is None or edges[s] > sample[0]):
            sample = (edges[s], r.stats.per_iteration)  # the frontier plot: largest traversal
    # 2. gunpy alone over every root
    own, visited = {}, {}

    def keep(lib, s, ms, r):
        if lib in ("gunpy", "alone"):
            own[s], visited[s] = r.stats.elapsed_ms, r.stats.edges_visited

    times = {s: ms for s, ms, _ in alone(call, roots, keep)}
    sel = roots[:case.peer_roots]
    extra = {"per_iteration": sample[1]} if sample else {}
    vteps = _teps(visited, times) if primitive == "bfs" else {}
    case.add(primitive, "gunpy", "alone", **summary(list(times.values()), [own[s] for s in roots]),
             roots=list(roots), wall_ms=list(times.values()), **_teps(edges, times), hmean_teps_visited=vteps.get("hmean_teps"),
             same_roots_ms=statistics.median(times[s] for s in sel), validated=case.validate,
             **extra)
    # 3. every library over the first peer_roots roots, interleaved
    calls = [("gunpy", call)]
    checked = {}
    for peer in case.peers:
        fn = getattr(peer, primitive, None)
        if fn is not None:
            out = fn(sel[0])  # warm-up, and the output a peer is checked by
            checked[peer.name] = bool(check_peer and check_peer(peer, out, ref))
            calls.append((peer.name, fn))
    own.clear()
    runs = interleave(calls, sel, keep)
    mine = {s: ms for s, ms, _ in runs["gunpy"]}
    alone_same = statistics.median(times[s] for s in sel)
    case.add(primitive, "gunpy", "interleaved", **summary(list(mine.values()), list(own.values())),
             roots=list(mine), wall_ms=list(mine.values()), **_teps(edges, mine), vs_alone=statistics.median(mine.values()) / alone_same,
             validated=case.validate)
    for lib, _ in calls[1:]:
        t = {s: ms for s, ms, _ in runs[lib]}
        case.add(primitive, lib, "interleaved", **summary(list(t.values())), roots=list(t),
                 wall_ms=list(t.values()), **_teps(edges, t), vs_gunpy=paired(t, mine),
                 validated=checked[lib])


def repeated(case, primitive, call, peer_calls, *, own=None, check_peer=None, per=1,
             gunpy_fields=None):
    """A primitive without a root (CC, PageRank, BC on fixed sources, TC): ``case.reps``
    calls of gunpy alone, then ``case.reps`` rounds of every library interleaved.

    ``call()`` is gunpy's call, ``own(result)`` its own timer's ms (None: no timer);
    ``peer_calls``: ``[(peer, fn, note)]``; ``check_peer(peer, output, reference)``
    raises on a wrong output and returns whether it compared it; ``per``: report
    times per this many units (BC: per source); ``gunpy_fields(result)``: extra
    fields of gunpy's rows (iterations, components ...).
    """
    ref = call()  # 1. warm-up, and the reference the peers are checked against
    owns, last = {}, {}

    def keep(lib, k, ms, r):
        if lib == "alone":
            last["result"] = r
        if lib in ("gunpy", "alone") and own is not None:
            owns[k] = own(r)

    def timed(walls, keys, mine=True):
        t = [ms / per for ms in walls]
        o = [owns[k] / per for k in keys] if mine and own is not None else None
        return dict(summary(t, o), wall_ms=t)

    keys = list(range(case.reps))
    runs = alone(lambda k: call(), keys, keep)  # 2. gunpy alone
    alone_ms = [ms for _, ms, _ in runs]
    # gunpy's extra fields from a timed call (the warm-up's per-iteration times hold compiling)
    fields = gunpy_fields(last.get("result", ref)) if gunpy_fields else {}
    case.add(primitive, "gunpy", "alone", **timed(alone_ms, keys), validated=True, **fields)
    calls = [("gunpy", lambda k: call())]
    checked, notes = {}, {}
    for peer, fn, note in peer_calls:
        out = fn()  # warm-up, checked
        checked[peer.name] = bool(check_peer and check_peer(peer, out, ref))
        notes[peer.name] = note
        calls.append((peer.name, lambda k, fn=fn: fn()))
    owns.clear()
    runs = interleave(calls, keys, keep)  # 3. every library, interleaved
    mine = {k: ms for k, ms, _ in runs["gunpy"]}
    case.add(primitive, "gunpy", "interleaved", **timed(list(mine.values()), keys),
             vs_alone=statistics.median(mine.values()) / statistics.median(alone_ms),
             validated=True, **fields)
    for lib, _ in calls[1:]:
        t = {k: ms for k, ms, _ in runs[lib]}
        note = {"note": notes[lib]} if notes[lib] else {}
        case.add(primitive, lib, "interleaved", **timed(list(t.values()), keys, False),
                 vs_gunpy=paired(t, mine), validated=checked[lib], **note)


def counts_agree(says):
    """A ``check_peer`` for counts: the peer's count must equal gunpy's (``says``: what a
    wrong count reads as, ``"finds {} components"``)."""
    def check(peer, out, expected):
        if out != expected:
            raise AssertionError(f"{peer.name} {says.format(out)}, gunpy {expected}")
        return True
    return check


def scipy_close(what, rtol, atol=0.0):
    """A ``check_peer`` comparing scipy's output (the first of a tuple) with gunpy's array."""
    def check(peer, out, ref):
        if peer.name != "scipy":
            return False
        out = out[0] if isinstance(out, tuple) else out
        if not np.allclose(out, ref, rtol=rtol, atol=atol, equal_nan=True):
            raise AssertionError(f"{what} differs from scipy's")
        return True
    return check
