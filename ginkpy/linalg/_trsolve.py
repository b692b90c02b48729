"""SciPy's ``spsolve_triangular(A, b, lower, ...)`` with ``scipy.sparse.linalg``'s signature, solved
by ``gk.solver.LowerTrs`` / ``UpperTrs`` with their exact substitution (``"sparselib"``:
level-scheduled on OpenCL, in row order on the reference executor).

A should be triangular, as SciPy asks; entries outside the triangle named by ``lower`` are not
read (SciPy's result is undefined there), and with ``unit_diagonal`` neither is the diagonal
(taken as 1). A zero or missing diagonal entry raises
``numpy.linalg.LinAlgError("A is singular: zero entry on diagonal.")``. The value type is SciPy's
(A's and b's promoted, at least float32); NaN or Inf in A or b is a ValueError.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense, value_dtype
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.upper_trs import UpperTrs
from ginkpy.linalg._interface import as_executor


def spsolve_triangular(A: Any, b: Any, lower: bool = True, overwrite_A: bool = False, overwrite_b: bool = False,
                       unit_diagonal: bool = False, *, executor: Any = None) -> np.ndarray:
    """x with T x = b for the triangle T of A, as ``scipy.sparse.linalg.spsolve_triangular``,
    by ``gk.solver.LowerTrs`` / ``UpperTrs`` (exact substitution on ``executor``).

    Parameters
    ----------
    A : sparse matrix, array or ginkpy Csr
        The square matrix; only its lower (``lower=True``) or upper triangle is read.
    b : array
        The right-hand side(s), of shape (n,) or (n, k); x has b's shape.
    lower : bool, default True
        Solve with A's lower triangle, else with its upper one.
    overwrite_A, overwrite_b : bool
        Accepted and ignored (A and b are never changed).
    unit_diagonal : bool, default False
        Take the diagonal as 1 (A's diagonal entries are not read).
    executor : executor or name, optional
        Where the solve runs (default: A's executor or the default one).

    Returns
    -------
    x : numpy.ndarray
        The solution, of b's shape, in A's and b's promoted value type (at least float32).

    Raises
    ------
    numpy.linalg.LinAlgError
        A zero or missing diagonal entry (without ``unit_diagonal``).
    ValueError
        A not square, b's shape not matching, NaN or Inf in A or b.

    Examples
    --------
    >>> from ginkpy.linalg import spsolve_triangular
    >>> L = scipy.sparse.tril(A, format="csr")
    >>> x = spsolve_triangular(L, b)                  # b: (n,) or (n, k)
    >>> np.allclose(L @ x, b)
    """
    exec = as_executor(executor, A)
    T = _triangle(A, bool(lower), bool(unit_diagonal))
    n = T.shape[0]
    b = np.asanyarray(b)
    if b.ndim not in (1, 2):
        raise ValueError(f"b must have 1 or 2 dims but its shape is {b.shape}.")
    if b.shape[0] != n:
        raise ValueError(f"The size of the dimensions of A must be equal to the size of the first dimension of b "
                         f"but the shape of A is {T.shape} and the shape of b is {b.shape}.")
    dtype = np.promote_types(np.promote_types(value_dtype(T.dtype, "A"), np.float32), value_dtype(b.dtype, "b"))
    dtype = exec.check_dtype(dtype)
    if not (np.isfinite(T.data).all() and np.isfinite(b).all()):
        raise ValueError("spsolve_triangular: A or b contains NaN or Inf")
    solver = (LowerTrs if lower else UpperTrs).build().with_unit_diagonal(bool(unit_diagonal)) \
        .with_algorithm("sparselib").on(exec).generate(Csr.from_scipy(exec, T, dtype))
    B = Dense.from_numpy(exec, np.ascontiguousarray(b.reshape(n, -1)), dtype)
    return solver.apply(B, B.empty_like()).to_numpy().reshape(b.shape)


def _triangle(A: Any, lower: bool, unit_diagonal: bool) -> sp.csr_matrix:
    """A's triangle as a SciPy CSR matrix on the host (duplicates summed; without its diagonal
    for ``unit_diagonal``), after SciPy's checks of A: square, nonzero diagonal."""
    if isinstance(A, LinOp):
        if not hasattr(A, "to_scipy"):
            raise TypeError(f"A must be a sparse matrix, array or ginkpy matrix, not {type(A).__name__}")
        A = A.to_scipy()
    if not sp.issparse(A):
        A = np.asarray(A)
        if A.ndim != 2:
            raise ValueError(f"A must be a square matrix but its shape is {A.shape}.")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix but its shape is {A.shape}.")
    A = sp.csr_matrix(A)
    A.sum_duplicates()
    if unit_diagonal:
        return sp.tril(A, -1, format="csr") if lower else sp.triu(A, 1, format="csr")
    if np.any(A.diagonal() == 0):
        raise np.linalg.LinAlgError("A is singular: zero entry on diagonal.")
    return sp.tril(A, format="csr") if lower else sp.triu(A, format="csr")
