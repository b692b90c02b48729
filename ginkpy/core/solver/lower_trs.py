"""LowerTrs: solves L x = b with the lower triangle L of its system matrix (Ginkgo's LowerTrs)."""
from __future__ import annotations

from ginkpy.core.solver.triangular import TriangularSolver


class LowerTrs(TriangularSolver):
    """Forward substitution with the lower triangle (entries above the diagonal are ignored).

    ``gk.solver.LowerTrs.build().with_unit_diagonal(True).on(exec).generate(L)``
    """

    lower = True

    @classmethod
    def transposed_type(cls) -> type:
        from ginkpy.core.solver.upper_trs import UpperTrs  # each module names the other
        return UpperTrs
