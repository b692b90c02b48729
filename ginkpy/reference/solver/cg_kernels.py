"""Reference kernels of Cg. Columns whose stop status is nonzero are left untouched."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.matrix.dense_kernels import compute_norm2


def initialize(exec, p, q, rho, prev_rho, status):
    p.values[...] = 0
    q.values[...] = 0
    rho.values[...] = 0
    prev_rho.values[...] = 1


def step_1(exec, p, z, rho, prev_rho, status):
    # p = z + (rho / prev_rho) p  (tmp = 0 where prev_rho == 0)
    active = status == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        tmp = np.where(prev_rho.values[0] != 0, rho.values[0] / prev_rho.values[0], 0)
    p.values[:, active] = z.values[:, active] + tmp[active] * p.values[:, active]


def step_2(exec, x, r, p, q, beta, rho, prev_rho, r_norm, status):
    # x += (rho / beta) p;  r -= (rho / beta) q;  beta <= 0 or rho == 0 is a breakdown;  r_norm = ||r||
    active = status == 0
    ok = (beta.values[0] > 0) & (rho.values[0] != 0)
    status[active & ~ok] = StopReason.BREAKDOWN
    go = active & ok
    alpha = rho.values[0, go] / beta.values[0, go]
    x.values[:, go] += alpha * p.values[:, go]
    r.values[:, go] -= alpha * q.values[:, go]
    prev_rho.values[0, go] = rho.values[0, go]
    compute_norm2(exec, r, r_norm)
