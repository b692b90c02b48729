"""OpenCL kernels of Gmres (sources in gmres_kernels.cl).

Vector work runs one work-item per entry; the per-column work of the small Hessenberg
problem (Givens rotations, the triangular solve) one work-item per column. The Arnoldi dot
products against all basis vectors are one reduction launch (one group of partial sums per
basis vector and column), plus Dense's ``sum_partials`` pass when a vector needs several
work-groups.
"""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import check_int32, launch, local_buffer, pow2_at_most
from ginkpy.opencl.matrix.dense_kernels import sum_partials


def restart(exec, r, r_norm, basis, v, g, estimate, inner, status):
    check_int32(basis.values.size)  # the kernels index the whole basis with int32
    launch(exec, __file__, "restart", r.dtype, r.shape, r, r_norm, basis, v, g, estimate, inner, status)


def dot_shape(info, n: int, pairs: int) -> tuple[int, int, int]:
    """(work-groups per dot product, work-group size, rows per group) for ``pairs`` dot
    products of n rows at once: together they should fill the device (about 8 groups per
    compute unit on a GPU, one on a CPU), each work-item adding at least 8 (GPU) or 64 (CPU)
    rows; so a CPU, or a long Arnoldi step, sums each product in one group, one pass."""
    if info.is_cpu:
        size, rows_per_item, device_groups = 64, 64, info.compute_units
    else:
        size, rows_per_item, device_groups = 256, 8, 8 * info.compute_units
    size = min(size, pow2_at_most(info.max_work_group_size))
    groups = max(1, min(device_groups // pairs, -(-n // (size * rows_per_item))))
    return groups, size, -(-n // groups)


def multi_dot(exec, basis, w, num, h):
    n, k = w.shape
    pairs = num * k
    if pairs == 0:
        return
    dtype = w.dtype
    groups, size, rows = dot_shape(exec.info, n, pairs)
    out = h.values if groups == 1 else exec.alloc((groups, pairs), dtype)
    exec.kernel(__file__, dtype, "multi_dot")(
        exec.queue, (groups * pairs * size,), (size,), np.int32(n), np.int32(k), np.int32(num),
        np.int32(rows), basis.values.data, w.values.data, out.data, local_buffer(size, dtype))
    if groups > 1:
        # h[p] = sum over groups g of out[g, p]
        sum_partials(exec, out, h.values, False, min(size, 1 << (groups - 1).bit_length()))


def orthogonalize(exec, basis, h, j, accumulate, w, hessenberg, estimate, status):
    launch(exec, __file__, "orthogonalize", w.dtype, w.shape, np.int32(j + 1), np.int32(hessenberg.shape[1]),
           np.int32(j), np.int32(accumulate), basis, h, w, hessenberg, estimate, status)


def next_basis(exec, w, w_norm, j, basis, v, estimate, status):
    launch(exec, __file__, "next_basis", w.dtype, w.shape, np.int32(j), w, w_norm, basis, v, estimate, status)


def givens(exec, w_norm, j, hessenberg, g, cos, sin, estimate, inner, status):
    launch(exec, __file__, "givens", g.dtype, (1, g.shape[1]), np.int32(j), np.int32(hessenberg.shape[1]),
           w_norm, hessenberg, g, cos, sin, estimate, inner, status)


def solve_krylov(exec, hessenberg, g, inner, y):
    launch(exec, __file__, "solve_krylov", g.dtype, (1, g.shape[1]), np.int32(hessenberg.shape[1]),
           hessenberg, g, inner, y)


def multi_axpy(exec, basis, y, inner, out):
    launch(exec, __file__, "multi_axpy", out.dtype, out.shape, basis, y, inner, out)
