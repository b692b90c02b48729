"""Reference kernels of Minres. Columns whose stop status is nonzero are left untouched.

The preconditioner is M v = z_tilde where it is an operator of its own, D^-1 v with scalar
Jacobi (``diag``), else v itself (then z is None: z = q). Partial sums on the host are the
whole sums (one row). ``state`` / ``state_old`` hold per column (rows) beta_k, delta, cos,
sin, cos_prev, sin_prev and eta; step_2 reads ``state_old`` and writes ``state``, step_1 copies
``state`` to ``state_old``. Dot products conjugate their first argument."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.reduction_kernels import _column_sums, _set, _set_dots
from ginkpy.reference.components.stopping import RUNNING, stop_check

GAMMA, DELTA, COS, SIN, COS_PREV, SIN_PREV, ETA = range(7)
# v . M v below 0 by at most this many epsilons of |alpha|^2 + |beta|^2 is rounding: taken as 0
ROUNDING = 100


def _m(v, z_tilde, diag):
    """M v as the kernels see it."""
    if z_tilde is not None:
        return z_tilde.values
    if diag is None:
        return v.values
    return diag.values * v.values


def _sums(partials):
    return partials.values.sum(axis=0)


def initialize(exec, r, zr, diag, q, z, q_prev, p, p_prev, rz, state, status, mask):
    # in the running columns of `mask` (None: every one): beta = sqrt(r . M r) (sum of rz; < 0 or
    # not finite: breakdown);  q = r / beta;  z = M r / beta (0 where beta == 0);
    # q_prev = p = p_prev = 0;  gamma = delta = sin = cos_prev = sin_prev = 0, cos = 1, eta = beta
    run = status == RUNNING
    if mask is not None:
        run &= mask.astype(bool)
    beta2 = _sums(rz).real
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(beta2) & (beta2 >= 0)
    status[run & ~ok] = StopReason.BREAKDOWN
    go = run & ok
    if not go.any():
        return
    beta = np.sqrt(np.where(go, beta2, 0))
    inv = np.where(beta > 0, 1 / np.where(beta > 0, beta, 1), 0)
    q.values[:, go] = r.values[:, go] * inv[go]
    if z is not None:
        z.values[:, go] = (zr.values[:, go] if zr is not None else diag.values * r.values[:, go]) * inv[go]
    for vec in (q_prev, p, p_prev):
        vec.values[:, go] = 0
    s = state.values
    s[:, go] = 0
    s[COS, go] = 1
    s[ETA, go] = beta[go]


def step_1(exec, v, q, q_prev, diag, za, rr, vz, state, state_old, stop, check):
    # state_old = state;  where `check`: the stopping check on ||r|| (sqrt of the sum of rr) or,
    # without a preconditioner (rr None), on |eta|;  in running columns: alpha = z . A z (sum of
    # za);  v = v - alpha q - beta q_prev;  partials of v . M v (with M scalar Jacobi or none;
    # vz None with an operator M, whose product and dots follow)
    state_old.values[...] = state.values
    running = stop.status == RUNNING
    if check:
        norms = np.sqrt(_sums(rr).real) if rr is not None else np.abs(state.values[ETA])
        running = stop_check(stop, norms)
    if running.any():
        alpha = _sums(za)
        beta = state.values[GAMMA]
        go = running if not running.all() else slice(None)
        v.values[:, go] -= alpha[go] * q.values[:, go] + beta[go] * q_prev.values[:, go]
    if vz is not None:
        _partials(v, diag, vz)


def _partials(v, diag, vz):
    """Partial sums of v . M v for M = D^-1 or none, every column."""
    if diag is None:
        _set_dots(vz, v.values, v.values)
    else:
        _set(vz, _column_sums(v.values.conj() * diag.values * v.values))


def step_2(exec, x, r, p, p_prev, q, q_prev, z, v, z_tilde, diag, za, vz, state_old, state, rr, status):
    # beta = sqrt(v . M v) (below 0 by a rounding: 0; else, or not finite: breakdown);  the two
    # last rotations applied to T's new column and a new rotation (h = 0: breakdown);  in running
    # columns: p_prev, p = p, (z - gamma p - delta p_prev) / h;  x += c eta p;  q_prev, q = q,
    # v / beta;  z = M v / beta;  r = |s|^2 r + eta_next c q;  the state written;  partials of r . r
    alpha, beta2 = _sums(za), _sums(vz).real
    old = state_old.values
    gamma, cos, sin, cos_prev, sin_prev, eta = (old[i] for i in (GAMMA, COS, SIN, COS_PREV, SIN_PREV, ETA))
    eps = np.finfo(beta2.dtype).eps
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ok = np.isfinite(beta2) & (beta2 >= -ROUNDING * eps * (np.abs(alpha) ** 2 + np.abs(gamma) ** 2))
        beta = np.sqrt(np.maximum(np.where(ok, beta2, 0), 0))
        # T's new column rotated by the last two rotations
        delta = sin_prev * gamma
        # (G = [[c, s], [-conj(s), conj(c)]]: Ginkgo's kernels leave out the conjugates of c, which
        # lets the rounding in a complex c grow until the recurrence parts from the residual)
        gamma_r = np.conj(cos_prev) * cos * gamma + sin * alpha
        alpha_r = np.conj(cos) * alpha - np.conj(sin) * np.conj(cos_prev) * gamma
        # the new rotation: c alpha_r + s beta = h, -conj(s) alpha_r + conj(c) beta = 0
        h = np.hypot(np.abs(alpha_r), beta)
        ok &= np.isfinite(h) & (h != 0)
        safe_h = np.where(ok, h, 1)
        c_new = np.conj(alpha_r) / safe_h
        s_new = beta / safe_h
        eta_next = -np.conj(s_new) * eta
        inv_beta = np.where(beta > 0, 1 / np.where(beta > 0, beta, 1), 0)
    running = status == RUNNING
    status[running & ~ok] = StopReason.BREAKDOWN
    go = running & ok
    if go.any():
        c = go if not go.all() else slice(None)
        zk = (q if z is None else z).values[:, c]
        pk = (zk - gamma_r[c] * p.values[:, c] - delta[c] * p_prev.values[:, c]) / safe_h[c]
        p_prev.values[:, c] = p.values[:, c]
        p.values[:, c] = pk
        x.values[:, c] += (c_new * eta)[c] * pk
        q_new = v.values[:, c] * inv_beta[c]
        if z is not None:
            z.values[:, c] = _m(v, z_tilde, diag)[:, c] * inv_beta[c]
        if r is not None:
            r.values[:, c] = np.abs(s_new[c]) ** 2 * r.values[:, c] + (eta_next * c_new)[c] * q_new
        q_prev.values[:, c] = q.values[:, c]
        q.values[:, c] = q_new
        new = state.values
        new[GAMMA, c], new[DELTA, c], new[COS, c], new[SIN, c] = beta[c], delta[c], c_new[c], s_new[c]
        new[COS_PREV, c], new[SIN_PREV, c], new[ETA, c] = cos[c], sin[c], eta_next[c]
    if rr is not None:
        _set_dots(rr, r.values, r.values)
