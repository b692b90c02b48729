"""LowerTrs: solves L x = b with the lower triangle L of its system matrix (Ginkgo's LowerTrs)."""
from __future__ import annotations

from ginkpy.core.solver.triangular import TriangularSolver, triangular_doc


class LowerTrs(TriangularSolver):
    __doc__ = triangular_doc(lower=True)
    lower = True
