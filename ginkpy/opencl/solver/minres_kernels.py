"""OpenCL kernels of Minres (sources in minres_kernels.cl). Each kernel is one launch in the
reduction layout; the partial sums a kernel needs are summed by each of its work-groups
(``sum_partials`` in common.cl).

The preconditioner is compiled in (PRECONDITIONER): 0 none (M v = v, z is q), 1 scalar Jacobi
(M v = D^-1 v computed where it is used), 2 an operator of its own (M v given)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import check_int32, consumer_buffers, reduction_shape, resize, stop_args


def _mode(operator, diag) -> int:
    """PRECONDITIONER of a launch: 2 an operator, 1 scalar Jacobi, 0 none."""
    return 2 if operator else 1 if diag is not None else 0


def _layout(exec, of, partials_out):
    """The reduction layout over the rows of ``of`` (n x k); ``partials_out`` (or None) resized
    to the partial sums (one reduction per column) that a launch in it writes."""
    n, k = of.shape
    check_int32(of.values.size)
    shape = reduction_shape(exec.info, n, k, k if partials_out is not None else None)
    if partials_out is not None:
        resize(exec, partials_out, (shape.groups, k))
    return shape


def _launch(exec, name, mode, shape, of, sums, *args):
    """Kernel ``name`` in the reduction layout ``shape`` over the rows of ``of``, summing ``sums``
    columns of partial sums in each work-group."""
    n, k = of.shape
    exec.kernel(__file__, of.dtype, name, PRECONDITIONER=mode)(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(), *args,
        *consumer_buffers(of.dtype, sums, shape.local_size[0]))


def _parts(partials):
    return partials.values.data, np.int32(partials.shape[0])


def initialize(exec, r, zr, diag, q, z, q_prev, p, p_prev, rz, state, status, mask):
    """In the running columns of ``mask`` (None: every column): beta = sqrt(r . M r) (< 0 or not
    finite: breakdown); q = r / beta, z = M r / beta; q_prev = p = p_prev = 0; the state reset."""
    mode = _mode(zr is not None, diag)
    k = r.shape[1]
    _launch(exec, "initialize", mode, _layout(exec, r, None), r, k, r.values.data, (zr or r).values.data, (diag or r).values.data,
            q.values.data, (z or q).values.data, q_prev.values.data, p.values.data, p_prev.values.data,
            *_parts(rz), state.values.data, status.data, (status if mask is None else mask).data,
            np.int32(mask is not None))


def step_1(exec, v, q, q_prev, diag, za, rr, vz, state, state_old, stop, check):
    """state_old = state; the stopping check on ||r|| (the sum of rr) or |eta| where ``check``;
    alpha = z . A z, v = v - alpha q - beta q_prev in running columns; the partial sums of
    v . M v (vz None: M is an operator, whose product and dots follow)."""
    mode = _mode(vz is None, diag)
    k = v.shape[1]
    sums = 2 * k if rr is not None else k
    shape = _layout(exec, v, vz)  # (vz resized before its buffer is taken)
    _launch(exec, "step_1", mode, shape, v, sums, v.values.data, q.values.data, q_prev.values.data,
            (diag or v).values.data, *_parts(za), *_parts(rr or za), (vz or za).values.data, state.values.data,
            state_old.values.data, np.int32(bool(check)), *stop_args(stop))


def step_2(exec, x, r, p, p_prev, q, q_prev, z, v, z_tilde, diag, za, vz, state_old, state, rr, status):
    """The Lanczos step's end and its rotations: beta = sqrt(v . M v), p, x, q, z (and r with a
    preconditioner, with the partial sums of r . r) updated in running columns; a negative
    v . M v or a singular rotated T is a breakdown."""
    mode = _mode(z_tilde is not None, diag) if z is not None else 0
    shape = _layout(exec, x, rr)
    _launch(exec, "step_2", mode, shape, x, 2 * x.shape[1], x.values.data, (r or x).values.data, p.values.data,
            p_prev.values.data, q.values.data, q_prev.values.data, (z or q).values.data, v.values.data,
            (z_tilde or v).values.data, (diag or v).values.data, *_parts(za), *_parts(vz), state_old.values.data,
            state.values.data, status.data, (rr or za).values.data)
