"""OpenCL kernels of Sellp (sources in sellp_kernels.cl): one work-item per row and column of b."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import scalar_arg
from ginkpy.opencl.launch import launch_rows


def _args(a, b, x):
    return (np.int32(a.slice_size), a.slice_sets.data, a.slice_lengths.data, a.col_idxs.data, a.values.data,
            b.values.data, x.values.data)


def spmv(exec, a, b, x):
    # x = A b
    launch_rows(exec, exec.kernel(__file__, a.dtype, "sellp_spmv"), a.shape[0], x.shape[1], *_args(a, b, x))


def advanced_spmv(exec, alpha, a, b, beta, x):
    # x = alpha A b + beta x
    launch_rows(exec, exec.kernel(__file__, a.dtype, "sellp_advanced_spmv"), a.shape[0], x.shape[1],
                *_args(a, b, x), *scalar_arg(alpha), *scalar_arg(beta))
