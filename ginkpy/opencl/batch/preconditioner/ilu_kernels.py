"""OpenCL kernels of the batched ILU(0) (sources in ilu_kernels.cl): the numeric factorization,
one work-item per item, and the apply, one work-item per (item, column). The batched solvers
apply the factors inside their own kernel (components/batch_solver.cl)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import check_int32, launch_1d


def factorize(exec, ilu):
    N, n = ilu.num_batch_items, ilu.common_size[0]
    check_int32(N * ilu.nnz, "a batch ILU")
    bad_rows = exec.alloc((max(N, 1),), np.int32)
    launch_1d(exec, __file__, "factorize", ilu.dtype, N, np.int32(N), np.int32(n), np.int32(ilu.nnz),
              ilu.row_ptrs.data, ilu.col_idxs.data, ilu.diag.data, ilu.values.data, bad_rows.data)
    return exec.to_host(bad_rows)[:N]


def apply(exec, ilu, b, x):
    N, n, k = ilu.num_batch_items, ilu.common_size[0], b.common_size[1]
    check_int32(N * n * k, "a MultiVector")
    launch_1d(exec, __file__, "apply", b.dtype, N * k, np.int32(N * k), np.int32(n), np.int32(k), np.int32(ilu.nnz),
              ilu.row_ptrs.data, ilu.col_idxs.data, ilu.diag.data, ilu.values.data, b.values.data, x.values.data)
