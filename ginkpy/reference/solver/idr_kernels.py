"""Reference kernels of Idr. Columns whose stop status is nonzero are left untouched.

Layouts (k right-hand sides, s shadow vectors): P is s x n; G and U are s n x k with block i
in rows i n .. (i + 1) n; m is s x s k with m_{i,l} of column q at (i, l k + q); f, c and h
are s x k. A division by 0 with a numerator that is not 0 is a breakdown; 0 / 0 gives 0.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason


def _divide(num, den) -> tuple[float, bool]:
    """num / den, 0 where num == 0; False (a breakdown) when den == 0 and num is not."""
    if num == 0:
        return 0.0, True
    return (num / den, True) if den != 0 else (0.0, False)


def _block(a, i: int, n: int):
    """Block i (rows i n .. (i + 1) n) of G or U."""
    return a.values[i * n:(i + 1) * n]


def project(exec, p, v, out):
    # out = P v
    out.values[...] = p.values @ v.values


def step_1(exec, j, m, f, r, g, c, v, status):
    # c = m \ f (forward substitution, rows j .. s-1);  v = r - sum_{i >= j} c_i g_i
    (n, k), s = r.shape, f.shape[0]
    for q in np.flatnonzero(status == 0):
        mq = m.values[:, q::k]
        ok = True
        for i in range(j, s):
            c.values[i, q], ok_i = _divide(f.values[i, q] - mq[i, j:i] @ c.values[j:i, q], mq[i, i])
            ok &= ok_i
        if not ok:
            status[q] = StopReason.BREAKDOWN
            continue
        v.values[:, q] = r.values[:, q] - sum(c.values[i, q] * _block(g, i, n)[:, q] for i in range(j, s))


def step_2(exec, j, omega, z, c, u, u_j, status):
    # u_j = omega z + sum_{i >= j} c_i u_i
    (n, k), s = z.shape, c.shape[0]
    for q in np.flatnonzero(status == 0):
        u_j.values[:, q] = omega.values[0, q] * z.values[:, q] + sum(
            c.values[i, q] * _block(u, i, n)[:, q] for i in range(j, s))


def step_3(exec, j, h, m, f, g_j, u_j, g, u, r, x, status):
    # alpha = m[:j, :j] \ h[:j];  g_j -= sum_{i < j} alpha_i g_i (u_j likewise): now p_i . g_j = 0 for i < j;
    # m_{i,j} = h_i - sum_{l < j} m_{i,l} alpha_l (= p_i . g_j, i >= j);  beta = f_j / m_{j,j};
    # G, U block j = g_j, u_j;  r -= beta g_j;  x += beta u_j;  f_i -= beta m_{i,j} (i > j)
    (n, k), s = r.shape, f.shape[0]
    for q in np.flatnonzero(status == 0):
        mq = m.values[:, q::k]
        alpha = np.zeros(j, dtype=r.dtype)
        ok = True
        for i in range(j):
            alpha[i], ok_i = _divide(h.values[i, q] - mq[i, :i] @ alpha[:i], mq[i, i])
            ok &= ok_i
        m_j = h.values[j:, q] - mq[j:, :j] @ alpha
        beta, ok_beta = _divide(f.values[j, q], m_j[0])
        if not (ok and ok_beta):
            status[q] = StopReason.BREAKDOWN
            continue
        mq[j:, j] = m_j
        f.values[j + 1:, q] -= beta * m_j[1:]
        gj = g_j.values[:, q] - sum(alpha[i] * _block(g, i, n)[:, q] for i in range(j))
        uj = u_j.values[:, q] - sum(alpha[i] * _block(u, i, n)[:, q] for i in range(j))
        _block(g, j, n)[:, q] = gj
        _block(u, j, n)[:, q] = uj
        r.values[:, q] -= beta * gj
        x.values[:, q] += beta * uj


def step_4(exec, kappa, tr, tt, r_norm, omega, z, t, r, x, status):
    # omega = tr / tt, or sign(tr) kappa |r| / |t| where |tr| / (|t| |r|) < kappa;  r -= omega t;  x += omega z
    # r == 0 leaves the column as it is; t == 0 while r is not (A M singular) or omega == 0 is a breakdown
    for q in np.flatnonzero(status == 0):
        trq, ttq, rq = tr.values[0, q], tt.values[0, q], r_norm.values[0, q]
        if rq == 0:
            continue
        w = trq / ttq if ttq != 0 else 0
        if ttq != 0 and abs(trq) / (np.sqrt(ttq) * rq) < kappa:
            w = np.copysign(kappa * rq / np.sqrt(ttq), trq)
        if w == 0:
            status[q] = StopReason.BREAKDOWN
            continue
        omega.values[0, q] = w
        r.values[:, q] -= w * t.values[:, q]
        x.values[:, q] += w * z.values[:, q]
