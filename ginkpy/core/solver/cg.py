"""Cg: the (preconditioned) conjugate gradient method for symmetric (Hermitian, for complex
values) positive definite systems.

One iteration is three launches with scalar Jacobi or without a preconditioner: q = A p with
the partial sums of p . q in the same pass, step_2 (x and r updated, z = M r and the partial
sums of r . z and r . r in the same pass) and step_1 (the stopping check of the new residual,
p = z + beta p). Each kernel sums the partial sums it needs itself, so no launch finishes a
reduction. Another preconditioner adds its own launches and one reduction.

A column whose p^T A p <= 0 (the matrix or preconditioner is not positive definite) stops
with a breakdown instead of dividing by it.
"""
from __future__ import annotations

from ginkpy.core.matrix.identity import Identity
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver
from ginkpy.core.solver.small_system import solved_small


class Cg(IterativeSolver):
    """The conjugate gradient method (CG) for a symmetric (Hermitian) positive definite A,
    preconditioned by a symmetric positive definite M: Ginkgo's ``solver::Cg``, SciPy's ``cg``.

    Use it for SPD systems (Laplacians, FEM stiffness and mass matrices); for general
    systems use Gmres or Bicgstab. Each iteration costs one product by A, one application of
    M and three launches with scalar Jacobi or no preconditioner.

    Parameters
    ----------
    (set with ``with_<name>`` on ``Cg.build()``)
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        ``gk.stop.ResidualNorm``, ``Iteration``, ``Time``; each column stops at the first met.
    preconditioner : factory or LinOp, default None (none)
        M, symmetric positive definite (``gk.preconditioner.Jacobi``, ``Ic``, ``gk.solver.Multigrid``).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        Where each apply starts.

    Examples
    --------
    >>> solver = gk.solver.Cg.build().with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, M, x = self.executor, self.system_matrix, self.preconditioner, monitor.x
        ws = monitor.ws
        r, p, q = ws.vectors("r", "p", "q")
        rho, prev_rho = ws.scalars("rho", "prev_rho")
        # M: none (z = r), scalar Jacobi (z = D^-1 r inside the kernels), or an operator of its own
        diag = self._diagonal_preconditioner
        z = None if diag is not None or isinstance(M, Identity) else ws.vector("z")
        # partial sums of p . q, r . r and r . z (r . z is r . r without a preconditioner)
        pq, rr = ws.partials("pq"), ws.partials("rr")
        rz = rr if z is None and diag is None else ws.partials("rz")
        # r = b - A x
        monitor.start(r)
        if solved_small(monitor, "cg"):
            return
        stop = monitor.stop

        def reduce(*partials):
            # the partial sums over every rank of a distributed system
            A.reduce_sums(*dict.fromkeys(partials))

        def step_1():
            # stop on ||r||;  rho = r . z;  p = z + (rho / prev_rho) p
            exec.run("solver.cg.step_1", p, r, z, diag, rz, rr, rho, prev_rho, stop)

        def iteration():
            # q = A p;  partial sums of p . q
            A.apply_with_dots(p, q, p, None, pq)
            # alpha = rho / (p . q);  x = x + alpha p;  r = r - alpha q;  prev_rho = rho;
            # partial sums of r . r (and of r . z, z = D^-1 r)
            exec.run("solver.cg.step_2", x, r, p, q, diag, pq, rho, prev_rho, rz, rr, stop)
            reduce(rz, rr)
            if z is not None:
                # z = M r;  partial sums of r . z
                M.apply(r, z)
                exec.run("components.reduction.dots", z, r, None, rz)
                reduce(rz)
            step_1()

        def resume(columns):
            # the columns that take the true residual as r start over: p = M r, rho = r . z
            z_ = self._precondition(r, ws.vector("z_resume"))
            exec.run("matrix.dense.copy_columns", z_, p, columns)
            rho_resumed = r.compute_conj_dot(z_, ws.vector("rho_resume", rows=1))
            exec.run("matrix.dense.copy_columns", rho_resumed, rho, columns)

        # p = 0, prev_rho = 1;  z = M r;  partial sums of r . z and r . r
        exec.run("solver.cg.initialize", p, prev_rho)
        if z is not None:
            M.apply(r, z)
        exec.run("solver.cg.prepare", r, z, diag, rz, rr)
        reduce(rz, rr)
        step_1()
        monitor.run(iteration, resume=resume)
