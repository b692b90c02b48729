"""Minres: the minimal residual method of Paige and Saunders for Hermitian (symmetric), possibly
indefinite systems, preconditioned by a Hermitian positive definite M.

The Lanczos process builds M-orthonormal vectors q_k (z_k = M q_k) and the tridiagonal T_k
(alpha_k on the diagonal, beta_k beside it); Givens rotations factor T_k as they come, and x
moves along the directions p_k = (z_k - gamma p_{k-1} - delta p_{k-2}) / h, so that each
iterate minimizes the M^-1-norm of the residual over the Krylov space (Ginkgo's
``solver::Minres``, after Greenbaum's "Iterative Methods for Solving Linear Systems", ch. 2
and 8). The rotated right-hand side eta gives the residual's M^-1-norm |eta| for free; with a
preconditioner the 2-norm that the criteria judge comes from the residual's own recurrence
r_k = |s_k|^2 r_{k-1} + eta_{k+1} c_k q_{k+1} (one more vector, its norm in the same pass).

One iteration is three launches with scalar Jacobi or without a preconditioner: step_2 (the
rotations; x, the directions and the Lanczos vectors updated; the partial sums of r . r),
q = A z with the partial sums of z . A z in the same pass, and step_1 (the stopping check of
the new residual; v = A z - alpha q - beta q_prev and the partial sums of v . M v). Another
preconditioner adds its own launches and one reduction. The per-column scalars live on the
device in two copies: step_2 reads one and writes the other, step_1 copies them back, so that
no launch reads what it writes.

A column whose v . M v < 0 (A not Hermitian or M not positive definite) or whose rotated
T is singular stops with a breakdown instead of dividing by it; v . M v = 0 (the Krylov space
holds the solution) ends the column with its exact solution.
"""
from __future__ import annotations

from ginkpy.core.matrix.identity import Identity
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver

# rows of the per-column state: beta_k (T's entry beside the diagonal), delta (T(k-2, k) after
# the rotations), the last two rotations (cos, sin), eta (the rotated right-hand side)
STATE_ROWS = 7


class Minres(IterativeSolver):
    """The minimal residual method (MINRES) for a Hermitian (real symmetric) matrix A, definite
    or indefinite, preconditioned by a Hermitian positive definite M: Ginkgo's
    ``solver::Minres``, SciPy's ``minres``.

    Use it for symmetric indefinite systems: saddle points (Stokes, KKT, constrained least
    squares), shifted operators (A - sigma I, Helmholtz-like), where Cg may break down and
    Gmres stores a basis. Each iteration costs one product by A, one application of M and
    three launches with scalar Jacobi or no preconditioner; it keeps no basis (seven vectors,
    eight with a preconditioner). For a positive definite A Cg needs the same iterations and
    less work per iteration.

    Parameters
    ----------
    (set with ``with_<name>`` on ``Minres.build()``)
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        ``gk.stop.ResidualNorm``, ``Iteration``, ``Time``; each column stops at the first met.
    preconditioner : factory or LinOp, default None (none)
        M, Hermitian positive definite (``gk.preconditioner.Jacobi`` of a matrix with a positive
        diagonal, ``Ic``, ``gk.solver.Multigrid``); an indefinite M is a breakdown.
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        Where each apply starts.

    Examples
    --------
    >>> solver = gk.solver.Minres.build().with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, M, x = self.executor, self.system_matrix, self.preconditioner, monitor.x
        ws = monitor.ws
        r, q, q_prev, v, p, p_prev = ws.vectors("r", "q", "q_prev", "v", "p", "p_prev")
        state, state_old = ws.scalars("state", "state_old", rows=STATE_ROWS)
        # M: none (z = q), scalar Jacobi (M v = D^-1 v inside the kernels), or an operator of its own
        diag = self._diagonal_preconditioner
        operator = diag is None and not isinstance(M, Identity)
        preconditioned = operator or diag is not None
        z = ws.vector("z") if preconditioned else None      # z = M q
        z_tilde = ws.vector("z_tilde") if operator else None  # M v (and M r at a start)
        zq = q if z is None else z
        # partial sums of z . A z, v . M v, r . M r and, with a preconditioner, r . r
        za, vz, rz = ws.partials("za"), ws.partials("vz"), ws.partials("rz")
        rr = ws.partials("rr") if preconditioned else None
        # r = b - A x
        monitor.start(r)
        stop = monitor.stop

        def reduce(*partials):
            # the partial sums over every rank of a distributed system
            A.reduce_sums(*partials)

        def lanczos(check):
            # the check of the last residual (where `check`);  v = A z - alpha q - beta q_prev;
            # partial sums of v . M v
            A.apply_with_dots(zq, v, zq, None, za)
            exec.run("solver.minres.step_1", v, q, q_prev, diag, za, rr, None if operator else vz, state, state_old,
                     stop, check)
            if operator:
                M.apply(v, z_tilde)
                exec.run("components.reduction.dots", z_tilde, v, None, vz)
            reduce(vz)

        def start(columns, check):
            # (the columns of a mask, or every one) from r: beta = sqrt(r . M r);  q = r / beta;
            # z = M r / beta;  p = p_prev = q_prev = 0;  the rotations reset;  eta = beta
            if operator:
                M.apply(r, z_tilde)
            # partial sums of r . M r (and of r . r: the check of r)
            exec.run("solver.cg.prepare", r, z_tilde, diag, rz, rz if rr is None else rr)
            reduce(*(rz,) if rr is None else (rz, rr))
            exec.run("solver.minres.initialize", r, z_tilde, diag, q, z, q_prev, p, p_prev, rz, state,
                     stop.status, columns)
            lanczos(check)

        def iteration():
            # beta = sqrt(v . M v);  the rotations;  p = (z - gamma p_prev - delta p) / h;
            # x = x + c eta p;  q_prev = q;  q = v / beta;  z = M v / beta;
            # r = |s|^2 r + eta c q (partial sums of r . r)
            exec.run("solver.minres.step_2", x, r if preconditioned else None, p, p_prev, q, q_prev, z, v, z_tilde,
                     diag, za, vz, state_old, state, rr, stop.status)
            if rr is not None:
                reduce(rr)
            lanczos(True)

        def resume(columns):
            # the columns that take the true residual as r start the Lanczos process over from it
            start(columns, False)

        start(None, True)
        monitor.run(iteration, resume=resume)
