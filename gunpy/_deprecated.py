"""Names kept for one release after they moved; each warns with a DeprecationWarning.

``Enactor.neighbor_reduce`` and its siblings were pass-through wrappers of the free
operators: call :mod:`gunpy.operators` with the enactor's context instead, e.g.
``ops.neighbor_reduce(self.graph, None, F, self.problem, out, context=self.context)``.
They go in gunpy 0.3.
"""

import warnings

__all__ = ["EnactorAliases"]


def _moved(old, new):
    warnings.warn(f"Enactor.{old} is deprecated and goes in gunpy 0.3: call {new} "
                  f"with context=self.context", DeprecationWarning, stacklevel=3)


class EnactorAliases:
    """The Enactor's former operator wrappers (deprecated): the free operators on its state."""

    def neighbor_reduce(self, frontier, functor, out, **options):
        from gunpy.operators import neighbor_reduce
        _moved("neighbor_reduce", "gunpy.operators.neighbor_reduce")
        sums = neighbor_reduce(self.graph, frontier, functor, self.problem, out,
                               context=self.context, **options)
        return sums if options.get("aggregates") else frontier

    def neighbor_mode(self, frontier, functor, out, *, edges="both"):
        from gunpy.operators import neighbor_mode
        _moved("neighbor_mode", "gunpy.operators.neighbor_mode")
        neighbor_mode(self.graph, frontier, functor, self.problem, out, edges=edges,
                      context=self.context)
        return frontier

    def neighbor_best(self, frontier, functor, out, *, rounds=None):
        from gunpy.operators import neighbor_best
        _moved("neighbor_best", "gunpy.operators.neighbor_best")
        neighbor_best(self.graph, frontier, functor, self.problem, out, rounds=rounds,
                      context=self.context)
        return frontier

    def neighbor_mex(self, frontier, functor, out):
        from gunpy.operators import neighbor_mex
        _moved("neighbor_mex", "gunpy.operators.neighbor_mex")
        neighbor_mex(self.graph, frontier, functor, self.problem, out, context=self.context)
        return frontier

    def sample(self, frontier, functor, k):
        from gunpy.operators import sample
        _moved("sample", "gunpy.operators.sample")
        return sample(self.graph, frontier, functor, self.problem, k=k, context=self.context)

    def contract(self, labels):
        from gunpy.operators import contract
        _moved("contract", "gunpy.operators.contract")
        return contract(self.graph, labels, context=self.context)

    def spgemm_structure(self, right=None, *, exclude=None):
        from gunpy.operators.spgemm import structure
        _moved("spgemm_structure", "gunpy.operators.spgemm.structure")
        right = self.graph if right is None else right
        return structure(self.graph, right, exclude=exclude, context=self.context)

    def spgemm(self, pattern, functor, *, right=None):
        from gunpy.operators import Context, spgemm
        _moved("spgemm", "gunpy.operators.spgemm")
        right = self.graph if right is None else right
        return spgemm(pattern, functor, self.problem, left=self.graph, right=right,
                      context=Context(pattern, self.backend))

    def reduce(self, array, op="sum", n=None):
        from gunpy.operators import reduce
        _moved("reduce", "gunpy.operators.reduce")
        return reduce(array, op, n, context=self.context)

    def filter_until_empty(self, frontier, functor, *, mode=None):
        _moved("filter_until_empty", "a loop of self.filter")
        rounds = 0
        while frontier.size:
            frontier = self.filter(frontier, functor, mode=mode)
            rounds += 1
        return rounds
