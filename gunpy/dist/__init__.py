"""gunpy.dist: gunpy over MPI (SPMD; run with ``mpiexec -n P python -m mpi4py script.py``).

A :class:`DistGraph` splits a graph over the ranks by a 1-D block partition
of the vertex ids; each rank's part is an ordinary :class:`gunpy.Graph` (owned
vertices, then ghosts), so the single-device operators and functors run on it
unchanged, and :mod:`gunpy.dist.comm` carries the exchanges between levels.

    import gunpy, gunpy.dist as gd
    DG = gd.DistGraph.from_graph(gunpy.generators.rmat(12, seed=1))
    r = gd.bfs(DG, 0)            # this rank's vertices
    full = r.gather(root=0)      # gunpy.primitives.bfs.BFSResult on rank 0, None elsewhere
    labels = gd.cc(DG).labels    # connected components (weak on directed graphs)
    dist = gd.sssp(DG, 0).distance
    pr = gd.pagerank(DG).rank
    communities = gd.cdlp(DG, 5).labels   # LDBC's label propagation

Each primitive is a :class:`DistEnactor` (:mod:`gunpy.dist.enactor`) that
writes only its steps; the enactor runs the loop the same way on every rank
and keeps the timer, the comm counters and the per-iteration records.

No error leaves a rank waiting: a check that fails on one rank is raised on
every rank (:meth:`Comm.agreement`), and an error on one rank during a run ends
the job with ``MPI_Abort`` (:meth:`Comm.collective`).

Needs mpi4py and an MPI library: ``pip install gunpy[mpi]``.
"""

from gunpy.dist.comm import Comm, get_comm, require_mpi

require_mpi()  # a clear ImportError (naming gunpy[mpi]) before anything else fails

from gunpy.dist.graph import DistGraph, block_starts  # noqa: E402
from gunpy.dist._common import DistResult  # noqa: E402
from gunpy.dist.enactor import DistEnactor  # noqa: E402
from gunpy.dist.bfs import DistBFSResult, bfs  # noqa: E402
from gunpy.dist.cc import DistCCResult, cc  # noqa: E402
from gunpy.dist.sssp import DistSSSPResult, sssp  # noqa: E402
from gunpy.dist.pagerank import DistPageRankResult, pagerank  # noqa: E402
from gunpy.dist.cdlp import DistCDLPResult, cdlp  # noqa: E402
from gunpy.dist.validate import check_bfs_tree  # noqa: E402

__all__ = ["Comm", "get_comm", "DistGraph", "block_starts", "DistEnactor", "DistResult", "bfs",
           "DistBFSResult", "check_bfs_tree", "cc", "DistCCResult", "sssp", "DistSSSPResult", "pagerank",
           "DistPageRankResult", "cdlp", "DistCDLPResult"]
