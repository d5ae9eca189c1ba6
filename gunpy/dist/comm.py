"""comm: the few collectives gunpy.dist uses, over an mpi4py communicator.

Every exchange a distributed primitive makes goes through a :class:`Comm`, so
that the primitives read as "send these pairs to their owners" rather than as
MPI calls, each call is timed and its bytes counted for the per-iteration
stats, and a 2-D partition can later add row and column sub-communicators
without touching the primitives.

Collectives are called by every rank in the same order. ``debug=True`` makes
:meth:`Comm.step` check that (an allgather of each step's name): a rank that
took a different branch fails with ``RuntimeError: rank divergence`` instead
of deadlocking in mismatched collectives.

Errors never leave the other ranks waiting. A rank that fails and carries on
(an exception caught around a collective call) would leave the others in a
collective forever, so every collective call is split in two:

checks (:meth:`Comm.agreement`)
    the arguments are checked on each rank with no communication, then one small
    allreduce (which also checks that options are the same on every rank) tells
    every rank whether any failed; if one did, every rank raises the same error,
    naming the rank that failed and its message (and a rank's own error as it is
    when every rank failed alike). The caller can catch it and go on: no rank is
    inside a collective.
the run (:meth:`Comm.collective`)
    an error there on one rank cannot be agreed on (the others are inside a
    collective already, waiting for it), so it ends the job: the rank prints
    ``gunpy.dist: rank R of P failed inside ...`` and its traceback, then calls
    ``MPI_Abort``, even if the caller would have caught the exception. Errors
    raised by every rank after a collective (a rank divergence, a failed tree
    check) are marked as agreed (:func:`agreed`) and pass through.
"""

import importlib
import os
import sys
import time
import traceback
import zlib

import numpy as np

__all__ = ["Comm", "Agreement", "agreed", "get_comm", "install_abort_hook", "require_mpi",
           "node_rank", "share_cores", "ensure_device", "select_device"]

#: the attribute marking an exception every rank raised alike (see :func:`agreed`)
AGREED = "gunpy_dist_agreed"
#: the most characters of a rank's error message sent to the others
MESSAGE_CHARS = 1000


def require_mpi():
    """``mpi4py.MPI``, or an ImportError saying how to install it.

    mpi4py that finds no MPI library raises RuntimeError (``cannot load MPI
    library``): the same ImportError then, naming the cause.
    """
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError, OSError) as exc:
        raise ImportError("gunpy.dist needs mpi4py and an MPI library: "
                          "pip install gunpy[mpi]  (mpi4py and the mpich wheel, which "
                          f"provides mpiexec); {type(exc).__name__}: {exc}") from exc
    return MPI


class Comm:
    """A communicator with timing and byte counters.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm, optional
        Default ``MPI.COMM_WORLD``.
    debug : bool, default False
        Check in :meth:`step` that every rank runs the same operator sequence.

    Attributes
    ----------
    rank, size : int
    seconds : float
        Time spent in collectives since the last :meth:`take_counters`.
    bytes_sent : int
        Bytes this rank handed to collectives since then.
    """

    def __init__(self, comm=None, *, debug=False):
        MPI = require_mpi()
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else getattr(comm, "comm", comm)
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.debug = bool(debug)
        self.seconds = 0.0
        self.bytes_sent = 0
        if self.size > 1:
            install_abort_hook(self.comm)
            # who shares this node, asked once here (collective, as the constructors are) so
            # that picking a GPU later needs no communication: it happens inside agreements
            node_rank(self)
            share_cores(self)

    def with_debug(self, debug):
        """This communicator with ``debug`` set (same MPI communicator)."""
        if bool(debug) == self.debug:
            return self
        c = Comm.__new__(Comm)
        c.__dict__.update(self.__dict__)
        c.debug = bool(debug)
        return c

    # ------------------------------------------------------------------ bookkeeping
    def take_counters(self):
        """``(seconds, bytes)`` spent since the last call, and reset them."""
        out = (self.seconds, self.bytes_sent)
        self.seconds, self.bytes_sent = 0.0, 0
        return out

    def _timed(self, t0, nbytes):
        self.seconds += time.perf_counter() - t0
        self.bytes_sent += int(nbytes)

    # ------------------------------------------------------------------ collectives
    def allreduce(self, values, op="sum"):
        """Element-wise reduction of a small int64 or float64 vector (or a scalar) over ranks."""
        a = np.atleast_1d(np.asarray(values))
        a = a.astype(np.float64 if a.dtype.kind == "f" else np.int64)
        out = np.empty_like(a)
        mpi_op = {"sum": self.MPI.SUM, "max": self.MPI.MAX, "min": self.MPI.MIN}[op]
        t0 = time.perf_counter()
        self.comm.Allreduce(a, out, op=mpi_op)
        self._timed(t0, a.nbytes)
        return out if np.ndim(values) else out[0].item()

    def alltoallv(self, arrays, dest, *, return_sources=False):
        """Send row ``i`` of each array in ``arrays`` to rank ``dest[i]``.

        ``arrays``: 1-D NumPy arrays of one length (e.g. vertex ids and their
        parents); returns the arrays received, grouped by sending rank, each
        sender's rows in their original order (plus, with ``return_sources``,
        the sending rank of each row). One Alltoall of the counts, then one
        Alltoallv for all the arrays when they share a dtype (their rows
        interleaved), else one per array.
        """
        dest = np.asarray(dest, dtype=np.int64)
        order = np.argsort(dest, kind="stable")
        send_counts = np.bincount(dest, minlength=self.size).astype(np.int64)
        recv_counts = np.empty(self.size, dtype=np.int64)
        t0 = time.perf_counter()
        self.comm.Alltoall(send_counts, recv_counts)
        nbytes = send_counts.nbytes
        own = int(send_counts[self.rank])
        arrays = [np.asarray(a) for a in arrays]
        groups = [arrays] if len({a.dtype for a in arrays}) == 1 else [[a] for a in arrays]
        out = []
        for group in groups:
            k = len(group)
            # rows sorted by destination, the arrays side by side: one message per group
            block = np.empty((dest.shape[0], k), dtype=group[0].dtype)
            for j, a in enumerate(group):
                block[:, j] = a[order]
            sc, rc = send_counts * k, recv_counts * k
            sd = np.concatenate(([0], np.cumsum(sc)[:-1]))
            rd = np.concatenate(([0], np.cumsum(rc)[:-1]))
            r = np.empty((int(recv_counts.sum()), k), dtype=block.dtype)
            mt = self.MPI._typedict[block.dtype.char]
            self.comm.Alltoallv([block, sc, sd, mt], [r, rc, rd, mt])
            nbytes += block.nbytes - own * k * block.itemsize
            out.extend(np.ascontiguousarray(r[:, j]) for j in range(k))
        self._timed(t0, nbytes)
        if return_sources:
            out.append(np.repeat(np.arange(self.size), recv_counts))
        return out

    def fetch(self, ids, owner, lookup):
        """``lookup(ids received)`` evaluated on the owners of ``ids``, returned in ``ids``' order.

        Two Alltoallv: the requests to ``owner[i]``, the answers back.
        """
        ids = np.asarray(ids, dtype=np.int64)
        owner = np.asarray(owner, dtype=np.int64)
        asked, src = self.alltoallv([ids], owner, return_sources=True)
        answer = np.asarray(lookup(asked))
        (back,) = self.alltoallv([answer], src)
        # answers arrive grouped by owner, in the order each owner was asked (sorted by owner)
        out = np.empty(ids.shape[0], dtype=back.dtype)
        out[np.argsort(owner, kind="stable")] = back
        return out

    def allgather_bits(self, bits, lengths=None, *, packed=False):
        """Concatenate every rank's boolean block (rank order) into one boolean array.

        Each rank packs its block to bytes (one bit a vertex) before sending:
        the bottom-up levels' frontier exchange costs ``n / 8`` bytes a rank.
        ``lengths``: every rank's block length, when the caller knows them
        (saves a collective). ``packed=True`` returns ``(bytes, byte offset of
        each rank's block)`` instead, unpacked by nobody (bit ``i & 7`` of byte
        ``offset[r] + i // 8`` is rank ``r``'s item ``i``).
        """
        bits = np.asarray(bits, dtype=bool)
        mine = np.packbits(bits, bitorder="little")
        t0 = time.perf_counter()
        if lengths is None:
            lengths = self.comm.allgather(bits.shape[0])
        lengths = np.asarray(lengths, dtype=np.int64)
        nbytes_each = (lengths + 7) // 8
        buf = np.empty(int(nbytes_each.sum()), dtype=np.uint8)
        displ = np.concatenate(([0], np.cumsum(nbytes_each)[:-1]))
        self.comm.Allgatherv(mine, [buf, nbytes_each, displ, self.MPI.BYTE])
        self._timed(t0, mine.nbytes * max(self.size - 1, 0))
        if packed:
            return buf, displ
        parts = [np.unpackbits(buf[d:d + k], bitorder="little")[:n]
                 for d, k, n in zip(displ, nbytes_each, lengths)]
        return np.concatenate(parts).astype(bool) if parts else np.zeros(0, dtype=bool)

    def gatherv(self, array, root=0):
        """Concatenate every rank's 1-D array (rank order) on ``root``; ``None`` elsewhere."""
        a = np.ascontiguousarray(array)
        t0 = time.perf_counter()
        counts = self.comm.gather(a.shape[0], root=root)
        if self.rank == root:
            counts = np.array(counts, dtype=np.int64)
            out = np.empty(int(counts.sum()), dtype=a.dtype)
            displ = np.concatenate(([0], np.cumsum(counts)[:-1]))
            mt = self.MPI._typedict[a.dtype.char]
            self.comm.Gatherv(a, [out, counts, displ, mt], root=root)
        else:
            out = None
            self.comm.Gatherv(a, None, root=root)
        self._timed(t0, 0 if self.rank == root else a.nbytes)
        return out

    def bcast(self, obj, root=0):
        return self.comm.bcast(obj, root=root)

    def allgather(self, obj):
        return self.comm.allgather(obj)

    def barrier(self):
        self.comm.Barrier()

    # ------------------------------------------------------------------ debug
    def step(self, name):
        """Declare the next operator or collective; with ``debug``, check all ranks agree."""
        if not self.debug:
            return
        names = self.comm.allgather(name)
        if len(set(names)) != 1:
            detail = ", ".join(f"rank {r}: {n}" for r, n in enumerate(names))
            raise agreed(RuntimeError(f"rank divergence: ranks ran different operators "
                                      f"({detail})"))

    def same_on_all(self, value, what):
        """Raise (on every rank) unless ``value`` (hashable by repr) is equal on all ranks."""
        self.agree(None, value, what=what)

    # ------------------------------------------------------------------ errors
    def agreement(self, what="the arguments"):
        """A block of checks every rank makes before the first collective of a call.

        ``with comm.agreement("gunpy.dist.bfs") as agree:`` ... ``agree.same(source,
        direction)``: the block must not communicate. On leaving it, one small
        allreduce (collective: every rank leaves the block, raising or not) tells
        every rank whether any raised, and whether the values given to
        :meth:`Agreement.same` are equal on every rank; see :meth:`agree`.
        """
        return Agreement(self, what)

    def agree(self, error=None, *same, what="the arguments"):
        """Raise the same error on every rank if ``error`` is not None on any (collective).

        ``same``: values that must be equal on every rank (compared by a hash of
        their ``repr``; a ``ValueError`` naming ``what`` otherwise). One allreduce
        of three integers when no rank failed; on failure, an allgather of the
        messages follows. Every rank then raises the first failing rank's error
        type with ``"rank R of P: message"`` (a ``RuntimeError`` where that type
        cannot be imported or built from a message), or, where every rank failed
        with the same type and message, its own error unchanged.
        """
        failure = self._verdict(error, same, what)
        if failure is None:
            return
        if failure is error:
            raise error
        raise failure from error

    def _verdict(self, error, same, what):
        """The error every rank raises (``error`` itself, or a new one), or None (collective)."""
        if self.size == 1:
            return None if error is None else agreed(error)
        h = zlib.crc32(repr(same).encode())
        failed, lo, neg_hi = self.allreduce(np.array([-int(error is not None), h, -h]), op="min")
        if failed:
            return self._shared_error(error)
        if lo != -neg_hi:
            return agreed(ValueError(f"not the same on every rank: {what} (every rank must "
                                     "pass the same)"))
        return None

    def _shared_error(self, error):
        mine = None
        if error is not None:
            kind = type(error)
            mine = (kind.__module__, kind.__qualname__, _clip(str(error)))
        everyone = self.comm.allgather(mine)
        failed = [(r, e) for r, e in enumerate(everyone) if e is not None]
        if mine is not None and len(failed) == self.size and all(e == mine for _, e in failed):
            return agreed(error)  # every rank failed alike: its own error, traceback and all
        r, (module, qualname, message) = failed[0]
        text = f"rank {r} of {self.size}: {message}"
        if len(failed) > 1:
            text += f" (ranks {', '.join(str(k) for k, _ in failed[1:])} failed too)"
        return agreed(_rebuild(module, qualname, text))

    def collective(self, what):
        """A block of collectives that an error on one rank must not leave hanging.

        ``with comm.collective("gunpy.dist.bfs"):`` ... An exception inside it
        that is not marked :func:`agreed` ends the job when there is more than
        one rank: :meth:`abort` (the other ranks may be waiting in a collective
        that this rank will never join). Agreed errors pass through, and so does
        ``KeyboardInterrupt`` (not an ``Exception``).
        """
        return _Collective(self, what)

    def abort(self, error, where):
        """Print ``gunpy.dist: rank R of P failed inside <where>`` and the traceback of
        ``error`` to stderr, then ``MPI_Abort`` (mpiexec ends every rank, non-zero)."""
        _abort(self.comm, f"failed inside {where} (the other ranks wait in a collective, so "
                          "the job ends)", error)


def get_comm(comm=None, *, debug=False):
    """A :class:`Comm` for ``comm`` (a Comm, an mpi4py communicator or ``None``: COMM_WORLD)."""
    if isinstance(comm, Comm):
        return comm.with_debug(debug) if debug else comm
    return Comm(comm, debug=debug)


def select_device(comm=None):
    """Give this rank a GPU of its node: its node-local rank modulo the visible CUDA devices.

    Call it before anything touches CUDA (it creates the rank's context).
    Ranks on one node are told apart by ``MPI_Comm_split_type(SHARED)``, so
    ``mpiexec -n 8`` over two 4-GPU nodes gives each rank its own device;
    more ranks than devices share them round-robin.

    Parameters
    ----------
    comm : gunpy.dist.comm.Comm or mpi4py communicator, optional
        Default ``MPI.COMM_WORLD``.

    Returns
    -------
    int
        The device id selected (numba's numbering of the visible devices).

    Raises
    ------
    RuntimeError
        No CUDA device is visible to this rank.
    """
    from numba import cuda
    c = get_comm(comm)
    local_rank, _ = node_rank(c)
    count = len(cuda.gpus) if cuda.is_available() else 0
    if count == 0:
        raise RuntimeError(f"rank {c.rank}: no CUDA device visible (backend='cuda')")
    device = local_rank % count
    cuda.select_device(device)
    _selected.append(device)
    return device


_selected = []
_node = {}


def node_rank(comm):
    """``(rank on this node, ranks on this node)`` by ``MPI_Comm_split_type(SHARED)``.

    Collective the first time for a communicator (every rank must call it);
    remembered afterwards.
    """
    key = id(comm.comm)
    if key not in _node:
        node = comm.comm.Split_type(comm.MPI.COMM_TYPE_SHARED, key=comm.rank)
        _node[key] = (node.Get_rank(), node.Get_size())
        node.Free()
    return _node[key]


def share_cores(comm):
    """Split this node's cores between its ranks: ``numba.set_num_threads(cores // ranks here)``.

    Done once per process when a communicator of more than one rank is first
    wrapped, unless ``NUMBA_NUM_THREADS`` is set (the user's choice wins).
    Without it every rank would start a thread per core and the ranks on a
    node would fight over them.
    """
    if _node.get("shared") or os.environ.get("NUMBA_NUM_THREADS"):
        return
    _node["shared"] = True
    import numba
    _, here = node_rank(comm)
    numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS // max(here, 1)))


def ensure_device(comm, backend):
    """On the first CUDA use of a multi-rank job, give each rank its own GPU.

    No communication (the node's ranks were counted when the communicator was
    wrapped), so a primitive calls it inside its :meth:`Comm.agreement`.

    ``backend``: the name or backend object a distributed primitive was
    given. Does nothing on the CPU, with one rank, or once a device was
    chosen (by this or by :func:`select_device`); with ``"auto"`` and no GPU
    it leaves the choice to gunpy's backend selection.
    """
    name = getattr(backend, "name", backend)
    if comm.size == 1 or _selected or name not in ("cuda", "auto") or \
            not isinstance(backend, str):
        return
    from numba import cuda
    if not cuda.is_available():
        if name == "cuda":
            raise RuntimeError("no CUDA device visible (backend='cuda')")
        return
    try:
        select_device(comm)
    except Exception as exc:  # a context made before gunpy.dist ran: keep it, say so once
        _selected.append(None)
        import warnings
        warnings.warn(f"gunpy.dist: rank {comm.rank} could not pick its GPU by node-local "
                      f"rank ({exc}); it keeps the device it has", RuntimeWarning)


_hooked = []


def install_abort_hook(mpi_comm):
    """Make an uncaught exception on one rank end the whole job, naming the rank.

    Without it the other ranks would wait forever in their next collective.
    The hook prints ``gunpy.dist: rank R of P failed`` and the traceback to
    stderr, then calls ``MPI_Abort`` (mpiexec then stops every rank and exits
    non-zero). Installed once per process; idempotent.
    """
    if _hooked:
        return
    previous = sys.excepthook
    rank, size = mpi_comm.Get_rank(), mpi_comm.Get_size()

    def hook(kind, value, tb):
        if issubclass(kind, (KeyboardInterrupt, SystemExit)):
            try:
                previous(kind, value, tb)
            except Exception:  # the job ends below whatever the previous hook does
                pass
        _abort(mpi_comm, "failed", value)

    sys.excepthook = hook
    _hooked.append(hook)


def _abort(mpi_comm, what, error):
    """``gunpy.dist: rank R of P <what>: <error>`` and its traceback on stderr, then MPI_Abort."""
    try:
        tb = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        sys.stderr.write(f"gunpy.dist: rank {mpi_comm.Get_rank()} of {mpi_comm.Get_size()} "
                         f"{what}: {type(error).__name__}: {error}\n{tb}")
        sys.stderr.flush()
        # give mpiexec's proxy a moment to forward the message: MPI_Abort kills the
        # job at once, and output still in the pipe would be lost
        time.sleep(0.5)
    finally:
        mpi_comm.Abort(1)
        # MPICH's MPI_Abort can return before the process manager ends this process: no
        # code of the caller's may run on as if nothing had happened
        os._exit(1)


def agreed(error):
    """``error``, marked as raised by every rank alike (after a collective), and returned.

    :meth:`Comm.collective` lets such an error through: the ranks are in step,
    none waits in a collective, and the caller may catch it and go on.
    """
    try:
        setattr(error, AGREED, True)
    except AttributeError:  # pragma: no cover - an exception type with __slots__
        pass
    return error


def _clip(message):
    return message if len(message) <= MESSAGE_CHARS else message[:MESSAGE_CHARS] + " ..."


def _rebuild(module, qualname, text):
    """An exception of the class ``module.qualname`` with message ``text`` (RuntimeError
    naming the class where it cannot be imported or built from one message)."""
    try:
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        if isinstance(cls, type) and issubclass(cls, Exception):
            return cls(text)
    except Exception:
        pass
    return RuntimeError(f"{qualname}: {text}")


class Agreement:
    """The checks block of :meth:`Comm.agreement` (a context manager)."""

    def __init__(self, comm, what):
        self.comm, self.what, self.values = comm, what, ()

    def same(self, *values, what=None):
        """Values that must be equal on every rank (checked on leaving the block)."""
        self.values = values
        if what is not None:
            self.what = what

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if kind is not None and not issubclass(kind, Exception):
            return False  # KeyboardInterrupt and the like: not ours to agree on
        failure = self.comm._verdict(error, self.values, self.what)
        if failure is None or failure is error:
            return False  # nothing failed, or every rank raises its own error as it is
        raise failure from error


class _Collective:
    """The run block of :meth:`Comm.collective` (a context manager)."""

    def __init__(self, comm, what):
        self.comm, self.what = comm, what

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if kind is None or not issubclass(kind, Exception) or self.comm.size == 1 \
                or getattr(error, AGREED, False):
            return False
        self.comm.abort(error, self.what)
        return False
