"""Checks of what an operator is generated on, shared by solvers, preconditioners,
factorizations, reorderings and multigrid levels (they live here, below all of them, so that
none imports another for them)."""
from __future__ import annotations

from typing import Any

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import Csr


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


def system_csr(system_matrix: LinOp, exec: Executor, who: str) -> Csr:
    """The system matrix as a checked Csr on ``exec`` (square, finite; other sparse formats are
    converted); ``who`` names the operator being generated in errors.

    Parameters
    ----------
    system_matrix : LinOp
        A sparse matrix of ``gk.matrix`` (Csr, Coo, Ell, Sellp, Hybrid).
    exec : Executor
        Where it will be used: it is copied there when it lives elsewhere.
    who : str
        The type that needs it ("Ilu"), for the error messages.

    Examples
    --------
    >>> A = system_csr(gk.matrix.Coo.from_scipy(ref, scipy.sparse.eye(3)), ref, "Ilu")
    >>> type(A).__name__
    'Csr'
    """
    A = check_system_matrix(system_matrix, exec)
    if not isinstance(A, Csr) and hasattr(A, "to_csr"):
        A = A.to_csr()  # Coo, Ell, Sellp, Hybrid
    if not isinstance(A, Csr):
        raise TypeError(f"{who} needs a sparse matrix, not {type(A).__name__}: "
                        f"convert it with gk.matrix.Csr.from_scipy or Csr.from_dense")
    return A
