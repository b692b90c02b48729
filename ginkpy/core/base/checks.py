"""Checks of what an operator is generated on, shared by solvers, preconditioners,
factorizations, reorderings and multigrid levels (they live here, below all of them, so that
none imports another for them). The check that also wants a Csr is
:func:`ginkpy.core.matrix.checks.system_csr`, beside the format."""
from __future__ import annotations

from typing import Any

from ginkpy.core.base.lin_op import LinOp


def check_system_matrix(A: Any, exec, what: str = "system matrix", finite: bool = True) -> LinOp:
    """``A`` on ``exec`` after checking that it is a square LinOp of a value type ``exec``
    computes in, with finite values (unless ``finite`` is False: then the caller checks them,
    with :func:`check_finite` or in a kernel of its own that reads the values anyway).

    Parameters
    ----------
    A : LinOp
        The operator to check (a matrix of ``gk.matrix``, a distributed matrix, any LinOp).
    exec : Executor
        Where it will be used: ``A`` is copied there when it lives elsewhere.
    what : str, default "system matrix"
        How errors name ``A``.
    finite : bool, default True
        Whether to check that its values are finite (one launch and one read on a device).

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
    if finite:
        check_finite(A, what)
    return A


def check_finite(A: LinOp, what: str = "system matrix") -> None:
    """Raise a ValueError where ``A`` (with an ``is_finite``) holds a NaN or infinite value.

    Parameters
    ----------
    A : LinOp
        The operator to check; one without ``is_finite`` passes.
    what : str, default "system matrix"
        How the error names ``A``.

    Examples
    --------
    >>> check_finite(gk.matrix.Csr.from_scipy(gk.ReferenceExecutor(), scipy.sparse.eye(3)))
    """
    if hasattr(A, "is_finite") and not A.is_finite():
        raise ValueError(f"the {what} contains NaN or Inf values")
