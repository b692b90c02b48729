"""Idr: the induced dimension reduction method IDR(s) for general systems.

Ginkgo's variant (van Gijzen and Sonneveld, ACM TOMS 38(1), Algorithm 913: IDR(s) with
bi-orthogonalization). Each iteration makes s steps that keep the residual orthogonal to a
growing part of the shadow space P (s orthonormal vectors), then one minimal-residual step
with omega = (t . r) / (t . t), t = A M r, enlarged to kappa |r| / |t| when the angle between
t and r is too wide (|cos| < kappa: "maintaining the convergence"). One iteration costs
s + 1 products by A and M; the criteria are checked once per iteration, as in Ginkgo.

``with_subspace_dim(s)`` (default 2; at most n, larger values are reduced to n) and
``with_kappa`` (default 0.7, between 0 and 1). P is random but deterministic: the same seeded
normal samples, orthonormalized on the host at generate time, on every executor.

The new g_j is made orthogonal to p_0 .. p_{j-1} with all its projections P g_j computed in
one reduction (Gmres's multi-dot kernel) and a triangular solve with m = P^T G: Ginkgo's
modified Gram-Schmidt in exact arithmetic, with one reduction instead of j. A division by 0 whose numerator is not
0 (a singular m, or t = A M r = 0 while r is not) stops the column with a breakdown; one
whose numerator is 0 too means that component of r is already 0 and contributes nothing.
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import parameters
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import IterationMonitor, IterativeSolver

SHADOW_SPACE_SEED = 15  # Ginkgo's seed for its deterministic shadow space


def shadow_space(n: int, s: int) -> np.ndarray:
    """s x n float64 array of orthonormal rows: seeded normal samples, orthonormalized by QR."""
    samples = np.random.default_rng(SHADOW_SPACE_SEED).standard_normal((n, s))
    return np.linalg.qr(samples)[0].T


class Idr(IterativeSolver):
    @parameters
    class Parameters(IterativeSolver.Parameters):
        subspace_dim: int = attrs.field(default=2)
        kappa: float = attrs.field(default=0.7)

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        s, kappa = self.parameters.subspace_dim, self.parameters.kappa
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise ValueError(f"Idr needs with_subspace_dim(s) with an integer s >= 1, got {s!r}")
        if isinstance(kappa, bool) or not isinstance(kappa, (int, float, np.number)) or not 0 <= kappa <= 1:
            raise ValueError(f"Idr needs with_kappa(kappa) with a number from 0 to 1 (Ginkgo's default 0.7), "
                             f"got {kappa!r}")
        self.subspace_dim = min(int(s), self.shape[0])
        self.kappa = float(kappa)
        self.subspace_vectors = shadow_space(self.shape[0], self.subspace_dim)
        self._shadow: dict[int, Dense] = {}

    def _shadow_blocks(self, k: int) -> Dense:
        """P as s blocks of n x k (block i: p_i in every column) on the executor, made once per k."""
        if k not in self._shadow:
            blocks = np.repeat(self.subspace_vectors.reshape(-1, 1), k, axis=1)
            self._shadow[k] = Dense.from_numpy(self.executor, blocks, self.dtype)
        return self._shadow[k]

    def _solve(self, b: Dense, x: Dense) -> None:
        exec, A, M = self.executor, self.system_matrix, self.preconditioner
        (n, k), s = b.shape, self.subspace_dim
        P = self._shadow_blocks(k)
        r, v, t, u_j, g_j = (b.empty_like() for _ in range(5))
        # z = 0: the initial guess of M when M is an iterative solver
        z = Dense.zeros(exec, b.shape, b.dtype)
        # G = [g_0 ... g_{s-1}] and U = [u_0 ... u_{s-1}]: block i in rows i n .. (i + 1) n
        g, u = (Dense.zeros(exec, (s * n, k), b.dtype) for _ in range(2))
        # m = P^T G, lower triangular, s x s per column: m_{i,l} at (i, l k + column); at first the identity
        m = Dense.from_numpy(exec, np.repeat(np.eye(s), k, axis=1), b.dtype)
        f, c, h, alpha = (b.empty_like((s, k)) for _ in range(4))
        omega = Dense.full(exec, (1, k), 1.0, b.dtype)
        tr, tt, r_norm = (b.empty_like((1, k)) for _ in range(3))
        # r = b - A x
        self._residual(b, x, r)
        monitor = IterationMonitor(self, b, x, r)
        iteration = 0
        while not monitor.check(iteration, residual=r):
            # f = P r
            exec.run("solver.gmres.multi_dot", P, r, s, f)
            for j in range(s):
                # c = m \ f (rows j .. s-1);  v = r - sum_{i >= j} c_i g_i
                exec.run("solver.idr.step_1", j, m, f, r, g, c, v, monitor.status)
                # z = M v
                M.apply(v, z)
                # u_j = omega z + sum_{i >= j} c_i u_i
                exec.run("solver.idr.step_2", j, omega, z, c, u, u_j, monitor.status)
                # g_j = A u_j;  h = P g_j
                A.apply(u_j, g_j)
                exec.run("solver.gmres.multi_dot", P, g_j, s, h)
                # (g_j, u_j) -= sum_{i < j} alpha_i (g_i, u_i) with alpha = m \ h, so p_i . g_j = 0 (i < j);
                # m_{i,j} = p_i . g_j (i >= j);  beta = f_j / m_{j,j};  f_i -= beta m_{i,j} (i > j);
                # r -= beta g_j;  x += beta u_j
                exec.run("solver.idr.step_3", j, h, m, f, alpha, g_j, u_j, g, u, r, x, monitor.status)
            # z = M r;  t = A z
            M.apply(r, z)
            A.apply(z, t)
            # omega = (t . r) / (t . t), enlarged when |t . r| < kappa |t| |r|;  r -= omega t;  x += omega z
            t.compute_dot(r, tr)
            t.compute_dot(t, tt)
            r.compute_norm2(r_norm)
            exec.run("solver.idr.step_4", self.kappa, tr, tt, r_norm, omega, z, t, r, x, monitor.status)
            iteration += 1
        monitor.finish()
