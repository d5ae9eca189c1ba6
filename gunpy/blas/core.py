"""The names ``gunpy.blas.core`` held before gunpy.blas was split by object.

:mod:`gunpy.blas.vector`, :mod:`gunpy.blas.matrix`, :mod:`gunpy.blas.scalar`,
:mod:`gunpy.blas.mask`, :mod:`gunpy.blas.descriptor` and
:mod:`gunpy.blas.assign` (the one place an output is written) define them.
"""

from gunpy.blas.assign import Updater, write
from gunpy.blas.descriptor import Descriptor, options
from gunpy.blas.mask import Mask
from gunpy.blas.matrix import Matrix
from gunpy.blas.scalar import Scalar
from gunpy.blas.vector import Vector, full_vector

__all__ = ["Vector", "Matrix", "Scalar", "Mask", "Descriptor", "options", "full_vector", "write",
           "Updater"]
