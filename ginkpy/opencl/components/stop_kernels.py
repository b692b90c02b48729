"""OpenCL kernels of the device side of the stopping check (sources in stop_kernels.cl)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import consumer_buffers, launch, pow2_at_most, stop_args


def _group(exec) -> int:
    return min(256, pow2_at_most(exec.info.max_work_group_size))


def check(exec, partials, stop):
    """The stopping check on the residual norms sqrt(sum of the partial sums of ||r||^2): one
    work-group sums the partials and checks every column."""
    k = stop.k
    wg = _group(exec)
    exec.kernel(__file__, partials.dtype, "check")(
        exec.queue, (wg,), (wg,), np.int32(k), np.int32(partials.shape[0]), partials.values.data,
        *stop_args(stop), *consumer_buffers(partials.dtype, k, wg))


def stop_running(exec, stop, reason):
    """status = reason in the columns that still run."""
    wg = _group(exec)
    exec.kernel(__file__, stop.history.dtype, "stop_running")(
        exec.queue, (wg,), (wg,), np.int32(stop.k), stop.status.data, np.int32(reason))


def keep_best(exec, x, x_best, best, stop):
    """x_best = x in the running columns whose last recorded residual norm is at most best
    (1 x k, real), and best = that norm: the best iterate so far, kept at sampled iterations."""
    launch(exec, __file__, "keep_best", x.dtype, x.shape, x, x_best, best, *stop_args(stop))
