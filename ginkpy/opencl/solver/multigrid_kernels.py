"""OpenCL kernels of Multigrid's cycle (sources in multigrid_kernels.cl): restriction, and
prolongation alone or fused with the smoothing step after it."""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import check_int32, launch_1d


def restrict(exec, agg_ptrs, agg_rows, r, coarse_r):
    size, k = coarse_r.values.size, coarse_r.shape[1]
    check_int32(max(size, r.values.size))
    launch_1d(exec, __file__, "restrict_aggregates", r.dtype, size, np.int32(size), np.int32(k), agg_ptrs.data, agg_rows.data,
              r.values.data, coarse_r.values.data)


def prolong(exec, agg, coarse_x, x):
    size, k = x.values.size, x.shape[1]
    check_int32(size)
    launch_1d(exec, __file__, "prolong", x.dtype, size, np.int32(size), np.int32(k), agg.data,
              coarse_x.values.data, x.values.data)


def prolong_relax(exec, beta, a, inv_diag, agg, coarse_x, b, x, x_new):
    size, k = x.values.size, x.shape[1]
    check_int32(size)
    launch_1d(exec, __file__, "prolong_relax", x.dtype, size, np.int32(size), np.int32(k), real_dtype(x.dtype).type(beta),
              a.row_ptrs.data, a.col_idxs.data, a.values.data, inv_diag.values.data, agg.data,
              coarse_x.values.data, b.values.data, x.values.data, x_new.values.data)
