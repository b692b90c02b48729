"""OpenCL kernels of the relaxation steps (sources in relaxation_kernels.cl), one fused launch
per step: the row of A, the update and the new iterate together."""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import ceil_div, check_int32, launch_1d, local_buffer, pow2_at_most


def invert_diagonal(exec, a, inv_diag) -> int:
    n = a.shape[0]
    first_zero = exec.from_host(np.array([n], dtype=np.int32))
    launch_1d(exec, __file__, "invert_diagonal", a.dtype, n, np.int32(n), a.row_ptrs.data, a.col_idxs.data,
              a.values.data, inv_diag.values.data, first_zero.data)
    row = int(exec.to_host(first_zero)[0])
    return -1 if row == n else row


def _d(d, x):
    """The update's buffer and whether it is kept (x's buffer stands in where it is not)."""
    return (x.values.data, np.int32(0)) if d is None else (d.values.data, np.int32(1))


def relax_first(exec, beta, inv_diag, b, x, d):
    size, k = x.values.size, x.shape[1]
    check_int32(size)
    launch_1d(exec, __file__, "relax_first", x.dtype, size, np.int32(size), np.int32(k), real_dtype(x.dtype).type(beta),
              inv_diag.values.data, b.values.data, x.values.data, *_d(d, x))


def residual(exec, a, b, x, r):
    size, k = x.values.size, x.shape[1]
    check_int32(size)
    launch_1d(exec, __file__, "residual", x.dtype, size, np.int32(size), np.int32(k), a.row_ptrs.data,
              a.col_idxs.data, a.values.data, b.values.data, x.values.data, r.values.data)


def relax(exec, alpha, beta, a, inv_diag, b, x, d, x_new):
    size, k = x.values.size, x.shape[1]
    check_int32(size)
    launch_1d(exec, __file__, "relax", x.dtype, size, np.int32(size), np.int32(k), real_dtype(x.dtype).type(alpha),
              real_dtype(x.dtype).type(beta), a.row_ptrs.data, a.col_idxs.data, a.values.data, inv_diag.values.data,
              b.values.data, x.values.data, *_d(d, x), x_new.values.data)


def add_running(exec, update, x, status):
    size, k = x.values.size, x.shape[1]
    check_int32(size)
    launch_1d(exec, __file__, "add_running", x.dtype, size, np.int32(size), np.int32(k), update.values.data,
              x.values.data, status.data)


BOUND_CHUNKS = 1024  # work-items of gershgorin_bound, each taking a contiguous chunk of rows


def gershgorin_bound(exec, a, inv_diag) -> float:
    n = a.shape[0]
    if n == 0:
        return 0.0
    chunk = ceil_div(n, BOUND_CHUNKS)
    items = ceil_div(n, chunk)
    partial = exec.alloc((items,), real_dtype(a.dtype))
    launch_1d(exec, __file__, "gershgorin_bound", a.dtype, items, np.int32(n), np.int32(chunk), a.row_ptrs.data,
              a.values.data, inv_diag.values.data, partial.data)
    return float(exec.to_host(partial).max())


SETUP_GROUP = 256     # work-items of a group of jacobi_setup on a GPU
SETUP_GROUPS = 1024   # its work-groups at most (each row taken by one work-item)
CPU_SETUP_ITEMS = 16  # its work-items on a CPU, each a contiguous stretch of rows


def jacobi_setup(exec, a, inv_diag):
    n = a.shape[0]
    if exec.info.is_cpu:
        wg, groups = 1, CPU_SETUP_ITEMS
        chunk = ceil_div(n, groups)
    else:
        wg = min(SETUP_GROUP, pow2_at_most(exec.info.max_work_group_size))
        groups, chunk = max(1, min(SETUP_GROUPS, ceil_div(n, wg))), 1
    first_zero = exec.alloc((1,), np.int32)  # n, written on the device (no blocking write)
    with exec.lock:
        cl.enqueue_fill_buffer(exec.queue, first_zero.data, np.int32(n), 0, 4)
    partial = exec.alloc((groups,), real_dtype(a.dtype))
    exec.kernel(__file__, a.dtype, "jacobi_setup")(
        exec.queue, (groups * wg,), (wg,), np.int32(n), np.int32(max(chunk, 1)), a.row_ptrs.data, a.col_idxs.data,
        a.values.data, inv_diag.values.data, first_zero.data, partial.data, local_buffer(wg, real_dtype(a.dtype)))
    return first_zero, partial
