"""ginkpy: sparse iterative solvers in the style of Ginkgo, on a sequential reference backend
and on any OpenCL device."""
from ginkpy import factorization, log, matrix, multigrid, preconditioner, solver, stop
from ginkpy.core.base.executor import Executor, ForkedProcessError, KernelNotFoundError, default_executor, executor
from ginkpy.core.base.lazy import lazy_attributes as _lazy_attributes
from ginkpy.core.base.lin_op import LinOp
from ginkpy.reference.executor import ReferenceExecutor

__version__ = "0.1.0"

# loaded when first used (issue 33: ``import ginkpy`` in at most 0.15 s): the namespaces above
# load each solver, preconditioner or format at its first access; the SciPy doors import SciPy,
# the OpenCL executor pyopencl, the distributed operators mpi4py, Matrix Market files the
# matrix formats
_EXPORTS = {"aslinearoperator": "ginkpy.linalg", "OpenCLExecutor": "ginkpy.opencl.executor",
            "read": "ginkpy.core.matrix.mtx_io", "write": "ginkpy.core.matrix.mtx_io"}
_SUBMODULES = ("batch", "config", "distributed", "eigensolver", "linalg", "reorder")
__getattr__, __dir__ = _lazy_attributes(globals(), _EXPORTS, _SUBMODULES)

__all__ = ["Executor", "ForkedProcessError", "KernelNotFoundError", "LinOp", "ReferenceExecutor", "default_executor",
           "executor", "factorization", "log", "matrix", "multigrid", "preconditioner", "solver", "stop"]
__all__ += sorted([*_EXPORTS, *_SUBMODULES])
