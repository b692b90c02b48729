"""OpenCL kernels of Bicgstab (sources in bicgstab_kernels.cl): each step one launch; the
partial sums a step needs are summed by each of its work-groups (``sum_partials``)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import (check_int32, consumer_buffers, launch, reduction_shape, resize, rows_at_once,
                                  stop_args)


def _kernel(exec, dtype, name, **defines):
    return exec.kernel(__file__, dtype, name, ROWS_AT_ONCE=rows_at_once(exec.info), **defines)


def _consumer(exec, name, v, *args, sums: int):
    """A kernel in the reduction layout that sums ``sums`` reductions' partial sums."""
    n, k = v.shape
    check_int32(v.values.size)
    shape = reduction_shape(exec.info, n, k)
    _kernel(exec, v.dtype, name)(exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k),
                                 *shape.args(), *args, *consumer_buffers(v.dtype, sums * k, shape.local_size[0]))


def initialize(exec, r, r_hat, p, v, prev_rho, alpha, omega):
    """r_hat = r;  p = v = 0;  prev_rho = alpha = omega = 1."""
    launch(exec, __file__, "initialize", r.dtype, r.shape, r, r_hat, p, v, prev_rho, alpha, omega,
           work_items=max(r.values.size, r.shape[1]))


def _reduction(exec, name, r, rho_new, rr, *args, defines=None, sums=0):
    """A kernel in the reduction layout writing the partial sums of r_hat . r and r . r."""
    n, k = r.shape
    check_int32(r.values.size)
    shape = reduction_shape(exec.info, n, k, 2 * k)
    for partials in (rho_new, rr):
        resize(exec, partials, (shape.groups, k))
    _kernel(exec, r.dtype, name, **(defines or {}))(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(),
        *args, rho_new.values.data, rr.values.data, *consumer_buffers(r.dtype, sums * k, shape.local_size[0]))


def prepare(exec, r, r_hat, rho_new, rr):
    """Partial sums of r_hat . r and r . r."""
    _reduction(exec, "prepare", r, rho_new, rr, r.values.data, r_hat.values.data)


def step_1(exec, r, r_hat, p, v, rho_new, rr, rho, prev_rho, alpha, omega, rhat_sq, restart_tol, restarted, stop):
    """The stopping check on ||r||; then per running column either a restart (|r_hat . r| <=
    restart_tol ||r_hat|| ||r||: r_hat = p = r, rho = r . r) or p = r + (rho / prev_rho)
    (alpha / omega) (p - omega v) with rho = r_hat . r (omega == 0: breakdown)."""
    _consumer(exec, "step_1", r, r.values.data, r_hat.values.data, p.values.data, v.values.data,
                 rho_new.values.data, np.int32(rho_new.shape[0]), rr.values.data, np.int32(rr.shape[0]),
                 rho.values.data, prev_rho.values.data, alpha.values.data, omega.values.data,
                 rhat_sq.values.data, real_dtype(r.dtype).type(restart_tol), restarted.data, *stop_args(stop), sums=2)


def step_2(exec, r, s, v, rv, rho, prev_rho, alpha, rhat_sq, restarted, status):
    """alpha = rho / (r_hat . v) (0: breakdown); s = r - alpha v; prev_rho = rho;
    ||r_hat||^2 = rho where restarted."""
    _consumer(exec, "step_2", r, r.values.data, s.values.data, v.values.data, rv.values.data,
                 np.int32(rv.shape[0]), rho.values.data, prev_rho.values.data, alpha.values.data,
                 rhat_sq.values.data, restarted.data, status.data, sums=1)


def step_3(exec, x, r, r_hat, s, t, y, z, diag, st, alpha, omega, rho_new, rr, status):
    """omega = (s . t) / (t . t) (0 where t . t == 0); x += alpha y + omega z (scaled by diag
    when given); r = s - omega t in running columns; the partial sums of r_hat . r and r . r of
    every column in the same pass."""
    _reduction(exec, "step_3", r, rho_new, rr, x.values.data, r.values.data, r_hat.values.data,
               s.values.data, t.values.data, y.values.data, z.values.data, (diag or r).values.data,
               st.values.data, np.int32(st.shape[0]), alpha.values.data, omega.values.data, status.data,
               defines={"DIAGONAL": int(diag is not None)}, sums=2)
