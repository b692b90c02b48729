"""OpenCL kernels of Cg (sources in cg_kernels.cl): each step is one fused launch (step_2 with
the residual norm folded in, plus a second pass over its partial sums when it needs several
work-groups), and the solver scalars (1 x k) stay on the device."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import check_int32, launch, local_buffer
from ginkpy.opencl.matrix.dense_kernels import blocked_shape, partials_group_size, reduction_shape, sum_partials


def initialize(exec, p, q, rho, prev_rho, status):
    """p = q = 0, rho = 0, prev_rho = 1."""
    launch(exec, __file__, "initialize", p.dtype, p.shape, p, q, rho, prev_rho,
           work_items=max(p.values.size, p.shape[1]))


def step_1(exec, p, z, rho, prev_rho, status):
    """p = z + (rho / prev_rho) p in running columns (rho / prev_rho = 0 where prev_rho is 0)."""
    launch(exec, __file__, "step_1", p.dtype, p.shape, p, z, rho, prev_rho, status)


def step_2(exec, x, r, p, q, beta, rho, prev_rho, r_norm, status):
    """x += (rho / beta) p; r -= (rho / beta) q; prev_rho = rho in running columns, and r_norm
    = ||r|| of every column in the same pass (the stopping check reads it). A column with
    beta <= 0 or rho == 0 gets status BREAKDOWN instead (also when n == 0). Launched as the
    column reductions are (dense_kernels): contiguous stretches on a CPU, lanes on a GPU."""
    n, k = x.shape
    if k == 0:
        return
    check_int32(x.values.size)
    vectors = [v.values.data for v in (x, r, p, q, beta, rho, prev_rho)]
    if exec.info.is_cpu:
        groups, rows = blocked_shape(exec.info, n)
        partial = r_norm.values if groups == 1 else exec.alloc((groups, k), x.dtype)
        exec.kernel(__file__, x.dtype, "step_2_blocked")(
            exec.queue, (groups, k), (1, 1), np.int32(n), np.int32(k), np.int32(rows), *vectors,
            status.data, partial.data, np.int32(groups == 1))
    else:
        groups, width, lanes, rows = reduction_shape(exec.info, n, k)
        partial = r_norm.values if groups == 1 else exec.alloc((groups, k), x.dtype)
        exec.kernel(__file__, x.dtype, "step_2")(
            exec.queue, (-(-k // width) * width * lanes, groups), (width * lanes, 1), np.int32(n),
            np.int32(k), np.int32(width), np.int32(rows), *vectors, status.data, partial.data,
            np.int32(groups == 1), local_buffer(width * lanes, x.dtype))
    if groups > 1:
        sum_partials(exec, partial, r_norm.values, True, partials_group_size(exec.info, groups))
