"""UpperTrs: solves U x = b with the upper triangle U of its system matrix (Ginkgo's UpperTrs)."""
from __future__ import annotations

from ginkpy.core.solver.triangular import TriangularSolver


class UpperTrs(TriangularSolver):
    """Backward substitution with the upper triangle (entries below the diagonal are ignored).

    ``gk.solver.UpperTrs.build().with_unit_diagonal(True).on(exec).generate(U)``
    """

    lower = False

    @classmethod
    def transposed_type(cls) -> type:
        from ginkpy.core.solver.lower_trs import LowerTrs  # each module names the other
        return LowerTrs
