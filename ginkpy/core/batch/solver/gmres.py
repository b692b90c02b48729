"""Gmres: the batched restarted GMRES(m) method for general items (Ginkgo's
``gko::batch::solver::Gmres``), right-preconditioned, every item solved in one launch.

Per item and restart cycle: v_0 = r / ||r||; for j < m: w = A M v_j, orthogonalised against
v_0 .. v_j by modified Gram-Schmidt, v_{j+1} = w / ||w||, and a Givens rotation keeps the
Hessenberg matrix triangular so that |g_{j+1}| estimates ||r||. The cycle ends after m
steps, when the estimate meets the tolerance, at the iteration limit or on a happy breakdown
(||w|| = 0); then x += M V y and the true residual decides whether the item has converged or
restarts. A singular triangular factor stops the item with a breakdown, keeping the steps
before the singular column.
"""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import integer, parameters
from ginkpy.core.batch.solver.batch_solver import BatchSolver

DEFAULT_KRYLOV_DIM = 10


class Gmres(BatchSolver):
    """Restarted GMRES on every item of a batch of general systems of one sparsity pattern, all
    in one launch (Ginkgo's ``batch::solver::Gmres``).

    Use it for many small nonsymmetric systems where Bicgstab breaks down or stagnates; the
    Krylov basis of each item lives in the work-group's memory where it fits.

    Parameters
    ----------
    krylov_dim : int, default 10
        The restart length (at most 1024).
    max_iterations, tolerance, tolerance_type, preconditioner
        As in :class:`~ginkpy.core.batch.solver.batch_solver.BatchSolver`: at most 100
        iterations by default, tolerance 1e-11 "absolute" by default, no preconditioner.

    Examples
    --------
    >>> solver = gk.batch.solver.Gmres.build().with_krylov_dim(20).with_tolerance(1e-9).on(exec).generate(A)
    >>> X = solver.apply(B, X)
    >>> X, info = gk.linalg.batched_gmres(matrices, B, restart=20)
    """

    @parameters
    class Parameters(BatchSolver.Parameters):
        krylov_dim: int = attrs.field(default=DEFAULT_KRYLOV_DIM, validator=integer(min=1, max=1024))

    def _solve(self, b, x, max_iterations, rtol, atol, iterations, residual_norms, reasons) -> None:
        self.executor.run("batch.solver.gmres.apply", self.system_matrix, self.preconditioner, b, x, max_iterations,
                          rtol, atol, int(self.parameters.krylov_dim), iterations, residual_norms, reasons)
