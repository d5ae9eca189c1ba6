"""Generate docs/api.md from gunpy's numpydoc docstrings.

    python docs/gen_api.py            # rewrite docs/api.md
    python docs/gen_api.py --check    # exit 1 if docs/api.md is out of date (CI)
"""

import inspect
import os
import sys

import gunpy
from gunpy import atomics, datasets, devmath, enactor, generators, registry, testing
from gunpy import functor as functor_module
from gunpy import progress
from gunpy import backends
from gunpy.blas import structure as blas_structure
from gunpy.backends import base as backends_base
from gunpy.backends import toolchain
from gunpy.backends.cuda import CudaBackend
from gunpy import operators as ops
from gunpy.frontier import Frontier
from gunpy.operators import operator as operator_module
from gunpy.operators.advance import Push, advance, register_strategy, unregister_strategy
from gunpy.operators.compute import compute
from gunpy.operators.filter import filter as filter_
from gunpy.operators.intersect import intersect
from gunpy.operators.neighbor_mode import neighbor_mode
from gunpy.operators.neighbor_best import neighbor_best
from gunpy.operators.neighbor_mex import neighbor_mex
from gunpy.operators.contract import contract
from gunpy.operators.spgemm import product as spgemm_product, spgemm, structure as spgemm_structure
from gunpy.operators.reverse_levels import group as group_levels, reverse_levels
from gunpy.operators.sample import sample
from gunpy.operators.traversal import Traversal
from gunpy.operators.neighbor_reduce import neighbor_reduce
from gunpy.operators.reduce import reduce
from gunpy import blas
from gunpy.blas import algorithms as blas_algorithms
import gunpy.dist as dist  # needs mpi4py (the test extra has it); MPI starts as a 1-rank job
from gunpy.dist import comm as dist_comm

SECTIONS = [
    ("Graphs", [gunpy.Graph, gunpy.Graph.from_edges, gunpy.Graph.from_scipy,
                gunpy.Graph.from_networkx, gunpy.Graph.from_pandas,
                gunpy.Graph.from_edge_index, gunpy.Graph.to_scipy, gunpy.Graph.to_networkx,
                gunpy.Graph.csc, gunpy.read_mtx, gunpy.read_edgelist, gunpy.read_metis,
                gunpy.io.detect_format]),
    ("Datasets", [datasets.available, datasets.remote, datasets.info, datasets.load,
                  datasets.fetch, datasets.register]),
    ("Generators", [generators.rmat, generators.kronecker_edges, generators.grid_2d,
                    generators.path, generators.star]),
    ("Primitives", [gunpy.bfs, gunpy.sssp, gunpy.bc, gunpy.cc, gunpy.pagerank, gunpy.triangles,
                    gunpy.triangle_count, gunpy.lcc, gunpy.cdlp, gunpy.louvain, gunpy.kcore,
                    gunpy.hits, gunpy.ppr, gunpy.spmv, gunpy.color, gunpy.scc,
                    gunpy.mst, gunpy.geo]),
    ("Progress", [progress.bar, progress.status]),
    ("Results", [gunpy.Result, gunpy.Result.is_unreached, gunpy.Result.to_dict,
                 gunpy.Result.to_dataframe, gunpy.Result.to_networkx, gunpy.Stats,
                 gunpy.Stats.mteps, gunpy.Stats.graph500_edges, gunpy.Stats.graph500_mteps]),
    ("Writing primitives", [gunpy.Functor, functor_module.Hook, gunpy.Problem,
                            gunpy.Problem.init, gunpy.Problem.reset, gunpy.Problem.extract,
                            gunpy.Problem.data, gunpy.Problem.vertex_array,
                            gunpy.Problem.edge_array, gunpy.Problem.check_source,
                            gunpy.Problem.to_host, gunpy.Problem.take,
                            gunpy.Enactor, gunpy.Enactor.prepare_frontier, gunpy.Enactor.loop,
                            gunpy.Enactor.is_converged, gunpy.Enactor.finalize,
                            gunpy.Enactor.start_frontier, gunpy.Enactor.mark_visited,
                            gunpy.Enactor.enact, gunpy.Enactor.advance,
                            gunpy.Enactor.filter, gunpy.Enactor.compute,
                            gunpy.Enactor.near_far,
                            gunpy.Enactor.advance_filter, gunpy.Enactor.advance_near_far,
                            gunpy.Enactor.full_frontier,
                            gunpy.Enactor.save_frontier, gunpy.Enactor.saved_frontier,
                            Traversal, enactor.DirectionPolicy, Frontier,
                            Frontier.view, Frontier.size, Frontier.capacity, Frontier.push,
                            Frontier.clear, Frontier.reserve, Frontier.to_numpy,
                            Frontier.ensure_queue, Frontier.ensure_bitmap, Frontier.set_bitmap,
                            Frontier.set_size]),
    ("Testing your primitive (gunpy.testing)", [testing.install_simulator_shims, testing.to_nx,
                                                testing.nasty_graphs, testing.reference_depths,
                                                testing.PtxBackend]),
    ("The primitive registry", [registry.Primitive, registry.Option, registry.register_primitive,
                                registry.unregister_primitive, registry.primitive,
                                registry.primitives, registry.names]),
    ("Backends", [backends.register_backend, backends.unregister_backend, backends.get_backend,
                  backends.available, backends.names, backends_base.Backend,
                  backends_base.Backend.asarray, backends_base.Backend.empty,
                  backends_base.Backend.zeros, backends_base.Backend.full,
                  backends_base.Backend.fill, backends_base.Backend.read,
                  backends_base.Backend.write, backends_base.Backend.to_host,
                  backends_base.Backend.take, backends_base.Backend.synchronize,
                  backends_base.Backend.counts, backends_base.Backend.bind]),
    ("The CUDA backend and its toolchain", [CudaBackend, toolchain.versions, toolchain.Versions,
                                            toolchain.plan, toolchain.LinkPlan,
                                            toolchain.ensure_loadable, toolchain.ToolchainError,
                                            toolchain.resources, toolchain.link_cubin,
                                            toolchain.assemble]),
    ("Operators on their own", [ops.Context, ops.Context.frontier, ops.Context.new_bitmap,
                                advance, Push, filter_, compute, neighbor_reduce, neighbor_mode,
                                neighbor_best, neighbor_mex, contract, sample, group_levels,
                                reverse_levels, intersect, spgemm_structure, spgemm,
                                spgemm_product, reduce, register_strategy, unregister_strategy]),
    ("Operator objects (gunpy.operators.operator)", [
        operator_module, operator_module.Operator, operator_module.Operator.on,
        operator_module.Operator.implement, operator_module.Operator.retract,
        operator_module.operator, operator_module.operators]),
    ("GraphBLAS (gunpy.blas)", [blas.Matrix, blas.Matrix.from_coo, blas.Matrix.from_graph,
                                blas.Matrix.to_coo, blas.Matrix.reduce_rowwise,
                                blas.Matrix.reduce_scalar, blas.Matrix.select, blas.Vector,
                                blas.Vector.from_coo, blas.Vector.to_coo, blas.Vector.to_dense,
                                blas.Vector.dup, blas.Vector.clear, blas.Vector.ewise_add,
                                blas.Vector.ewise_mult, blas.Vector.apply, blas.Vector.select,
                                blas.Vector.reduce, blas.Scalar, blas.Mask, blas.Descriptor,
                                blas.options, blas.Semiring, blas.Monoid, blas.BinaryOp,
                                blas_structure.VectorData, blas.Matrix.from_csr]),
    ("GraphBLAS algorithms (gunpy.blas.algorithms)", [
        blas_algorithms.bfs, blas_algorithms.bfs_sigma, blas_algorithms.bc, blas_algorithms.sssp,
        blas_algorithms.pagerank, blas_algorithms.triangle_count,
        blas_algorithms.lcc]),
    ("Distributed (gunpy.dist, over MPI)", [
        dist.DistGraph, dist.DistGraph.from_graph, dist.DistGraph.from_edges,
        dist.DistGraph.rmat, dist.bfs, dist.cc, dist.sssp, dist.pagerank, dist.cdlp,
        dist.check_bfs_tree,
        dist.DistEnactor,
        dist_comm.select_device, dist_comm.share_cores]),
    ("Atomics", [atomics.cas, atomics.min, atomics.max, atomics.add, atomics.or_,
                 atomics.and_, atomics.exch]),
    ("Device math (gunpy.devmath)", [devmath, devmath.sin, devmath.cos]),
]


def qualname(obj):
    if inspect.ismodule(obj):
        return obj.__name__
    if isinstance(obj, property):
        obj = obj.fget
    mod = obj.__module__.replace("gunpy.primitives.", "gunpy.").replace("gunpy.graph", "gunpy")
    return f"{mod}.{obj.__qualname__}"


def render():
    out = ["# gunpy API reference", "",
           "Generated from the docstrings by `docs/gen_api.py`; do not edit by hand.", ""]
    for title, objs in SECTIONS:
        out += [f"## {title}", ""]
        for obj in objs:
            try:
                sig = str(inspect.signature(obj))
            except (TypeError, ValueError):
                sig = ""
            kind = "class " if inspect.isclass(obj) else ""
            out += [f"### `{kind}{qualname(obj)}{sig}`", ""]
            doc = inspect.getdoc(obj) or "(no docstring)"
            out += ["```text", doc, "```", ""]
    return "\n".join(out)


def main(argv):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "api.md")
    text = render()
    if "--check" in argv:
        with open(path) as f:
            return 0 if f.read() == text else 1
    with open(path, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
