"""OpenCL kernels of Bicgstab (sources in bicgstab_kernels.cl): one work-item per vector entry."""
from __future__ import annotations

import numpy as np
import pyopencl.array as cla

from ginkpy.core.matrix.dense import Dense
from ginkpy.opencl.matrix.dense_kernels import launch_1d


def kernel_arg(arg):
    """A kernel argument: the device buffer of a Dense or of a device array (the stop status);
    numbers (np.int32, the value type) as they are."""
    if isinstance(arg, Dense):
        return arg.values.data
    return arg.data if isinstance(arg, cla.Array) else arg


def launch(exec, module_file, name, dtype, shape, *args):
    """Kernel ``name`` of ``module_file``'s program with one work-item per entry of an n x k
    ``shape``, given (n k, k, ``args``)."""
    size = shape[0] * shape[1]
    launch_1d(exec, module_file, name, dtype, size, np.int32(size), np.int32(shape[1]),
              *(kernel_arg(a) for a in args))


def initialize(exec, r, r_hat, p, v, s, prev_rho, alpha, omega):
    launch(exec, __file__, "initialize", r.dtype, r.shape, r, r_hat, p, v, s, prev_rho, alpha, omega)


def step_1(exec, r, p, v, rho, prev_rho, alpha, omega, status):
    launch(exec, __file__, "step_1", r.dtype, r.shape, r, p, v, rho, prev_rho, alpha, omega, status)


def step_2(exec, r, s, v, rho, prev_rho, alpha, rv, status):
    launch(exec, __file__, "step_2", r.dtype, r.shape, r, s, v, rho, prev_rho, alpha, rv, status)


def step_3(exec, x, r, s, t, y, z, alpha, omega, ts, tt, status):
    launch(exec, __file__, "step_3", x.dtype, x.shape, x, r, s, t, y, z, alpha, omega, ts, tt, status)
