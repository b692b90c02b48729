"""Bicgstab: the batched biconjugate gradient stabilized method for general items (Ginkgo's
``gko::batch::solver::Bicgstab``), right-preconditioned, every item solved in one launch.

Per item and iteration: p = r + beta (p - omega v), v = A M p, alpha = rho / (r_hat . v),
s = r - alpha v (the item may stop here, x += alpha M p), t = A M s, omega = (t . s) / (t . t),
x += alpha M p + omega M s, r = s - omega t. A zero rho, r_hat . v, t . t or omega stops the
item with a breakdown. Where the recurrence residual meets the tolerance but the true one
does not, the item restarts from its current x (r_hat = r = b - A x).
"""
from __future__ import annotations

from ginkpy.core.batch.solver.batch_solver import BatchSolver


class Bicgstab(BatchSolver):
    def _solve(self, b, x, max_iterations, rtol, atol, iterations, residual_norms, reasons) -> None:
        self.executor.run("batch.solver.bicgstab.apply", self.system_matrix, self.preconditioner, b, x, max_iterations,
                          rtol, atol, iterations, residual_norms, reasons)
