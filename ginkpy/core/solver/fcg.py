"""Fcg: the flexible conjugate gradient method for symmetric positive definite systems.

Cg whose preconditioner may change from one application to the next (an inner iterative
solver, for example). As in Ginkgo, the direction update uses the Polak-Ribiere form
beta = (z . (r - r_old)) / prev_rho instead of Cg's rho / prev_rho, with t = r - r_old kept
by the update step. With a fixed SPD preconditioner it matches Cg in exact arithmetic. A
column whose p^T A p <= 0 or rho = r . z is 0 stops with a breakdown, as in Cg.
"""
from __future__ import annotations

from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import IterationMonitor, IterativeSolver


class Fcg(IterativeSolver):
    def _solve(self, b: Dense, x: Dense) -> None:
        exec, A, M = self.executor, self.system_matrix, self.preconditioner
        k = b.shape[1]
        r, p, q, t = (b.empty_like() for _ in range(4))
        # z = 0: the initial guess of M when M is an iterative solver
        z = Dense.zeros(exec, b.shape, b.dtype)
        rho, rho_t, prev_rho, beta = (b.empty_like((1, k)) for _ in range(4))
        # r = b - A x
        self._residual(b, x, r)
        monitor = IterationMonitor(self, b, x, r)
        # t = r;  p = q = 0;  prev_rho = 1
        exec.run("solver.fcg.initialize", r, t, p, q, prev_rho)
        iteration = 0
        while not monitor.check(iteration, residual=r):
            # z = M r
            M.apply(r, z)
            # rho = r . z;  rho_t = t . z
            r.compute_dot(z, rho)
            t.compute_dot(z, rho_t)
            # p = z + (rho_t / prev_rho) p
            exec.run("solver.fcg.step_1", p, z, rho_t, prev_rho, monitor.status)
            # q = A p
            A.apply(p, q)
            # beta = p . q
            p.compute_dot(q, beta)
            # x = x + (rho / beta) p;  r_new = r - (rho / beta) q;  t = r_new - r;  prev_rho = rho
            exec.run("solver.fcg.step_2", x, r, t, p, q, beta, rho, prev_rho, monitor.status)
            iteration += 1
        monitor.finish()
