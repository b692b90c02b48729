"""ginkpy operators as SciPy LinearOperators (a module of its own: it imports
scipy.sparse.linalg, which ginkpy.linalg imports only where a LinearOperator is used)."""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.dense import Dense


class GinkpyLinearOperator(spla.LinearOperator):
    """A ginkpy LinOp seen as a SciPy LinearOperator: each product copies the operand to the
    operator's executor, applies the operator there and copies the result back."""

    def __init__(self, linop: LinOp) -> None:
        super().__init__(dtype=linop.dtype, shape=linop.shape)
        self.linop = linop

    def _matmat(self, X: np.ndarray) -> np.ndarray:
        exec = self.linop.executor
        b = Dense.from_numpy(exec, np.asarray(X), dtype=self.dtype)
        # x = 0 is also the initial guess when the operator is a solver
        x = Dense.zeros(exec, (self.shape[0], b.shape[1]), self.dtype)
        return self.linop.apply(b, x).to_numpy()

    def _adjoint(self) -> "GinkpyLinearOperator":
        adjoint = getattr(self.linop, "conj_transpose", None)
        if adjoint is None and self.linop.dtype.kind != "c":
            adjoint = getattr(self.linop, "transpose", None)
        if adjoint is None:
            raise NotImplementedError(f"{type(self.linop).__name__} has no conj_transpose() (or transpose() for "
                                      f"real values), so rmatvec and the adjoint .H are not available")
        return GinkpyLinearOperator(adjoint())
