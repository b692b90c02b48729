"""OpenCL kernels of PipeCg (sources in pipe_cg_kernels.cl): ``initialize`` and ``step_2`` in
the reduction layout, each writing the partial sums of (r, u), (u, w) and (r, r) of its rows
in the same pass; ``step_1`` one work-group that sums them, checks and sets alpha and beta.

The preconditioner is compiled in (PRECONDITIONER): 0 none (m = w), 1 scalar Jacobi (m =
D^-1 w computed where it is used), 2 an operator of its own (m given)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import (check_int32, consumer_buffers, local_buffer, pow2_at_most, reduction_shape, resize,
                                  stop_args)


def _kernel(exec, dtype, name, m, diag):
    return exec.kernel(__file__, dtype, name, PRECONDITIONER=2 if m is not None else 1 if diag is not None else 0)


def _reduction(exec, name, r, m, diag, dots, *args):
    """A kernel in the reduction layout over r's n x k rows writing the 3k partial sums ``dots``."""
    n, k = r.shape
    check_int32(r.values.size)
    shape = reduction_shape(exec.info, n, k, 3 * k)
    resize(exec, dots, (shape.groups, 3 * k))
    _kernel(exec, r.dtype, name, m, diag)(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(),
        *args, dots.values.data, local_buffer(shape.local_size[0], r.dtype))


def initialize(exec, r, u, w, z, q, s, p, gamma_prev, dots, columns):
    """In the columns (a uint8 device mask; all for None): z = q = s = p = 0, gamma_prev = 0;
    the partial sums of (r, u), (u, w), (r, r)."""
    _reduction(exec, "initialize", r, None, None, dots, r.values.data, u.values.data, w.values.data, z.values.data,
               q.values.data, s.values.data, p.values.data, gamma_prev.values.data, np.int32(columns is not None),
               (columns if columns is not None else r.values).data)


def step_1(exec, dots, gamma_prev, alpha_prev, alpha, beta, stop):
    """One work-group: the sums of dots, the stopping check on ||r||, alpha and beta (see the .cl)."""
    k = stop.k
    group = min(256, pow2_at_most(exec.info.max_work_group_size))
    exec.kernel(__file__, dots.dtype, "step_1", PRECONDITIONER=0)(
        exec.queue, (group,), (group,), np.int32(k), np.int32(dots.shape[0]), dots.values.data,
        gamma_prev.values.data, alpha_prev.values.data, alpha.values.data, beta.values.data, *stop_args(stop),
        *consumer_buffers(dots.dtype, 3 * k, group))


def step_2(exec, x, r, u, w, m, n, z, q, s, p, diag, alpha, beta, dots, stop):
    """The updates of z, q, s, p, x, r, u, w in the running columns and the partial sums of the
    new (r, u), (u, w), (r, r)."""
    _reduction(exec, "step_2", r, m, diag, dots, x.values.data, r.values.data, u.values.data, w.values.data,
               (m or w).values.data, n.values.data, z.values.data, q.values.data, s.values.data, p.values.data,
               (diag or w).values.data, alpha.values.data, beta.values.data, stop.status.data)
