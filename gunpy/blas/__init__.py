"""gunpy.blas: graph algorithms in the language of linear algebra, on gunpy's operators.

python-graphblas's objects and syntax (its users carry over), computed by
gunpy's frontier operators, the way the push-pull GraphBLAS paper and
GraphBLAST describe: a push ``vxm`` is an ``advance`` over a sparse frontier,
a masked pull ``mxv`` with early exit is gunpy's pull ``advance``, a masked
``mxm`` is the ``intersect`` operator::

    >>> import gunpy
    >>> from gunpy import blas
    >>> G = gunpy.generators.path(4)
    >>> A = blas.Matrix.from_graph(G, backend="cpu")
    >>> q = blas.Vector.from_coo([0], [0], size=4, backend="cpu")   # the frontier
    >>> blas.semiring.any_secondi(q @ A).new().to_coo()            # its neighbours, with parents
    (array([1]), array([0]))

Algorithms written this way (LAGraph's style) are in :mod:`gunpy.blas.algorithms`.
"""

from gunpy.blas.descriptor import Descriptor, options
from gunpy.blas.mask import Mask
from gunpy.blas.matrix import Matrix
from gunpy.blas.scalar import Scalar
from gunpy.blas.vector import Vector
from gunpy.blas.ops import (DTYPES, BinaryOp, Monoid, SelectOp, Semiring, UnaryOp, binary,
                            monoid, select, semiring, unary)

__all__ = ["Matrix", "Vector", "Scalar", "Mask", "Descriptor", "options", "binary", "monoid",
           "semiring", "unary", "select", "BinaryOp", "Monoid", "Semiring", "UnaryOp",
           "SelectOp", "DTYPES", "algorithms"]


def __getattr__(name):
    if name == "algorithms":
        import importlib
        return importlib.import_module("gunpy.blas.algorithms")
    raise AttributeError(f"module 'gunpy.blas' has no attribute {name!r}")
