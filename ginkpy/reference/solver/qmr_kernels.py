"""Reference kernels of Qmr. Columns whose stop status is nonzero are left untouched.

Scalars are 1 x k Dense of the value type; rho, xi, gamma and theta hold real values. The
breakdown thresholds are SciPy's: the machine epsilon of the value type. ``kind`` (uint8, k)
records which breakdown stopped a column, as SciPy's qmr numbers them (10 rho, 11 beta, 12
gamma, 13 delta, 14 epsilon, 15 xi; its info is minus that)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.base.types import real_dtype
from ginkpy.core.stop.stopping_status import StopReason


def _eps(a):
    return np.finfo(real_dtype(a.dtype)).eps


def _breakdown(status, kind, code, active, ok):
    """Breakdown ``code`` where a running column is not ok; returns the columns that go on."""
    status[active & ~ok] = StopReason.BREAKDOWN
    kind[active & ~ok] = code
    return active & ok


def initialize(exec, p, q, d, s, yy, zz, rho, xi, gamma, eta, theta, epsilon, kind, columns):
    # in the columns of the mask: p = q = d = s = 0;  rho = sqrt(|yy|);  xi = sqrt(|zz|);
    # gamma = 1, eta = -1, theta = 0, epsilon = 1;  kind = 0
    use = columns != 0
    kind[use] = 0
    for vector in (p, q, d, s):
        vector.values[:, use] = 0
    rho.values[0, use] = np.sqrt(np.abs(yy.values[0, use].real))
    xi.values[0, use] = np.sqrt(np.abs(zz.values[0, use].real))
    for scalar, value in ((gamma, 1), (eta, -1), (theta, 0), (epsilon, 1)):
        scalar.values[0, use] = value


def step_1(exec, v_tld, y_in, w_tld, z_in, v, y, w, z, rho, xi, status, kind):
    # |rho| < eps (10) or |xi| < eps (15): breakdown;  v = v_tld / rho;  y = y_in / rho;
    # w = w_tld / xi;  z = z_in / xi
    eps = _eps(v.values)
    r, x_ = rho.values[0], xi.values[0]
    go = _breakdown(status, kind, 10, status == 0, np.abs(r) >= eps)
    go = _breakdown(status, kind, 15, go, np.abs(x_) >= eps)
    v.values[:, go] = v_tld.values[:, go] / r[go]
    y.values[:, go] = y_in.values[:, go] / r[go]
    w.values[:, go] = w_tld.values[:, go] / x_[go]
    z.values[:, go] = z_in.values[:, go] / x_[go]


def step_2(exec, y_tld, z_tld, p, q, delta, epsilon, rho, xi, status, kind):
    # |delta| < eps: breakdown (13);  p = y_tld - (xi delta / epsilon) p;
    # q = z_tld - (rho conj(delta / epsilon)) q
    dl = delta.values[0]
    go = _breakdown(status, kind, 13, status == 0, np.abs(dl) >= _eps(p.values))
    ratio = dl[go] / epsilon.values[0, go]
    p.values[:, go] = y_tld.values[:, go] - xi.values[0, go] * ratio * p.values[:, go]
    q.values[:, go] = z_tld.values[:, go] - rho.values[0, go] * np.conj(ratio) * q.values[:, go]


def step_3(exec, p_tld, v, w, v_tld, w_tld, eps_new, delta, beta, status, kind):
    # |eps_new| < eps (14) or |beta| < eps (11; beta = eps_new / delta): breakdown;
    # v_tld = p_tld - beta v;  w_tld = -conj(beta) w
    eps = _eps(v.values)
    e = eps_new.values[0]
    ok = np.abs(e) >= eps
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(ok, e / delta.values[0], 0)
    go = _breakdown(status, kind, 14, status == 0, ok)
    go = _breakdown(status, kind, 11, go, np.abs(b) >= eps)
    beta.values[0, go] = b[go]
    v_tld.values[:, go] = p_tld.values[:, go] - b[go] * v.values[:, go]
    w_tld.values[:, go] = -np.conj(b[go]) * w.values[:, go]


def step_4(exec, yy, zz, beta, eps_new, rho, xi, gamma, eta, theta, epsilon, coef, status, kind):
    # rho = sqrt(|yy|), xi = sqrt(|zz|);  theta = rho / (gamma |beta|);  gamma = 1 / sqrt(1 + theta^2)
    # (|gamma| < eps: breakdown 12);  eta = -eta (rho_prev / beta) (gamma / gamma_prev)^2;
    # coef = (theta_prev gamma)^2;  epsilon = eps_new
    active = status == 0
    rho_prev, gamma_prev, theta_prev = rho.values[0].real, gamma.values[0].real, theta.values[0].real
    rho_new = np.sqrt(np.abs(yy.values[0].real))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = rho_new / (gamma_prev * np.abs(beta.values[0]))
        g = 1 / np.sqrt(1 + t * t)
    go = _breakdown(status, kind, 12, active, np.abs(g) >= _eps(rho.values))
    b = beta.values[0, go]
    eta.values[0, go] = -eta.values[0, go] * (rho_prev[go] / b) * (g[go] / gamma_prev[go]) ** 2
    coef.values[0, go] = (theta_prev[go] * g[go]) ** 2
    rho.values[0, go] = rho_new[go]
    xi.values[0, go] = np.sqrt(np.abs(zz.values[0, go].real))
    theta.values[0, go] = t[go]
    gamma.values[0, go] = g[go]
    epsilon.values[0, go] = eps_new.values[0, go]


def step_5(exec, p, p_tld, d, s, x, r, coef, eta, status):
    # d = coef d + eta p;  s = coef s + eta p_tld;  x = x + d;  r = r - s
    go = status == 0
    c, e = coef.values[0, go], eta.values[0, go]
    d.values[:, go] = c * d.values[:, go] + e * p.values[:, go]
    s.values[:, go] = c * s.values[:, go] + e * p_tld.values[:, go]
    x.values[:, go] += d.values[:, go]
    r.values[:, go] -= s.values[:, go]
