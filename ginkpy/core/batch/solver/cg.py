"""Cg: the batched (preconditioned) conjugate gradient method for symmetric positive definite
items (Ginkgo's ``gko::batch::solver::Cg``), every item solved in one kernel launch.

Per item: r = b - A x, z = M r, p = z; then until it stops: alpha = (r . z) / (p . A p),
x += alpha p, r -= alpha A p, z = M r, p = z + beta p. An item whose p . A p <= 0 or r . z = 0
(A or M not positive definite) stops with a breakdown.
"""
from __future__ import annotations

from ginkpy.core.batch.solver.batch_solver import BatchSolver


class Cg(BatchSolver):
    """The conjugate gradient method on every item of a batch of symmetric (Hermitian) positive
    definite systems of one sparsity pattern, all in one launch (Ginkgo's ``batch::solver::Cg``).

    Use it for many small SPD systems (per-cell or per-element problems, time steps of many
    independent models): far fewer launches than solving them one by one. Each item stops on
    its own; ``gk.batch.log.BatchConvergence`` tells how each ended.

    Parameters
    ----------
    max_iterations, tolerance, tolerance_type, preconditioner
        As every batched solver's (see :class:`~ginkpy.core.batch.solver.batch_solver.BatchSolver`):
        the iteration limit (default 100), the residual norm to reach (default 1e-11),
        "absolute" (default) or "relative" to ||b_i||, and a batch preconditioner (default none).

    Examples
    --------
    >>> A = gk.batch.matrix.Csr.from_scipy(exec, matrices)       # N SciPy matrices, one pattern
    >>> solver = gk.batch.solver.Cg.build().with_tolerance(1e-10).on(exec).generate(A)
    >>> X = solver.apply(B, gk.batch.MultiVector.zeros(exec, B.shape))
    """

    def _solve(self, b, x, max_iterations, rtol, atol, iterations, residual_norms, reasons) -> None:
        self.executor.run("batch.solver.cg.apply", self.system_matrix, self.preconditioner, b, x, max_iterations,
                          rtol, atol, iterations, residual_norms, reasons)
