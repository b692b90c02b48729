"""Reference kernels of the batched Cg: each item solved in turn, step by step as the device
kernel does (see ginkpy/core/batch/solver/cg.py)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.batch_solver import dot, finite, norm, solve_items, start


def apply(exec, a, preconditioner, b, x, max_iterations, rtol, atol, iterations, residual_norms,
          reasons):
    solve_items(a, preconditioner, b, x, iterations, residual_norms, reasons,
                lambda A, M, b_i, x_i: _solve(A, M, b_i, x_i, max_iterations, rtol, atol))


def _solve(A, M, b, x, max_iterations, rtol, atol):
    """Cg on one item; x (a view) is updated in place. Returns (iterations, ||r||, reason)."""
    # r = b - A x;  the threshold;  the end where no iteration is needed
    r, res, limit, end = start(A, b, x, rtol, atol)
    if end:
        return end
    # z = M r;  p = z;  rho = r^H z
    z = M(r)
    p = z.copy()
    rho = dot(r, z)
    x_sum = np.abs(x).sum()
    it = 0
    while it < max_iterations:
        # Ap = A p;  p^H A p
        Ap = A @ p
        pAp = dot(p, Ap)
        p_sum = np.abs(p).sum()
        if not (pAp.real > 0) or not finite(pAp, rho) or rho == 0:
            return it, res, StopReason.BREAKDOWN
        alpha = rho / pAp
        if not finite(alpha):
            return it, res, StopReason.BREAKDOWN
        # x + alpha p stays finite: |x_r + alpha p_r| <= sum|x| + |alpha| sum|p|; x_sum bounds sum|x|
        # (it grows by |alpha| sum|p| each step, as the device keeps it: no sum over x per iteration)
        x_bound = x_sum + abs(alpha) * p_sum
        if not finite(x_bound):
            return it, res, StopReason.DIVERGED
        # x += alpha p;  r -= alpha Ap;  z = M r;  rho_new = r^H z
        x += alpha * p
        r -= alpha * Ap
        z = M(r)
        rho_new = dot(r, z)
        res = norm(r)
        x_sum = x_bound
        it += 1
        if not finite(res):
            return it, res, StopReason.DIVERGED
        if res <= limit:
            # converged only if the true residual b - A x meets the tolerance too
            t = b - A @ x
            true_res = norm(t)
            if true_res <= limit:
                return it, true_res, StopReason.CONVERGED
            # residual replacement
            r = t
            z = M(r)
            rho_new = dot(r, z)
            res = true_res
        # p = z + (rho_new / rho) p
        p = z + (rho_new / rho) * p
        rho = rho_new
    return it, res, StopReason.ITERATION_LIMIT
