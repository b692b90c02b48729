"""OpenCL kernels of Jacobi (sources in jacobi_kernels.cl). Generation runs on the host
(see core/preconditioner/jacobi.py); these apply the inverse blocks on the device."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import launch_1d, scalar_arg


def _launch(exec, name, x, *args):
    """Run kernel ``name`` with one work-item per entry of x (n x k), given size and k first."""
    size = x.values.size
    launch_1d(exec, __file__, name, x.dtype, size, np.int32(size), np.int32(x.shape[1]), *args)


def _blocks(jacobi):
    return (np.int32(jacobi.block_stride), jacobi.block_ptrs.data, jacobi.row_blocks.data,
            jacobi.blocks.data)


def simple_scalar_apply(exec, jacobi, b, x):
    _launch(exec, "simple_scalar_apply", x, jacobi.blocks.data, b.values.data, x.values.data)


def scalar_apply(exec, alpha, jacobi, b, beta, x):
    _launch(exec, "scalar_apply", x, *scalar_arg(alpha), jacobi.blocks.data, b.values.data,
            *scalar_arg(beta), x.values.data)


def simple_apply(exec, jacobi, b, x):
    _launch(exec, "simple_apply", x, *_blocks(jacobi), b.values.data, x.values.data)


def apply(exec, alpha, jacobi, b, beta, x):
    _launch(exec, "apply", x, *scalar_arg(alpha), *_blocks(jacobi), b.values.data, *scalar_arg(beta),
            x.values.data)
