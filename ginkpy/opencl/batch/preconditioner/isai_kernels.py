"""OpenCL kernels of the batched ISAI (sources in isai_kernels.cl): the gather of the items'
factors for the generation, and the apply as two products, one work-item per entry of x. The
batched solvers apply M inside their own kernel (components/batch_solver.cl)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import check_int32, launch_1d


def gather_factors(exec, values, positions, out):
    N, m = out.shape
    check_int32(N * m, "a batch ISAI's factors")
    launch_1d(exec, __file__, "gather_factors", out.dtype, N * m, np.int32(N * m), np.int32(m),
              np.int32(values.shape[1]), values.data, positions.data, out.data)


def apply(exec, isai, b, x):
    N, n, k = isai.num_batch_items, isai.common_size[0], b.common_size[1]
    size, stride = N * n * k, isai.values.shape[1]
    check_int32(size, "a MultiVector")
    check_int32(N * stride, "a batch ISAI")
    tmp = exec.alloc((max(size, 1),), b.dtype)
    for offset, ptrs, cols, v, y in ((0, isai.lower_row_ptrs, isai.lower_col_idxs, b.values.data, tmp.data),
                                     (isai.lower_nnz, isai.upper_row_ptrs, isai.upper_col_idxs, tmp.data,
                                      x.values.data)):
        # tmp = M_L b;  x = M_U tmp
        launch_1d(exec, __file__, "multiply", b.dtype, size, np.int32(size), np.int32(n), np.int32(k),
                  np.int32(stride), np.int32(offset), ptrs.data, cols.data, isai.values.data, v, y)
