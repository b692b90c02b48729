"""OpenCL kernels of the batch Jacobi (sources in jacobi_kernels.cl); generation runs on the host."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import check_int32, launch_1d


def apply(exec, preconditioner, b, x):
    """x_i = D_i^-1 b_i: one work-item per entry of x (item, row, column)."""
    N, n, k = preconditioner.num_batch_items, preconditioner.common_size[0], b.common_size[1]
    stride = preconditioner.block_stride
    check_int32(N * preconditioner.num_blocks * stride * stride, "a batch Jacobi")
    check_int32(N * n * k, "a MultiVector")
    launch_1d(exec, __file__, "apply", b.dtype, N * n * k, np.int32(N * n * k), np.int32(n), np.int32(k),
              np.int32(preconditioner.num_blocks), np.int32(stride), preconditioner.block_ptrs.data,
              preconditioner.row_blocks.data, preconditioner.blocks.data, b.values.data, x.values.data)
