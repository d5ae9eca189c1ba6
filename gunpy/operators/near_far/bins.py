"""bins: the CPU's far pile kept in buckets, so that a refill touches each item about once.

The plain refill (:meth:`~gunpy.operators.near_far.NearFarQueue.refill`) reads the
whole far pile twice each time the near slice runs dry: once for its lowest
priority, once to split it at the new level. When the pile is large and the band
moves up many times (RMAT-18 with integer weights 1-255 and delta 2: 57 refills of
93,000 items on average) those passes are most of the queue's cost.

Here a refill *digests* the far pile once: the items in the new band go to the near
slice, those in the next :data:`BUCKETS` buckets (a bucket: priorities from one
whole number to the next) are counting-sorted into a **run**, the others go to an
**overflow** pile whose lowest priority is kept. A later refill finds the lowest
priority without a scan (the runs' first non-empty buckets, the overflow's kept
minimum, the new items' own) and takes its bucket from each run, reading only the
items it returns. Items pushed since the last refill (the far pile proper,
:attr:`NearFarQueue.far`) are digested at the next one; the overflow only when its
minimum comes up.

A stale entry (the vertex improved since it was filed) is filtered by its
priority when its bucket comes up, as the plain split does: below the floor it was
processed already, and a repeat within one refill is dropped by an epoch stamp.
Buckets need whole-number levels: above 2**50 (or with a fractional level) the
refill files everything beyond the band in the overflow pile, which is then the
plain two-pass refill less its minimum scan.

When what waits in the bins falls to :data:`RETURN_BELOW` items it goes back to the
far pile, so the fused steps (:mod:`.fused`), which refill from the far pile
themselves, take over again. The CPU only (``near_far.refill``); the CUDA backend
runs the plain refill.
"""

import numpy as np

from gunpy.backends.cpu import run_thin
from gunpy.operators.near_far.band import NEAR, STALE, cpu_band, cpu_raise_level
from gunpy.operators.operator import Operator

__all__ = ["BUCKETS", "MAX_RUNS", "RETURN_BELOW", "FarBins", "cpu_refill"]

#: buckets a run holds (the levels ahead that one digest sorts)
BUCKETS = 128
#: runs kept at once; more, or a full buffer, and the runs go to the overflow pile
MAX_RUNS = 48
#: what waits in the bins goes back to the far pile at this many items or fewer
RETURN_BELOW = 1 << 12
#: levels from here up are not bucketed (whole numbers lose precision near 2**53)
_MAX_BUCKETED = float(1 << 50)

# the integer state's slots
_NRUNS, _USED, _OVER_N, _REFILLS, _NEAR_N, _EPOCH, _FAR_N, _WAITING = range(8)


class FarBins:
    """The runs and the overflow pile of one queue (kept with its piles, reused by
    later runs on the same graph and backend)."""

    def __init__(self, backend, nv, dtype):
        self.backend = backend
        cap = 2 * nv + 1024
        self.buf = backend.empty(cap, dtype)  # the runs' items, a run after another
        self.over = backend.empty(cap, dtype)  # the overflow pile
        self.tmp = backend.empty(cap, dtype)  # a digest's items before they are sorted
        self.tmpj = backend.empty(cap, np.int32)  # and their buckets
        self.stamp = backend.zeros(max(nv, 1), np.int64)  # the epoch each vertex was taken in
        self.run_base = backend.zeros(MAX_RUNS, np.int64)  # bucket 0 of each run
        self.run_off = backend.zeros((MAX_RUNS, BUCKETS + 1), np.int64)  # its buckets' starts
        self.run_cur = backend.zeros(MAX_RUNS, np.int64)  # its first bucket not yet taken
        self.counts = backend.zeros(BUCKETS + 1, np.int64)
        self.ints = np.zeros(8, np.int64)
        self.floats = np.zeros(2, np.float64)  # the overflow's lowest priority; the level
        self.reset()

    def reset(self):
        """Nothing waits (the epoch goes on rising, so the stamps stay valid)."""
        epoch = self.ints[_EPOCH]
        self.ints[:] = 0
        self.ints[_EPOCH] = epoch
        self.floats[0] = np.inf

    @property
    def waiting(self):
        """Items filed in the runs or the overflow pile (some may be stale)."""
        return int(self.ints[_WAITING])

    def reserve(self, n):
        """Room for ``n`` items in each buffer (grown, the filed items kept)."""
        if n <= self.buf.shape[0]:
            return
        cap = max(n, 2 * self.buf.shape[0])
        for name in ("buf", "over", "tmp", "tmpj"):
            old = getattr(self, name)
            new = self.backend.empty(cap, old.dtype)
            new[:old.shape[0]] = old
            setattr(self, name, new)


def _refill_kernel(hooks):
    """The refill loop, one core (a digest is one pass; the items it files are few
    beside the edges the near slices they feed will relax)."""
    from numba import njit
    priority = hooks.priority
    band = cpu_band
    raise_level = cpu_raise_level
    K = BUCKETS

    @njit(inline="always")
    def file(v, p, level, floor, base, bucketed, out, near_n, tmp, tmpj, m, counts):
        # one item of a digest: the near slice, a bucket of the new run, or neither
        # (returns the counts it moved and 2 for the overflow)
        b = band(p, level, floor)
        if b == STALE:
            return near_n, m, 0
        if b == NEAR:
            out[near_n] = v
            return near_n + 1, m, 0
        if bucketed and p < base + K:
            j = np.int64(p - base)
            tmp[m] = v
            tmpj[m] = j
            counts[j] += 1
            return near_n, m + 1, 0
        return near_n, m, 2

    @njit(inline="always")
    def digest(pile, count, over, k, lowest, stamp, epoch, level, floor, base, bucketed, out,
               near_n, tmp, tmpj, m, counts, data):
        # a pile's items filed (a repeat within this refill dropped); the overflow's go to
        # over[k:] (in place when the pile is the overflow itself: k <= i), their lowest
        # priority kept
        for i in range(count):
            v = pile[i]
            if stamp[v] == epoch:
                continue
            stamp[v] = epoch
            p = np.float64(priority(v, data))
            near_n, m, where = file(v, p, level, floor, base, bucketed, out, near_n, tmp,
                                    tmpj, m, counts)
            if where == 2:
                over[k] = v
                k += 1
                if p < lowest:
                    lowest = p
        return near_n, m, k, lowest

    def refill_kernel(pnew, out, buf, over, tmp, tmpj, stamp, run_base, run_off, run_cur,
                      counts, ints, floats, max_runs, return_below, data):
        nruns, used, over_n = ints[_NRUNS], ints[_USED], ints[_OVER_N]
        epoch, pnew_n = ints[_EPOCH], ints[_FAR_N]
        over_min, level = floats[0], floats[1]
        cap = buf.shape[0]
        near_n = np.int64(0)
        refills = np.int64(0)
        while near_n == 0:
            # 1. the lowest priority waiting: new items, the overflow's, the runs' buckets
            lowest = over_min
            for i in range(pnew_n):
                p = np.float64(priority(pnew[i], data))
                if p < lowest:
                    lowest = p
            for r in range(nruns):
                j = run_cur[r]
                while j < K and run_off[r, j] == run_off[r, j + 1]:
                    j += 1
                run_cur[r] = j
                if j < K and run_base[r] + j < lowest:
                    lowest = np.float64(run_base[r] + j)
            if not lowest < np.inf:
                break
            floor = level
            level = raise_level(level, lowest)
            refills += 1
            epoch += 1
            bucketed = level == np.floor(level) and level < _MAX_BUCKETED
            base = np.int64(level) if bucketed else np.int64(0)
            # 2. the runs' buckets below the level: their live items join the near slice
            # (an item was filed by a priority it can only have lowered since)
            w = 0
            for r in range(nruns):
                j = run_cur[r]
                while j < K and run_base[r] + j < level:
                    for i in range(run_off[r, j], run_off[r, j + 1]):
                        v = buf[i]
                        if stamp[v] == epoch:
                            continue
                        stamp[v] = epoch
                        if band(np.float64(priority(v, data)), level, floor) != STALE:
                            out[near_n] = v
                            near_n += 1
                    j += 1
                if j < K:  # the run goes on: keep it (moved down over finished ones)
                    if w != r:
                        run_base[w] = run_base[r]
                        for k in range(K + 1):
                            run_off[w, k] = run_off[r, k]
                    run_cur[w] = j
                    w += 1
            nruns = w
            if nruns == 0:
                used = 0
            over_due = over_min < level
            todo = pnew_n + (over_n if over_due else 0)
            if todo and (used + todo > cap or nruns >= max_runs):
                # 3. no room for a new run: the runs' items go to the overflow pile
                for r in range(nruns):
                    if run_base[r] + run_cur[r] < over_min:
                        over_min = np.float64(run_base[r] + run_cur[r])
                    for i in range(run_off[r, run_cur[r]], run_off[r, K]):
                        over[over_n] = buf[i]
                        over_n += 1
                nruns = 0
                used = 0
                over_due = over_min < level
            if pnew_n == 0 and not over_due:
                continue
            # 4. digest the new items (and the overflow when its minimum is due): near,
            # the next K buckets (a new run) or the overflow
            for j in range(K + 1):
                counts[j] = 0
            m = np.int64(0)
            if over_due:
                near_n, m, over_n, over_min = digest(
                    over, over_n, over, 0, np.inf, stamp, epoch, level, floor, base,
                    bucketed, out, near_n, tmp, tmpj, m, counts, data)
            near_n, m, over_n, over_min = digest(
                pnew, pnew_n, over, over_n, over_min, stamp, epoch, level, floor, base,
                bucketed, out, near_n, tmp, tmpj, m, counts, data)
            pnew_n = 0
            if m:
                # the new run: a counting sort of its items by bucket
                pos = used
                for j in range(K):
                    run_off[nruns, j] = pos
                    pos += counts[j]
                    counts[j] = run_off[nruns, j]
                run_off[nruns, K] = pos
                for i in range(m):
                    j = tmpj[i]
                    buf[counts[j]] = tmp[i]
                    counts[j] += 1
                run_base[nruns] = base
                run_cur[nruns] = 0
                nruns += 1
                used = pos
        # 5. few items left waiting: back to the far pile, for the fused steps
        waiting = over_n
        for r in range(nruns):
            waiting += run_off[r, K] - run_off[r, run_cur[r]]
        if waiting <= return_below:
            for i in range(over_n):
                pnew[pnew_n] = over[i]
                pnew_n += 1
            for r in range(nruns):
                for i in range(run_off[r, run_cur[r]], run_off[r, K]):
                    pnew[pnew_n] = buf[i]
                    pnew_n += 1
            nruns = 0
            used = 0
            over_n = 0
            over_min = np.inf
            waiting = 0
        ints[_NRUNS], ints[_USED], ints[_OVER_N] = nruns, used, over_n
        ints[_REFILLS], ints[_NEAR_N], ints[_EPOCH] = refills, near_n, epoch
        ints[_FAR_N], ints[_WAITING] = pnew_n, waiting
        floats[0], floats[1] = over_min, level

    return refill_kernel


def cpu_refill(queue, out, hooks, data):
    """Refill ``out`` (the near slice, empty) from the far pile and the bins."""
    ctx, backend = queue.ctx, queue.backend
    far = queue.far
    if out.size or (far.size == 0 and queue.waiting() == 0):
        return out
    bins = queue.bins()
    nv = max(ctx.num_vertices, 1)
    # every item waiting may land in one buffer, and the far pile takes back what is left
    bound = far.size + int(bins.ints[_OVER_N]) + int(bins.ints[_USED])
    bins.reserve(bound)
    far.reserve(bound, keep=True)
    out.reserve(nv)
    bins.ints[_FAR_N] = far.size
    bins.floats[1] = queue.level
    ctx.log(build=run_thin(
        backend, _refill_kernel, hooks, (),
        lambda k: k(far.queue, out.queue, bins.buf, bins.over, bins.tmp, bins.tmpj, bins.stamp,
                    bins.run_base, bins.run_off, bins.run_cur, bins.counts, bins.ints,
                    bins.floats, min(MAX_RUNS, bins.run_base.shape[0]), RETURN_BELOW, data)))
    queue.level = float(bins.floats[1])
    queue.refills += int(bins.ints[_REFILLS])
    far.set_size(int(bins.ints[_FAR_N]))
    out.set_size(int(bins.ints[_NEAR_N]))
    return out


REFILL = Operator("near_far.refill", "queue, out, hooks, data", cpu=cpu_refill)
