"""Reference kernels of the batched Gmres: each item solved in turn, step by step as the device
kernel does (see ginkpy/core/batch/solver/gmres.py)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.batch_solver import dot, finite, norm, solve_items, start


def apply(exec, a, preconditioner, b, x, max_iterations, rtol, atol, krylov_dim, iterations,
          residual_norms, reasons):
    solve_items(a, preconditioner, b, x, iterations, residual_norms, reasons,
                lambda A, M, b_i, x_i: _solve(A, M, b_i, x_i, max_iterations, rtol, atol, krylov_dim))


def _solve(A, M, b, x, max_iterations, rtol, atol, m):
    """GMRES(m) on one item; x (a view) is updated in place. Returns (iterations, ||r||, reason)."""
    dtype = b.dtype
    # r = b - A x;  the threshold;  the end where no iteration is needed
    r, res, limit, end = start(A, b, x, rtol, atol)
    if end:
        return end
    x_sum = np.abs(x).sum()
    it = 0
    while it < max_iterations:
        # v_0 = r / ||r||;  g = ||r|| e_1
        V = np.zeros((m + 1, b.size), dtype)
        H = np.zeros((m + 1, m), dtype)
        cs, sn, g = np.zeros(m, dtype), np.zeros(m, dtype), np.zeros(m + 1, dtype)
        V[0] = r / res
        g[0] = res
        breakdown = False
        steps = 0
        for j in range(m):
            # w = A M v_j, orthogonalised against v_0 .. v_j (modified Gram-Schmidt)
            w = A @ M(V[j])
            for l in range(j + 1):
                H[l, j] = dot(V[l], w)
                w = w - H[l, j] * V[l]
            h = norm(w)
            H[j + 1, j] = h
            it += 1
            if not finite(h):
                breakdown = True
                break
            # the previous rotations on column j, then the one that zeroes H[j + 1, j]; a rotation is
            # [c s; -conj(s) conj(c)] with c = conj(a) / d, s = conj(b) / d, d = sqrt(|a|^2 + |b|^2)
            for l in range(j):
                H[l, j], H[l + 1, j] = (cs[l] * H[l, j] + sn[l] * H[l + 1, j],
                                        -np.conj(sn[l]) * H[l, j] + np.conj(cs[l]) * H[l + 1, j])
            d = np.hypot(abs(H[j, j]), abs(H[j + 1, j]))
            cs[j], sn[j] = ((np.conj(H[j, j]) / d, np.conj(H[j + 1, j]) / d) if d != 0
                            else (dtype.type(1), dtype.type(0)))
            H[j, j] = cs[j] * H[j, j] + sn[j] * H[j + 1, j]
            H[j + 1, j] = 0
            g[j + 1] = -np.conj(sn[j]) * g[j]
            g[j] = cs[j] * g[j]
            steps = j + 1
            if h > 0:
                V[j + 1] = w / h
            if abs(g[j + 1]) <= limit or it >= max_iterations or h == 0:
                break
        # y = R^-1 g over the leading steps whose diagonal is nonzero
        for l in range(steps):
            if H[l, l] == 0 or not finite(H[l, l]):
                breakdown = True
                steps = l
                break
        y = np.zeros(steps, dtype)
        for l in range(steps - 1, -1, -1):
            y[l] = (g[l] - H[l, l + 1:steps] @ y[l + 1:]) / H[l, l]
        # x += M V y, if it stays finite
        z = M(V[:steps].T @ y) if steps else np.zeros_like(x)
        z_sum = np.abs(z).sum()
        if not finite(x_sum + z_sum):
            return it, res, StopReason.DIVERGED
        x += z
        x_sum = np.abs(x).sum()
        # r = b - A x: the true residual decides
        r = b - A @ x
        res = norm(r)
        if res <= limit:
            return it, res, StopReason.CONVERGED
        if breakdown:
            return it, res, StopReason.BREAKDOWN
        if not finite(res):
            return it, res, StopReason.DIVERGED
    return it, res, StopReason.ITERATION_LIMIT
