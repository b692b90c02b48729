"""OpenCL kernels of Gcr (sources in gcr_kernels.cl), in the reduction layout; the dot products
with all earlier directions' products are one pass (components/krylov_basis.cl), as in Gmres."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.components.krylov_basis import defines, dot_scratch, dot_shape
from ginkpy.opencl.launch import consumer_buffers, reduction_shape, resize


def _launch(exec, name, v, shape, *args):
    n, k = v.shape
    kernel = exec.kernel(__file__, v.dtype, name, **defines(v.dtype, None, shape))
    kernel(exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(), *args)


def multi_dot(exec, step, parity, first, qbasis, t, h):
    """Iteration kk (0 where ``first``, else step[parity]): partial sums h of conj(q_i) . t, i < kk
    (rows of m k)."""
    n, k = t.shape
    m = qbasis.shape[0] // n
    shape = dot_shape(exec.info, n, k, t.dtype)
    resize(exec, h, (shape.groups, m * k))
    _launch(exec, "multi_dot", t, shape, step.data, np.int32(parity), np.int32(first), np.int32(m), qbasis.data,
            t.values.data, h.values.data, dot_scratch(t.dtype, shape.local_size[0]))


def orthogonalize(exec, step, parity, first, pbasis, qbasis, z, t, r, nq, h, qr):
    """Iteration kk (0 where ``first``, else step[parity]): q_kk = t - sum beta_i q_i, p_kk = z -
    sum beta_i p_i (beta_i = h_i / ||q_i||^2); partial sums of ||q_kk||^2, conj(q_kk) . r and
    ||r||^2 into qr."""
    n, k = t.shape
    m = nq.shape[0]
    shape = reduction_shape(exec.info, n, k)
    resize(exec, qr, (shape.groups, 3 * k))
    _launch(exec, "orthogonalize", t, shape, step.data, np.int32(parity), np.int32(first), np.int32(m), pbasis.data,
            qbasis.data, z.values.data, t.values.data, r.values.data, nq.values.data, h.values.data, np.int32(h.shape[0]), qr.values.data,
            *consumer_buffers(t.dtype, m * k, shape.local_size[0]))


def step_1(exec, step, parity, first, pbasis, qbasis, x, r, qr, nq, rr, stop):
    """Iteration kk (0 where ``first``, else step[parity]): alpha = conj(q_kk) . r / ||q_kk||^2;
    x += alpha p_kk; r -= alpha q_kk in running columns; nq[kk] = ||q_kk||^2; partial sums of
    ||r||^2 into rr; step[1 - parity] = kk + 1."""
    n, k = x.shape
    shape = reduction_shape(exec.info, n, k)
    resize(exec, rr, (shape.groups, k))
    _launch(exec, "step_1", x, shape, step.data, np.int32(parity), np.int32(first), pbasis.data, qbasis.data,
            x.values.data, r.values.data, qr.values.data, np.int32(qr.shape[0]), nq.values.data, rr.values.data, stop.status.data,
            *consumer_buffers(x.dtype, 3 * k, shape.local_size[0]))
