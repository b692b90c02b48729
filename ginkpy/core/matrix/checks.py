"""The check of a system matrix that an operator works on as a Csr (preconditioners,
factorizations, reorderings): :func:`system_csr`, beside the format it converts to. The check of
any LinOp is :func:`ginkpy.core.base.checks.check_system_matrix`."""
from __future__ import annotations

from ginkpy.core.base.checks import check_system_matrix
from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import Csr


def system_csr(system_matrix: LinOp, exec: Executor, who: str, finite: bool = True) -> Csr:
    """The system matrix as a checked Csr on ``exec`` (square, finite unless ``finite`` is
    False; other sparse formats are converted); ``who`` names the operator being generated in errors.

    Parameters
    ----------
    system_matrix : LinOp
        A sparse matrix of ``gk.matrix`` (Csr, Coo, Ell, Sellp, Hybrid).
    exec : Executor
        Where it will be used: it is copied there when it lives elsewhere.
    who : str
        The type that needs it ("Ilu"), for the error messages.
    finite : bool, default True
        Whether to check that its values are finite (else the caller does, or an operator it
        is handed to).

    Examples
    --------
    >>> A = system_csr(gk.matrix.Coo.from_scipy(ref, scipy.sparse.eye(3)), ref, "Ilu")
    >>> type(A).__name__
    'Csr'
    """
    A = check_system_matrix(system_matrix, exec, finite=finite)
    if not isinstance(A, Csr) and hasattr(A, "to_csr"):
        A = A.to_csr()  # Coo, Ell, Sellp, Hybrid
    if not isinstance(A, Csr):
        raise TypeError(f"{who} needs a sparse matrix, not {type(A).__name__}: "
                        f"convert it with gk.matrix.Csr.from_scipy or Csr.from_dense")
    return A
