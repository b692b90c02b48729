"""Bicgstab: the biconjugate gradient stabilized method (van der Vorst) for general systems.

Right-preconditioned as in Ginkgo (y = M p, z = M s), so the recurrence residual r is the
residual of the original system and the criteria check the true residual. A column stops
with a breakdown when rho = r_hat . r, omega or the divisor r_hat . v of alpha is 0; its
vectors keep the last valid iterate. When t . t is 0 (s is exactly 0: the half step already
solved the system) omega is set to 0, x takes the half step and r = s.
"""
from __future__ import annotations

from ginkpy.core.base.factory import parameters
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import IterationMonitor, IterativeSolver


class Bicgstab(IterativeSolver):
    @parameters
    class Parameters(IterativeSolver.Parameters):
        pass

    def _solve(self, b: Dense, x: Dense) -> None:
        exec, A, M = self.executor, self.system_matrix, self.preconditioner
        k = b.shape[1]
        r, r_hat, p, v, s, t, y, z = (b.empty_like() for _ in range(8))
        rho, prev_rho, alpha, omega, rv, ts, tt = (b.empty_like((1, k)) for _ in range(7))
        # r = b - A x
        self._residual(b, x, r)
        monitor = IterationMonitor(self, b, x, r)
        # r_hat = r, p = v = s = 0, prev_rho = alpha = omega = 1
        exec.run("solver.bicgstab.initialize", r, r_hat, p, v, s, prev_rho, alpha, omega)
        iteration = 0
        while not monitor.check(iteration, residual=r):
            # rho = r_hat . r
            r_hat.compute_dot(r, rho)
            # p = r + (rho / prev_rho) (alpha / omega) (p - omega v)
            exec.run("solver.bicgstab.step_1", r, p, v, rho, prev_rho, alpha, omega, monitor.status)
            # y = M p;  v = A y
            M.apply(p, y)
            A.apply(y, v)
            # rv = r_hat . v
            r_hat.compute_dot(v, rv)
            # alpha = rho / rv;  s = r - alpha v;  prev_rho = rho
            exec.run("solver.bicgstab.step_2", r, s, v, rho, prev_rho, alpha, rv, monitor.status)
            # z = M s;  t = A z
            M.apply(s, z)
            A.apply(z, t)
            # omega = (t . s) / (t . t)
            t.compute_dot(s, ts)
            t.compute_dot(t, tt)
            # x = x + alpha y + omega z;  r = s - omega t
            exec.run("solver.bicgstab.step_3", x, r, s, t, y, z, alpha, omega, ts, tt, monitor.status)
            iteration += 1
        monitor.finish()
