"""Bicg: the (preconditioned) biconjugate gradient method for general systems.

Besides A x = b it runs the dual recurrence of A^T with the shadow residual r2 (= r at the
start), so it needs A^T and M^T: both are formed once at generate time with ``transpose()``
(Csr, Dense and the identity have one). On a symmetric positive definite system with a
symmetric preconditioner it produces the iterates of Cg. A column whose divisor p2 . A p or
rho = z . r2 is 0 stops with a breakdown instead of dividing by it.
"""
from __future__ import annotations

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import IterationMonitor, IterativeSolver


def _transpose(op: LinOp, what: str) -> LinOp:
    if not hasattr(op, "transpose"):
        raise TypeError(f"Bicg needs the transpose of its {what}, and {type(op).__name__} has no transpose(): "
                        f"give Bicg a {what} that has one (gk.matrix.Csr does), or use Bicgstab or Gmres, "
                        f"which need no transpose")
    return op.transpose()


class Bicg(IterativeSolver):
    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        self.system_matrix_transpose = _transpose(self.system_matrix, "system matrix")
        self.preconditioner_transpose = _transpose(self.preconditioner, "preconditioner")

    def _solve(self, b: Dense, x: Dense) -> None:
        exec, A, M = self.executor, self.system_matrix, self.preconditioner
        At, Mt = self.system_matrix_transpose, self.preconditioner_transpose
        k = b.shape[1]
        r, p, q, r2, p2, q2 = (b.empty_like() for _ in range(6))
        # z = z2 = 0: the initial guesses of M and M^T when they are iterative solvers
        z, z2 = (Dense.zeros(exec, b.shape, b.dtype) for _ in range(2))
        rho, prev_rho, beta = (b.empty_like((1, k)) for _ in range(3))
        # r = b - A x
        self._residual(b, x, r)
        monitor = IterationMonitor(self, b, x, r)
        # r2 = r;  p = p2 = 0;  prev_rho = 1
        exec.run("solver.bicg.initialize", r, r2, p, p2, prev_rho)
        iteration = 0
        while not monitor.check(iteration, residual=r):
            # z = M r;  z2 = M^T r2
            M.apply(r, z)
            Mt.apply(r2, z2)
            # rho = z . r2
            z.compute_dot(r2, rho)
            # p = z + (rho / prev_rho) p;  p2 = z2 + (rho / prev_rho) p2
            exec.run("solver.bicg.step_1", p, z, p2, z2, rho, prev_rho, monitor.status)
            # q = A p;  q2 = A^T p2
            A.apply(p, q)
            At.apply(p2, q2)
            # beta = p2 . q
            p2.compute_dot(q, beta)
            # x = x + (rho / beta) p;  r = r - (rho / beta) q;  r2 = r2 - (rho / beta) q2;  prev_rho = rho
            exec.run("solver.bicg.step_2", x, r, r2, p, q, q2, beta, rho, prev_rho, monitor.status)
            iteration += 1
        monitor.finish()
