"""Reference kernels of Bicg. Columns whose stop status is nonzero are left untouched."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason


def initialize(exec, r, r2, p, p2, prev_rho):
    # r2 = r;  p = p2 = 0;  prev_rho = 1
    r2.values[...] = r.values
    p.values[...] = 0
    p2.values[...] = 0
    prev_rho.values[...] = 1


def step_1(exec, p, z, p2, z2, rho, prev_rho, status):
    # p = z + (rho / prev_rho) p;  p2 = z2 + conj(rho / prev_rho) p2  (tmp = 0 where prev_rho == 0)
    active = status == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        tmp = np.where(prev_rho.values[0] != 0, rho.values[0] / prev_rho.values[0], 0)[active]
    p.values[:, active] = z.values[:, active] + tmp * p.values[:, active]
    p2.values[:, active] = z2.values[:, active] + np.conj(tmp) * p2.values[:, active]


def step_2(exec, x, r, r2, p, q, q2, beta, rho, prev_rho, status):
    # x += (rho / beta) p;  r -= (rho / beta) q;  r2 -= conj(rho / beta) q2;  beta == 0 or rho == 0 is a breakdown
    active = status == 0
    ok = (beta.values[0] != 0) & (rho.values[0] != 0)
    status[active & ~ok] = StopReason.BREAKDOWN
    go = active & ok
    alpha = rho.values[0, go] / beta.values[0, go]
    x.values[:, go] += alpha * p.values[:, go]
    r.values[:, go] -= alpha * q.values[:, go]
    r2.values[:, go] -= np.conj(alpha) * q2.values[:, go]
    prev_rho.values[0, go] = rho.values[0, go]
