"""Ic: the incomplete-Cholesky preconditioner M = L L^H, applied as x = L^-H (L^-1 b) (Ginkgo's
preconditioner::Ic; L^H is L^T for real values), for symmetric (complex: Hermitian) positive
definite systems (Cg).

As Ilu, with the IC factorizations (unset: exact IC(0) on a CPU device and for small matrices,
ParIc's sweeps on a GPU, each retried with a diagonal shift where it breaks down): ``l_solver``
solves with L; the solve with L^H is the conjugate transpose of the l_solver (Ginkgo's Ic), so
M stays Hermitian as Cg needs, unless a ``u_solver`` is given. Unset, the l_solver is chosen
as Ilu's: the cheapest candidate that solves L and L^H well enough, else exact substitution.
"""
from __future__ import annotations

from ginkpy.core.base.factory import as_factory
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.factorization.ic import Ic as ExactIc
from ginkpy.core.factorization.par_ic import ParIc
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.preconditioner.ilu import Ilu
from ginkpy.core.solver.triangular import TriangularSolver


class Ic(Ilu):
    """The incomplete Cholesky preconditioner M = L L^H, applied as x = L^-H (L^-1 b) (Ginkgo's
    ``preconditioner::Ic``).

    Use it with Cg for symmetric (Hermitian) positive definite systems (``M="ic"`` in
    ``gk.linalg``): M stays SPD, so Cg's theory holds; a breakdown of the factorization is
    retried on a shifted matrix (see gk.factorization.Ic).

    Parameters
    ----------
    factorization : factorization factory, default None (chosen)
        ``gk.factorization.Ic`` (exact IC(0)), ``ParIc`` or ``ParIct``; None picks as Ilu does.
    l_solver : solver factory, default None (chosen)
        The solver of L (LowerTrs, LowerIsai, ...); None picks by the device.
    u_solver : solver factory, default None (L's solver, conjugate-transposed)
        The solver of L^H, where it should differ from the conjugate transpose of l_solver's.
    reverse_apply : bool, default False
        Ginkgo's ``reverse_apply``, as :class:`Ilu`'s: the L^H solve first, then the L solve.

    Examples
    --------
    >>> M = gk.preconditioner.Ic.build()
    >>> solver = gk.solver.Cg.build().with_preconditioner(M).on(exec).generate(A)
    >>> x, info = gk.linalg.cg(A, b, M="ic")
    """

    exact_factorization = ExactIc
    parallel_factorization = ParIc

    def _pair(self, l_params, u_params, first: Csr, second: Csr) -> tuple[LinOp, LinOp]:
        exec, p = self.executor, self.parameters
        l_solver = as_factory(p.l_solver or l_params, exec).generate(first)
        if p.u_solver is not None:
            return l_solver, as_factory(p.u_solver, exec).generate(second)
        if isinstance(l_solver, TriangularSolver):
            return l_solver, l_solver.conj_transpose(second)  # L^H is at hand
        if not hasattr(l_solver, "conj_transpose"):
            raise TypeError(f"Ic solves with L^H by the conjugate transpose of its l_solver (conj_transpose()), "
                            f"which a {type(l_solver).__name__} does not have: give a u_solver too")
        return l_solver, l_solver.conj_transpose()
