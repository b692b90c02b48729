"""OpenCL kernels of Ell (sources in ell_kernels.cl): one work-item per row and column of b."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import launch_rows, scalar_arg


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
