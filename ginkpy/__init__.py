"""ginkpy: sparse iterative solvers in the style of Ginkgo, on a sequential reference backend
and on any OpenCL device."""
import importlib

from ginkpy import factorization, log, matrix, multigrid, preconditioner, solver, stop
from ginkpy.core.base.executor import Executor, ForkedProcessError, KernelNotFoundError, default_executor, executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.mtx_io import read, write
from ginkpy.reference.executor import ReferenceExecutor

__version__ = "0.1.0"

# loaded when first used: the SciPy doors import SciPy, the OpenCL executor pyopencl, the
# distributed operators mpi4py
_LAZY = {"linalg": "ginkpy.linalg", "reorder": "ginkpy.reorder", "config": "ginkpy.config", "batch": "ginkpy.batch",
         "distributed": "ginkpy.distributed", "eigensolver": "ginkpy.eigensolver",
         "aslinearoperator": ("ginkpy.linalg", "aslinearoperator"),
         "OpenCLExecutor": ("ginkpy.opencl.executor", "OpenCLExecutor")}


def __getattr__(name):
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'ginkpy' has no attribute {name!r}")
    if isinstance(target, tuple):
        return getattr(importlib.import_module(target[0]), target[1])
    return importlib.import_module(target)


__all__ = ["Executor", "ForkedProcessError", "KernelNotFoundError", "LinOp", "OpenCLExecutor", "ReferenceExecutor",
           "aslinearoperator", "batch", "config", "linalg",
           "default_executor", "distributed", "eigensolver", "executor", "factorization", "log", "matrix", "multigrid",
           "preconditioner", "read", "reorder",
           "solver", "stop", "write"]
