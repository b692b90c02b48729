"""Cg: the (preconditioned) conjugate gradient method for symmetric positive definite systems.

A column whose p^T A p <= 0 (the matrix or preconditioner is not positive definite) stops
with a breakdown instead of dividing by it.
"""
from __future__ import annotations

from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import IterationMonitor, IterativeSolver


class Cg(IterativeSolver):
    def _solve(self, b: Dense, x: Dense) -> None:
        exec, A = self.executor, self.system_matrix
        k = b.shape[1]
        r, p, q = (b.empty_like() for _ in range(3))
        z = Dense.zeros(exec, b.shape, b.dtype)  # the initial guess of an iterative preconditioner
        rho, prev_rho, beta, r_norm = (b.empty_like((1, k)) for _ in range(4))
        # r = b - A x
        self._residual(b, x, r)
        monitor = IterationMonitor(self, b, x, r)
        # p = q = 0, rho = 0, prev_rho = 1
        exec.run("solver.cg.initialize", p, q, rho, prev_rho, monitor.status)
        r.compute_norm2(r_norm)
        iteration = 0
        while not monitor.check(iteration, residual=r, residual_norm=r_norm):
            # z = M r
            z = self._precondition(r, z)
            # rho = r . z
            r.compute_dot(z, rho)
            # p = z + (rho / prev_rho) p
            exec.run("solver.cg.step_1", p, z, rho, prev_rho, monitor.status)
            # q = A p
            A.apply(p, q)
            # beta = p . q
            p.compute_dot(q, beta)
            # x = x + (rho / beta) p;  r = r - (rho / beta) q;  prev_rho = rho;  r_norm = ||r||
            exec.run("solver.cg.step_2", x, r, p, q, beta, rho, prev_rho, r_norm, monitor.status)
            iteration += 1
        monitor.finish()
