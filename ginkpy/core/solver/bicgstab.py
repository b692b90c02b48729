"""Bicgstab: the biconjugate gradient stabilized method (van der Vorst) for general systems.

Right-preconditioned as in Ginkgo (y = M p, z = M s), so the recurrence residual r is the
residual of the original system and the criteria check the true residual. With scalar Jacobi
M = D^-1 the products use A D^-1 (the system matrix with scaled columns, made once), so an
iteration is five launches: v = A M p with r_hat . v, step_2 (s), t = A M s with s . t and
t . t, step_3 (x, r, and r_hat . r and r . r in the same pass), step_1 (the stopping check, p).

Complex values: dot products conjugate their first argument (rho = r_hat^H r, omega =
(t^H s) / (t^H t)), as SciPy's bicgstab.

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

Where no rule helps: olm1000 (``gk.problems.olmstead(500)``) with Jacobi. r_hat is numerically
orthogonal to r (cosine 4e-14) after ~45 iterations and at 1e-15 to 1e-18 from then on, and
|cos(t, s)| is 0.02 to 0.3 (a spectrum that real omegas fit poorly). Restarting (this rule, a
bound relative to sum |r_hat_i r_i|, or only after a tenfold fall of ||r||) repeats the
method's start, whose residual first grows 10-100x on this non-normal matrix: no convergence in
10000 iterations. Not restarting (SciPy's rule: breakdown only at |rho| < eps^2) runs on the
rounding error of rho, and converges or not by the rounding order: SciPy's own bicgstab
converges in 5 of 10 renumberings of olm1000 (1899-2344 iterations), fails in the others; the
same here in 2001-8780 iterations or not at all over dot-product orders, and with Sleijpen and
van der Vorst's omega safeguard (|cos(t, s)| kept at 0.2-0.7) in 8 of 10 at best. So no restart or
breakdown rule gives one verdict there (benchmarks/iterations_vs_scipy.py --olmstead). With the
default ILU (``gk.linalg.bicgstab(A, b, M="ilu")``) it converges in 27 iterations.

A column stops with a breakdown when, without a restart, omega is 0 (t . s == 0 with s != 0),
or when the divisor r_hat . v of alpha is 0; its vectors keep the last valid iterate. When
t . t is 0 (s is exactly 0: the half step already solved the system) omega is set to 0, x takes
the half step and r = s.
"""
from __future__ import annotations

import numpy as np

from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver
from ginkpy.core.solver.small_system import solved_small


class Bicgstab(IterativeSolver):
    """The biconjugate gradient stabilized method (BiCGSTAB, van der Vorst) for general square
    systems: Ginkgo's ``solver::Bicgstab``, SciPy's ``bicgstab``.

    Use it first for a nonsymmetric system: two products by A and M per iteration, no
    transpose, little memory; where it breaks down or stagnates, Gmres does not. Right-
    preconditioned, so the criteria see the true residual.

    Parameters
    ----------
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        When each column stops: ``gk.stop.ResidualNorm``, ``Iteration``, ``Time``.
    preconditioner : factory or LinOp, default None (none)
        M (``gk.preconditioner.Ilu``, ``Jacobi``, ``gk.solver.Multigrid``).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        Where each apply starts: the given x, 0 or b.

    Examples
    --------
    >>> solver = (gk.solver.Bicgstab.build().with_preconditioner(gk.preconditioner.Ilu.build())
    ...           .with_criteria(gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A))
    >>> solver.apply(b, x)
    """
    def _solve(self, monitor: IterationMonitor) -> None:
        exec, x, k = self.executor, monitor.x, monitor.k
        # AM = A M with scalar Jacobi folded in (diag), else A and M applied one after the other
        AM, diag, M = self._right_preconditioned()
        ws = monitor.ws
        r, r_hat, p, v, s, t = ws.vectors("r", "r_hat", "p", "v", "s", "t")
        y, z = (ws.vectors("y", "z") if M is not None else (None, None))
        rho, prev_rho, alpha, omega, rhat_sq = ws.scalars("rho", "prev_rho", "alpha", "omega", "rhat_sq")
        restarted = ws.array("restarted", (k,), np.uint8)
        # partial sums of r_hat . r, r . r, r_hat . v and (s . t, t . t)
        rho_new, rr, rv, st = (ws.partials(name) for name in ("rho_new", "rr", "rv", "st"))
        restart_tol = float(100 * np.finfo(self.dtype).eps)
        # r = b - A x
        monitor.start(r)
        if solved_small(monitor, "bicgstab"):
            return
        stop = monitor.stop
        # r_hat = r;  p = v = 0;  prev_rho = alpha = omega = 1;  ||r_hat||^2 = ||r||^2
        exec.run("solver.bicgstab.initialize", r, r_hat, p, v, prev_rho, alpha, omega)
        exec.write(rhat_sq.values, (monitor.norms ** 2).reshape(1, k))

        def reduce():
            # the partial sums of r_hat . r and r . r over every rank of a distributed system
            self.system_matrix.reduce_sums(rho_new, rr)

        def step_1():
            # stop on ||r||;  restart where |r_hat . r| <= 100 eps ||r_hat|| ||r||: r_hat = p = r;
            # elsewhere p = r + (rho / prev_rho) (alpha / omega) (p - omega v)
            exec.run("solver.bicgstab.step_1", r, r_hat, p, v, rho_new, rr, rho, prev_rho, alpha, omega,
                     rhat_sq, restart_tol, restarted, stop)

        def iteration():
            # v = A M p;  partial sums of r_hat . v
            self._product(AM, M, p, y, v, r_hat, None, rv)
            # alpha = rho / (r_hat . v);  s = r - alpha v;  prev_rho = rho
            exec.run("solver.bicgstab.step_2", r, s, v, rv, rho, prev_rho, alpha, rhat_sq, restarted, stop.status)
            # t = A M s;  partial sums of s . t and t . t
            self._product(AM, M, s, z, t, s, t, st)
            # omega = (s . t) / (t . t);  x = x + alpha M p + omega M s;  r = s - omega t;
            # partial sums of r_hat . r and r . r
            exec.run("solver.bicgstab.step_3", x, r, r_hat, s, t, p if M is None else y,
                     s if M is None else z, diag, st, alpha, omega, rho_new, rr, stop.status)
            reduce()
            step_1()

        def resume(columns):
            # the columns that take the true residual as r start over: r_hat = p = r, rho = r . r
            for vector in (r_hat, p):
                exec.run("matrix.dense.copy_columns", r, vector, columns)
            rho_resumed = r.compute_conj_dot(r, ws.vector("rho_resume", rows=1))
            for scalar in (rho, rhat_sq):
                exec.run("matrix.dense.copy_columns", rho_resumed, scalar, columns)

        # partial sums of r_hat . r and r . r
        exec.run("solver.bicgstab.prepare", r, r_hat, rho_new, rr)
        reduce()
        step_1()
        monitor.run(iteration, resume=resume)

    def _product(self, AM, M, b, Mb, x, u, w, partials) -> None:
        """x = A M b (M b kept in Mb where M is an operator of its own) and the partial sums of
        u . x (and w . x)."""
        if M is not None:
            b = self._precondition(b, Mb, M)
        AM.apply_with_dots(b, x, u, w, partials)
