"""OpenCL kernels of Fcg (sources in fcg_kernels.cl): one work-item per vector entry.
initialize is Bicg's."""
from __future__ import annotations

from ginkpy.opencl.launch import launch
from ginkpy.opencl.solver import bicg_kernels


def initialize(exec, r, t, p, q, prev_rho):
    # t = r;  p = q = 0;  prev_rho = 1: Bicg's initialize (r2 = r;  p = p2 = 0;  prev_rho = 1)
    bicg_kernels.initialize(exec, r, t, p, q, prev_rho)


def step_1(exec, p, z, rho_t, prev_rho, status):
    """p = z + (rho_t / prev_rho) p in running columns (0 for rho_t / prev_rho where prev_rho is 0)."""
    launch(exec, __file__, "step_1", p.dtype, p.shape, p, z, rho_t, prev_rho, status)


def step_2(exec, x, r, t, p, q, beta, rho, prev_rho, status):
    launch(exec, __file__, "step_2", x.dtype, x.shape, x, r, t, p, q, beta, rho, prev_rho, status)
