"""OpenCL kernels of Sellp: Ell's SpMV kernels on the row's slice (ell_kernels.cl, compiled with
SLICED): one work-item per row and column of b."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import launch_rows, scalar_arg
from ginkpy.opencl.matrix import ell_kernels


def _args(a, b, x):
    # stride: the slice size; width: unused (each slice's comes from slice_lengths)
    return (np.int32(a.slice_size), np.int32(0), a.slice_sets.data, a.slice_lengths.data, a.col_idxs.data,
            a.values.data, b.values.data, x.values.data)


def spmv(exec, a, b, x):
    # x = A b
    launch_rows(exec, exec.kernel(ell_kernels.__file__, a.dtype, "spmv", SLICED=1), a.shape[0], x.shape[1],
                *_args(a, b, x))


def advanced_spmv(exec, alpha, a, b, beta, x):
    # x = alpha A b + beta x
    launch_rows(exec, exec.kernel(ell_kernels.__file__, a.dtype, "advanced_spmv", SLICED=1), a.shape[0],
                x.shape[1], *_args(a, b, x), *scalar_arg(alpha), *scalar_arg(beta))
