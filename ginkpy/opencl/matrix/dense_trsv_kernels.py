"""OpenCL kernels of the dense triangular solve TRSV (sources in dense_trsv_kernels.cl).

TRSV is blocked as in seed 001: per block of ``block_size`` columns, one work-group per
right-hand side solves the small diagonal triangle (held in local memory), then many
work-groups update the rest of x with the rectangle below (lower) or above (upper) the block.
"""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import local_buffer

WORK_GROUP = 128
MAX_BLOCK = 64


def _op(a, lower, transpose):
    """Strides of op(A) (entry (i, j) at i * rs + j * cs) and whether op(A) is lower triangular."""
    n = a.shape[0]
    rs, cs = (1, n) if transpose else (n, 1)
    return np.int32(rs), np.int32(cs), np.int32(lower != transpose)


def _block_size(exec, dtype) -> int:
    """Width of the diagonal blocks: at most MAX_BLOCK, with the block in half the local memory."""
    nb = MAX_BLOCK
    while nb > 8 and (nb * nb + nb) * dtype.itemsize > exec.info.local_mem_size // 2:
        nb //= 2
    return nb


def trsv(exec, a, x, lower, transpose, unit_diagonal):
    # x = op(A)^-1 x  (x holds b on entry, as in BLAS)
    n, k = x.shape
    if n == 0 or k == 0:
        return
    rs, cs, op_lower = _op(a, lower, transpose)
    dtype = x.dtype
    nb = _block_size(exec, dtype)
    solve_block = exec.kernel(__file__, dtype, "trsv_block")
    update = exec.kernel(__file__, dtype, "trsv_update")
    starts = range(0, n, nb) if op_lower else reversed(range(0, n, nb))
    for begin in starts:
        size = min(nb, n - begin)
        # solve the diagonal block: one work-group per right-hand side
        solve_block(exec.queue, (WORK_GROUP * k,), (WORK_GROUP,), np.int32(begin), np.int32(size),
                    np.int32(k), rs, cs, op_lower, np.int32(unit_diagonal), a.values.data,
                    x.values.data, local_buffer(size * size, dtype), local_buffer(size, dtype))
        # update the rows still to solve with the solved block
        rows = n - begin - size if op_lower else begin
        if rows:
            global_rows = (rows + WORK_GROUP - 1) // WORK_GROUP * WORK_GROUP
            update(exec.queue, (global_rows, k), (WORK_GROUP, 1), np.int32(n), np.int32(begin),
                   np.int32(size), np.int32(k), rs, cs, op_lower, a.values.data, x.values.data,
                   local_buffer(size, dtype))
