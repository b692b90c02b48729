"""ginkpy: sparse iterative solvers in the style of Ginkgo, on a sequential reference backend
and on any OpenCL device."""
from ginkpy import distributed, factorization, log, matrix, preconditioner, solver, stop
from ginkpy.core.base.executor import Executor, KernelNotFoundError, default_executor, executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.base.mtx_io import read, write
from ginkpy.reference.executor import ReferenceExecutor
from ginkpy import config, linalg
from ginkpy.linalg import aslinearoperator

__version__ = "0.1.0"


def __getattr__(name):
    # The OpenCL executor imports pyopencl; load it only when asked for.
    if name == "OpenCLExecutor":
        from ginkpy.opencl.executor import OpenCLExecutor
        return OpenCLExecutor
    raise AttributeError(f"module 'ginkpy' has no attribute {name!r}")


__all__ = ["Executor", "KernelNotFoundError", "LinOp", "OpenCLExecutor", "ReferenceExecutor",
           "aslinearoperator", "config", "linalg",
           "default_executor", "distributed", "executor", "factorization", "log", "matrix", "preconditioner", "read",
           "solver", "stop", "write"]
