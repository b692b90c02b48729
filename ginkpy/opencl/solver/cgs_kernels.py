"""OpenCL kernels of Cgs (sources in cgs_kernels.cl): one work-item per vector entry.
Cgs starts with Bicg's initialize (r_tld = r;  p = q = 0;  prev_rho = 1; core/solver/bicg.py:
start_with_shadow)."""
from __future__ import annotations

from ginkpy.opencl.launch import launch


def step_1(exec, r, u, p, q, rho, prev_rho, status):
    launch(exec, __file__, "step_1", r.dtype, r.shape, r, u, p, q, rho, prev_rho, status)


def step_2(exec, u, v_hat, q, t, alpha, rho, gamma, status):
    launch(exec, __file__, "step_2", u.dtype, u.shape, u, v_hat, q, t, alpha, rho, gamma, status)


def step_3(exec, u_hat, x, alpha, rho, prev_rho, status):
    launch(exec, __file__, "step_3", x.dtype, x.shape, u_hat, x, alpha, rho, prev_rho, status)
