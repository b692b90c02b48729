"""OpenCL kernels shared by the fixed-point factorizations (sources in factorization_kernels.cl):
the diagonal added where A lacks it, the patterns of the factors with their initial values, the
pivots' floors and the checks of the pivots.

The patterns come from A's: per row the diagonal's position gives the entry counts of L and
U, a prefix sum their row pointers, then every row copies its entries. The counts and the
first invalid row come back to the host in one read (to allocate the factors, or to refuse A).
``check_factor`` leaves a factor's checks on the device, for the caller to read with others.
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import launch_1d

_NONE = np.iinfo(np.int32).max  # *bad_row when every row is valid


def _read_ints(exec, *sources) -> list[int]:
    """The ints at (array, index) pairs of device int32 arrays, in one wait."""
    values = exec.to_host(*(array[index:index + 1] for array, index in sources))
    return [int(v[0]) for v in (values if len(sources) > 1 else (values,))]


def _patterns(exec, a, positive: bool):
    """Diagonal positions, L and U row pointers, their entry counts and the first invalid row."""
    n = a.shape[0]
    diag = exec.alloc((max(n, 1),), np.int32)
    l_ptrs, u_ptrs = (_filled(exec, n + 1, 0) for _ in range(2))
    bad = _filled(exec, 1, _NONE)
    launch_1d(exec, __file__, "count_l_u", a.dtype, n, np.int32(n), np.int32(positive), a.row_ptrs.data,
              a.col_idxs.data, a.values.data, diag.data, l_ptrs.data, u_ptrs.data, bad.data)
    exec.run("components.prefix_sum.prefix_sum", l_ptrs)
    exec.run("components.prefix_sum.prefix_sum", u_ptrs)
    bad_row, l_nnz, u_nnz = _read_ints(exec, (bad, 0), (l_ptrs, n), (u_ptrs, n))
    return diag, l_ptrs, u_ptrs, l_nnz, u_nnz, -1 if bad_row == _NONE else bad_row


def _filled(exec, size: int, value: int):
    """A device int32 array of ``size`` entries ``value``, filled on the device (no wait)."""
    array = exec.alloc((size,), np.int32)
    exec.counters["launches"] += 1
    with exec.lock:
        cl.enqueue_fill_buffer(exec.queue, array.data, np.int32(value), 0, 4 * size)
    return array


def _allocate(exec, nnz: int, dtype):
    return exec.alloc((nnz,), np.int32), exec.alloc((nnz,), dtype)


def initialize_l_u(exec, a):
    n = a.shape[0]
    diag, l_ptrs, u_ptrs, l_nnz, u_nnz, missing = _patterns(exec, a, positive=False)
    if missing >= 0:
        return (l_ptrs, *_allocate(exec, 0, a.dtype)), (u_ptrs, *_allocate(exec, 0, a.dtype)), missing
    l_cols, l_vals = _allocate(exec, l_nnz, a.dtype)
    u_cols, u_vals = _allocate(exec, u_nnz, a.dtype)
    launch_1d(exec, __file__, "initialize_l_u", a.dtype, n, np.int32(n), a.row_ptrs.data, a.col_idxs.data,
              a.values.data, diag.data, l_ptrs.data, l_cols.data, l_vals.data, u_ptrs.data, u_cols.data,
              u_vals.data)
    return (l_ptrs, l_cols, l_vals), (u_ptrs, u_cols, u_vals), -1


def initialize_l(exec, a, shift):
    n = a.shape[0]
    diag, l_ptrs, _, l_nnz, _, missing = _patterns(exec, a, positive=True)
    if missing >= 0:
        return (l_ptrs, *_allocate(exec, 0, a.dtype)), missing
    l_cols, l_vals = _allocate(exec, l_nnz, a.dtype)
    launch_1d(exec, __file__, "initialize_l", a.dtype, n, np.int32(n), real_dtype(a.dtype).type(shift),
              a.row_ptrs.data, a.col_idxs.data, a.values.data, diag.data, l_ptrs.data, l_cols.data, l_vals.data)
    return (l_ptrs, l_cols, l_vals), -1


def add_diagonal_elements(exec, a):
    n = a.shape[0]
    ptrs = _filled(exec, n + 1, 0)
    launch_1d(exec, __file__, "count_with_diagonal", a.dtype, n, np.int32(n), a.row_ptrs.data, a.col_idxs.data,
              ptrs.data)
    exec.run("components.prefix_sum.prefix_sum", ptrs)
    nnz, = _read_ints(exec, (ptrs, n))
    cols, vals = _allocate(exec, nnz, a.dtype)
    launch_1d(exec, __file__, "add_diagonal", a.dtype, n, np.int32(n), a.row_ptrs.data, a.col_idxs.data,
              a.values.data, ptrs.data, cols.data, vals.data)
    return ptrs, cols, vals


def pivot_floors(exec, a, relative, floors):
    n = a.shape[0]
    launch_1d(exec, __file__, "pivot_floors", a.dtype, n, np.int32(n), floors.dtype.type(relative),
              a.row_ptrs.data, a.values.data, floors.values.data)


def floored_pivots(exec, factor, lower, floors):
    n = factor.shape[0]
    count, first = exec.from_host(np.array([0], np.int32)), exec.from_host(np.array([_NONE], np.int32))
    launch_1d(exec, __file__, "floored_pivots", factor.dtype, n, np.int32(n), np.int32(bool(lower)),
              factor.row_ptrs.data, factor.values.data, floors.values.data, count.data, first.data)
    shifted, row = _read_ints(exec, (count, 0), (first, 0))
    return shifted, -1 if row == _NONE else row


def check_factor(exec, factor, lower, floors):
    # [first invalid pivot row, first row with a value not finite, floored pivots (with floors),
    # the first floored row], each row n where none: left on the device (filled there, no wait)
    n = factor.shape[0]
    out = _filled(exec, 4, n)
    exec.counters["launches"] += 1
    with exec.lock:
        cl.enqueue_fill_buffer(exec.queue, out.data, np.int32(0), 8, 4)
    if n:
        launch_1d(exec, __file__, "check_factor", factor.dtype, n, np.int32(n), np.int32(bool(lower)),
                  np.int32(floors is not None), factor.row_ptrs.data, factor.col_idxs.data, factor.values.data,
                  (factor.values if floors is None else floors.values).data, out.data)
    return out


def find_invalid_pivot(exec, factor, lower) -> int:
    n = factor.shape[0]
    bad = exec.from_host(np.array([_NONE], np.int32))
    launch_1d(exec, __file__, "find_invalid_pivot", factor.dtype, n, np.int32(n), np.int32(bool(lower)),
              factor.row_ptrs.data, factor.col_idxs.data, factor.values.data, bad.data)
    row = int(exec.to_host(bad)[0])
    return -1 if row == _NONE else row
