"""Reference kernels of PipeCg. Columns whose stop status is nonzero are left untouched.

``m`` is M w when the preconditioner is an operator of its own, else None: then ``diag``
(D^-1 of scalar Jacobi) gives m = D^-1 w, or, None too, m = w. The partial sums ``dots`` are
(r, u), (u, w) and (r, r) side by side (1 x 3k on the host: the whole sums), the first
argument conjugated."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.reduction_kernels import _column_dots, _set
from ginkpy.reference.components.stopping import stop_check


def _dots(r, u, w, dots):
    # partial sums of (r, u), (u, w), (r, r)
    _set(dots, np.concatenate([_column_dots(r.values, u.values), _column_dots(u.values, w.values),
                               _column_dots(r.values, r.values)]))


def initialize(exec, r, u, w, z, q, s, p, gamma_prev, dots, columns):
    # in the columns (all where columns is None): z = q = s = p = 0, gamma_prev = 0 (the next
    # step is a first one);  partial sums of (r, u), (u, w), (r, r) of every column
    cols = slice(None) if columns is None else columns.astype(bool)
    for v in (z, q, s, p):
        v.values[:, cols] = 0
    gamma_prev.values[:, cols] = 0
    _dots(r, u, w, dots)


def step_1(exec, dots, gamma_prev, alpha_prev, alpha, beta, stop):
    # stop on ||r|| = sqrt((r, r));  beta = gamma / gamma_prev (0 where gamma_prev is 0: a first
    # step);  alpha = gamma / (delta - beta gamma / alpha_prev);  gamma_prev = gamma, alpha_prev =
    # alpha.  gamma == 0 or delta - beta gamma / alpha_prev <= 0: breakdown
    k = stop.k
    sums = dots.values.sum(axis=0)
    gamma, delta, rr = sums[:k], sums[k:2 * k], sums[2 * k:]
    running = stop_check(stop, np.sqrt(rr.real))
    if not running.any():
        return
    prev = gamma_prev.values[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        first = prev == 0
        beta_ = np.where(first, 0, gamma / np.where(first, 1, prev))
        denom = delta - np.where(first, 0, beta_ * gamma / np.where(first, 1, alpha_prev.values[0]))
        ok = (denom.real > 0) & (gamma != 0)
        alpha_ = gamma / np.where(ok, denom, 1)
    stop.status[running & ~ok] = StopReason.BREAKDOWN
    go = running & ok
    alpha.values[0, go], beta.values[0, go] = alpha_[go], beta_[go]
    gamma_prev.values[0, go], alpha_prev.values[0, go] = gamma[go], alpha_[go]


def step_2(exec, x, r, u, w, m, n, z, q, s, p, diag, alpha, beta, dots, stop):
    # in the running columns: z = n + beta z;  q = m + beta q;  s = w + beta s;  p = u + beta p;
    # x += alpha p;  r -= alpha s;  u -= alpha q;  w -= alpha z.  Partial sums of the new (r, u),
    # (u, w), (r, r) of every column
    go = stop.status == 0
    if go.any():
        cols = slice(None) if go.all() else go
        a, b = alpha.values[:, cols], beta.values[:, cols]
        mm = (m.values if m is not None else diag.values * w.values if diag is not None else w.values)[:, cols]
        for v, new in ((z, n.values[:, cols]), (q, mm), (s, w.values[:, cols]), (p, u.values[:, cols])):
            v.values[:, cols] = new + b * v.values[:, cols]
        x.values[:, cols] += a * p.values[:, cols]
        r.values[:, cols] -= a * s.values[:, cols]
        u.values[:, cols] -= a * q.values[:, cols]
        w.values[:, cols] -= a * z.values[:, cols]
    _dots(r, u, w, dots)
