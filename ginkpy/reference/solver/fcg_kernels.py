"""Reference kernels of Fcg. Columns whose stop status is nonzero are left untouched.
Fcg starts with Bicg's initialize (t = r;  p = q = 0;  prev_rho = 1; core/solver/bicg.py:
start_with_shadow)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason


def step_1(exec, p, z, rho_t, prev_rho, status):
    # p = z + (rho_t / prev_rho) p  (0 for rho_t / prev_rho where prev_rho == 0)
    active = status == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        tmp = np.where(prev_rho.values[0] != 0, rho_t.values[0] / prev_rho.values[0], 0)
    p.values[:, active] = z.values[:, active] + tmp[active] * p.values[:, active]


def step_2(exec, x, r, t, p, q, beta, rho, prev_rho, status):
    # x += (rho / beta) p;  r_new = r - (rho / beta) q;  t = r_new - r;  beta <= 0 or rho == 0 is a breakdown
    active = status == 0
    ok = (beta.values[0].real > 0) & (rho.values[0] != 0)
    status[active & ~ok] = StopReason.BREAKDOWN
    go = active & ok
    alpha = rho.values[0, go] / beta.values[0, go]
    r_old = r.values[:, go]
    r_new = r_old - alpha * q.values[:, go]
    x.values[:, go] += alpha * p.values[:, go]
    t.values[:, go] = r_new - r_old
    r.values[:, go] = r_new
    prev_rho.values[0, go] = rho.values[0, go]
