"""OpenCL kernels of Fcg (sources in fcg_kernels.cl): one work-item per vector entry.
Fcg starts with Bicg's initialize (t = r;  p = q = 0;  prev_rho = 1; core/solver/bicg.py:
start_with_shadow)."""
from __future__ import annotations

from ginkpy.opencl.launch import launch


def step_1(exec, p, z, rho_t, prev_rho, status):
    """p = z + (rho_t / prev_rho) p in running columns (0 for rho_t / prev_rho where prev_rho is 0)."""
    launch(exec, __file__, "step_1", p.dtype, p.shape, p, z, rho_t, prev_rho, status)


def step_2(exec, x, r, t, p, q, beta, rho, prev_rho, status):
    launch(exec, __file__, "step_2", x.dtype, x.shape, x, r, t, p, q, beta, rho, prev_rho, status)
