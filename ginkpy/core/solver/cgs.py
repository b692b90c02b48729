"""Cgs: the conjugate gradient squared method (Sonneveld) for general systems.

Applies the BiCG polynomial twice per iteration, with two products by A and no A^T. As in
Ginkgo it is right-preconditioned (u_hat = M p ..., x += alpha M (u + q)), so r is the
residual of the original system. As in SciPy, r is recomputed as b - A x each iteration
instead of by the recurrence r -= alpha A M (u + q), at the same cost of one product by A:
the residual of CGS can grow by orders of magnitude mid-solve, after which the recurrence
no longer reaches the accuracy asked for (pde900 with Jacobi stagnates near 1e-5 relative
with it, and converges in SciPy's 87 iterations without). A column whose rho = r_tld^H r or
gamma = r_tld^H A M p is 0 stops with a breakdown instead of dividing by it.
"""
from __future__ import annotations

from ginkpy.core.solver.bicg import start_with_shadow
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver


class Cgs(IterativeSolver):
    """The conjugate gradient squared method (CGS, Sonneveld) for general square systems:
    Ginkgo's ``solver::Cgs``, SciPy's ``cgs``.

    Use it for nonsymmetric systems where no transpose is at hand and Bicgstab breaks down; it
    converges fast where it converges at all, but its residual may grow mid-solve. Two
    products by A and M per iteration.

    Parameters
    ----------
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        The criteria each column stops on, the first met.
    preconditioner : factory or LinOp, default None (none)
        M, applied on the right.
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        The start of each apply.

    Examples
    --------
    >>> solver = gk.solver.Cgs.build().with_criteria(
    ...     gk.stop.Iteration.build().with_max_iters(500)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """
    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, x = self.executor, self.system_matrix, monitor.x
        ws = monitor.ws
        r, r_tld, p, q, u, v_hat, t, u_hat = ws.vectors("r", "r_tld", "p", "q", "u", "v_hat", "t", "u_hat")
        rho, prev_rho, gamma, alpha = ws.scalars("rho", "prev_rho", "gamma", "alpha")
        # r = b - A x;  r_tld = r;  p = q = 0;  prev_rho = 1
        status = start_with_shadow(monitor, r, r_tld, p, q, prev_rho)

        def iteration():
            # rho = r_tld^H r
            r_tld.compute_conj_dot(r, rho)
            # beta = rho / prev_rho;  u = r + beta q;  p = u + beta (q + beta p)
            exec.run("solver.cgs.step_1", r, u, p, q, rho, prev_rho, status)
            # u_hat = M p;  v_hat = A u_hat
            A.apply(self._precondition(p, u_hat), v_hat)
            # gamma = r_tld^H v_hat
            r_tld.compute_conj_dot(v_hat, gamma)
            # alpha = rho / gamma;  q = u - alpha v_hat;  t = u + q
            exec.run("solver.cgs.step_2", u, v_hat, q, t, alpha, rho, gamma, status)
            # u_hat = M t;  x = x + alpha u_hat;  prev_rho = rho
            exec.run("solver.cgs.step_3", self._precondition(t, u_hat), x, alpha, rho, prev_rho, status)
            # r = b - A x
            monitor.residual(r)
            monitor.check(r)

        monitor.run(iteration)
