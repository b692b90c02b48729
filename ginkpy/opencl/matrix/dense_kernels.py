"""OpenCL kernels of Dense (sources in dense_kernels.cl).

Launch shapes come from ``exec.info``. Reductions (dot, norm, the scan of convert_to_csr)
run as seed 000 describes: each work-group sums a contiguous chunk into local memory and
writes one partial, and a second small pass adds the partials. A GPU wants many work-groups
to fill its compute units; a CPU device wants few, each summing a long chunk, and none of
the second pass when one group per column covers everything.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.launch import (check_int32, launch_1d, local_buffer, pow2_at_most, reduction_shape, round_up,
                                  scalar_arg, sum_rows)


def _kernel(exec, dtype, name, **defines):
    return exec.kernel(__file__, dtype, name, **defines)


def _launch(exec, name, dtype, size, *args):
    """One work-item per entry of this module's kernel ``name``, ``size`` passed first."""
    launch_1d(exec, __file__, name, dtype, size, np.int32(size), *args)


def _flat_shape(info, size: int) -> tuple[int, int, int]:
    """(work-groups, work-group size, entries per group) of a reduction over ``size`` entries
    in one stretch (the count of non-finite values, the scan of convert_to_csr); on a CPU one
    work-item per group reads its stretch in order (interleaved lanes: 2.7x the time on PoCL)."""
    shape = reduction_shape(info, size, 1)
    return shape.groups, min(shape.lanes, pow2_at_most(info.max_work_group_size)), shape.rows


# -- element-wise ------------------------------------------------------------------------------

def fill(exec, x, value):
    _launch(exec, "fill", x.dtype, x.values.size, x.values.data, x.dtype.type(value))


def copy(exec, src, dst):
    exec.copy_into(dst.values, src.values)


def convert_precision(exec, src, dst):
    """dst = src in dst's value type."""
    if src.dtype == dst.dtype:
        copy(exec, src, dst)
        return
    name = {np.float32: "convert_from_float", np.float64: "convert_from_double", np.complex64: "convert_from_float2",
            np.complex128: "convert_from_double2"}[src.dtype.type]
    _launch(exec, name, dst.dtype, src.values.size, src.values.data, dst.values.data)


def scale(exec, alpha, x):
    _launch(exec, "scale", x.dtype, x.values.size, np.int32(x.shape[1]), *scalar_arg(alpha), x.values.data)


def add_scaled(exec, alpha, b, x):
    _launch(exec, "add_scaled", x.dtype, x.values.size, np.int32(x.shape[1]), *scalar_arg(alpha),
            b.values.data, x.values.data)


def sub_scaled(exec, alpha, b, x):
    _launch(exec, "sub_scaled", x.dtype, x.values.size, np.int32(x.shape[1]), *scalar_arg(alpha),
            b.values.data, x.values.data)


# -- column reductions -------------------------------------------------------------------------

def compute_dot(exec, a, b, result):
    """result (1 x k) = per-column dot products a^T b of a and b (n x k): one launch when one
    work-group per column covers the rows (always on a CPU device), else one partial sum per
    group and a second pass."""
    _dot(exec, a, b, result, conjugate=False)


def compute_conj_dot(exec, a, b, result):
    """result (1 x k) = per-column inner products a^H b, as compute_dot."""
    _dot(exec, a, b, result, conjugate=True)


def _column_reduction(exec, a, result):
    """The ReductionShape of a reduction of a's n rows per column into result (1 x k), or None
    where there is nothing to launch: no columns, or no rows (result = 0)."""
    n, k = a.shape
    if k == 0:
        return None
    if n == 0:
        fill(exec, result, 0.0)
        return None
    check_int32(a.values.size)
    return reduction_shape(exec.info, n, k)


def _dot(exec, a, b, result, conjugate: bool) -> None:
    shape = _column_reduction(exec, a, result)
    if shape is None:
        return
    n, k = a.shape
    out = result.values if shape.groups == 1 else exec.alloc((shape.groups, k), a.dtype)
    _kernel(exec, a.dtype, "compute_dot", CONJUGATE=int(conjugate and a.dtype.kind == "c"))(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(),
        a.values.data, b.values.data, out.data, local_buffer(shape.local_size[0], a.dtype))
    if shape.groups > 1:
        sum_rows(exec, out, result.values)


def _partials_group_size(info, parts: int) -> int:
    """Work-group size of a second pass over ``parts`` partials per column: a power of two
    that covers them, at most 256."""
    return min(pow2_at_most(info.max_work_group_size), 256, 1 << (parts - 1).bit_length())


GRAM_TILE = 8  # work-group edge of gram_partials (TILE x TILE pairs of columns)
GRAM_COLUMNS = 32  # as in dense_kernels.cl: gram_partials_rows takes b of up to this many columns


def compute_gram(exec, a, b, result):
    """result (k x m) = a^H b for a (n x k), b (n x m): one partial k x m block per chunk of
    rows (a GPU takes about 8 chunks per compute unit, a CPU device one per unit), then
    sum_rows over the chunks (none where one chunk covers the rows). A CPU device sums each
    column of a against all of b's (up to GRAM_COLUMNS) in one work-item; otherwise a work-item
    per pair of columns in TILE x TILE groups (not measured on a GPU yet)."""
    n, k = a.shape
    m = b.shape[1]
    if k == 0 or m == 0:
        return
    if n == 0:
        fill(exec, result, 0.0)
        return
    check_int32(max(a.values.size, b.values.size))
    wanted = exec.info.compute_units * (8 if exec.info.is_gpu else 1)
    chunk = max(-(-n // wanted), 64)
    groups = -(-n // chunk)
    check_int32(groups * k * m)
    out = result.values if groups == 1 else exec.scratch("gram", (groups, k * m), a.dtype)
    if exec.info.is_cpu and m <= GRAM_COLUMNS:  # a work-item per column of a: 40000 x 10 x 10 on PoCL 17 -> 2 ms
        _kernel(exec, a.dtype, "gram_partials_rows")(
            exec.queue, (k, groups), None, np.int32(n), np.int32(k), np.int32(m), np.int32(chunk), a.values.data,
            b.values.data, out.data)
    else:
        ti, tj = min(GRAM_TILE, k), min(GRAM_TILE, m)
        _kernel(exec, a.dtype, "gram_partials")(
            exec.queue, (round_up(m, tj), round_up(k, ti), groups), (tj, ti, 1), np.int32(n), np.int32(k),
            np.int32(m), np.int32(chunk), a.values.data, b.values.data, out.data)
    if groups > 1:
        sum_rows(exec, out, result.values)


def compute_norm2(exec, a, result):
    """result (1 x k, real type) = per-column Euclidean norms of a (n x k), without underflow or
    overflow where the norm is representable (LAPACK's nrm2: each work-item keeps a scale, its
    largest |a_i| so far, and the sum of (a_i / scale)^2; the pairs are merged by the work-group,
    then across the work-groups by a second launch, one group per column)."""
    shape = _column_reduction(exec, a, result)
    if shape is None:
        return
    n, k = a.shape
    real = real_dtype(a.dtype)
    partial = exec.scratch("norm2", (2 * shape.groups, k), real)
    size = shape.local_size[0]
    _kernel(exec, a.dtype, "norm2_partials")(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(),
        a.values.data, partial.data, local_buffer(size, real), local_buffer(size, real))
    group = _partials_group_size(exec.info, shape.groups)
    _kernel(exec, a.dtype, "norm2_finalize")(
        exec.queue, (k * group,), (group,), np.int32(shape.groups), np.int32(k), partial.data,
        result.values.data, local_buffer(group, real), local_buffer(group, real))


def copy_columns(exec, src, dst, mask):
    """dst[:, j] = src[:, j] in the columns j where mask[j] (uint8) is nonzero."""
    _launch(exec, "copy_columns", dst.dtype, dst.values.size, np.int32(dst.shape[1]), mask.data,
            src.values.data, dst.values.data)


def is_finite(exec, a) -> bool:
    """True when no entry of a is NaN or infinite: one partial count per work-group, summed on the host."""
    size = a.values.size
    if size == 0:
        return True
    check_int32(size)
    groups, wg, per_group = _flat_shape(exec.info, size)
    partial = exec.scratch("count_nonfinite", (groups,), np.int32)
    _kernel(exec, a.dtype, "count_nonfinite")(
        exec.queue, (groups * wg,), (wg,), np.int32(size), np.int32(per_group), a.values.data,
        partial.data, local_buffer(wg, np.int32))
    return not exec.to_host(partial).any()


# -- transpose and products --------------------------------------------------------------------

TRANSPOSE_TILE = 16  # as in dense_kernels.cl


def transpose(exec, a, out):
    """out (k x n) = a (n x k) transposed."""
    _transpose(exec, a, out, conjugate=False)


def conj_transpose(exec, a, out):
    """out (k x n) = a (n x k) conjugate-transposed."""
    _transpose(exec, a, out, conjugate=True)


def _transpose(exec, a, out, conjugate: bool) -> None:
    n, k = a.shape
    if a.values.size == 0:
        return
    check_int32(a.values.size)
    t = TRANSPOSE_TILE
    _kernel(exec, a.dtype, "transpose", CONJUGATE=int(conjugate and a.dtype.kind == "c"))(
        exec.queue, (round_up(k, t), round_up(n, t)), (t, t), np.int32(n), np.int32(k),
        a.values.data, out.values.data)


def _gemm_shape(info, k: int) -> tuple[int, int, int]:
    """(tile columns, tile rows, inner slice) of the tiled product for b with k columns:
    tiles as wide as b (up to 16 columns), as many rows as fill the work-group."""
    group = min(256 if info.is_gpu else 64, pow2_at_most(info.max_work_group_size))
    cols = min(16, 1 << (k - 1).bit_length(), group)
    return cols, group // cols, 16


NARROW_INNER = 32  # products with an inner dimension up to this take gemm_narrow (no tiles)


def _gemv_shape(info) -> tuple[int, int]:
    """(lanes per row, rows per group) of the matrix-vector product: a GPU reads each row of A
    with 32 work-items, a CPU device with one (rows are long contiguous streams there)."""
    group = min(256, pow2_at_most(info.max_work_group_size))
    lanes = 1 if info.is_cpu else min(32, group)
    return lanes, group // lanes


def _product(exec, a, b, x, alpha=None, beta=None) -> None:
    """x = A b, or x = alpha A b + beta x when alpha and beta (1 x 1 or 1 x k) are given."""
    n, m = a.shape
    k = b.shape[1]
    if n == 0 or k == 0:
        return
    for v in (a, b, x):
        check_int32(v.values.size)
    advanced = alpha is not None
    scalars = (*scalar_arg(alpha), *scalar_arg(beta)) if advanced else (None, np.int32(0), None, np.int32(0))
    dtype = x.dtype
    if k == 1:
        lanes, rows = _gemv_shape(exec.info)
        _kernel(exec, dtype, "gemv")(
            exec.queue, (round_up(n, rows) * lanes,), (rows * lanes,), np.int32(n), np.int32(m),
            np.int32(lanes), a.values.data, b.values.data, x.values.data, np.int32(advanced), *scalars,
            local_buffer(lanes * rows, dtype))
        return
    if m <= NARROW_INNER:  # (block vectors times a small matrix: LOBPCG's updates, Krylov bases' combinations)
        _kernel(exec, dtype, "gemm_narrow")(
            exec.queue, (k, n), None, np.int32(n), np.int32(m), np.int32(k), a.values.data, b.values.data,
            x.values.data, np.int32(advanced), *scalars)
        return
    cols, rows, inner = _gemm_shape(exec.info, k)
    _kernel(exec, dtype, "gemm")(
        exec.queue, (round_up(k, cols), round_up(n, rows)), (cols, rows), np.int32(n), np.int32(m),
        np.int32(k), np.int32(inner), a.values.data, b.values.data, x.values.data, np.int32(advanced),
        *scalars, local_buffer(rows * inner, dtype), local_buffer(inner * cols, dtype))


def simple_apply(exec, a, b, x):
    """x = A b."""
    _product(exec, a, b, x)


def apply(exec, alpha, a, b, beta, x):
    """x = alpha A b + beta x."""
    _product(exec, a, b, x, alpha, beta)


# -- conversion to CSR -------------------------------------------------------------------------

def _inclusive_scan(exec, v, dtype) -> None:
    """v = its inclusive prefix sum (int32, in place): block sums, then each block scanned
    from the sum of the blocks before it. ``dtype`` picks the program that holds the kernels."""
    size = v.size
    groups, wg, per_group = _flat_shape(exec.info, size)
    partial = exec.alloc((groups,), np.int32)
    args = (np.int32(size), np.int32(per_group), v.data, partial.data, local_buffer(wg, np.int32))
    for name in ("block_sums", "scan_blocks"):
        _kernel(exec, dtype, name)(exec.queue, (groups * wg,), (wg,), *args)


def convert_to_csr(exec, a):
    """Row pointers, column indices and values of the nonzeros of ``a`` (row-major order), as
    device arrays: nonzeros counted per row, prefix-summed into row pointers, then filled."""
    n, k = a.shape
    check_int32(a.values.size)
    if n == 0 or k == 0:
        empty = exec.from_host(np.zeros(n + 1, dtype=np.int32))
        return empty, exec.alloc((0,), np.int32), exec.alloc((0,), a.dtype)
    row_ptrs = exec.alloc((n + 1,), np.int32)
    rows = (np.int32(n), np.int32(k), a.values.data, row_ptrs.data)
    launch_1d(exec, __file__, "count_row_nonzeros", a.dtype, n, *rows)
    # row_ptrs = [0, c_0, c_1, ...] -> [0, c_0, c_0 + c_1, ...]
    _inclusive_scan(exec, row_ptrs, a.dtype)
    nnz = int(exec.to_host(row_ptrs[n:])[0])
    col_idxs, values = exec.alloc((nnz,), np.int32), exec.alloc((nnz,), a.dtype)
    if nnz:
        launch_1d(exec, __file__, "fill_csr", a.dtype, n, *rows, col_idxs.data, values.data)
    return row_ptrs, col_idxs, values


# -- permutation and scaling -------------------------------------------------------------------

def permute(exec, a, rows, cols, out):
    # out[i, j] = a[rows[i], cols[j]] (rows or cols None: that index unchanged)
    n, k = out.shape
    size = n * k
    if size == 0:
        return
    check_int32(size)
    wg = min(256, exec.info.max_work_group_size)
    _kernel(exec, a.dtype, "permute", ROWS=int(rows is not None), COLS=int(cols is not None))(
        exec.queue, (round_up(size, wg),), (wg,), np.int32(size), np.int32(k),
        (a.values if rows is None else rows).data, (a.values if cols is None else cols).data,
        a.values.data, out.values.data)


def scale_rows(exec, diag, b, x):
    # x = D b, D = diag(diag)
    _launch(exec, "scale_rows", x.dtype, x.values.size, np.int32(x.shape[1]), diag.values.data, b.values.data,
            x.values.data)
