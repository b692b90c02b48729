"""OpenCL kernels of Jacobi (sources in jacobi_kernels.cl). Generation runs on the host
(see core/preconditioner/jacobi.py); these apply the inverse blocks on the device, one
work-item per entry of x."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import launch, scalar_arg


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
