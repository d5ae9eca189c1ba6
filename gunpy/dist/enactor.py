"""DistEnactor: the loop of a distributed primitive, its timer, comm counters and records.

A distributed primitive subclasses :class:`DistEnactor` and writes its steps
only; :meth:`DistEnactor.enact` runs them the same way on every rank::

    setup()                        before the run: not timed, its exchanges not counted
    counters reset, barrier, clock starts
    prepare(*args)                 the first frontier
    while frontier_size() is not None:
        loop()                     one iteration (logged with this rank's comm time and bytes)
        if is_converged(): break
    finalize()                     still timed (e.g. SSSP's parents)
    clock stops
    result()                       the result's values: not timed, exchanges not counted

Every iteration's record holds ``iteration``, ``frontier`` (what
:meth:`~DistEnactor.frontier_size` returned), ``edges`` and ``strategy`` (what
the operators noted in the context's record), ``direction``, the fields
:meth:`~DistEnactor.loop` returns, and this rank's ``comm_ms`` and
``bytes_sent``; :func:`gunpy.dist._common.finish_stats` closes the stats.

The counters are taken once before the barrier, once at the end of every
iteration and once after the run: ``gunpy dist bench`` splits the BFS's wall
time into levels by those calls.

Errors: building an enactor communicates nothing, so a primitive builds it and
checks its arguments inside one :meth:`~gunpy.dist.Comm.agreement` (every rank
then raises the same error, or none does), and :meth:`DistEnactor.enact` runs
inside :meth:`~gunpy.dist.Comm.collective`: an error in the run on one rank ends
the job (``MPI_Abort``) rather than leave the other ranks in a collective::

    with agreement(dgraph, "gunpy.dist.bfs") as agree:
        run = DistBFSEnactor(dgraph, backend=backend)
        source = run.source_id(source)
        agree.same(source)
    return run.enact(source)
"""

import time

from gunpy import operators as ops
from gunpy.dist._common import check_graph, check_source, finish_stats, host_view, source_id
from gunpy.dist.comm import ensure_device, get_comm
from gunpy.result import Stats

__all__ = ["DistEnactor"]


class DistEnactor:
    """Base class of a distributed primitive's loop (SPMD: collective on every rank).

    Parameters
    ----------
    dgraph : gunpy.dist.DistGraph
    backend : {"cpu", "cuda", "auto"} or a backend, default "cpu"
        Where the rank's local operators run (one GPU per rank on a node).
    load_balance : str, default "auto"
        The local advance's strategy (checked here: ``ValueError`` if unknown).
    direction : str, default "push"
        The stats' direction and every record's (a record may override it).
    debug : bool, default False
        Check at every step that all ranks run the same operator sequence.

    Attributes
    ----------
    dg, comm : the graph and its :class:`~gunpy.dist.Comm`
    L : gunpy.Graph
        This rank's local graph (:meth:`local_graph`); ``ctx`` its operator context.
    be : the backend; ``n_own``: the owned vertices (local ids ``0 .. n_own - 1``)
    iteration : int
        The current iteration (0 in the first).
    extra : dict
        Fields to add to ``stats.extra`` (set them by :meth:`result` at the latest).
    """

    #: names the debug steps (``"<name> iteration <i>"``, ``"<name> done"``)
    name = "dist"
    #: the :class:`~gunpy.dist._common.DistResult` subclass :meth:`enact` returns
    Result = None

    def __init__(self, dgraph, *, backend="cpu", load_balance="auto", direction="push",
                 debug=False):
        # no communication here: primitives build their enactor inside their agreement
        check_graph(dgraph, f"gunpy.dist.{self.name}")
        self.dg = dgraph
        self.comm = get_comm(dgraph.comm, debug=debug)
        ensure_device(self.comm, backend)  # one GPU per rank on a node (once)
        self.load_balance = ops.advance.check_load_balance(load_balance)
        self.direction = direction
        self.n_own = dgraph.num_owned
        self.L = self.local_graph()
        self.ctx = ops.Context(self.L, backend=backend)
        self.be = self.ctx.backend
        self.iteration = 0
        self.extra = {}
        self.stats = None

    # -- override -----------------------------------------------------------------
    def local_graph(self):
        """The graph the local operators run on (default: the rank's part, ``dg.local``)."""
        return self.dg.local

    def setup(self):
        """Before the run (e.g. who holds which vertex): not timed, exchanges not counted."""

    def prepare(self, *args):
        """Start the run with :meth:`enact`'s arguments (e.g. put the source in the frontier)."""
        raise NotImplementedError

    def frontier_size(self):
        """The coming iteration's frontier size (its record's ``frontier``), or None to stop.

        Called before every iteration; it may be collective, and must return
        None on every rank or on none.
        """
        raise NotImplementedError

    def loop(self):
        """One iteration; returns the fields its record adds (a dict, or None)."""
        raise NotImplementedError

    def is_converged(self):
        """After an iteration is logged: True ends the run (collective; default False)."""
        return False

    def finalize(self):
        """After the loop, inside the timed run (e.g. picking parents)."""

    def result(self):
        """The result's values (a dict of :attr:`Result`'s keyword arguments), after the run."""
        raise NotImplementedError

    # -- helpers --------------------------------------------------------------------
    def check_source(self, source, *same):
        """``source`` as an int, or the same error on every rank (``same``: options that
        must be equal on all ranks too). Collective: an agreement of its own."""
        return check_source(self.dg, self.comm, source, *same)

    def source_id(self, source):
        """``source`` as an int, or a TypeError / IndexError: this rank's check, for a
        primitive's agreement block (no communication)."""
        return source_id(self.dg, source)

    def host(self, values):
        """A host view of a vertex array (``values`` itself on the CPU backend)."""
        return host_view(self.be, values)

    def store(self, values, host):
        """Write ``host`` (from :meth:`host`) back into ``values`` if it is a copy."""
        if host is not values:
            self.be.copy_in(values, 0, host)

    # -- the loop -------------------------------------------------------------------
    def enact(self, *args):
        """Run the primitive (collective); returns :attr:`Result` with the closed stats.

        An error on one rank during the run ends the job (:meth:`Comm.collective
        <gunpy.dist.Comm.collective>`): check arguments before, in an agreement.
        """
        with self.comm.collective(f"gunpy.dist.{self.name}"):
            return self._enact(args)

    def _enact(self, args):
        comm, ctx = self.comm, self.ctx
        self.setup()
        comm.take_counters()  # what came before (checks, set-up) is not the run's
        self.stats = Stats(backend=self.be.name, load_balance=self.load_balance,
                           direction=self.direction)
        comm.barrier()
        start = time.perf_counter()
        self.prepare(*args)
        self.iteration = 0
        while True:
            size = self.frontier_size()
            if size is None:
                break
            comm.step(f"{self.name} iteration {self.iteration}")
            ctx.record = {"edges": 0}
            self._log(size, self.loop())
            self.iteration += 1
            if self.is_converged():
                break
        self.finalize()
        self.be.synchronize()
        elapsed = time.perf_counter() - start
        comm.step(f"{self.name} done")
        values = self.result()
        finish_stats(comm, self.stats, self.iteration, elapsed, **self.extra)
        return self.Result(self.dg, self.stats, **values)

    def _log(self, size, fields):
        secs, nbytes = self.comm.take_counters()
        record = {"iteration": self.iteration, "frontier": int(size),
                  "edges": self.ctx.record["edges"], "direction": self.direction,
                  "strategy": self.ctx.record.get("strategy", "")}
        record.update(fields or {})
        record.update(comm_ms=secs * 1e3, bytes_sent=nbytes)
        self.stats.per_iteration.append(record)
