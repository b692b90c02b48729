"""OpenCL kernels of Gmres and CbGmres (sources in gmres_kernels.cl).

Every kernel runs in the reduction layout (``launch.reduction_shape``): on a GPU work-groups
of 256 work-items over a block of rows each, on a CPU one work-item over a long contiguous
stretch. An inner iteration reads the Krylov basis twice: ``multi_dot`` for the dot products
with all basis vectors at once (a GEMV with the conjugate transpose, components/krylov_basis.cl;
one partial sum per work-group and product, which the next kernel sums itself) and
``orthogonalize`` for the update w' = w - V h (a GEMV); the DGKS second pass reads it again only
where its test asks: in ``reorthogonalize`` ("cgs2"), or lagged into the next ``multi_dot`` (or
``givens`` at the end of a cycle), w corrected through the Arnoldi relation ("mgs": no launch
of its own, no other vector). The basis is a raw executor array in its storage type: the value type, or
float32 / float16 for CbGmres.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.opencl.components.krylov_basis import defines, dot_scratch, dot_shape
from ginkpy.opencl.device_choices import update_rows
from ginkpy.opencl.launch import (check_int32, consumer_buffers, local_buffer, pow2_at_most, reduction_shape, resize,
                                  stop_args)


def _launch(exec, name, basis, v, shape, *args, **extra):
    """Kernel ``name`` in the reduction layout ``shape`` over the rows of v, for a basis in its
    storage type (None: the value type), its CPU variant where a work-group is one work-item."""
    n, k = v.shape
    kernel = exec.kernel(__file__, v.dtype, name, **defines(v.dtype, basis, shape), **extra)
    kernel(exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(), *args)


def restart(exec, r, rr, v, g, inner, step, stop):
    """The true residual's norm: first check or confirmation; v = r / ||r||, g_0 = ||r||; step[0] = 0."""
    shape = reduction_shape(exec.info, *r.shape)
    _launch(exec, "restart", None, r, shape, r.values.data, rr.values.data, np.int32(rr.shape[0]), v.values.data,
            g.values.data, inner.data, step.data, *stop_args(stop),
            *consumer_buffers(r.dtype, r.shape[1], shape.local_size[0]))


def restart_left(exec, z, rr, zz, v, g, unscale, factor, inner, step, stop):
    """Left preconditioning, z = M r: the true residual's norm ||r|| (first check or
    confirmation); SciPy's inner tolerance as the scale of g_0 = max(thr / f, ||r||), unscale =
    ||z|| / g_0; v = z / ||z||; step[0] = 0."""
    shape = reduction_shape(exec.info, *z.shape)
    _launch(exec, "restart_left", None, z, shape, z.values.data, rr.values.data, np.int32(rr.shape[0]),
            zz.values.data, np.int32(zz.shape[0]), v.values.data, g.values.data, unscale.values.data, factor.data,
            inner.data, step.data, *stop_args(stop), *consumer_buffers(z.dtype, 2 * z.shape[1], shape.local_size[0]))


def multi_dot(exec, step, parity, rotate, v, basis, z, zbasis, w, ww, nrm, h, hessenberg, g, cos, sin, inner, stop,
              raw=None, final=None, h2=None, reorth=None):
    """Inner iteration j = step[parity]: v_j = v / ||v|| into the basis (and z_j = z / ||v|| into
    zbasis, flexible GMRES's, unless z is None); partial sums h of V_{0..j}^H w and of w^H w;
    step[1 - parity] = j + 1; with ``rotate`` (and j > 0) the Givens step of H[:, j - 1] first.
    With ``raw`` (orthogonalize's first-pass columns of H; final, h2 and reorth): the lagged
    second pass of step j - 1 first where reorth asks (w corrected through the Arnoldi relation
    A M V = V H, H's columns kept in final)."""
    n, k = w.shape
    m = hessenberg.shape[1] // k
    check_int32(basis.size, "the Krylov basis")  # the kernels index the whole basis with int32
    shape = dot_shape(exec.info, n, k, w.dtype)
    resize(exec, h, (shape.groups, (m + 2) * k))
    size = shape.local_size[0]
    lagged = () if raw is None else (raw.values.data, final.values.data, h2.values.data, np.int32(h2.shape[0]),
                                     reorth.data)
    _launch(exec, "multi_dot", basis, w, shape, step.data, np.int32(parity), np.int32(rotate),
            np.int32(hessenberg.shape[1]), np.int32(n * k), v.values.data, basis.data, (z or v).values.data,
            (basis if zbasis is None else zbasis).data, w.values.data, ww.values.data, np.int32(ww.shape[0]),
            nrm.values.data, h.values.data, hessenberg.values.data, g.values.data, cos.values.data, sin.values.data,
            inner.data, *stop_args(stop), local_buffer(max(k, 1) * (2 * m + 1 if lagged else 1), w.dtype),
            dot_scratch(w.dtype, size), *lagged, FLEXIBLE=int(z is not None), LAGGED=int(bool(lagged)))


def orthogonalize(exec, step, parity, basis, w, nrm, h, hessenberg, v, ww, h2, reorth, eta2, stop, raw=None):
    """Inner iteration j = step[parity]: w' = w / nrm - V h into v, H[0:j+1, j] = h (in raw too
    unless None), partial sums of ||w'||^2 into ww; the DGKS test with eta2 into reorth, and where
    it asks the partial sums h2 of V^H w'. A GPU's work-items take ``update_rows`` rows per turn
    (``opencl/device_choices.py``)."""
    n, k = w.shape
    m = hessenberg.shape[1] // k
    shape = reduction_shape(exec.info, n, k)
    resize(exec, ww, (shape.groups, k))
    resize(exec, h2, (shape.groups, (m + 1) * k))
    size = shape.local_size[0]
    _launch(exec, "orthogonalize", basis, w, shape, step.data, np.int32(parity), np.int32(hessenberg.shape[1]),
            np.int32(n * k), basis.data, w.values.data, nrm.values.data, h.values.data, np.int32(h.shape[0]),
            hessenberg.values.data, v.values.data, ww.values.data, h2.values.data, reorth.data,
            real_dtype(w.dtype).type(eta2), stop.status.data,
            local_buffer((m + 2) * k, w.dtype), dot_scratch(w.dtype, size), *(() if raw is None else (raw.values.data,)),
            LAGGED=int(raw is not None), UPDATE_ROWS=update_rows(exec.info))


def reorthogonalize(exec, step, parity, basis, v, h2, hessenberg, reorth, ww, stop):
    """Inner iteration j = step[parity], where reorth is set: v = v - V h2 (h2: the second pass's
    partial sums), H[0:j+1, j] += h2, and the partial sums of ||v||^2 into ww."""
    n, k = v.shape
    m = hessenberg.shape[1] // k
    shape = reduction_shape(exec.info, n, k)
    _launch(exec, "reorthogonalize", basis, v, shape, step.data, np.int32(parity), np.int32(hessenberg.shape[1]),
            np.int32(n * k), basis.data, v.values.data, h2.values.data, np.int32(h2.shape[0]),
            hessenberg.values.data, reorth.data, stop.status.data, ww.values.data,
            *consumer_buffers(v.dtype, (m + 1) * k, shape.local_size[0]))


def givens(exec, j, ww, hessenberg, g, cos, sin, inner, stop, h2=None, reorth=None):
    """The Givens step of H[:, j] in every running column (one work-group); with h2 and reorth
    the lagged second pass of step j in H first where reorth asks."""
    k = g.shape[1]
    m = hessenberg.shape[1] // k
    wg = min(256, pow2_at_most(exec.info.max_work_group_size))
    lagged = () if h2 is None else (h2.values.data, np.int32(h2.shape[0]), reorth.data)
    exec.kernel(__file__, g.dtype, "givens", **defines(g.dtype, None, reduction_shape(exec.info, 1, k)),
                LAGGED=int(bool(lagged)))(
        exec.queue, (wg,), (wg,), np.int32(k), np.int32(j), np.int32(hessenberg.shape[1]), ww.values.data,
        np.int32(ww.shape[0]), hessenberg.values.data, g.values.data, cos.values.data, sin.values.data,
        inner.data, *stop_args(stop), *consumer_buffers(g.dtype, k * (m + 1 if lagged else 1), wg), *lagged)


def update(exec, basis, hessenberg, g, inner, diag, x):
    """y = R^-1 g per column; x += V y (times diag when given)."""
    n, k = x.shape
    m = hessenberg.shape[1] // k
    shape = reduction_shape(exec.info, n, k)
    _launch(exec, "update", basis, x, shape, np.int32(m), np.int32(hessenberg.shape[1]), np.int32(n * k), basis.data,
            hessenberg.values.data, g.values.data, inner.data, (diag or x).values.data, x.values.data,
            local_buffer(m * k, x.dtype), DIAGONAL=int(diag is not None))
