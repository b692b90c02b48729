"""Bicgstab: the biconjugate gradient stabilized method (van der Vorst) for general systems.

Right-preconditioned as in Ginkgo (y = M p, z = M s), so the recurrence residual r is the
residual of the original system and the criteria check the true residual.

Restarts: once the shadow residual r_hat is numerically orthogonal to r, that is
|rho| = |r_hat . r| <= 100 eps ||r_hat|| ||r|| with eps the machine epsilon of the value type,
the column restarts: r_hat = p = r and rho = r . r (the first step of the method again, from
the current x). Below that bound rho is at the level of its own rounding error (a dot product
of n terms is typically off by up to sqrt(n) eps ||r_hat|| ||r||: 30 to 100 eps for n from
1e3 to 1e4), so beta and alpha built on it would be noise: on orsirr_1 with Jacobi, |rho|
falls from ~1e-10 ||r_hat|| ||r|| to ~1e-17 and then to exactly 0. On the test matrices any
bound from eps to 1e6 eps converges in similar iteration counts; 1e8 eps (2e-8) and more
restart often and slow plain orsirr_1 down, which converges through cosines of 1e-8 to 1e-13
that still carry information.

A column stops with a breakdown when, without a restart, omega is 0 (t . s == 0 with s != 0),
or when the divisor r_hat . v of alpha is 0; its vectors keep the last valid iterate. When
t . t is 0 (s is exactly 0: the half step already solved the system) omega is set to 0, x takes
the half step and r = s.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import IterationMonitor, IterativeSolver


class Bicgstab(IterativeSolver):
    def _solve(self, b: Dense, x: Dense) -> None:
        exec, A = self.executor, self.system_matrix
        k = b.shape[1]
        r, r_hat, p, v, s, t, y, z = (b.empty_like() for _ in range(8))
        rho, rr, rhat_sq, prev_rho, alpha, omega, rv, ts, tt = (b.empty_like((1, k)) for _ in range(9))
        restarted = exec.from_host(np.zeros(k, dtype=np.uint8))
        restart_tol = 100 * np.finfo(b.dtype).eps
        # r = b - A x
        self._residual(b, x, r)
        monitor = IterationMonitor(self, b, x, r)
        # r_hat = r, p = v = s = 0, prev_rho = alpha = omega = 1
        exec.run("solver.bicgstab.initialize", r, r_hat, p, v, s, prev_rho, alpha, omega)
        # rhat_sq = r_hat . r_hat
        r_hat.compute_dot(r_hat, rhat_sq)
        iteration = 0
        while not monitor.check(iteration, residual=r):
            # rho = r_hat . r;  rr = r . r
            exec.run("solver.bicgstab.compute_dots", r_hat, r, rho, rr)
            # restart where |rho| <= 100 eps ||r_hat|| ||r||: r_hat = p = r;
            # elsewhere p = r + (rho / prev_rho) (alpha / omega) (p - omega v)
            exec.run("solver.bicgstab.step_1", r, r_hat, p, v, rho, rr, rhat_sq, prev_rho, alpha, omega,
                     restart_tol, restarted, monitor.status)
            # y = M p;  v = A y
            y = self._precondition(p, y)
            A.apply(y, v)
            # rv = r_hat . v
            r_hat.compute_dot(v, rv)
            # rho = rhat_sq = rr where restarted;  alpha = rho / rv;  s = r - alpha v;  prev_rho = rho
            exec.run("solver.bicgstab.step_2", r, s, v, rho, rr, rhat_sq, prev_rho, alpha, rv, restarted,
                     monitor.status)
            # z = M s;  t = A z
            z = self._precondition(s, z)
            A.apply(z, t)
            # ts = s . t;  tt = t . t
            exec.run("solver.bicgstab.compute_dots", s, t, ts, tt)
            # omega = ts / tt;  x = x + alpha y + omega z;  r = s - omega t
            exec.run("solver.bicgstab.step_3", x, r, s, t, y, z, alpha, omega, ts, tt, monitor.status)
            iteration += 1
        monitor.finish()
