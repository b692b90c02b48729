"""OpenCL kernels of smoothed aggregation (sources in smoothed_aggregation_kernels.cl): the
smoother S = I - (w / rho) D^-1 A on A's pattern, with Gershgorin's bound rho found on the
device (partial maxima, their maximum and whether a diagonal entry is missing, the values:
three launches, no host read); P = S P_t
from S's rows and the aggregates (per row: its entries sorted by aggregate and counted, one
prefix sum, one read of the size, the columns, slots and values written; new values: one pass
over the slots). The products A P and R (A P) are ``matrix.spgemm``'s.
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import WORK_GROUP, ceil_div, check_int32, launch_chunks

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
    if n == 0:
        exec.counters["launches"] += 1
        with exec.lock:
            cl.enqueue_fill_buffer(exec.queue, flags.data, np.int32(0), 0, 4)
        return
    partials = exec.alloc((parts + 1,), real)  # (rho at the end)
    args = (a.row_ptrs.data, a.col_idxs.data, a.values.data)
    exec.kernel(__file__, a.dtype, "gershgorin_partials")(exec.queue, (parts,), (local,), np.int32(n),
                                                          np.int32(exec.info.is_cpu), *args, partials.data)
    exec.kernel(__file__, a.dtype, "finish_bound")(exec.queue, (1,), (1,), np.int32(parts), partials.data, flags.data)
    if exec.info.is_cpu:
        chunk = max(CPU_MIN_ROWS, ceil_div(n, 16 * exec.info.compute_units))
        global_size, local = ceil_div(n, chunk), 1
    else:
        chunk, global_size = 1, ceil_div(n, WORK_GROUP) * WORK_GROUP
    exec.kernel(__file__, a.dtype, "smoother_values")(exec.queue, (global_size,), (local,), np.int32(n),
                                                      np.int32(chunk), real.type(relax), partials.data,
                                                      np.int32(parts), *args, values.data)


def prolongation_pattern(exec, smoother, agg):
    # P = S P_t's row pointers: per row of S its entries sorted by (aggregate, entry) into
    # sorted_entries (aggregates, then entry indices: 2 nnz), the distinct ones counted, prefix sum
    n, nnz = smoother.shape[0], smoother.nnz
    row_ptrs, sorted_entries = exec.alloc((n + 1,), np.int32), exec.alloc((2 * max(nnz, 1),), np.int32)
    launch_chunks(exec, __file__, "count_prolongation", smoother.dtype, n + 1, n + 1, np.int32(max(nnz, 1)),
                  smoother.row_ptrs.data, smoother.col_idxs.data, agg.data, sorted_entries.data, row_ptrs.data,
                  min_chunk=CPU_MIN_ROWS)
    exec.run("components.prefix_sum.prefix_sum", row_ptrs)
    return row_ptrs, sorted_entries


def prolongation_fill(exec, smoother, row_ptrs, sorted_entries, size):
    # P's columns, each entry of S's slot in P, and the values
    n, nnz = smoother.shape[0], smoother.nnz
    check_int32(size, "the prolongation's entries")
    col_idxs, values = exec.alloc((size,), np.int32), exec.alloc((size,), smoother.dtype)
    slots = exec.alloc((max(nnz, 1),), np.int32)
    if size:
        launch_chunks(exec, __file__, "fill_prolongation", smoother.dtype, n, n, np.int32(max(nnz, 1)),
                      smoother.row_ptrs.data, smoother.values.data, sorted_entries.data, row_ptrs.data,
                      col_idxs.data, values.data, slots.data, min_chunk=CPU_MIN_ROWS)
    return col_idxs, values, slots[:nnz]


def prolongation_values(exec, smoother, slots, prolong):
    # P's values again from S's: p at slot t sums the s_ik whose slot is t, in S's entry order
    n = smoother.shape[0]
    if smoother.nnz == 0:
        return
    launch_chunks(exec, __file__, "prolongation_values", smoother.dtype, n, n, smoother.row_ptrs.data,
                  smoother.values.data, slots.data, prolong.row_ptrs.data, prolong.values.data, min_chunk=CPU_MIN_ROWS)
