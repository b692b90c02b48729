"""OpenCL kernels of Cg (sources in cg_kernels.cl). Each step is one launch; the partial sums
a step needs are summed by each of its work-groups (``sum_partials`` in common.cl).

With ``GINKPY_CG_FORM_P=1``, where A is a Csr whose SpMV strategy is classical (a GPU's for
short rows: :func:`forms_p`), an iteration is spmv_p (q = A p with p = M r + beta p formed where
each entry is gathered), step_2 with FORM_P (that p stored) and check (one work-group): step_1's
pass over p and r is gone. Off by default until a GPU has measured it against step_1's
iteration (``scripts/device_benchmarks.sh cg_form_p``; docs/performance.md, the eleventh session).

The preconditioner is compiled in (PRECONDITIONER): 0 none (z = r), 1 scalar Jacobi (z =
D^-1 r computed where it is used), 2 an operator of its own (z given). On a GPU each work-item of
step_1 and step_2 loads ROWS_AT_ONCE rows before it stores them (``launch.rows_at_once``)."""
from __future__ import annotations

import os

import numpy as np

from ginkpy.core.matrix.csr import Csr
from ginkpy.opencl.launch import (check_int32, consumer_buffers, launch, local_buffer, pow2_at_most, reduction_shape,
                                  resize, rows_at_once, stop_args)
from ginkpy.opencl.matrix.csr_kernels import _dots_groups
from ginkpy.opencl.matrix.csr_strategy import select_strategy


def _mode(z, diag) -> int:
    return 2 if z is not None else 1 if diag is not None else 0


def _kernel(exec, dtype, name, z, diag, **defines):
    return exec.kernel(__file__, dtype, name, PRECONDITIONER=_mode(z, diag), ROWS_AT_ONCE=rows_at_once(exec.info),
                       **defines)


def _stand_ins(r, z, diag):
    """Buffers of z and diag, r's where there is none (never read then)."""
    return (z or r).values.data, (diag or r).values.data


def initialize(exec, p, prev_rho):
    """p = 0, prev_rho = 1."""
    launch(exec, __file__, "initialize", p.dtype, p.shape, p, prev_rho,
           work_items=max(p.values.size, p.shape[1]))


def _reduction(exec, name, r, z, diag, rz, rr, *args, sums=0, **defines):
    """A kernel in the reduction layout that writes the partial sums of r . r (and r . z)."""
    n, k = r.shape
    check_int32(r.values.size)
    shape = reduction_shape(exec.info, n, k, 2 * k)
    for partials in (rr, rz):
        resize(exec, partials, (shape.groups, k))
    size = shape.local_size[0]
    local = consumer_buffers(r.dtype, k, size) if sums else (local_buffer(size, r.dtype),)
    _kernel(exec, r.dtype, name, z, diag, **defines)(
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


def step_2(exec, x, r, p, q, diag, pq, rho, prev_rho, rz, rr, stop, z=None, beta=None):
    """alpha = rho / (p . q) (sum of pq); x += alpha p; r -= alpha q; prev_rho = rho in running
    columns, and the partial sums of r . r (and r . z with scalar Jacobi) of every column in the
    same pass. p . q <= 0 or rho == 0 is a breakdown: status BREAKDOWN, the column untouched.
    With ``beta`` (check's) first p = M r + beta p (M r: z, or D^-1 r, or r), stored."""
    form_p = beta is not None
    _reduction(exec, "step_2", r, z if form_p else None, diag, rz, rr, x.values.data, r.values.data,
               p.values.data, q.values.data, *_stand_ins(r, z, diag), (beta or r).values.data, pq.values.data,
               np.int32(pq.shape[0]), rho.values.data, prev_rho.values.data, stop.status.data, sums=1,
               FORM_P=int(form_p))


FORM_P_DEFAULT = "0"  # GINKPY_CG_FORM_P unset: step_1's iteration, until a GPU measures the other


def forms_p(exec, a, p) -> bool:
    """Whether Cg's iteration on ``a`` forms p in its SpMV (spmv_p, step_2 with beta, check):
    with ``GINKPY_CG_FORM_P=1``, ``a`` a Csr of p's value type whose SpMV strategy is classical
    (a GPU's for short rows). Not for a CPU's row blocks: there the SpMV's three loads per entry
    (M r and p instead of p) cost more than step_1's pass (2D and 3D Poisson of 250000 rows on 2
    PoCL cores: 1.0-1.1x the whole solve's time)."""
    if os.environ.get("GINKPY_CG_FORM_P", FORM_P_DEFAULT) != "1" or type(a) is not Csr or a.dtype != p.dtype:
        return False
    if p.shape[0] == 0 or a.shape[0] != p.shape[0]:
        return False
    return select_strategy(exec, a).name == "classical"


def check(exec, r, z, diag, rz, rr, rho, prev_rho, beta, stop):
    """The stopping check on ||r|| = sqrt(sum of rr); in the columns that run on rho = r . z
    (sum of rz) and beta = rho / prev_rho (0 where prev_rho is 0); beta = 0 in the others."""
    k = r.shape[1]
    size = min(256, pow2_at_most(exec.info.max_work_group_size))  # (as the stop kernels' check)
    _kernel(exec, r.dtype, "check", z, diag)(
        exec.queue, (size,), (size,), np.int32(k), rz.values.data, np.int32(rz.shape[0]), rr.values.data,
        np.int32(rr.shape[0]), rho.values.data, prev_rho.values.data, beta.values.data, *stop_args(stop),
        *consumer_buffers(r.dtype, 2 * k, size))


def spmv_p(exec, a, p, r, z, diag, beta, q, pq):
    """q = A p with p = M r + beta p formed where each entry is gathered (p itself unchanged), and
    the partial sums of p . q; ``a`` one that :func:`forms_p` accepts (the classical layout)."""
    n, k = q.shape
    check_int32(n * k, "entries of p or q")
    strategy = select_strategy(exec, a)
    wg = strategy.work_group
    groups = _dots_groups(exec, strategy, n, k)
    resize(exec, pq, (groups, k))
    _kernel(exec, a.dtype, "spmv_p_classical", z, diag, MAX_ROW=strategy.max_row)(
        exec.queue, (groups * wg, k), (wg, 1), np.int32(n), np.int32(k), a.row_ptrs.data, a.col_idxs.data,
        a.values.data, p.values.data, r.values.data, *_stand_ins(r, z, diag), beta.values.data, q.values.data,
        pq.values.data, local_buffer(wg, a.dtype))
