"""Reference kernels of the batched Bicgstab: each item solved in turn, step by step as the
device kernel does (see ginkpy/core/batch/solver/bicgstab.py)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.batch_solver import dot, finite, norm, solve_items, start


def apply(exec, a, preconditioner, b, x, max_iterations, rtol, atol, iterations, residual_norms,
          reasons):
    solve_items(a, preconditioner, b, x, iterations, residual_norms, reasons,
                lambda A, M, b_i, x_i: _solve(A, M, b_i, x_i, max_iterations, rtol, atol))


def _solve(A, M, b, x, max_iterations, rtol, atol):
    """Bicgstab on one item; x (a view) is updated in place. Returns (iterations, ||r||, reason)."""
    one = b.dtype.type(1)
    # r = b - A x;  the threshold;  the end where no iteration is needed
    r, res, limit, end = start(A, b, x, rtol, atol)
    if end:
        return end
    x_sum = np.abs(x).sum()
    # (re)start: r_hat = r;  p = v = 0;  rho_old = alpha = omega = 1;  rho = r_hat . r
    r_hat, p, v = r.copy(), np.zeros_like(r), np.zeros_like(r)
    rho_old = alpha = omega = one
    rho = dot(r_hat, r)
    rhat_norm = res
    it = 0
    while it < max_iterations:
        # restart where r_hat is numerically orthogonal to r, as Bicgstab (core/solver/bicgstab.py)
        restart = finite(rho) and abs(rho) <= 100 * np.finfo(b.dtype).eps * rhat_norm * res
        if not finite(rho) or (omega == 0 and not restart):
            return it, res, StopReason.BREAKDOWN
        if restart:
            # r_hat = p = r;  rho = r . r
            r_hat, p = r.copy(), r.copy()
            rho = one * res * res
            rhat_norm = res
        else:
            # p = r + beta (p - omega v)
            beta = (rho / rho_old) * (alpha / omega)
            p = r + beta * (p - omega * v)
        # p_hat = M p
        p_hat = M(p)
        p_sum = np.abs(p_hat).sum()
        # v = A p_hat;  alpha = rho / (r_hat . v)
        v = A @ p_hat
        rv = dot(r_hat, v)
        if rv == 0 or not finite(rv, rho / rv):
            return it, res, StopReason.BREAKDOWN
        alpha = rho / rv
        # s = r - alpha v;  s_hat = M s
        s = r - alpha * v
        s_hat = M(s)
        s_res = norm(s)
        s_sum = np.abs(s_hat).sum()
        it += 1
        if s_res <= limit:
            # x += alpha p_hat, if the true residual meets the tolerance the item has converged
            # x_sum bounds sum|x|: it grows by the step's sum|alpha p_hat| (as the device keeps it)
            if not finite(x_sum + abs(alpha) * p_sum):
                return it, res, StopReason.DIVERGED
            x += alpha * p_hat
            x_sum += abs(alpha) * p_sum
        else:
            # t = A s_hat;  omega = (t^H s) / (t^H t)
            t = A @ s_hat
            ts, tt = dot(t, s), dot(t, t).real
            if tt == 0 or not finite(tt, ts / tt):
                return it, res, StopReason.BREAKDOWN
            omega = ts / tt
            if not finite(x_sum + abs(alpha) * p_sum + abs(omega) * s_sum):
                return it, res, StopReason.DIVERGED
            # x += alpha p_hat + omega s_hat;  r = s - omega t;  rho_new = r_hat . r
            x += alpha * p_hat + omega * s_hat
            r = s - omega * t
            res = norm(r)
            rho_new = dot(r_hat, r)
            x_sum += abs(alpha) * p_sum + abs(omega) * s_sum
            if not finite(res):
                return it, res, StopReason.DIVERGED
            if res > limit:
                rho_old, rho = rho, rho_new
                continue
        # the recurrence says converged: check the true residual, else restart from x
        r = b - A @ x
        res = norm(r)
        if res <= limit:
            return it, res, StopReason.CONVERGED
        r_hat, p, v = r.copy(), np.zeros_like(r), np.zeros_like(r)
        rho_old = alpha = omega = one
        rho = dot(r_hat, r)
        rhat_norm = res
    return it, res, StopReason.ITERATION_LIMIT
