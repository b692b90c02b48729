"""OpenCL kernels of Jacobi (sources in jacobi_kernels.cl). Scalar Jacobi is generated on the
device (the inverse diagonal); block-Jacobi's inverse blocks are made on the host (see
core/preconditioner/jacobi.py). The apply kernels run one work-item per entry of x."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import launch, launch_1d, scalar_arg


def _blocks(jacobi):
    return np.int32(jacobi.block_stride), jacobi.block_ptrs, jacobi.row_blocks, jacobi.blocks


def simple_scalar_apply(exec, jacobi, b, x):
    launch(exec, __file__, "simple_scalar_apply", x.dtype, x.shape, jacobi.blocks, b, x)


def scalar_apply(exec, alpha, jacobi, b, beta, x):
    launch(exec, __file__, "scalar_apply", x.dtype, x.shape, *scalar_arg(alpha), jacobi.blocks, b,
           *scalar_arg(beta), x)


def simple_apply(exec, jacobi, b, x):
    launch(exec, __file__, "simple_apply", x.dtype, x.shape, *_blocks(jacobi), b, x)


def apply(exec, alpha, jacobi, b, beta, x):
    launch(exec, __file__, "apply", x.dtype, x.shape, *scalar_arg(alpha), *_blocks(jacobi), b,
           *scalar_arg(beta), x)


def invert_diagonal(exec, a, inverse):
    """inverse = 1 / diag(A), one work-item per row; an entry that is 0, missing or too small to
    invert becomes 1. Returns how many did (a count per row, summed on the host)."""
    n = min(a.shape)
    if n == 0:
        return 0
    bad = exec.alloc((n,), np.uint8)
    launch_1d(exec, __file__, "invert_diagonal", a.dtype, n, np.int32(n), a.row_ptrs.data, a.col_idxs.data,
              a.values.data, inverse.values.data, bad.data)
    return int(exec.to_host(bad).sum(dtype=np.int64))
