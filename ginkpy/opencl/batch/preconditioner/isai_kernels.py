"""OpenCL kernels of the batched ISAI (sources in isai_kernels.cl): the generation, one work-item
per row of an item's M_L or M_U, and the apply as two products, one work-item per entry of x.
The batched solvers apply M inside their own kernel (components/batch_solver.cl)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import check_int32, launch_1d

_NONE = np.iinfo(np.int32).max


def generate(exec, ilu, isai) -> int:
    N, n = ilu.num_batch_items, ilu.common_size[0]
    m_nnz = int(isai.values.shape[1])
    check_int32(N * 2 * n, "a batch ISAI's rows")
    check_int32(N * m_nnz, "a batch ISAI")
    bad = exec.from_host(np.array([_NONE], np.int32))
    launch_1d(exec, __file__, "generate", ilu.dtype, N * 2 * n, np.int32(N * 2 * n), np.int32(n), np.int32(ilu.nnz),
              np.int32(m_nnz), np.int32(isai.lower_nnz), ilu.row_ptrs.data, ilu.col_idxs.data, ilu.diag.data,
              ilu.values.data, isai.row_ptrs.data, isai.col_idxs.data, isai.values.data, bad.data)
    row = int(exec.to_host(bad)[0])
    return -1 if row == _NONE else row


def apply(exec, isai, b, x):
    N, n, k = isai.num_batch_items, isai.common_size[0], b.common_size[1]
    size, m_nnz = N * n * k, int(isai.values.shape[1])
    check_int32(size, "a MultiVector")
    tmp = exec.alloc((max(size, 1),), b.dtype)
    # tmp = M_L b;  x = M_U tmp
    for ptr_offset, offset, v, y in ((0, 0, b.values.data, tmp.data), (n + 1, isai.lower_nnz, tmp.data, x.values.data)):
        launch_1d(exec, __file__, "multiply", b.dtype, size, np.int32(size), np.int32(n), np.int32(k), np.int32(m_nnz),
                  np.int32(ptr_offset), np.int32(offset), isai.row_ptrs.data, isai.col_idxs.data, isai.values.data,
                  v, y)
