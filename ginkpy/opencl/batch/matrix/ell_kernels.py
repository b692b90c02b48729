"""OpenCL kernels of the batch Ell (sources in ell_kernels.cl)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import check_int32, launch_1d


def spmv(exec, a, b, x):
    """x_i = A_i b_i: one work-item per entry of x (item, row, column)."""
    N, (n, _), k = a.num_batch_items, a.common_size, b.common_size[1]
    width = a.num_stored_elements_per_row
    check_int32(N * n * width, "a batch Ell")
    check_int32(N * n * k, "a MultiVector")
    launch_1d(exec, __file__, "spmv", a.dtype, N * n * k, np.int32(N * n * k), np.int32(n), np.int32(k),
              np.int32(width), np.int32(b.common_size[0]), a.col_idxs.data, a.values.data, b.values.data,
              x.values.data)
