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
    """BiCGSTAB on every item of a batch of general systems of one sparsity pattern, all in one
    launch (Ginkgo's ``batch::solver::Bicgstab``).

    Use it for many small nonsymmetric systems (chemistry, per-cell transport); with
    ``gk.batch.preconditioner.Ilu`` for harder ones, Gmres where it breaks down.

    Parameters
    ----------
    max_iterations, tolerance, tolerance_type, preconditioner
        See :class:`~ginkpy.core.batch.solver.batch_solver.BatchSolver`: iterations per item
        (default 100), the tolerance (default 1e-11, "absolute" by default, or "relative"),
        and the batch preconditioner (default none).

    Examples
    --------
    >>> M = gk.batch.preconditioner.Jacobi.build().with_max_block_size(1)
    >>> solver = gk.batch.solver.Bicgstab.build().with_preconditioner(M).on(exec).generate(A)
    >>> X = solver.apply(B, X)
    """

    def _solve(self, b, x, max_iterations, rtol, atol, iterations, residual_norms, reasons) -> None:
        self.executor.run("batch.solver.bicgstab.apply", self.system_matrix, self.preconditioner, b, x, max_iterations,
                          rtol, atol, iterations, residual_norms, reasons)
