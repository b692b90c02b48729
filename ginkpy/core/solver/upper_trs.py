"""UpperTrs: solves U x = b with the upper triangle U of its system matrix (Ginkgo's UpperTrs)."""
from __future__ import annotations

from ginkpy.core.solver.triangular import TriangularSolver, triangular_doc


class UpperTrs(TriangularSolver):
    __doc__ = triangular_doc(lower=False)
    lower = False
