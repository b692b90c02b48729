"""OpenCL kernels of Bicgstab (sources in bicgstab_kernels.cl): the steps run one work-item per
vector entry; ``compute_dots`` is a column reduction shaped as Dense's dot products (seed 000)
that sums a . b and b . b in one pass over a and b, plus a second pass when a column needs
several work-groups."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import check_int32, launch, local_buffer
from ginkpy.opencl.matrix.dense_kernels import fill, partials_group_size, reduction_shape


def initialize(exec, r, r_hat, p, v, s, prev_rho, alpha, omega):
    launch(exec, __file__, "initialize", r.dtype, r.shape, r, r_hat, p, v, s, prev_rho, alpha, omega)


def compute_dots(exec, a, b, ab, bb):
    """ab = a . b and bb = b . b per column (1 x k each) for n x k a and b."""
    n, k = a.shape
    if k == 0:
        return
    if n == 0:
        fill(exec, ab, 0.0)
        fill(exec, bb, 0.0)
        return
    check_int32(a.values.size)
    dtype = a.dtype
    groups, width, lanes, rows = reduction_shape(exec.info, n, k)
    ab_out, bb_out = (ab.values, bb.values) if groups == 1 else (exec.alloc((groups, k), dtype) for _ in range(2))
    exec.kernel(__file__, dtype, "dots")(
        exec.queue, (-(-k // width) * width * lanes, groups), (width * lanes, 1), np.int32(n), np.int32(k),
        np.int32(width), np.int32(rows), a.values.data, b.values.data, ab_out.data, bb_out.data,
        local_buffer(2 * width * lanes, dtype))
    if groups > 1:
        size = partials_group_size(exec.info, groups)
        exec.kernel(__file__, dtype, "sum_dots")(
            exec.queue, (2 * k * size,), (size,), np.int32(groups), np.int32(k), ab_out.data, bb_out.data,
            ab.values.data, bb.values.data, local_buffer(size, dtype))


def step_1(exec, r, r_hat, p, v, rho, rr, rhat_sq, prev_rho, alpha, omega, restart_tol, restarted, status):
    launch(exec, __file__, "step_1", r.dtype, r.shape, r, r_hat, p, v, rho, rr, rhat_sq, prev_rho, alpha,
           omega, r.dtype.type(restart_tol), restarted, status)


def step_2(exec, r, s, v, rho, rr, rhat_sq, prev_rho, alpha, rv, restarted, status):
    launch(exec, __file__, "step_2", r.dtype, r.shape, r, s, v, rho, rr, rhat_sq, prev_rho, alpha, rv,
           restarted, status)


def step_3(exec, x, r, s, t, y, z, alpha, omega, ts, tt, status):
    launch(exec, __file__, "step_3", x.dtype, x.shape, x, r, s, t, y, z, alpha, omega, ts, tt, status)
