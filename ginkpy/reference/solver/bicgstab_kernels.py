"""Reference kernels of Bicgstab. Columns whose stop status is nonzero are left untouched;
a zero divisor writes BREAKDOWN to the column's status instead of dividing."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.reduction_kernels import _column_sums, _set
from ginkpy.reference.components.stopping import stop_check


def initialize(exec, r, r_hat, p, v, prev_rho, alpha, omega):
    # r_hat = r;  p = v = 0;  prev_rho = alpha = omega = 1
    r_hat.values[...] = r.values
    for vec in (p, v):
        vec.values[...] = 0
    for scalar in (prev_rho, alpha, omega):
        scalar.values[...] = 1


def prepare(exec, r, r_hat, rho_new, rr):
    # partial sums of r_hat . r and r . r
    _set(rho_new, _column_sums(r_hat.values.conj() * r.values))
    _set(rr, _column_sums(r.values.conj() * r.values))


def step_1(exec, r, r_hat, p, v, rho_new, rr, rho, prev_rho, alpha, omega, rhat_sq, restart_tol, restarted, stop):
    # stop on ||r||;  restarted = |r_hat . r| <= restart_tol ||r_hat|| ||r||: there r_hat = p = r and
    # rho = r . r; elsewhere omega == 0 is a breakdown, else rho = r_hat . r and
    # p = r + (rho / prev_rho) (alpha / omega) (p - omega v)
    rr_ = rr.values.sum(axis=0)
    running = stop_check(stop, np.sqrt(rr_.real))
    if not running.any():
        return
    rho_ = rho_new.values.sum(axis=0)
    tol = rr_.real.dtype.type(restart_tol)
    restart = running & (np.abs(rho_) <= tol * np.sqrt(rhat_sq.values[0].real) * np.sqrt(rr_.real))
    restarted[running] = restart[running]
    r_hat.values[:, restart] = r.values[:, restart]
    p.values[:, restart] = r.values[:, restart]
    rho.values[0, restart] = rr_[restart]
    w = omega.values[0]
    stop.status[running & ~restart & (w == 0)] = StopReason.BREAKDOWN
    go = running & ~restart & (w != 0)
    if go.any():
        beta = (rho_[go] / prev_rho.values[0, go]) * (alpha.values[0, go] / w[go])
        p.values[:, go] = r.values[:, go] + beta * (p.values[:, go] - w[go] * v.values[:, go])
        rho.values[0, go] = rho_[go]


def step_2(exec, r, s, v, rv, rho, prev_rho, alpha, rhat_sq, restarted, status):
    # alpha = rho / (r_hat . v) (0 divisor: breakdown);  s = r - alpha v;  prev_rho = rho;
    # ||r_hat||^2 = rho where restarted
    running = status == 0
    rv_ = rv.values.sum(axis=0)
    status[running & (rv_ == 0)] = StopReason.BREAKDOWN
    go = running & (rv_ != 0)
    if not go.any():
        return
    a = rho.values[0, go] / rv_[go]
    alpha.values[0, go] = a
    s.values[:, go] = r.values[:, go] - a * v.values[:, go]
    prev_rho.values[0, go] = rho.values[0, go]
    again = go & (restarted != 0)
    rhat_sq.values[0, again] = rho.values[0, again]


def step_3(exec, x, r, r_hat, s, t, y, z, diag, st, alpha, omega, rho_new, rr, status):
    # omega = (t^H s) / (t^H t) (0 where t^H t == 0, i.e. s == 0);  x += alpha M p + omega M s
    # (y, z = p, s scaled by diag when given);  r = s - omega t;  partial sums of r_hat . r and r . r
    go = status == 0
    if go.any():
        sums = st.values.sum(axis=0)
        k = x.shape[1]
        ts, tt = sums[:k][go], sums[k:][go]
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(tt != 0, ts.conj() / tt, 0)
        omega.values[0, go] = w
        a = alpha.values[0, go]
        step = a * y.values[:, go] + w * z.values[:, go]
        x.values[:, go] += step if diag is None else diag.values * step
        r.values[:, go] = s.values[:, go] - w * t.values[:, go]
    prepare(exec, r, r_hat, rho_new, rr)
