"""Bicg: the (preconditioned) biconjugate gradient method for general systems.

Besides A x = b it runs the dual recurrence of A^H with the shadow residual r2 (= r at the
start), so it needs A^H and M^H (A^T and M^T for real values, as SciPy's ``rmatvec``): both
are formed once at generate time with ``conj_transpose()`` (``transpose()`` for real values;
Csr, Dense, Jacobi and the identity have both). On a symmetric (Hermitian) positive definite
system with such a preconditioner it produces the iterates of Cg. Dot products conjugate
their first argument (rho = r2^H z), and the shadow updates take the conjugate scalars. A
column whose divisor p2^H A p or rho is 0 stops with a breakdown instead of dividing by it.
"""
from __future__ import annotations

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeSolver


def start_with_shadow(monitor: IterationMonitor, r, shadow, p, q, prev_rho):
    """The start that Bicg, Cgs and Fcg share: r = b - A x, the shadow vector (Bicg's r2, Cgs's
    r_tld, Fcg's t) = r, p = q = 0, prev_rho = 1, then the first check of ||r||. Returns the
    device stop status that the steps take."""
    monitor.start(r)
    monitor.exec.run("solver.bicg.initialize", r, shadow, p, q, prev_rho)
    monitor.check(r)
    return monitor.stop.status


def _transpose(op: LinOp, what: str) -> LinOp:
    """op^H: conj_transpose() where op has it, else transpose() for real values."""
    if hasattr(op, "conj_transpose"):
        return op.conj_transpose()
    if op.dtype.kind != "c" and hasattr(op, "transpose"):
        return op.transpose()
    needs = "conjugate transpose (conj_transpose())" if op.dtype.kind == "c" else "transpose (transpose())"
    raise TypeError(f"Bicg needs the {needs} of its {what}, and {type(op).__name__} has none: give Bicg a "
                    f"{what} that has one (gk.matrix.Csr does), or use Bicgstab or Gmres, which need none")


class Bicg(IterativeSolver):
    """The biconjugate gradient method (BiCG) for general square systems: Ginkgo's
    ``solver::Bicg``, SciPy's ``bicg``.

    Use it for nonsymmetric systems where A^H (A^T) is at hand and a short recurrence is
    wanted; it needs a product by A and one by A^H per iteration. Bicgstab or Gmres usually
    converge more smoothly and need no transpose.

    Parameters
    ----------
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        ``gk.stop.ResidualNorm``, ``Iteration``, ``Time``; each column stops at the first met.
    preconditioner : factory or LinOp, default None (none)
        M; it needs M^H too (Jacobi, Csr and Dense have it).
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        What each apply starts from.

    Examples
    --------
    >>> solver = gk.solver.Bicg.build().with_criteria(
    ...     gk.stop.ResidualNorm.build().with_reduction_factor(1e-8)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """
    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        self.system_matrix_transpose = _transpose(self.system_matrix, "system matrix")
        self.preconditioner_transpose = _transpose(self.preconditioner, "preconditioner")

    def update(self) -> bool:
        """As :meth:`IterativeSolver.update`, and A^H's values again (into its own arrays) and
        M^H formed again from the updated preconditioner."""
        valid = super().update()
        At = self.system_matrix_transpose
        if hasattr(At, "update_values"):
            At.update_values(_transpose(self.system_matrix, "system matrix").values)
        if self.preconditioner_transpose is not self.preconditioner:
            self.preconditioner_transpose = _transpose(self.preconditioner, "preconditioner")
            if self.preconditioner_transpose is not self.preconditioner:
                valid = False
                self._forget_captures()
        return valid

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, A, x = self.executor, self.system_matrix, monitor.x
        At, Mt = self.system_matrix_transpose, self.preconditioner_transpose
        ws = monitor.ws
        r, p, q, r2, p2, q2, z, z2 = ws.vectors("r", "p", "q", "r2", "p2", "q2", "z", "z2")
        rho, prev_rho, beta = ws.scalars("rho", "prev_rho", "beta")
        # r = b - A x;  r2 = r;  p = p2 = 0;  prev_rho = 1
        status = start_with_shadow(monitor, r, r2, p, p2, prev_rho)

        def iteration():
            # z = M r;  z2 = M^H r2
            z_ = self._precondition(r, z)
            z2_ = self._precondition(r2, z2, Mt)
            # rho = r2^H z
            r2.compute_conj_dot(z_, rho)
            # p = z + (rho / prev_rho) p;  p2 = z2 + conj(rho / prev_rho) p2
            exec.run("solver.bicg.step_1", p, z_, p2, z2_, rho, prev_rho, status)
            # q = A p;  q2 = A^H p2
            A.apply(p, q)
            At.apply(p2, q2)
            # beta = p2^H q
            p2.compute_conj_dot(q, beta)
            # x = x + (rho / beta) p;  r = r - (rho / beta) q;  r2 = r2 - conj(rho / beta) q2;  prev_rho = rho
            exec.run("solver.bicg.step_2", x, r, r2, p, q, q2, beta, rho, prev_rho, status)
            monitor.check(r)

        monitor.run(iteration)
