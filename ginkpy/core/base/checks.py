"""Checks of what an operator is generated on, shared by solvers, preconditioners,
factorizations, reorderings and multigrid levels (they live here, below all of them, so that
none imports another for them). The check that also wants a Csr is
:func:`ginkpy.core.matrix.checks.system_csr`, beside the format."""
from __future__ import annotations

from typing import Any

from ginkpy.core.base.lin_op import LinOp


def check_system_matrix(A: Any, exec, what: str = "system matrix") -> LinOp:
    """``A`` on ``exec`` after checking that it is a square LinOp of a value type ``exec``
    computes in, with finite values.

    Parameters
    ----------
    A : LinOp
        The operator to check (a matrix of ``gk.matrix``, a distributed matrix, any LinOp).
    exec : Executor
        Where it will be used: ``A`` is copied there when it lives elsewhere.
    what : str, default "system matrix"
        How errors name ``A``.

    Examples
    --------
    >>> ref = gk.ReferenceExecutor()
    >>> A = check_system_matrix(gk.matrix.Csr.from_scipy(ref, scipy.sparse.eye(3)), ref)
    >>> A.shape
    (3, 3)
    """
    if not isinstance(A, LinOp):
        raise TypeError(f"the {what} must be a ginkpy LinOp (gk.matrix.Csr.from_scipy(exec, S)), "
                        f"not {type(A).__name__}")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"the {what} must be square, got {A.shape[0]} x {A.shape[1]}")
    exec.check_dtype(A.dtype)
    A = A.to_executor(exec)
    if hasattr(A, "is_finite") and not A.is_finite():
        raise ValueError(f"the {what} contains NaN or Inf values")
    return A
