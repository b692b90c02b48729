"""Tfqmr: the transpose-free quasi-minimal residual method (Freund) for general systems.

Freund's TFQMR (SIAM J. Sci. Comput. 14, 1993; Saad, Iterative Methods, Algorithm 7.8), as
SciPy's ``tfqmr``: one iteration is one half step with one product by A and M, as SciPy counts
them (two half steps apply the CGS polynomial once). Right-preconditioned as Ginkgo's solvers
(u_hat = A M u, x += eta M d), so w and the bound below belong to the original system; SciPy's
tfqmr applies M on the left of its products but updates x by M d too.

The columns stop on SciPy's estimate tau sqrt(m) after m half steps, an upper bound on ||b - A x||
in exact arithmetic (no product for the true residual per half step); a column the estimate
stops is confirmed with the true residual, and where that fails it starts over from it. The
norms it records (for loggers, and to choose the iterate the honest end keeps) are this bound.

The half steps alternate (even: alpha = rho / (r_tld . v), u_{m+1} = u_m - alpha v; odd: rho
and beta from r_tld . w, u = w + beta u), so that an iteration stays one fixed list of launches
the kernels read each column's parity (phase) from the device. A column stops with a breakdown
where r_tld . v or rho is 0 (alpha 0 or undefined) or tau is 0 with the column still running.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.matrix.identity import Identity
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver
from ginkpy.core.stop.stopping_status import STATUS_DTYPE


class Tfqmr(IterativeSolver):
    """The transpose-free quasi-minimal residual method (TFQMR, Freund) for general square
    systems: SciPy's ``tfqmr``.

    Use it for nonsymmetric systems where no transpose is at hand and the residual of Cgs or
    Bicgstab oscillates: it smooths CGS's residual by a quasi-minimization, one product by A
    and M per iteration (a half step, as SciPy counts), little memory. Right-preconditioned;
    the columns stop on the quasi-residual bound tau sqrt(m), confirmed with the true residual.

    Parameters
    ----------
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        When each column stops: ``gk.stop.ResidualNorm``, ``Iteration``, ``Time`` (the residual
        norm the criteria see is TFQMR's bound tau sqrt(m) on ||b - A x||).
    preconditioner : factory or LinOp, default None (none)
        M, applied on the right (``gk.preconditioner.Jacobi``, ``Ilu``).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        Where each apply starts: the given x, 0 or b.

    Examples
    --------
    >>> solver = gk.solver.Tfqmr.build().with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, x, k = self.executor, self.system_matrix, monitor.x, monitor.k
        ws = monitor.ws
        r, r_tld, u, w, v, d, u_hat = ws.vectors("r", "r_tld", "u", "w", "v", "d", "u_hat")
        preconditioned = not isinstance(self.preconditioner, Identity)
        y, z = ws.vectors("y", "z") if preconditioned else (None, None)
        rv, ww, wr, rr, est = ws.scalars("rv", "ww", "wr", "rr", "est")
        alpha, rho, theta, eta, tau, beta, m, phase = ws.scalars(
            "alpha", "rho", "theta", "eta", "tau", "beta", "m", "phase")
        # r = b - A x
        monitor.start(r)
        stop = monitor.stop
        status = stop.status

        def restart(columns):
            # in these columns: u = w = r_tld = r;  v = d = 0;  rho = r . r;  tau = ||r||;
            # theta = eta = m = phase = 0
            r.compute_conj_dot(r, rr)
            exec.run("solver.tfqmr.initialize", r, u, w, r_tld, v, d, rr, tau, rho, theta, eta, m, phase,
                     columns)

        def iteration():
            # u_hat = A M u
            A.apply(self._precondition(u, y), u_hat)
            # even half step: v = v + u_hat
            exec.run("solver.tfqmr.step_1", u_hat, v, phase, status)
            # rv = r_tld . v
            r_tld.compute_conj_dot(v, rv)
            # even: alpha = rho / rv, u_{m+1} = u - alpha v;  w = w - alpha u_hat;
            # d = u + (theta^2 eta / alpha) d
            exec.run("solver.tfqmr.step_2", u, v, w, d, u_hat, rv, alpha, rho, theta, eta, phase, status)
            # ww = w . w;  wr = r_tld . w
            w.compute_conj_dot(w, ww)
            r_tld.compute_conj_dot(w, wr)
            # theta = ||w|| / tau;  c^2 = 1 / (1 + theta^2);  tau = tau theta c;  eta = c^2 alpha;
            # est = tau^2 m;  odd: beta = wr / rho, rho = wr;  phase = 1 - phase
            exec.run("solver.tfqmr.step_3", ww, wr, alpha, rho, theta, eta, tau, beta, m, phase, est, status)
            # x = x + eta M d;  after an odd half step: u = w + beta u, v = beta (u_hat + beta v)
            exec.run("solver.tfqmr.step_4", self._precondition(d, z), x, u, w, v, u_hat, eta, beta, phase,
                     status)
            if not monitor.blind:
                # stop on the bound tau sqrt(m) of ||r||
                exec.run("components.stop.check", est, stop)

        every = ws.get("all_columns", lambda: exec.from_host(np.ones(k, STATUS_DTYPE)))
        restart(every)
        monitor.check(r)
        monitor.run(iteration, resume=restart)
