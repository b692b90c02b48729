"""Cg: the (preconditioned) conjugate gradient method for symmetric (Hermitian, for complex
values) positive definite systems.

One iteration is three launches with scalar Jacobi or without a preconditioner: q = A p with
the partial sums of p . q in the same pass, step_2 (x and r updated, z = M r and the partial
sums of r . z and r . r in the same pass) and step_1 (the stopping check of the new residual,
p = z + beta p). Each kernel sums the partial sums it needs itself, so no launch finishes a
reduction. Another preconditioner adds its own launches and one reduction.

Where the device's SpMV of A can form p itself (``solver.cg.forms_p``: on OpenCL, with
``GINKPY_CG_FORM_P=1`` until a GPU has measured it, a Csr in a GPU's classical SpMV), p = z +
beta p is computed where the SpMV gathers p and where step_2 reads it (and stored there), and
step_1 shrinks to ``check`` (the stopping check, rho and beta: one work-group): the iteration's
pass over p and z goes.

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
        # the device's SpMV of A forms p = z + beta p where it gathers it (then step_2 stores p)
        form_p = ws.get("forms_p", lambda: exec.run("solver.cg.forms_p", A, p))
        beta = ws.scalars("beta")[0] if form_p else None
        # r = b - A x
        monitor.start(r)
        if solved_small(monitor, "cg"):
            return
        stop = monitor.stop

        def reduce(*partials):
            # the partial sums over every rank of a distributed system
            A.reduce_sums(*dict.fromkeys(partials))

        def step_1():
            if form_p:
                # stop on ||r||;  rho = r . z;  beta = rho / prev_rho
                exec.run("solver.cg.check", r, z, diag, rz, rr, rho, prev_rho, beta, stop)
            else:
                # stop on ||r||;  rho = r . z;  p = z + (rho / prev_rho) p
                exec.run("solver.cg.step_1", p, r, z, diag, rz, rr, rho, prev_rho, stop)

        def iteration():
            if form_p:
                # q = A p, p = z + beta p formed where gathered;  partial sums of p . q
                exec.run("solver.cg.spmv_p", A, p, r, z, diag, beta, q, pq)
                reduce(pq)
            else:
                # q = A p;  partial sums of p . q
                A.apply_with_dots(p, q, p, None, pq)
            # [p = z + beta p];  alpha = rho / (p . q);  x = x + alpha p;  r = r - alpha q;
            # prev_rho = rho;  partial sums of r . r (and of r . z, z = D^-1 r)
            exec.run("solver.cg.step_2", x, r, p, q, diag, pq, rho, prev_rho, rz, rr, stop, z, beta)
            reduce(rz, rr)
            if z is not None:
                # z = M r;  partial sums of r . z
                M.apply(r, z)
                exec.run("components.reduction.dots", z, r, None, rz)
                reduce(rz)
            step_1()

        # p = 0, prev_rho = 1;  z = M r;  partial sums of r . z and r . r
        exec.run("solver.cg.initialize", p, prev_rho)
        if z is not None:
            M.apply(r, z)
        exec.run("solver.cg.prepare", r, z, diag, rz, rr)
        reduce(rz, rr)
        step_1()
        monitor.run(iteration, resume=lambda columns: self._start_over(ws, columns, z, beta))

    def _start_over(self, ws, columns, z, beta) -> None:
        """The columns (a uint8 device mask) that take the true residual as r start over: p = M
        r, rho = r . z; where the SpMV forms p (``beta`` given) beta = 0 and z = M r, so that the
        next p = z + beta p is M r."""
        exec, (r, p), rho = self.executor, ws.vectors("r", "p"), ws.scalars("rho")[0]
        z_ = self._precondition(r, ws.vector("z_resume"))
        exec.run("matrix.dense.copy_columns", z_, p, columns)
        rho_resumed = r.compute_conj_dot(z_, ws.vector("rho_resume", rows=1))
        exec.run("matrix.dense.copy_columns", rho_resumed, rho, columns)
        if beta is not None:
            exec.run("matrix.dense.copy_columns", ws.vector("zeros", rows=1), beta, columns)
            if z is not None:
                exec.run("matrix.dense.copy_columns", z_, z, columns)
