"""GaussSeidel: the (symmetric) Gauss-Seidel preconditioner (Ginkgo's preconditioner::GaussSeidel),
SOR with the relaxation factor 1: M = D + L, or M = (D + L) D^-1 (D + U) where ``symmetric``
(see :mod:`ginkpy.core.preconditioner.sor`)."""
from __future__ import annotations

from ginkpy.core.base.factory import parameters
from ginkpy.core.preconditioner.sor import Sor, SweepParameters


class GaussSeidel(Sor):
    """Gauss-Seidel preconditioner: x = (D + L)^-1 b, or symmetric Gauss-Seidel.

    A forward sweep suits Gmres and Bicgstab and smooths well in multigrid; the symmetric
    variant (``with_symmetric(True)``) keeps M symmetric for Cg.

    Parameters
    ----------
    symmetric : bool, default False
        Symmetric Gauss-Seidel (a forward and a backward sweep).
    l_solver, u_solver : factory, default LowerTrs / UpperTrs
        The solvers of the lower factor D + L and (symmetric only) the upper factor.
    skip_sorting : bool, default False
        Accepted as Ginkgo's; ginkpy's Csr is always sorted.

    Examples
    --------
    >>> smoother = gk.preconditioner.GaussSeidel.build()
    >>> amg = gk.solver.Multigrid.build().with_pre_smoother(smoother).with_criteria(...).on(exe).generate(A)
    >>> x, info = gk.linalg.bicgstab(A, b, M="gauss_seidel")
    """

    @parameters
    class Parameters(SweepParameters):
        """SOR's parameters but the relaxation factor (1 here)."""

    def _omega(self) -> float:
        return 1.0
