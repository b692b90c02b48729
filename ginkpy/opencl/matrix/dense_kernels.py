"""OpenCL kernels of Dense (sources in dense_kernels.cl)."""
from __future__ import annotations

import numpy as np

WORK_GROUP = 256


def _launch(exec, name, dtype, size, *args):
    if size == 0:
        return
    kernel = getattr(exec.program(__file__, dtype), name)
    global_size = (size + WORK_GROUP - 1) // WORK_GROUP * WORK_GROUP
    kernel(exec.queue, (global_size,), (WORK_GROUP,), np.int32(size), *args)


def _scalar(alpha):
    """Buffer and column stride of a 1 x 1 or 1 x k scalar."""
    return alpha.values.data, np.int32(0 if alpha.shape[1] == 1 else 1)


def fill(exec, x, value):
    _launch(exec, "fill", x.dtype, x.values.size, x.values.data, x.dtype.type(value))


def copy(exec, src, dst):
    if src.values.size:
        import pyopencl as cl
        cl.enqueue_copy(exec.queue, dst.values.data, src.values.data)


def scale(exec, alpha, x):
    _launch(exec, "scale", x.dtype, x.values.size, np.int32(x.shape[1]), *_scalar(alpha), x.values.data)


def add_scaled(exec, alpha, b, x):
    _launch(exec, "add_scaled", x.dtype, x.values.size, np.int32(x.shape[1]), *_scalar(alpha),
            b.values.data, x.values.data)


def sub_scaled(exec, alpha, b, x):
    _launch(exec, "sub_scaled", x.dtype, x.values.size, np.int32(x.shape[1]), *_scalar(alpha),
            b.values.data, x.values.data)
