"""OpenCL kernels of the batch Jacobi (sources in jacobi_kernels.cl); the blocks of every item
are inverted in one launch of the single-system Jacobi's kernel (opencl/components/diagonal_blocks.cl)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.components.diagonal_blocks import invert_blocks
from ginkpy.opencl.launch import check_int32, launch_1d


def generate(exec, a, block_ptrs, stride):
    """The inverse diagonal blocks of every item of the batch Csr ``a`` (N, num_blocks, stride,
    stride), the block of each row, each block's |D|_1 |D^-1|_1 (N, num_blocks) and [first
    singular block (item i's block k counted as i num_blocks + k), how many]."""
    return invert_blocks(exec, a.row_ptrs, a.col_idxs, a.values, a.num_batch_items, a.common_size[0], a.nnz,
                         block_ptrs, int(block_ptrs.shape[0]) - 1, stride, a.dtype)


def apply(exec, preconditioner, b, x):
    """x_i = D_i^-1 b_i: one work-item per entry of x (item, row, column)."""
    N, n, k = preconditioner.num_batch_items, preconditioner.common_size[0], b.common_size[1]
    stride = preconditioner.block_stride
    check_int32(N * preconditioner.num_blocks * stride * stride, "a batch Jacobi")
    check_int32(N * n * k, "a MultiVector")
    launch_1d(exec, __file__, "apply", b.dtype, N * n * k, np.int32(N * n * k), np.int32(n), np.int32(k),
              np.int32(preconditioner.num_blocks), np.int32(stride), preconditioner.block_ptrs.data,
              preconditioner.row_blocks.data, preconditioner.blocks.data, b.values.data, x.values.data)
