"""OpenCL kernels of Gmres (sources in gmres_kernels.cl).

Vector work runs in the reduction layout (few work-groups, each summing the partial sums it
needs; reorthogonalize also sums ||w||^2); the dot products against all basis vectors
are one launch with one group of partial sums per basis vector and column, which the next
kernel sums itself; the Givens steps run in the first work-items of that launch (or of
``givens``, one work-group, at the end of a cycle).
"""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import (ceil_div, check_int32, consumer_buffers, local_buffer, pow2_at_most,
                                  reduction_shape, resize, stop_args)


def _kernel(exec, dtype, name, **defines):
    return exec.kernel(__file__, dtype, name, **defines)


def _layout(exec, name, v, *args, local=lambda size: (), defines=None):
    """A kernel in the reduction layout over the rows of v (its local buffers made for the
    work-group size by ``local``)."""
    n, k = v.shape
    shape = reduction_shape(exec.info, n, k)
    _kernel(exec, v.dtype, name, **(defines or {}))(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(), *args,
        *local(shape.local_size[0]))


def restart(exec, r, rr, basis, v, g, inner, stop):
    """The true residual's norm: first check or confirmation; v_0 = v = r / ||r||, g_0 = ||r||."""
    check_int32(basis.values.size)  # the kernels index the whole basis with int32
    _layout(exec, "restart", r, r.values.data, rr.values.data, np.int32(rr.shape[0]), basis.values.data,
            v.values.data, g.values.data, inner.data, *stop_args(stop),
            local=lambda size: consumer_buffers(r.dtype, r.shape[1], size))


def _dot_shape(info, n: int, pairs: int) -> tuple[int, int, int]:
    """(work-groups per dot product, work-group size, rows per group) for ``pairs`` dot
    products of n rows at once: together they fill the device (about 4 groups per compute unit
    on a GPU, one on a CPU), each work-item adding at least 8 (GPU) or 64 (CPU) rows."""
    if info.is_cpu:
        size, rows_per_item, device_groups = 64, 64, info.compute_units
    else:
        size, rows_per_item, device_groups = 256, 8, 4 * info.compute_units
    size = min(size, pow2_at_most(info.max_work_group_size))
    groups = max(1, min(device_groups // pairs, ceil_div(n, size * rows_per_item)))
    return groups, size, ceil_div(n, groups)


def multi_dot(exec, j, rotate, basis, w, ww, h, hessenberg, g, cos, sin, inner, stop):
    """Partial sums h of V_{0..j}^T w and of w . w; with ``rotate`` (and j > 0) the Givens step of
    H[:, j - 1] first."""
    n, k = w.shape
    pairs = (j + 2) * k
    groups, size, rows = _dot_shape(exec.info, n, pairs)
    resize(exec, h, (groups, pairs))
    _kernel(exec, w.dtype, "multi_dot")(
        exec.queue, (groups * pairs * size,), (size,), np.int32(n), np.int32(k), np.int32(j), np.int32(rotate),
        np.int32(rows), np.int32(hessenberg.shape[1]), basis.values.data, w.values.data, ww.values.data,
        np.int32(ww.shape[0]), h.values.data, hessenberg.values.data, g.values.data, cos.values.data,
        sin.values.data, inner.data, *stop_args(stop), *consumer_buffers(w.dtype, k, size))


def orthogonalize(exec, j, basis, w, ww, h, hessenberg, h2, reorth, stop):
    """v_j normalized; w = w / ||v_j|| - V h; H[0:j+1, j] = h; where w lost most of its norm
    (reorth set): partial sums h2 of V^T w for the second pass."""
    n, k = w.shape
    shape = reduction_shape(exec.info, n, k, (j + 1) * k)
    resize(exec, h2, (shape.groups, (j + 1) * k))
    _kernel(exec, w.dtype, "orthogonalize", SINGLE_LANE=int(shape.local_size[0] == 1))(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(), np.int32(j),
        np.int32(hessenberg.shape[1]), basis.values.data, w.values.data, ww.values.data, np.int32(ww.shape[0]),
        h.values.data, np.int32(h.shape[0]), hessenberg.values.data, h2.values.data, reorth.data, stop.status.data,
        *consumer_buffers(w.dtype, (j + 3) * k, shape.local_size[0]))


def reorthogonalize(exec, j, basis, w, h, hessenberg, v, reorth, ww, stop):
    """Where reorth is set: w = w - V h (h: the second pass's partial sums), H[0:j+1, j] += h;
    everywhere v_{j+1} = v = w and the partial sums of ||w||^2."""
    n, k = w.shape
    shape = reduction_shape(exec.info, n, k)
    resize(exec, ww, (shape.groups, k))
    _kernel(exec, w.dtype, "reorthogonalize")(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(), np.int32(j),
        np.int32(hessenberg.shape[1]), basis.values.data, w.values.data, h.values.data, np.int32(h.shape[0]),
        hessenberg.values.data, v.values.data, reorth.data, stop.status.data, ww.values.data,
        *consumer_buffers(w.dtype, (j + 1) * k, shape.local_size[0]))


def givens(exec, j, ww, hessenberg, g, cos, sin, inner, stop):
    """The Givens step of H[:, j] in every running column (one work-group)."""
    k = g.shape[1]
    wg = min(256, pow2_at_most(exec.info.max_work_group_size))
    _kernel(exec, g.dtype, "givens")(
        exec.queue, (wg,), (wg,), np.int32(k), np.int32(j), np.int32(hessenberg.shape[1]), ww.values.data,
        np.int32(ww.shape[0]), hessenberg.values.data, g.values.data, cos.values.data, sin.values.data,
        inner.data, *stop_args(stop), *consumer_buffers(g.dtype, k, wg))


def update(exec, basis, hessenberg, g, inner, diag, x):
    """y = R^-1 g per column; x += V y (times diag when given)."""
    k = x.shape[1]
    m = hessenberg.shape[1] // k
    _layout(exec, "update", x, np.int32(m), np.int32(hessenberg.shape[1]), basis.values.data,
            hessenberg.values.data, g.values.data, inner.data, (diag or x).values.data, x.values.data,
            local=lambda size: (local_buffer(m * k, x.dtype),), defines={"DIAGONAL": int(diag is not None)})
