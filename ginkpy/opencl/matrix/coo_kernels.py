"""OpenCL kernels of Coo (sources in coo_kernels.cl): a two-phase segmented reduction over the
row-sorted entries, with no atomics (the OpenCL of NVIDIA GPUs has no float atomics).

As in Ginkgo, ``spmv`` is ``x = 0`` then ``spmv2`` (x += A b), and ``advanced_spmv`` is
``x = beta x`` then ``advanced_spmv2`` (x += alpha A b); Hybrid calls the ``*2`` kernels after
its Ell part.
"""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import ceil_div, round_up, scalar_arg


def _tile_shape(info) -> tuple[int, int]:
    """(work-group size, entries per work-item) of phase 1. A GPU wants many work-items with
    a few entries each; a CPU device fewer, each summing a longer run serially."""
    group, items = (64, 32) if info.is_cpu else (256, 8)
    return min(group, info.max_work_group_size), items


def _segmented_sum(exec, name, a, b, x, *alpha) -> None:
    """Phase 1 over tiles of consecutive entries, then phase 2 over the tiles' two carries each."""
    k = x.shape[1]
    if a.nnz == 0 or k == 0:
        return
    group, items = _tile_shape(exec.info)
    groups = ceil_div(a.nnz, group * items)
    carry_rows = exec.alloc((2 * groups,), np.int32)
    carry_vals = exec.alloc((2 * groups, k), a.dtype)
    exec.kernel(__file__, a.dtype, f"{name}_chunks", WORK_GROUP=group, ITEMS=items)(
        exec.queue, (groups * group, k), (group, 1), np.int32(a.nnz), np.int32(k),
        a.row_idxs.data, a.col_idxs.data, a.values.data, b.values.data, x.values.data,
        carry_rows.data, carry_vals.data, *alpha)
    exec.kernel(__file__, a.dtype, f"{name}_carries", WORK_GROUP=group, ITEMS=items)(
        exec.queue, (round_up(2 * groups, group), k), (group, 1), np.int32(2 * groups),
        np.int32(k), carry_rows.data, carry_vals.data, x.values.data, *alpha)


def spmv(exec, a, b, x):
    # x = 0;  x = x + A b
    exec.run("matrix.dense.fill", x, 0.0)
    spmv2(exec, a, b, x)


def advanced_spmv(exec, alpha, a, b, beta, x):
    # x = beta x;  x = x + alpha A b
    exec.run("matrix.dense.scale", beta, x)
    advanced_spmv2(exec, alpha, a, b, x)


def spmv2(exec, a, b, x):
    # x = x + A b
    _segmented_sum(exec, "spmv2", a, b, x)


def advanced_spmv2(exec, alpha, a, b, x):
    # x = x + alpha A b
    _segmented_sum(exec, "advanced_spmv2", a, b, x, *scalar_arg(alpha))
