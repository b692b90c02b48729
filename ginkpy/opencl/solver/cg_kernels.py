"""OpenCL kernels of Cg (sources in cg_kernels.cl). Each step is one launch; the partial sums
a step needs are summed by each of its work-groups (``sum_partials`` in common.cl).

The preconditioner is compiled in (PRECONDITIONER): 0 none (z = r), 1 scalar Jacobi (z =
D^-1 r computed where it is used), 2 an operator of its own (z given). On a GPU each work-item of
step_1 and step_2 loads ROWS_AT_ONCE rows before it stores them (``launch.rows_at_once``)."""
from __future__ import annotations

import numpy as np

from ginkpy.opencl.launch import (check_int32, consumer_buffers, launch, local_buffer, reduction_shape, resize,
                                  rows_at_once, stop_args)


def _mode(z, diag) -> int:
    return 2 if z is not None else 1 if diag is not None else 0


def _kernel(exec, dtype, name, z, diag):
    return exec.kernel(__file__, dtype, name, PRECONDITIONER=_mode(z, diag), ROWS_AT_ONCE=rows_at_once(exec.info))


def _stand_ins(r, z, diag):
    """Buffers of z and diag, r's where there is none (never read then)."""
    return (z or r).values.data, (diag or r).values.data


def initialize(exec, p, prev_rho):
    """p = 0, prev_rho = 1."""
    launch(exec, __file__, "initialize", p.dtype, p.shape, p, prev_rho,
           work_items=max(p.values.size, p.shape[1]))


def _reduction(exec, name, r, z, diag, rz, rr, *args, sums=0):
    """A kernel in the reduction layout that writes the partial sums of r . r (and r . z)."""
    n, k = r.shape
    check_int32(r.values.size)
    shape = reduction_shape(exec.info, n, k, 2 * k)
    for partials in (rr, rz):
        resize(exec, partials, (shape.groups, k))
    size = shape.local_size[0]
    local = consumer_buffers(r.dtype, k, size) if sums else (local_buffer(size, r.dtype),)
    _kernel(exec, r.dtype, name, z, diag)(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(),
        *args, rz.values.data, rr.values.data, *local)


def prepare(exec, r, z, diag, rz, rr):
    """Partial sums of r . r and of r . z."""
    _reduction(exec, "prepare", r, z, diag, rz, rr, r.values.data, *_stand_ins(r, z, diag))


def step_1(exec, p, r, z, diag, rz, rr, rho, prev_rho, stop):
    """The stopping check on ||r|| = sqrt(sum of rr); rho = r . z (sum of rz); p = z + (rho /
    prev_rho) p in running columns (rho / prev_rho = 0 where prev_rho is 0)."""
    n, k = p.shape
    shape = reduction_shape(exec.info, n, k)
    _kernel(exec, p.dtype, "step_1", z, diag)(
        exec.queue, shape.global_size(k), shape.local_size, np.int32(n), np.int32(k), *shape.args(),
        p.values.data, r.values.data, *_stand_ins(r, z, diag), rz.values.data, np.int32(rz.shape[0]),
        rr.values.data, np.int32(rr.shape[0]), rho.values.data, prev_rho.values.data, *stop_args(stop),
        *consumer_buffers(p.dtype, 2 * k, shape.local_size[0]))


def step_2(exec, x, r, p, q, diag, pq, rho, prev_rho, rz, rr, stop):
    """alpha = rho / (p . q) (sum of pq); x += alpha p; r -= alpha q; prev_rho = rho in running
    columns, and the partial sums of r . r (and r . z with scalar Jacobi) of every column in the
    same pass. p . q <= 0 or rho == 0 is a breakdown: status BREAKDOWN, the column untouched."""
    _reduction(exec, "step_2", r, None, diag, rz, rr, x.values.data, r.values.data, p.values.data,
               q.values.data, (diag or r).values.data, pq.values.data, np.int32(pq.shape[0]),
               rho.values.data, prev_rho.values.data, stop.status.data, sums=1)
