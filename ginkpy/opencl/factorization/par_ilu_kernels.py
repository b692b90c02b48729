"""OpenCL kernels of ParILU's sweeps (sources in par_ilu_kernels.cl): one work-item per entry
of the factor being recomputed."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import check_int32, launch_1d


def sweep_u(exec, a, l, u, u_rows, floors, u_out):
    # u_ij = a_ij - sum_{k<i} l_ik u_kj; u_ii at least floors[i] in magnitude
    check_int32(u.nnz, "a factor")
    launch_1d(exec, __file__, "sweep_u", u.dtype, u.nnz, np.int32(u.nnz), a.row_ptrs.data, a.values.data,
              l.row_ptrs.data, l.col_idxs.data, l.values.data, u.row_ptrs.data, u.col_idxs.data,
              u.values.data, u_rows.data, floors.values.data, u_out.values.data)


def sweep_l(exec, a, l, l_rows, u, l_out):
    # l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj
    check_int32(l.nnz, "a factor")
    launch_1d(exec, __file__, "sweep_l", l.dtype, l.nnz, np.int32(l.nnz), a.row_ptrs.data, a.values.data,
              l.row_ptrs.data, l.col_idxs.data, l.values.data, l_rows.data, u.row_ptrs.data,
              u.col_idxs.data, u.values.data, l_out.values.data)
