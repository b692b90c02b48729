"""Cg: the batched (preconditioned) conjugate gradient method for symmetric positive definite
items (Ginkgo's ``gko::batch::solver::Cg``), every item solved in one kernel launch.

Per item: r = b - A x, z = M r, p = z; then until it stops: alpha = (r . z) / (p . A p),
x += alpha p, r -= alpha A p, z = M r, p = z + beta p. An item whose p . A p <= 0 or r . z = 0
(A or M not positive definite) stops with a breakdown.
"""
from __future__ import annotations

from ginkpy.core.batch.solver.batch_solver import BatchSolver


class Cg(BatchSolver):
    def _solve(self, b, x, max_iterations, rtol, atol, iterations, residual_norms, reasons) -> None:
        self.executor.run("batch.solver.cg.apply", self.system_matrix, self.preconditioner, b, x, max_iterations,
                          rtol, atol, iterations, residual_norms, reasons)
