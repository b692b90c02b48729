"""OpenCL kernels of the reductions into partial sums (sources in reduction_kernels.cl): one
launch in the reduction layout (launch.reduction_shape) writes one partial sum per work-group
and column; the kernel that needs the sums adds them up itself (``sum_partials`` in common.cl)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import ceil_div, check_int32, local_buffer, pow2_at_most, reduction_shape, resize, sum_rows


def dots(exec, x, u, w, partials):
    """partials (groups x k, or groups x 2k with w): partial sums of u . x (and w . x) per column."""
    n, k = x.shape
    count = 1 if w is None else 2
    shape = reduction_shape(exec.info, n, k, count * k)
    resize(exec, partials, (shape.groups, count * k))
    if k == 0:
        return
    check_int32(x.values.size)
    exec.kernel(__file__, x.dtype, "dots", TWO=int(w is not None))(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(),
        x.values.data, u.values.data, (w or u).values.data, partials.values.data,
        local_buffer(shape.local_size[0], x.dtype))


def _multi_dot_shape(info, n: int, pairs: int) -> tuple[int, int, int]:
    """(work-groups per dot product, work-group size, rows per group) for ``pairs`` dot
    products of n rows at once: together they should fill the device (about 8 groups per
    compute unit on a GPU, one on a CPU), each work-item adding at least 8 (GPU) or 64 (CPU)
    rows; so a CPU, or many products at once, sums each product in one group, one pass."""
    if info.is_cpu:
        size, rows_per_item, device_groups = 64, 64, info.compute_units
    else:
        size, rows_per_item, device_groups = 256, 8, 8 * info.compute_units
    size = min(size, pow2_at_most(info.max_work_group_size))
    groups = max(1, min(device_groups // pairs, ceil_div(n, size * rows_per_item)))
    return groups, size, ceil_div(n, groups)


def multi_dot(exec, basis, w, num, h):
    """h[i, c] = v_i[:, c] . w[:, c] for the first ``num`` blocks v_i (n x k each) of ``basis``."""
    n, k = w.shape
    pairs = num * k
    if pairs == 0:
        return
    dtype = w.dtype
    groups, size, rows = _multi_dot_shape(exec.info, n, pairs)
    out = h.values if groups == 1 else exec.alloc((groups, pairs), dtype)
    exec.kernel(__file__, dtype, "multi_dot", TWO=0)(
        exec.queue, (groups * pairs * size,), (size,), np.int32(n), np.int32(k), np.int32(num),
        np.int32(rows), basis.values.data, w.values.data, out.data, local_buffer(size, dtype))
    if groups > 1:
        sum_rows(exec, out, h.values)
