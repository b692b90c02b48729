"""The check of a batched system matrix, shared by the batched solvers and preconditioners (it
lives beside the batch matrices, below both, so that neither imports the other for it)."""
from __future__ import annotations

from typing import Any

from ginkpy.core.batch.batch_lin_op import BatchLinOp
from ginkpy.core.batch.matrix.csr import Csr
from ginkpy.core.batch.matrix.dense import Dense
from ginkpy.core.batch.matrix.ell import Ell


def check_system_matrix(A: Any, exec, what: str = "system matrix") -> BatchLinOp:
    """``A`` on ``exec`` after checking it is a square batch matrix of a supported value type.

    Examples
    --------
    >>> A = check_system_matrix(gk.batch.matrix.Csr.from_scipy(exec, [S, 2 * S]), exec)
    """
    if not isinstance(A, (Csr, Ell, Dense)):
        raise TypeError(f"the {what} must be a batch matrix (gk.batch.matrix.Csr.from_scipy(exec, matrices), "
                        f"Ell or Dense), not {type(A).__name__}")
    n, m = A.common_size
    if n != m:
        raise ValueError(f"the {what} must be square, but its items are {n} x {m}")
    exec.check_dtype(A.dtype)
    return A.to_executor(exec)
