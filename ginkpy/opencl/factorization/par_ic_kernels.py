"""OpenCL kernels of ParIC's sweeps (sources in par_ic_kernels.cl)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import check_int32, launch_1d


def sweep_diagonal(exec, a, l, l_rows, shift):
    # l_ii = sqrt((1 + shift) a_ii - sum_{k<i} l_ik^2), one work-item per row
    n = l.shape[0]
    launch_1d(exec, __file__, "sweep_diagonal", l.dtype, n, np.int32(n), real_dtype(l.dtype).type(shift),
              a.row_ptrs.data, a.values.data,
              l.row_ptrs.data, l.col_idxs.data, l.values.data)


def sweep_off_diagonal(exec, a, l, l_rows, l_out):
    # l_ij = (a_ij - sum_{k<j} l_ik l_jk) / l_jj, one work-item per entry
    check_int32(l.nnz, "a factor")
    # ParILU's sweep_l with SYMMETRIC: L's own rows in place of U's
    launch_1d(exec, __file__, "sweep_l", l.dtype, l.nnz, np.int32(l.nnz), a.row_ptrs.data, a.values.data,
              l.row_ptrs.data, l.col_idxs.data, l.values.data, l_rows.data, l.row_ptrs.data, l.col_idxs.data,
              l.values.data, l_out.values.data)
