"""OpenCL kernels of Tfqmr (sources in tfqmr_kernels.cl): one work-item per vector entry;
step_3 updates the 1 x k scalars, one work-item per column."""
from __future__ import annotations

from ginkpy.opencl.launch import launch


def initialize(exec, r, u, w, r_tld, v, d, rr, tau, rho, theta, eta, m, phase, columns):
    launch(exec, __file__, "initialize", r.dtype, r.shape, r, u, w, r_tld, v, d, rr, tau, rho, theta, eta, m,
           phase, columns, work_items=max(r.values.size, r.shape[1]))


def step_1(exec, u_hat, v, phase, status):
    launch(exec, __file__, "step_1", v.dtype, v.shape, u_hat, v, phase, status)


def step_2(exec, u, v, w, d, u_hat, rv, alpha, rho, theta, eta, phase, status):
    launch(exec, __file__, "step_2", u.dtype, u.shape, u, v, w, d, u_hat, rv, alpha, rho, theta, eta, phase,
           status, work_items=max(u.values.size, u.shape[1]))


def step_3(exec, ww, wr, alpha, rho, theta, eta, tau, beta, m, phase, est, status):
    launch(exec, __file__, "step_3", ww.dtype, ww.shape, ww, wr, alpha, rho, theta, eta, tau, beta, m, phase,
           est, status)


def step_4(exec, z, x, u, w, v, u_hat, eta, beta, phase, status):
    launch(exec, __file__, "step_4", x.dtype, x.shape, z, x, u, w, v, u_hat, eta, beta, phase, status)
