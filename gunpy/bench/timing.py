"""How ``gunpy bench`` times a call: wall time, the same inputs for every library, interleaved.

Every library, gunpy included, is timed the way a user feels it: wall time per
call (``time.perf_counter`` around the call, result building and checks of the
input included), over the same inputs (roots, or repetitions for the primitives
without one). Two modes:

* **interleaved**: for each input every library runs once, one after the other,
  in the same process, the order rotated by one library per input (so that no
  library always runs right after the same neighbour, whose threads may still be
  spinning or whose data may still sit in the caches). The ratios of the suite
  are taken here, input by input: ``peer ms / gunpy ms`` for the same input,
  then the median over inputs (:func:`paired`).
* **alone**: gunpy in a loop with nothing in between, as a program that only
  uses gunpy would call it.

gunpy's own timer (``result.stats.elapsed_ms``: the traversal, from the first
operator to the last synchronisation) is reported beside its wall time, as a
share of it: what a call spends outside that timer (problem set-up, input
checks, building the result) is ``wall - own``.

>>> from gunpy.bench.timing import interleave, paired
>>> seen = []
>>> calls = [("a", lambda k: seen.append(("a", k))), ("b", lambda k: seen.append(("b", k)))]
>>> times = interleave(calls, [10, 11, 12])
>>> seen  # the order rotates: a b, b a, a b
[('a', 10), ('b', 10), ('b', 11), ('a', 11), ('a', 12), ('b', 12)]
>>> sorted(times), [k for k, _, _ in times["a"]]
(['a', 'b'], [10, 11, 12])
>>> paired({1: 4.0, 2: 9.0}, {1: 2.0, 2: 3.0})  # per input 2x and 3x: the median
2.5
"""

import statistics
import time

__all__ = ["wall", "interleave", "alone", "paired", "summary"]


def wall(fn, *args):
    """``(milliseconds, output)`` of one call of ``fn(*args)``, by wall time."""
    t = time.perf_counter()
    out = fn(*args)
    return (time.perf_counter() - t) * 1e3, out


def interleave(calls, keys, on_result=None):
    """Run every ``(library, fn)`` of ``calls`` on each key, the order rotated per key.

    Returns ``{library: [(key, ms, output or None), ...]}``; with ``on_result``
    (``on_result(library, key, ms, output)``, called after the timer stopped) the
    outputs are handed to it and not kept, so large results do not pile up.
    """
    calls = list(calls)
    times = {lib: [] for lib, _ in calls}
    for i, key in enumerate(keys):
        k = i % len(calls) if calls else 0
        for lib, fn in calls[k:] + calls[:k]:
            ms, out = wall(fn, key)
            if on_result is not None:
                on_result(lib, key, ms, out)
                out = None
            times[lib].append((key, ms, out))
    return times


def alone(fn, keys, on_result=None):
    """gunpy's loop with nothing in between: ``[(key, ms, output or None), ...]``."""
    return interleave([("alone", fn)], keys, on_result)["alone"]


def paired(peer, mine):
    """Median over the shared keys of ``peer[key] / mine[key]`` (both ``{key: ms}``).

    Above 1: gunpy took less wall time than the peer on the same input.
    """
    ratios = [peer[k] / mine[k] for k in peer if k in mine and mine[k] > 0]
    return statistics.median(ratios) if ratios else float("nan")


def summary(walls, owns=None):
    """A row's timing fields from per-call wall times (ms) and, for gunpy, its own timer's.

    ``median_ms`` is the median wall time per call; ``own_ms`` the median of
    ``stats.elapsed_ms``; ``own_share`` the median of ``own / wall`` per call
    and ``outside_ms`` the median of ``wall - own``: what the call spends
    outside gunpy's timer.
    """
    row = {"runs": len(walls), "median_ms": statistics.median(walls), "min_ms": min(walls),
           "max_ms": max(walls)}
    if owns:
        row.update(own_ms=statistics.median(owns),
                   own_share=statistics.median(o / w for o, w in zip(owns, walls) if w > 0),
                   outside_ms=statistics.median(w - o for o, w in zip(owns, walls)))
    return row
