"""OpenCL kernels of Fcg (sources in fcg_kernels.cl): one work-item per vector entry. step_1
is Cg's."""
from __future__ import annotations

from ginkpy.opencl.launch import launch
from ginkpy.opencl.solver import cg_kernels


def initialize(exec, r, t, p, q, prev_rho):
    launch(exec, __file__, "initialize", r.dtype, r.shape, r, t, p, q, prev_rho)


def step_1(exec, p, z, rho_t, prev_rho, status):
    # p = z + (rho_t / prev_rho) p: Cg's step_1 with rho_t for rho
    cg_kernels.step_1(exec, p, z, rho_t, prev_rho, status)


def step_2(exec, x, r, t, p, q, beta, rho, prev_rho, status):
    launch(exec, __file__, "step_2", x.dtype, x.shape, x, r, t, p, q, beta, rho, prev_rho, status)
