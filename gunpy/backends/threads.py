"""How gunpy's numba parallel regions share the cores with other OpenMP libraries.

The CPU backend's kernels are ``numba.njit(parallel=True)`` code: each call runs
one or more parallel regions on numba's threading layer, which is OpenMP (the
system's GNU libgomp) when no TBB is installed. The libraries a user loads beside
gunpy bring OpenMP runtimes of their own (SuiteSparse:GraphBLAS and NetworKit each
ship a libgomp copy), so one process can hold three thread teams, each as large
as the machine. By default libgomp lets a team **spin** after each region
(``GOMP_SPINCOUNT`` 300,000 turns, about a millisecond) before it sleeps; a team
that spins holds the cores that the next region, gunpy's or another library's,
needs, and on a machine busy with other work the spinning threads are descheduled
in the middle of a region. Measured on the project's 2-core VM (docs/benchmarks.md,
"How gunpy is timed"), five processes of each, alternating, on the loaded
machine: gunpy's BFS on RMAT-16 took 154 ms per call (median of the processes'
medians) with libgomp's default wait policy and 7.2 ms with
``OMP_WAIT_POLICY=PASSIVE``; PageRank 143 ms against 29 ms.

:func:`configure` makes that choice for gunpy, once, before the first parallel
region starts, and never over one the user made:

* **threading layer**: numba's own choice (``tbb``, then ``omp``, then
  ``workqueue``) unless ``NUMBA_THREADING_LAYER`` is set: gunpy does not change it;
* **wait policy**: ``OMP_WAIT_POLICY=PASSIVE`` (threads sleep as soon as a region
  ends) unless the environment sets any of ``OMP_WAIT_POLICY``,
  ``GOMP_SPINCOUNT`` or ``KMP_BLOCKTIME``. An OpenMP runtime reads it when it
  loads: numba's at gunpy's first parallel call, and every library loaded after
  :func:`configure`; one already loaded keeps what it read.

**Python threads.** ``tbb`` and ``omp`` let several Python threads run parallel
regions at once. numba's ``workqueue`` layer does not: a second region started
while one runs (two threads calling gunpy) makes numba abort the whole process
("Concurrent access has been detected"). numba picks ``workqueue`` when it is
asked to (``NUMBA_THREADING_LAYER=workqueue``) or finds neither TBB nor the GNU
OpenMP runtime (``libgomp``; slim container images lack it). There, the CPU
backend's operators run one at a time: each holds :func:`region`'s process-wide
lock (re-entrant, renewed in a forked child), so threads wait for each other
instead of crashing; so do the parallel CSR builders (:mod:`gunpy._csr`), and any
other parallel code run inside :func:`region`. To run threads side by side, install TBB
(``pip install tbb``) or OpenMP (``libgomp1``), or set
``NUMBA_THREADING_LAYER=omp``.

>>> from gunpy.backends import threads
>>> threads.decide({"OMP_WAIT_POLICY": "active"})["wait_policy"]  # the user's, kept
{'value': 'active', 'by': 'environment'}
>>> threads.decide({})["wait_policy"]
{'value': 'PASSIVE', 'by': 'gunpy'}
"""

import contextlib
import functools
import os
import threading

__all__ = ["WAIT_VARIABLES", "decide", "configure", "describe", "threadsafe", "region",
           "serialised"]

#: environment variables by which a user (or a library's docs) sets OpenMP's waiting
WAIT_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")

_applied = None


def decide(environ=None):
    """What gunpy would set, given ``environ`` (default ``os.environ``); changes nothing.

    Returns ``{"threading_layer": {...}, "wait_policy": {...}}``, each
    ``{"value": ..., "by": "environment" | "gunpy" | "numba"}``.
    """
    env = os.environ if environ is None else environ
    layer = env.get("NUMBA_THREADING_LAYER")
    layer = {"value": layer, "by": "environment"} if layer else \
        {"value": "default", "by": "numba"}
    users = {k: env[k] for k in WAIT_VARIABLES if env.get(k)}
    if users:
        name = next(iter(users))
        wait = {"value": users[name] if name == "OMP_WAIT_POLICY" else f"{name}={users[name]}",
                "by": "environment"}
    else:
        wait = {"value": "PASSIVE", "by": "gunpy"}
    return {"threading_layer": layer, "wait_policy": wait}


def _numba_started():
    """Whether numba's threading layer is running already (its settings are then fixed)."""
    try:
        from numba.np.ufunc import parallel
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    return bool(getattr(parallel, "_is_initialized", False))


def configure(environ=None):
    """Apply :func:`decide`'s choice to ``environ`` (default ``os.environ``), once per process.

    Only variables the environment leaves unset are written. Returns the
    decision, with ``"late": True`` when numba's threading layer had started
    already (then numba's OpenMP team keeps the policy it started with).
    """
    global _applied
    env = os.environ if environ is None else environ
    if environ is None and _applied is not None:
        return _applied
    choice = decide(env)
    if choice["wait_policy"]["by"] == "gunpy":
        env["OMP_WAIT_POLICY"] = choice["wait_policy"]["value"]
    choice["late"] = _numba_started()
    if environ is None:
        _applied = choice
    return choice


def describe():
    """What runs now: numba's layer (once started), its threads, the wait settings."""
    import numba
    info = {"numba_threads": numba.get_num_threads(),
            "threading_layer": numba.threading_layer() if _numba_started() else
            f"not started ({numba.config.THREADING_LAYER})"}
    for k in WAIT_VARIABLES:
        if os.environ.get(k):
            info[k] = os.environ[k]
    if _applied is not None:
        info["wait_policy_by"] = _applied["wait_policy"]["by"]
    return info


# ----------------------------------------------------------------------------- Python threads
#: held around every parallel region while numba's layer is not threadsafe (workqueue)
_lock = threading.RLock()
#: True once numba's layer started and is threadsafe (tbb, omp): no lock from then on
_safe = False


def _renew_lock():
    # a forked child holds a copy of the lock as it was, maybe held by a thread that is
    # not in the child: a fresh one, or the child's first region would wait forever
    global _lock
    _lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_lock)


def threadsafe():
    """Whether numba's threading layer lets Python threads run parallel regions at once.

    True for ``tbb`` and ``omp``, False for ``workqueue``, None while no layer has
    started (numba starts one at the first parallel region, or on
    ``numba.get_num_threads()``).
    """
    global _safe
    if _safe:
        return True
    if not _numba_started():
        return None
    import numba
    _safe = numba.threading_layer() != "workqueue"
    return _safe


@contextlib.contextmanager
def region():
    """Hold the process's parallel-region lock where it is needed, else nothing.

    Around code that runs ``numba.njit(parallel=True)`` kernels from Python: under
    ``workqueue`` (and before any layer has started, when it may be the one to
    start) the calls of all threads take turns; under ``tbb`` or ``omp`` this
    costs one check.
    """
    if _safe or threadsafe():
        yield
        return
    with _lock:
        yield


_serialised = {}


def serialised(fn):
    """``fn``, or a wrapper calling it inside :func:`region` where the layer is not threadsafe.

    The CPU backend passes every operator implementation through it; wrappers
    are made once per function.
    """
    if _safe or threadsafe():
        return fn
    wrapper = _serialised.get(fn)
    if wrapper is None:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with region():
                return fn(*args, **kwargs)
        wrapper = _serialised[fn] = wrapper
    return wrapper
