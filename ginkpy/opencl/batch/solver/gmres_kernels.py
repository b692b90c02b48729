"""OpenCL kernels of the batched Gmres (sources in gmres_kernels.cl): one launch solves every
item (see ginkpy/opencl/components/batch_solver.py for the launch)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.components.batch_solver import solve


def apply(exec, a, preconditioner, b, x, max_iterations, rtol, atol, krylov_dim, iterations,
          residual_norms, reasons):
    """Solve A_i x_i = b_i for every item with GMRES(krylov_dim), x the initial guess; per item
    the iterations, final residual norm and stop reason go to ``iterations``,
    ``residual_norms``, ``reasons``."""
    n, m = a.common_size[0], int(krylov_dim)
    # in order of priority for local memory: the Hessenberg matrix, rotations, g, y and the
    # number of steps (small, read by every work-item), w, z, then the Krylov basis
    work = [("hs", (m + 1) * m + 4 * m + 2), ("w", n), ("z", n), ("V", (m + 1) * n)]
    solve(exec, __file__, a, preconditioner, b, x, work, max_iterations, rtol, atol, iterations,
          residual_norms, reasons, np.int32(m))
