"""OpenCL kernels of Bicg (sources in bicg_kernels.cl): one work-item per vector entry."""
from __future__ import annotations

from ginkpy.opencl.launch import launch


def initialize(exec, r, r2, p, p2, prev_rho):
    launch(exec, __file__, "initialize", r.dtype, r.shape, r, r2, p, p2, prev_rho)


def step_1(exec, p, z, p2, z2, rho, prev_rho, status):
    launch(exec, __file__, "step_1", p.dtype, p.shape, p, z, p2, z2, rho, prev_rho, status)


def step_2(exec, x, r, r2, p, q, q2, beta, rho, prev_rho, status):
    launch(exec, __file__, "step_2", x.dtype, x.shape, x, r, r2, p, q, q2, beta, rho, prev_rho, status)
