"""OpenCL kernels of Ell (sources in ell_kernels.cl): one work-item per row and column of b."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import WORK_GROUP, scalar_arg


def launch_rows(exec, kernel, num_rows: int, k: int, *args) -> None:
    """Run ``kernel(num_rows, k, *args)`` on a (rows, k) range of WORK_GROUP x 1 groups; nothing for size 0."""
    if num_rows == 0 or k == 0:
        return
    global_size = (-(-num_rows // WORK_GROUP) * WORK_GROUP, k)
    kernel(exec.queue, global_size, (WORK_GROUP, 1), np.int32(num_rows), np.int32(k), *args)


def _args(a, b, x):
    return (np.int32(a.stride), np.int32(a.num_stored_elements_per_row), a.col_idxs.data, a.values.data,
            b.values.data, x.values.data)


def spmv(exec, a, b, x):
    # x = A b
    launch_rows(exec, exec.kernel(__file__, a.dtype, "spmv"), a.shape[0], x.shape[1], *_args(a, b, x))


def advanced_spmv(exec, alpha, a, b, beta, x):
    # x = alpha A b + beta x
    launch_rows(exec, exec.kernel(__file__, a.dtype, "advanced_spmv"), a.shape[0], x.shape[1], *_args(a, b, x),
                *scalar_arg(alpha), *scalar_arg(beta))
