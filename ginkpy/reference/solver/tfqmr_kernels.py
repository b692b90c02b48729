"""Reference kernels of Tfqmr. Columns whose stop status is nonzero are left untouched.

Scalars are 1 x k Dense of the value type; theta, tau, the half-step count m and the parity
phase (0: the half step about to run is even, 1: odd) hold real values."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason


def initialize(exec, r, u, w, r_tld, v, d, rr, tau, rho, theta, eta, m, phase, columns):
    # in the columns of the mask: u = w = r_tld = r;  v = d = 0;  rho = rr;  tau = sqrt(|rr|);
    # theta = eta = m = phase = 0
    use = columns != 0
    for vector in (u, w, r_tld):
        vector.values[:, use] = r.values[:, use]
    for vector in (v, d):
        vector.values[:, use] = 0
    rho.values[0, use] = rr.values[0, use]
    tau.values[0, use] = np.sqrt(np.abs(rr.values[0, use].real))
    for scalar in (theta, eta, m, phase):
        scalar.values[0, use] = 0


def step_1(exec, u_hat, v, phase, status):
    # where the half step is even: v = v + u_hat (v = A M u + beta (...) completed)
    go = (status == 0) & (phase.values[0].real == 0)
    v.values[:, go] += u_hat.values[:, go]


def step_2(exec, u, v, w, d, u_hat, rv, alpha, rho, theta, eta, phase, status):
    # even half step: alpha = rho / rv (rv == 0 or rho == 0: breakdown);  w = w - alpha u_hat;
    # d = u + (theta^2 eta / alpha) d;  even: u = u - alpha v
    active = status == 0
    even = phase.values[0].real == 0
    ok = ~even | ((rv.values[0] != 0) & (rho.values[0] != 0))
    status[active & ~ok] = StopReason.BREAKDOWN
    go = active & ok
    new = go & even
    alpha.values[0, new] = rho.values[0, new] / rv.values[0, new]
    a = alpha.values[0, go]
    coef = theta.values[0, go].real ** 2 * eta.values[0, go] / a
    w.values[:, go] -= a * u_hat.values[:, go]
    d.values[:, go] = u.values[:, go] + coef * d.values[:, go]
    u.values[:, new] -= alpha.values[0, new] * v.values[:, new]


def step_3(exec, ww, wr, alpha, rho, theta, eta, tau, beta, m, phase, est, status):
    # theta = ||w|| / tau (tau == 0: breakdown);  c^2 = 1 / (1 + theta^2);  tau = tau theta c;
    # eta = c^2 alpha;  m = m + 1;  est = tau^2 m (the bound tau sqrt(m) on ||r||, squared);
    # odd half step: beta = (r_tld . w) / rho, rho = r_tld . w;  phase = 1 - phase
    active = status == 0
    ok = tau.values[0].real != 0
    status[active & ~ok] = StopReason.BREAKDOWN
    go = active & ok
    t = np.sqrt(np.abs(ww.values[0, go].real)) / tau.values[0, go].real
    c2 = 1 / (1 + t * t)
    tau_new = tau.values[0, go].real * t * np.sqrt(c2)
    theta.values[0, go] = t
    tau.values[0, go] = tau_new
    eta.values[0, go] = c2 * alpha.values[0, go]
    m.values[0, go] += 1
    est.values[0, go] = tau_new * tau_new * m.values[0, go].real
    odd = go & (phase.values[0].real != 0)
    beta.values[0, odd] = wr.values[0, odd] / rho.values[0, odd]
    rho.values[0, odd] = wr.values[0, odd]
    phase.values[0, go] = 1 - phase.values[0, go]


def step_4(exec, z, x, u, w, v, u_hat, eta, beta, phase, status):
    # x = x + eta z (z = M d);  after an odd half step (phase 0 now): u = w + beta u;
    # v = beta u_hat + beta^2 v (A M u of the new u is added by the next step_1)
    go = status == 0
    x.values[:, go] += eta.values[0, go] * z.values[:, go]
    odd = go & (phase.values[0].real == 0)
    b = beta.values[0, odd]
    u.values[:, odd] = w.values[:, odd] + b * u.values[:, odd]
    v.values[:, odd] = b * (u_hat.values[:, odd] + b * v.values[:, odd])
