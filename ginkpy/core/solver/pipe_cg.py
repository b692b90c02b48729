"""PipeCg: the pipelined (preconditioned) conjugate gradient method of Ghysels and Vanroose
("Hiding global synchronization latency in the preconditioned Conjugate Gradient algorithm",
2014), Ginkgo's ``solver::PipeCg``, PETSc's KSPPIPECG.

CG in exact arithmetic, rearranged so that an iteration has one reduction, and the work that
follows it does not need its result: the dot products (r, u), (u, w) and (r, r) of an
iteration are summed while the preconditioner m = M w and the product n = A m run. On one
device this saves a second pass over the residual; over MPI ranks (``gk.distributed``) the
one exchange of partial sums per iteration travels while the device computes (see
``core/distributed/reduction.py``), where CG waits twice.

With u = M r and w = A u kept by recurrences, iteration i is:

    gamma = (r, u);  delta = (u, w);  ||r||                 (one reduction, started)
    m = M w;  n = A m                                      (while it travels)
    beta = gamma / gamma_prev;  alpha = gamma / (delta - beta gamma / alpha_prev)
    z = n + beta z;  q = m + beta q;  s = w + beta s;  p = u + beta p
    x = x + alpha p;  r = r - alpha s;  u = u - alpha q;  w = w - alpha z

(beta = 0 in the first iteration). Launches per iteration with scalar Jacobi or none: the
product (with Jacobi by A D^-1, made once, so that m is never stored), ``step_1`` (one
work-group: the sums, the stopping check on ||r||, alpha and beta) and ``step_2`` (every
vector update and the partial sums of the next iteration's dot products in one pass). The
check of r_i comes with iteration i's sums, one iteration after r_i was made: the loop runs
one iteration more than CG to reach the same check (``monitor.lag``). The recurrences cost
accuracy: the residual r drifts from b - A x by a few more rounding errors than in CG (the
confirmation of a converged column with the true residual catches it), and a column whose
delta - beta gamma / alpha_prev <= 0 (A or M not positive definite, or the recurrence broken
down) stops with a breakdown.
"""
from __future__ import annotations

from ginkpy.core.matrix.identity import Identity
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver
from ginkpy.core.solver.small_system import solved_small


class PipeCg(IterativeSolver):
    """Pipelined CG (Ghysels-Vanroose): CG with one reduction per iteration, overlapped with
    the preconditioner and the product; Ginkgo's ``solver::PipeCg``.

    Use it where the reductions cost more than the extra vector updates: systems distributed
    over MPI ranks (``gk.distributed``), above all on many ranks and with cheap iterations. On
    one device CG moves less memory per iteration (PipeCg updates eight vectors, CG three) and
    is faster. The system must be symmetric (Hermitian) positive definite, as for CG.

    Parameters
    ----------
    (set with ``with_<name>`` on ``PipeCg.build()``)
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        ``gk.stop.ResidualNorm``, ``Iteration``, ``Time``; each column stops at the first met.
    preconditioner : factory or LinOp, default None (none)
        M, symmetric positive definite (``gk.preconditioner.Jacobi``, ``gk.solver.Multigrid``).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        Where each apply starts.

    Examples
    --------
    >>> solver = gk.solver.PipeCg.build().with_preconditioner(gk.preconditioner.Jacobi.build()
    ...     .with_max_block_size(1)).with_criteria(gk.stop.ResidualNorm.build()
    ...     .with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, M, x = self.executor, self.system_matrix, self.preconditioner, monitor.x
        ws = monitor.ws
        r, u, w, n, z, q, s, p = ws.vectors("r", "u", "w", "n", "z", "q", "s", "p")
        gamma_prev, alpha_prev, alpha, beta = ws.scalars("gamma_prev", "alpha_prev", "alpha", "beta")
        # partial sums of (r, u), (u, w) and (r, r) side by side
        dots = ws.partials("dots", 3)
        # M: scalar Jacobi (m = D^-1 w inside the kernels, the product by A D^-1, made once),
        # none (m = w) or an operator of its own (m given)
        diag = self._diagonal_preconditioner if hasattr(A, "scale_columns") else None
        m = None if diag is not None or isinstance(M, Identity) else ws.vector("m")
        if diag is not None and self._scaled_matrix is None:
            self._scaled_matrix = A.scale_columns(diag)
        AM = A if diag is None else self._scaled_matrix
        # r = b - A x
        monitor.start(r)
        if solved_small(monitor, "cg"):
            return
        stop = monitor.stop

        def start_over(u, w):
            # u = M r;  w = A u
            if isinstance(M, Identity):
                u.copy_from(r)
            else:
                M.apply(r, u)
            A.apply(u, w)

        def iteration():
            # the sums of (r, u), (u, w), (r, r) travel while m = M w and n = A m are computed
            A.start_sums(dots)
            if m is not None:
                M.apply(w, m)
            AM.apply(w if m is None else m, n)
            A.finish_sums(dots)
            # stop on ||r||;  beta = gamma / gamma_prev;  alpha = gamma / (delta - beta gamma / alpha_prev)
            exec.run("solver.pipe_cg.step_1", dots, gamma_prev, alpha_prev, alpha, beta, stop)
            # z, q, s, p, x, r, u, w updated;  partial sums of the next (r, u), (u, w), (r, r)
            exec.run("solver.pipe_cg.step_2", x, r, u, w, m, n, z, q, s, p, diag, alpha, beta, dots, stop)

        def resume(columns):
            # the columns that take the true residual as r start over from it
            u_, w_ = ws.vectors("u_resume", "w_resume")
            start_over(u_, w_)
            exec.run("matrix.dense.copy_columns", u_, u, columns)
            exec.run("matrix.dense.copy_columns", w_, w, columns)
            # z = q = s = p = 0 and a first step in those columns;  partial sums of (r, u), (u, w), (r, r)
            exec.run("solver.pipe_cg.initialize", r, u, w, z, q, s, p, gamma_prev, dots, columns)

        start_over(u, w)
        # z = q = s = p = 0, a first step;  partial sums of (r, u), (u, w), (r, r)
        exec.run("solver.pipe_cg.initialize", r, u, w, z, q, s, p, gamma_prev, dots, None)
        # the check of r_i comes one iteration after r_i: one more iteration reaches each check
        monitor.lag = 1
        monitor.run(iteration, resume=resume)
