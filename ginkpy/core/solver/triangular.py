"""What LowerTrs and UpperTrs share: a direct triangular solve x = T^-1 b as a LinOp.

The system matrix is a Dense or a sparse matrix (other formats are converted to Csr). Only its lower (LowerTrs) or upper (UpperTrs)
triangle is used: entries of the other triangle are ignored, so the full matrix A may be given
to solve with its triangular part. ``generate()`` prepares the solve once (on the OpenCL
executor: the level structure of a sparse triangle) and refuses a zero or missing diagonal
entry unless ``unit_diagonal`` says the diagonal is 1 (the stored one is then ignored).
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.solver.solver_base import check_system_matrix


def _check_bool(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{attribute.name} must be True or False, not {value!r}")


class TriangularSolver(EnableBuild, LinOp):
    """Base of LowerTrs and UpperTrs; ``lower`` says which triangle is solved.

    ``apply(b, x)`` overwrites x with the solution (its initial contents are not used: the
    solve is direct, not iterative, so there are no stopping criteria).
    """

    lower: bool = True

    @parameters
    class Parameters(Parameters):
        unit_diagonal: bool = attrs.field(default=False, validator=_check_bool)

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        A = check_system_matrix(system_matrix, exec)
        if not isinstance(A, (Csr, Dense)) and hasattr(A, "to_csr"):
            A = A.to_csr()  # Coo, Ell, Sellp, Hybrid
        if not isinstance(A, (Csr, Dense)):
            raise TypeError(f"{type(self).__name__} solves with a sparse matrix (converted to Csr) or a Dense, "
                            f"not {type(A).__name__}")
        LinOp.__init__(self, exec, A.shape, A.dtype)
        self.system_matrix = A
        self.unit_diagonal = bool(self.parameters.unit_diagonal)
        # analyse the triangle once (level structure on OpenCL)
        self.plan, zero_row = exec.run("solver.triangular.generate", A, self.lower, self.unit_diagonal)
        if zero_row >= 0:
            raise ValueError(f"{type(self).__name__}: the diagonal entry of row {zero_row} is zero or not stored, "
                             f"so the triangular system is singular; if the diagonal is implicitly 1, "
                             f"build with .with_unit_diagonal(True)")

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        A = self.system_matrix
        if isinstance(A, Dense):
            # x = T^-1 b by blocked dense substitution (x holds b on entry)
            x.copy_from(b)
            self.executor.run("matrix.dense_trsv.trsv", A, x, self.lower, False, self.unit_diagonal)
        else:
            # x = T^-1 b by substitution, levels in order
            self.executor.run("solver.triangular.solve", self.plan, b, x)
