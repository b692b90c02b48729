"""Reference kernels of Idr. Columns whose stop status is nonzero are left untouched.

Layouts (k right-hand sides, s shadow vectors): G and U are s n x k with block i in rows
i n .. (i + 1) n; m is s x s k with m_{i,l} of column q at (i, l k + q); f, c, h and alpha
are s x k. A division by 0 with a numerator that is not 0 is a breakdown; 0 / 0 gives 0.
Sums run in the order of the OpenCL kernels, so that both round alike.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason


def _divide(num, den):
    """num / den, 0 where num == 0; None (a breakdown) when den == 0 and num is not."""
    if num == 0:
        return 0.0
    return num / den if den != 0 else None


def _block(a, i: int, n: int):
    """Block i (rows i n .. (i + 1) n) of G or U."""
    return a.values[i * n:(i + 1) * n]


def step_1(exec, j, m, f, r, g, c, v, status):
    # c = m \ f (forward substitution, rows j .. s-1);  v = r - sum_{i >= j} c_i g_i
    (n, k), s = r.shape, f.shape[0]
    for q in np.flatnonzero(status == 0):
        for i in range(j, s):
            num = f.values[i, q]
            for l in range(j, i):
                num -= m.values[i, l * k + q] * c.values[l, q]
            c_i = _divide(num, m.values[i, i * k + q])
            if c_i is None:
                status[q] = StopReason.BREAKDOWN
                break
            c.values[i, q] = c_i
        else:
            value = r.values[:, q].copy()
            for i in range(j, s):
                value -= c.values[i, q] * _block(g, i, n)[:, q]
            v.values[:, q] = value


def step_2(exec, j, omega, z, c, u, u_j, status):
    # u_j = omega z + sum_{i >= j} c_i u_i
    n, s = z.shape[0], c.shape[0]
    for q in np.flatnonzero(status == 0):
        value = omega.values[0, q] * z.values[:, q]
        for i in range(j, s):
            value += c.values[i, q] * _block(u, i, n)[:, q]
        u_j.values[:, q] = value


def step_3(exec, j, h, m, f, alpha, g_j, u_j, g, u, r, x, status):
    # alpha_i = (h_i - sum_{l < i} m_{i,l} alpha_l) / m_{i,i} (i < j), so that g_j - sum alpha_i g_i is orthogonal
    # to p_0 .. p_{j-1};  m_{i,j} = h_i - sum_{l < j} m_{i,l} alpha_l (= p_i . g_j, i >= j);
    # beta = alpha_j = f_j / m_{j,j};  f_i -= beta m_{i,j} (i > j);
    # g_j -= sum_{i < j} alpha_i g_i, u_j likewise, stored as block j of G and U;  r -= beta g_j;  x += beta u_j
    (n, k), s = r.shape, f.shape[0]
    for q in np.flatnonzero(status == 0):
        if not _step_3_scalars(j, s, k, q, h, m, f, alpha):
            status[q] = StopReason.BREAKDOWN
            continue
        gj, uj = g_j.values[:, q].copy(), u_j.values[:, q].copy()
        for i in range(j):
            gj -= alpha.values[i, q] * _block(g, i, n)[:, q]
            uj -= alpha.values[i, q] * _block(u, i, n)[:, q]
        _block(g, j, n)[:, q] = gj
        _block(u, j, n)[:, q] = uj
        beta = alpha.values[j, q]
        r.values[:, q] -= beta * gj
        x.values[:, q] += beta * uj


def _step_3_scalars(j, s, k, q, h, m, f, alpha) -> bool:
    """alpha, m_{i,j}, beta and f of step_3 for column q; False on a breakdown."""
    for i in range(s):
        num = h.values[i, q]
        for l in range(min(i, j)):
            num -= m.values[i, l * k + q] * alpha.values[l, q]
        if i < j:
            alpha_i = _divide(num, m.values[i, i * k + q])
            if alpha_i is None:
                return False
            alpha.values[i, q] = alpha_i
        else:
            m.values[i, j * k + q] = num
    beta = _divide(f.values[j, q], m.values[j, j * k + q])
    if beta is None:
        return False
    alpha.values[j, q] = beta
    for i in range(j + 1, s):
        f.values[i, q] -= beta * m.values[i, j * k + q]
    return True


def step_4(exec, kappa, tr, tt, r_norm, omega, z, t, r, x, status):
    # omega = tr / tt, or (tr / |tr|) kappa |r| / |t| where |tr| / (|t| |r|) < kappa;  x += omega z;
    # r -= omega t (in this order: z may be r itself, without a preconditioner)
    # r == 0 leaves the column as it is; t == 0 while r is not (A M singular) or omega == 0 is a breakdown
    for q in np.flatnonzero(status == 0):
        trq, ttq, rq = tr.values[0, q], tt.values[0, q].real, r_norm.values[0, q]
        if rq == 0:
            continue
        w = trq / ttq if ttq != 0 else 0
        if ttq != 0 and abs(trq) / (np.sqrt(ttq) * rq) < kappa:
            phase = trq / abs(trq) if trq != 0 else 1
            w = phase * (kappa * rq / np.sqrt(ttq))
        if w == 0:
            status[q] = StopReason.BREAKDOWN
            continue
        omega.values[0, q] = w
        x.values[:, q] += w * z.values[:, q]
        r.values[:, q] -= w * t.values[:, q]
