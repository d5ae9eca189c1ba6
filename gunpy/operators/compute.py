"""compute: run ``apply_vertex`` on every frontier item (Gunrock's ForAll).

Also what a filter becomes when it would remove nothing (filter bypass,
Gunrock section 4.4.3). With no frontier it runs over all vertices 0..n-1.
"""


from gunpy.backends.cpu import functor_pair, run_thin
from gunpy.functor import compile_functor, hooks_cache
from gunpy.operators.common import problem_data
from gunpy.operators.context import callable_module, context_for
from gunpy.operators.operator import Operator

cuda = None  # numba.cuda once this module makes CUDA code: gunpy.backends.cuda.bind

__all__ = ["compute", "run", "cuda_kernel", "cpu_kernel", "cpu_source", "execute", "cuda_execute",
           "cpu_execute"]


@hooks_cache
def cuda_kernel(hooks, all_vertices):
    from gunpy.backends.cuda import kernel
    apply_vertex = hooks.apply_vertex

    def compute(queue, length, data):
        n = length[0]
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            v = i if all_vertices else queue[i]
            if v >= 0:
                apply_vertex(v, data)

    return kernel(compute)


def cpu_kernel(hooks, all_vertices):
    """``(parallel, serial)`` builds of the CPU kernel."""
    return functor_pair(cpu_source, hooks, (all_vertices,))


def cpu_source(hooks, all_vertices):
    """The CPU kernel's Python source for ``hooks`` (compiled by the callers)."""
    from numba import prange

    apply_vertex = hooks.apply_vertex

    def compute(queue, n, data):
        for i in prange(n):
            v = i if all_vertices else queue[i]
            if v >= 0:
                apply_vertex(v, data)

    return compute


def execute(ctx, frontier, hooks, data):
    """Apply ``hooks.apply_vertex`` to each item of ``frontier`` (``None``: every vertex)."""
    all_vertices = frontier is None
    queue, length, n = ctx.items(frontier)
    if n == 0:
        return
    COMPUTE(ctx, hooks, data, queue, length, n, all_vertices)


def cuda_execute(ctx, hooks, data, queue, length, n, all_vertices):
    ctx.backend.run(cuda_kernel(hooks, all_vertices), n, queue, length, data)


def cpu_execute(ctx, hooks, data, queue, length, n, all_vertices):
    backend = ctx.backend
    if n < backend.serial_below:
        ctx.log(build=run_thin(backend, cpu_source, hooks, (all_vertices,),
                               lambda k: k(queue, n, data)))
    else:
        cpu_kernel(hooks, all_vertices)[0](queue, n, data)


def compute(graph, frontier, functor, data=None, *, context=None):
    """Run ``functor.apply_vertex`` on every item of ``frontier`` (``None``: every vertex).

    Returns ``frontier``. ``context``: see :func:`gunpy.operators.advance`.
    """
    ctx = context_for(graph, frontier, context)
    return run(ctx, frontier, compile_functor(functor, ctx.backend), problem_data(data))


def run(ctx, frontier, hooks, data):
    """:func:`compute` once its arguments are checked (``hooks``: the compiled functor)."""
    if frontier is not None:
        frontier.ensure_queue(ctx.scratch)
    execute(ctx, frontier, hooks, data)
    return frontier


COMPUTE = Operator("compute", "ctx, hooks, data, queue, length, n, all_vertices", cpu=cpu_execute,
                   cuda=cuda_execute)


callable_module(__name__, compute)
