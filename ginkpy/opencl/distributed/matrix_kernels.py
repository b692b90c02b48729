"""OpenCL kernels of gk.distributed.Matrix (sources in matrix_kernels.cl): the gather of the
rows other ranks need into the send buffer of the halo exchange, and the non-local part of a
product on the rows that have one."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import WORK_GROUP, ceil_div, launch, local_buffer, resize, round_up, scalar_arg


def row_gather(exec, b, rows, out):
    """out[i, :] = b[rows[i], :] (rows: int32 on the device), one work-item per entry of out."""
    launch(exec, __file__, "row_gather", out.dtype, out.shape, rows, b, out)


def add_non_local(exec, alpha, b, rows, ghost, scale, x, u, w, partials):
    """x[rows[i], :] += alpha scale[rows[i]] (B ghost)[i, :] (scale None: 1) for the r rows of B
    (compressed: the rows that have non-local entries, ``rows`` their indices in x), and with u
    the partial sums of u^H and w^H (w may be None) of what was added, per work-group of
    WORK_GROUP rows and column (``partials``: groups x k or 2k). One work-item per row and column."""
    r, k = b.shape[0], x.shape[1]
    if r == 0 or k == 0:
        return
    dots = 0 if u is None else 1 if w is None else 2
    groups = ceil_div(r, WORK_GROUP)
    if dots:
        resize(exec, partials, (groups, dots * k))
    kernel = exec.kernel(__file__, x.dtype, "add_non_local", HAS_SCALE=int(scale is not None), DOTS=dots)
    kernel(exec.queue, (groups * WORK_GROUP, k), (WORK_GROUP, 1), np.int32(r), np.int32(k), *scalar_arg(alpha),
           b.row_ptrs.data, b.col_idxs.data, b.values.data, rows.data, ghost.values.data,
           (scale or x).values.data, x.values.data, (u or x).values.data, (w or u or x).values.data,
           (partials or x).values.data, local_buffer(WORK_GROUP, x.dtype))


def row_bounds(exec, local, non_local, rows, inv_diag, out):
    """out[i] = |inv_diag[rows[i]]| times the sum of |a_ij| over row rows[i]'s local and
    non-local entries (Gershgorin's bound there), one work-item per row."""
    r = non_local.shape[0]
    if r == 0:
        return
    exec.kernel(__file__, local.dtype, "row_bounds")(
        exec.queue, (round_up(r, WORK_GROUP),), (WORK_GROUP,), np.int32(r), local.row_ptrs.data, local.values.data,
        non_local.row_ptrs.data, non_local.values.data, rows.data, inv_diag.values.data, out.data)
