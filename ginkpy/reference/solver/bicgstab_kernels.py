"""Reference kernels of Bicgstab. Columns whose stop status is nonzero are left untouched;
a zero divisor writes BREAKDOWN to the column's status instead of dividing."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.matrix import dense_kernels


def initialize(exec, r, r_hat, p, v, s, prev_rho, alpha, omega):
    # r_hat = r;  p = v = s = 0;  prev_rho = alpha = omega = 1
    r_hat.values[...] = r.values
    for vec in (p, v, s):
        vec.values[...] = 0
    for scalar in (prev_rho, alpha, omega):
        scalar.values[...] = 1


def compute_dots(exec, a, b, ab, bb):
    # ab = a . b;  bb = b . b  (per column, every column)
    dense_kernels.compute_dot(exec, a, b, ab)
    dense_kernels.compute_dot(exec, b, b, bb)


def _breakdown(status, ok):
    """Flag running columns that fail ``ok`` as broken down; the columns to update."""
    active = status == 0
    status[active & ~ok] = StopReason.BREAKDOWN
    return active & ok


def step_1(exec, r, r_hat, p, v, rho, rr, rhat_sq, prev_rho, alpha, omega, restart_tol, restarted, status):
    # restarted = |rho| <= restart_tol ||r_hat|| ||r||: there r_hat = p = r; elsewhere omega == 0 is a
    # breakdown, else p = r + (rho / prev_rho) (alpha / omega) (p - omega v)
    active = status == 0
    tol = rho.dtype.type(restart_tol)
    restart = active & (np.abs(rho.values[0]) <= tol * np.sqrt(rhat_sq.values[0]) * np.sqrt(rr.values[0]))
    restarted[active] = restart[active]
    r_hat.values[:, restart] = r.values[:, restart]
    p.values[:, restart] = r.values[:, restart]
    go = _breakdown(status, restart | (omega.values[0] != 0)) & ~restart
    w = omega.values[0, go]
    beta = (rho.values[0, go] / prev_rho.values[0, go]) * (alpha.values[0, go] / w)
    p.values[:, go] = r.values[:, go] + beta * (p.values[:, go] - w * v.values[:, go])


def step_2(exec, r, s, v, rho, rr, rhat_sq, prev_rho, alpha, rv, restarted, status):
    # rho = rhat_sq = rr where restarted;  alpha = rho / rv;  s = r - alpha v;  prev_rho = rho;
    # rv == 0 is a breakdown
    go = _breakdown(status, rv.values[0] != 0)
    restart = go & (restarted != 0)
    rho_go = np.where(restart[go], rr.values[0, go], rho.values[0, go])
    alpha.values[0, go] = rho_go / rv.values[0, go]
    s.values[:, go] = r.values[:, go] - alpha.values[0, go] * v.values[:, go]
    prev_rho.values[0, go] = rho_go
    rhat_sq.values[0, restart] = rr.values[0, restart]


def step_3(exec, x, r, s, t, y, z, alpha, omega, ts, tt, status):
    # omega = ts / tt (0 where tt == 0, i.e. s == 0);  x += alpha y + omega z;  r = s - omega t
    go = status == 0
    tt_go = tt.values[0, go]
    with np.errstate(divide="ignore", invalid="ignore"):
        omega.values[0, go] = np.where(tt_go != 0, ts.values[0, go] / tt_go, 0)
    w = omega.values[0, go]
    x.values[:, go] += alpha.values[0, go] * y.values[:, go] + w * z.values[:, go]
    r.values[:, go] = s.values[:, go] - w * t.values[:, go]
