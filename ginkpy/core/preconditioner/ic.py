"""Ic: the incomplete-Cholesky preconditioner M = L L^H, applied as x = L^-H (L^-1 b) (Ginkgo's
preconditioner::Ic; L^H is L^T for real values), for symmetric (complex: Hermitian) positive
definite systems (Cg).

As Ilu, with the IC factorizations (ParIc by default): ``l_solver`` solves with L; the solve
with L^H is the conjugate transpose of the l_solver (Ginkgo's Ic), so M stays Hermitian as Cg
needs, unless a ``u_solver`` is given. Unset, l_solver is LowerIsai (kept if it and its
conjugate transpose invert L and L^H well enough, see Ilu), else LowerTrs.
"""
from __future__ import annotations

from ginkpy.core.base.factory import as_factory
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.factorization.par_ic import ParIc
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.preconditioner.ilu import Ilu
from ginkpy.core.preconditioner.isai import LowerIsai
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.triangular import TriangularSolver


class Ic(Ilu):
    """``gk.preconditioner.Ic.build().with_factorization(...).with_l_solver(...)``"""

    default_factorization = ParIc

    def _isai(self, first: Csr, second: Csr) -> tuple[LinOp, LinOp]:
        return self._transposed_pair(self.parameters.l_solver or LowerIsai.build(), first, second)

    def _exact(self, first: Csr, second: Csr) -> tuple[LinOp, LinOp]:
        return self._transposed_pair(self.parameters.l_solver or LowerTrs.build(), first, second)

    def _transposed_pair(self, l_params, first: Csr, second: Csr) -> tuple[LinOp, LinOp]:
        exec, p = self.executor, self.parameters
        l_solver = as_factory(l_params, exec).generate(first)
        if p.u_solver is not None:
            return l_solver, as_factory(p.u_solver, exec).generate(second)
        if isinstance(l_solver, TriangularSolver):
            return l_solver, l_solver.conj_transpose(second)  # L^H is at hand
        if not hasattr(l_solver, "conj_transpose"):
            raise TypeError(f"Ic solves with L^H by the conjugate transpose of its l_solver (conj_transpose()), "
                            f"which a {type(l_solver).__name__} does not have: give a u_solver too")
        return l_solver, l_solver.conj_transpose()
