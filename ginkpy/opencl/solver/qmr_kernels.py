"""OpenCL kernels of Qmr (sources in qmr_kernels.cl): one work-item per vector entry;
step_4 updates the 1 x k scalars, one work-item per column."""
from __future__ import annotations

from ginkpy.opencl.launch import launch


def initialize(exec, p, q, d, s, yy, zz, rho, xi, gamma, eta, theta, epsilon, kind, columns):
    launch(exec, __file__, "initialize", p.dtype, p.shape, p, q, d, s, yy, zz, rho, xi, gamma, eta, theta, epsilon,
           kind, columns, work_items=max(p.values.size, p.shape[1]))


def step_1(exec, v_tld, y_in, w_tld, z_in, v, y, w, z, rho, xi, status, kind):
    launch(exec, __file__, "step_1", v.dtype, v.shape, v_tld, y_in, w_tld, z_in, v, y, w, z, rho, xi, status, kind,
           work_items=max(v.values.size, v.shape[1]))


def step_2(exec, y_tld, z_tld, p, q, delta, epsilon, rho, xi, status, kind):
    launch(exec, __file__, "step_2", p.dtype, p.shape, y_tld, z_tld, p, q, delta, epsilon, rho, xi, status, kind,
           work_items=max(p.values.size, p.shape[1]))


def step_3(exec, p_tld, v, w, v_tld, w_tld, eps_new, delta, beta, status, kind):
    launch(exec, __file__, "step_3", v.dtype, v.shape, p_tld, v, w, v_tld, w_tld, eps_new, delta, beta, status, kind,
           work_items=max(v.values.size, v.shape[1]))


def step_4(exec, yy, zz, beta, eps_new, rho, xi, gamma, eta, theta, epsilon, coef, status, kind):
    launch(exec, __file__, "step_4", yy.dtype, yy.shape, yy, zz, beta, eps_new, rho, xi, gamma, eta, theta, epsilon,
           coef, status, kind)


def step_5(exec, p, p_tld, d, s, x, r, coef, eta, status):
    launch(exec, __file__, "step_5", x.dtype, x.shape, p, p_tld, d, s, x, r, coef, eta, status)
