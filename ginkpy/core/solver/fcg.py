"""Fcg: the flexible conjugate gradient method for symmetric (Hermitian) positive definite systems.

Cg whose preconditioner may change from one application to the next (an inner iterative
solver, for example). As in Ginkgo, the direction update uses the Polak-Ribiere form
beta = ((r - r_old)^H z) / prev_rho instead of Cg's rho / prev_rho, with t = r - r_old kept
by the update step. With a fixed SPD preconditioner it matches Cg in exact arithmetic. A
column whose p^T A p <= 0 or rho = r . z is 0 stops with a breakdown, as in Cg.
"""
from __future__ import annotations

from ginkpy.core.solver.bicg import start_with_shadow
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver


class Fcg(IterativeSolver):
    """The flexible conjugate gradient method (FCG) for symmetric (Hermitian) positive definite
    systems: Ginkgo's ``solver::Fcg``.

    Use it instead of Cg where the preconditioner changes between applications (an inner
    iterative solver, an F-cycle of Multigrid); with a fixed SPD preconditioner it matches Cg.

    Parameters
    ----------
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        Stop each column at the first criterion met.
    preconditioner : factory or LinOp, default None (none)
        M, which may vary from one application to the next.
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        The x each apply begins with.

    Examples
    --------
    >>> inner = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(5))
    >>> solver = gk.solver.Fcg.build().with_preconditioner(inner).on(exec).generate(A)
    >>> solver.apply(b, x)
    """
    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, x = self.executor, self.system_matrix, monitor.x
        ws = monitor.ws
        r, p, q, t, z = ws.vectors("r", "p", "q", "t", "z")
        rho, rho_t, prev_rho, beta = ws.scalars("rho", "rho_t", "prev_rho", "beta")
        # r = b - A x;  t = r;  p = q = 0;  prev_rho = 1
        status = start_with_shadow(monitor, r, t, p, q, prev_rho)

        def iteration():
            # z = M r
            z_ = self._precondition(r, z)
            # rho = r^H z;  rho_t = t^H z
            r.compute_conj_dot(z_, rho)
            t.compute_conj_dot(z_, rho_t)
            # p = z + (rho_t / prev_rho) p
            exec.run("solver.fcg.step_1", p, z_, rho_t, prev_rho, status)
            # q = A p
            A.apply(p, q)
            # beta = p^H q
            p.compute_conj_dot(q, beta)
            # x = x + (rho / beta) p;  r_new = r - (rho / beta) q;  t = r_new - r;  prev_rho = rho
            exec.run("solver.fcg.step_2", x, r, t, p, q, beta, rho, prev_rho, status)
            monitor.check(r)

        monitor.run(iteration)
