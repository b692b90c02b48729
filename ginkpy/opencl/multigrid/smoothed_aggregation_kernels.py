"""OpenCL kernels of smoothed aggregation (sources in smoothed_aggregation_kernels.cl): the
smoother S = I - (w / rho) D^-1 A on A's pattern, with Gershgorin's bound rho found on the
device (partial maxima, their maximum, the values: three launches, no host read). The products
P = S P_t and R A P are ``matrix.spgemm``'s.
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import WORK_GROUP, ceil_div

GPU_PARTS = 4 * WORK_GROUP  # work-items of the partial maxima on a GPU (every GPU_PARTS-th row each)
CPU_MIN_ROWS = 512          # rows a CPU work-item takes at least


def smoother_values(exec, a, relax, values, flags):
    n = a.shape[0]
    real = real_dtype(a.dtype)
    if exec.info.is_cpu:
        parts = max(1, min(4 * exec.info.compute_units, ceil_div(n, CPU_MIN_ROWS)))
        local = 1
    else:
        parts, local = GPU_PARTS, WORK_GROUP
    partials, rho = exec.alloc((parts,), real), exec.alloc((1,), real)
    exec.counters["launches"] += 1
    with exec.lock:
        cl.enqueue_fill_buffer(exec.queue, flags.data, np.int32(0), 0, 4)
    if n == 0:
        return
    args = (a.row_ptrs.data, a.col_idxs.data, a.values.data)
    exec.kernel(__file__, a.dtype, "gershgorin_partials")(exec.queue, (parts,), (local,), np.int32(n),
                                                          np.int32(exec.info.is_cpu), *args, partials.data,
                                                          flags.data)
    exec.kernel(__file__, a.dtype, "finish_bound")(exec.queue, (1,), (1,), np.int32(parts), partials.data, rho.data)
    if exec.info.is_cpu:
        chunk = max(CPU_MIN_ROWS, ceil_div(n, 16 * exec.info.compute_units))
        global_size, local = ceil_div(n, chunk), 1
    else:
        chunk, global_size = 1, ceil_div(n, WORK_GROUP) * WORK_GROUP
    exec.kernel(__file__, a.dtype, "smoother_values")(exec.queue, (global_size,), (local,), np.int32(n),
                                                      np.int32(chunk), real.type(relax), rho.data, *args, values.data)
