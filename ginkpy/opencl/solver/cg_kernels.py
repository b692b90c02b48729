"""OpenCL kernels of Cg (sources in cg_kernels.cl): each step is one fused launch with one
work-item per vector entry, and the solver scalars (1 x k) stay on the device."""
from __future__ import annotations

from ginkpy.opencl.launch import launch


def initialize(exec, p, q, rho, prev_rho, status):
    """p = q = 0, rho = 0, prev_rho = 1."""
    launch(exec, __file__, "initialize", p.dtype, p.shape, p, q, rho, prev_rho,
           work_items=max(p.values.size, p.shape[1]))


def step_1(exec, p, z, rho, prev_rho, status):
    """p = z + (rho / prev_rho) p in running columns (rho / prev_rho = 0 where prev_rho is 0)."""
    launch(exec, __file__, "step_1", p.dtype, p.shape, p, z, rho, prev_rho, status)


def step_2(exec, x, r, p, q, beta, rho, prev_rho, status):
    """x += (rho / beta) p; r -= (rho / beta) q; prev_rho = rho in running columns. A column
    with beta <= 0 or rho == 0 gets status BREAKDOWN instead (also when n == 0)."""
    launch(exec, __file__, "step_2", x.dtype, x.shape, x, r, p, q, beta, rho, prev_rho, status,
           work_items=max(x.values.size, x.shape[1]))
