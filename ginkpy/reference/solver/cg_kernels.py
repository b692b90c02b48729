"""Reference kernels of Cg. Columns whose stop status is nonzero are left untouched.

``z`` is M r when the preconditioner is an operator of its own, else None: then ``diag``
(D^-1 of scalar Jacobi) gives z = D^-1 r, or, None too, z = r. Partial sums on the host are
the whole sums (one row). Dot products conjugate their first argument (r . z is r^H z); for
Hermitian positive definite A and M, rho and p . q are real."""
from __future__ import annotations

import math

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.reduction_kernels import _column_dots, _set, _set_dots, _total
from ginkpy.reference.components.scratch import axpy, scratch
from ginkpy.reference.components.stopping import RUNNING, check_one, stop_check
from ginkpy.reference.matrix.csr_kernels import _product


def _z(r, z, diag):
    """z = M r as the kernels see it (D^-1 r in a scratch array)."""
    if z is not None:
        return z.values
    if diag is None:
        return r.values
    return np.multiply(diag.values, r.values, out=scratch(r.values.shape, r.values.dtype))


def initialize(exec, p, prev_rho):
    # p = 0;  prev_rho = 1
    p.values[...] = 0
    prev_rho.values[...] = 1


def prepare(exec, r, z, diag, rz, rr):
    # partial sums of r . r and r . z
    _set(rr, _column_dots(r.values, r.values))
    if rz is not rr:
        _set(rz, _column_dots(r.values, _z(r, z, diag)))


def step_1(exec, p, r, z, diag, rz, rr, rho, prev_rho, stop):
    # stop on ||r||;  rho = r . z;  p = z + (rho / prev_rho) p  (0 for rho / prev_rho where prev_rho == 0)
    if stop.status.size == 1:  # one column: plain numbers (numpy's overhead dominates small systems)
        if stop.status[0] != RUNNING or not check_one(stop, math.sqrt(_total(rr).real)):
            return
        rho_new, prev = _total(rz), prev_rho.values.item(0)
        rho.values[0, 0] = rho_new
        p.values *= rho_new / prev if prev != 0 else 0.0
        p.values += _z(r, z, diag)
        return
    running, beta = _checked(stop, rz, rr, rho, prev_rho)
    if not running.any():
        return
    zz = _z(r, z, diag)
    if running.all():
        p.values *= beta
        p.values += zz
    else:
        p.values[:, running] = zz[:, running] + beta[running] * p.values[:, running]


def step_2(exec, x, r, p, q, diag, pq, rho, prev_rho, rz, rr, stop, z=None, beta=None):
    # [with beta: p = z + beta p]  alpha = rho / (p . q) (p . q <= 0 or rho == 0: breakdown);
    # x += alpha p;  r -= alpha q;  prev_rho = rho;  partial sums of r . r and r . z
    if stop.status.size == 1:  # one column: plain numbers
        if stop.status[0] != RUNNING:
            _partials(r, diag, rz, rr)
            return
        pq_sum, rho_ = _total(pq), rho.values.item(0)
        if pq_sum.real > 0 and rho_ != 0:
            if beta is not None:
                p.values *= beta.values.item(0)
                p.values += _z(r, z, diag)
            alpha = rho_ / pq_sum
            axpy(alpha, p.values, x.values)
            axpy(-alpha, q.values, r.values)
            prev_rho.values[0, 0] = rho_
        else:
            stop.status[0] = StopReason.BREAKDOWN
        _partials(r, diag, rz, rr)
        return
    running = stop.status == RUNNING
    pq_sum, rho_ = pq.values.sum(axis=0), rho.values[0]
    ok = (pq_sum.real > 0) & (rho_ != 0)
    stop.status[running & ~ok] = StopReason.BREAKDOWN
    go = running & ok
    if go.any():
        if beta is not None:
            p.values[:, go] = _z(r, z, diag)[:, go] + beta.values[0, go] * p.values[:, go]
        alpha = rho_[go] / pq_sum[go]
        if go.all():
            x.values += alpha * p.values
            r.values -= alpha * q.values
        else:
            x.values[:, go] += alpha * p.values[:, go]
            r.values[:, go] -= alpha * q.values[:, go]
        prev_rho.values[0, go] = rho_[go]
    _partials(r, diag, rz, rr)


def forms_p(exec, a, p):
    # the reference runs Cg's iteration as written, with step_1 (check, spmv_p and step_2 with
    # beta are the twins of a device's iteration that forms p in its SpMV)
    return False


def check(exec, r, z, diag, rz, rr, rho, prev_rho, beta, stop):
    # stop on ||r||;  in the columns that run on rho = r . z and beta = rho / prev_rho (0 where
    # prev_rho == 0);  beta = 0 in the others
    running, ratio = _checked(stop, rz, rr, rho, prev_rho)
    beta.values[0] = np.where(running, ratio, 0)


def _checked(stop, rz, rr, rho, prev_rho):
    """The stopping check on ||r|| (sum of rr) and rho = r . z (sum of rz) in the columns that
    run on; returns those columns and rho / prev_rho per column (0 where prev_rho == 0)."""
    running = stop_check(stop, np.sqrt(rr.values.sum(axis=0).real))
    rho_new, prev = rz.values.sum(axis=0), prev_rho.values[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(prev != 0, rho_new / prev, 0)
    rho.values[0, running] = rho_new[running]
    return running, ratio


def spmv_p(exec, a, p, r, z, diag, beta, q, pq):
    # q = A (z + beta p);  partial sums of (z + beta p) . q  (p unchanged)
    p_new = _z(r, z, diag) + beta.values * p.values
    _product(a, p_new, q.values)
    _set_dots(pq, p_new, q.values)


def _partials(r, diag, rz, rr):
    """Partial sums of r . r, and of r . D^-1 r with scalar Jacobi (one pass, no temporary)."""
    _set_dots(rr, r.values, r.values)
    if diag is not None:
        _set(rz, np.einsum("ij,ij,ij->j", r.values.conj(), diag.values, r.values))
