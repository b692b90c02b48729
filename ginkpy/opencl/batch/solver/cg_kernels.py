"""OpenCL kernels of the batched Cg (sources in cg_kernels.cl): one launch solves every item
(see ginkpy/opencl/components/batch_solver.py for the launch)."""
from __future__ import annotations

from ginkpy.opencl.components.batch_solver import solve


def apply(exec, a, preconditioner, b, x, max_iterations, rtol, atol, iterations, residual_norms,
          reasons):
    """Solve A_i x_i = b_i for every item with Cg, x the initial guess; per item the iterations,
    final residual norm and stop reason go to ``iterations``, ``residual_norms``, ``reasons``."""
    n = a.common_size[0]
    # work vectors in order of priority for local memory (p: SpMV's gathers and three passes)
    work = [("p", n), ("ap", n), ("r", n), ("z", n)]
    solve(exec, __file__, a, preconditioner, b, x, work, max_iterations, rtol, atol, iterations,
          residual_norms, reasons)
