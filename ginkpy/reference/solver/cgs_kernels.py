"""Reference kernels of Cgs. Columns whose stop status is nonzero are left untouched.
Cgs starts with Bicg's initialize (r_tld = r;  p = q = 0;  prev_rho = 1; core/solver/bicg.py:
start_with_shadow)."""
from __future__ import annotations

from ginkpy.core.stop.stopping_status import StopReason


def step_1(exec, r, u, p, q, rho, prev_rho, status):
    # beta = rho / prev_rho;  u = r + beta q;  p = u + beta (q + beta p);  rho == 0 is a breakdown
    # (prev_rho is 1 or a rho that passed this check, so it is never 0)
    active = status == 0
    ok = rho.values[0] != 0
    status[active & ~ok] = StopReason.BREAKDOWN
    go = active & ok
    beta = rho.values[0, go] / prev_rho.values[0, go]
    u.values[:, go] = r.values[:, go] + beta * q.values[:, go]
    p.values[:, go] = u.values[:, go] + beta * (q.values[:, go] + beta * p.values[:, go])


def step_2(exec, u, v_hat, q, t, alpha, rho, gamma, status):
    # alpha = rho / gamma;  q = u - alpha v_hat;  t = u + q;  gamma == 0 is a breakdown
    active = status == 0
    ok = gamma.values[0] != 0
    status[active & ~ok] = StopReason.BREAKDOWN
    go = active & ok
    alpha.values[0, go] = rho.values[0, go] / gamma.values[0, go]
    q.values[:, go] = u.values[:, go] - alpha.values[0, go] * v_hat.values[:, go]
    t.values[:, go] = u.values[:, go] + q.values[:, go]


def step_3(exec, u_hat, x, alpha, rho, prev_rho, status):
    # x += alpha u_hat;  prev_rho = rho
    go = status == 0
    x.values[:, go] += alpha.values[0, go] * u_hat.values[:, go]
    prev_rho.values[0, go] = rho.values[0, go]
