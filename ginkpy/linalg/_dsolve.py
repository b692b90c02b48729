"""SciPy's direct-solver doors: ``spsolve(A, b)``, ``splu(A)`` and ``factorized(A)`` with ``scipy.sparse.linalg``'s
signatures, solved by ``gk.solver.Direct`` (gk.factorization.Lu, SuperLU's numeric
factorization; the triangular solves on the executor).

``permc_spec`` chooses the ordering: ``"NATURAL"`` none, ``"COLAMD"`` and ``"MMD_AT_PLUS_A"``
SuperLU's of that name, None (default) or ``"MMD_ATA"`` Lu's automatic choice (MMD_AT_PLUS_A
for a nearly symmetric pattern, else COLAMD); ``diag_pivot_thresh`` is Lu's
``pivot_threshold``. A singular matrix raises a ValueError (SciPy warns and returns NaN).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.factorization.lu import Lu
from ginkpy.core.matrix.dense import Dense, value_dtype
from ginkpy.core.solver.direct import Direct
from ginkpy.linalg._interface import as_linop
from ginkpy.linalg._interface import as_executor


class SuperLU:
    """The factorization of :func:`splu`, as SciPy's ``SuperLU`` object: ``solve(b)``, ``shape``,
    ``nnz``, ``L``, ``U``, ``perm_r``, ``perm_c`` (Pr A Pc = L U in SciPy's convention).

    Examples
    --------
    >>> lu = ginkpy.linalg.splu(A)
    >>> x = lu.solve(b)                      # b: (n,) or (n, k)
    >>> lu.L, lu.U                           # SciPy CSC matrices
    """

    def __init__(self, solver: Direct) -> None:
        self.solver = solver
        self.shape = solver.shape
        fact = solver.factorization
        self._rows = fact.row_permutation.to_numpy()
        self._cols = fact.column_permutation.to_numpy()

    @property
    def nnz(self) -> int:
        return sum(f.nnz for f in self.solver.factorization.factors)

    @property
    def L(self) -> sp.csc_matrix:
        return self.solver.factorization.l_factor.to_scipy().tocsc()

    @property
    def U(self) -> sp.csc_matrix:
        return self.solver.factorization.u_factor.to_scipy().tocsc()

    @property
    def perm_r(self) -> np.ndarray:
        # SciPy: (Pr A)[perm_r[i]] = A[i]; ginkpy: row i of L U is row R[i] of A
        return np.argsort(self._rows).astype(np.int32)

    @property
    def perm_c(self) -> np.ndarray:
        return np.argsort(self._cols).astype(np.int32)

    def solve(self, rhs: Any, trans: str = "N") -> np.ndarray:
        """x with A x = rhs (rhs of shape (n,) or (n, k); x has the same shape)."""
        if trans != "N":
            raise ValueError("splu(...).solve: only trans='N' is supported (factorize A.T for the transposed system)")
        b = np.asarray(rhs)
        n = self.shape[0]
        if b.ndim not in (1, 2) or b.shape[0] != n:
            raise ValueError(f"rhs has shape {b.shape}, but the matrix is {n} x {n}")
        exec, dtype = self.solver.executor, self.solver.dtype
        if value_dtype(b.dtype, "rhs").kind == "c" and dtype.kind != "c":
            raise TypeError("rhs is complex but the matrix is real: factorize a complex matrix")
        B = Dense.from_numpy(exec, b.reshape(n, -1), dtype)
        X = self.solver.apply(B, B.empty_like()).to_numpy()
        return X.reshape(b.shape)


def splu(A: Any, permc_spec: str | None = None, diag_pivot_thresh: float | None = None, relax: Any = None,
         panel_size: Any = None, options: Any = None, *, executor: Any = None) -> SuperLU:
    """The sparse LU factorization of A, as ``scipy.sparse.linalg.splu``: an object whose
    ``solve(b)`` solves A x = b (on ``executor``).

    Parameters
    ----------
    A : sparse matrix, array or ginkpy Csr
        The square matrix.
    permc_spec : str, optional
        ``"NATURAL"``: no fill-reducing ordering; ``"COLAMD"``, ``"MMD_AT_PLUS_A"``: SuperLU's;
        None (default) or ``"MMD_ATA"``: chosen from the pattern (gk.factorization.Lu's default).
    diag_pivot_thresh : float, optional
        Threshold partial pivoting (default 0.1; 1.0 is partial pivoting).
    relax, panel_size, options
        SuperLU's tuning knobs: accepted and ignored.
    executor : executor or name, optional
        Where the triangular solves run (default: A's executor or the default one).

    Examples
    --------
    >>> from ginkpy.linalg import splu
    >>> lu = splu(A)
    >>> x = lu.solve(b)
    """
    return SuperLU(_direct(A, permc_spec, diag_pivot_thresh, executor))


def spsolve(A: Any, b: Any, permc_spec: str | None = None, use_umfpack: bool = True, *,
            executor: Any = None) -> np.ndarray:
    """x with A x = b, as ``scipy.sparse.linalg.spsolve`` (b of shape (n,) or (n, k), or sparse),
    by ``gk.solver.Direct``.

    Parameters
    ----------
    A : sparse matrix, array or ginkpy Csr
        The square matrix.
    b : array or sparse matrix
        The right-hand side(s); x has b's shape (a sparse b gives a dense x).
    permc_spec : str, optional
        As :func:`splu`'s (default: chosen from the pattern).
    use_umfpack : bool
        Accepted and ignored (SciPy's switch).
    executor : executor or name, optional
        Where the triangular solves run.

    Examples
    --------
    >>> from ginkpy.linalg import spsolve
    >>> x = spsolve(A, b)
    >>> np.allclose(A @ x, b)
    """
    b = b.toarray() if sp.issparse(b) else np.asarray(b)
    return splu(A, permc_spec, executor=executor).solve(b)


def factorized(A: Any, *, executor: Any = None) -> Callable[[Any], np.ndarray]:
    """A function solving A x = b with A's LU factorization made once, as
    ``scipy.sparse.linalg.factorized``: ``gk.solver.Direct`` (:func:`splu`) on ``executor``.

    Parameters
    ----------
    A : sparse matrix, array or ginkpy Csr
        The square matrix, factorized at this call.
    executor : executor or name, optional
        Where the triangular solves run (default: A's executor or the default one).

    Returns
    -------
    solve : callable
        ``solve(b)`` gives x with A x = b, for b of shape (n,) or (n, k) (x has b's shape).

    Examples
    --------
    >>> from ginkpy.linalg import factorized
    >>> solve = factorized(A)                 # LU once
    >>> x = solve(b)                          # two triangular solves per call
    >>> np.allclose(A @ x, b)
    """
    lu = splu(A, executor=executor)

    def solve(b: Any) -> np.ndarray:
        return lu.solve(b)

    solve.__doc__ = "x with A x = b, by the LU factorization of ``factorized(A)`` (b: (n,) or (n, k))."
    return solve


def _direct(A: Any, permc_spec: str | None, diag_pivot_thresh: float | None, executor: Any) -> Direct:
    if len(getattr(A, "shape", (0, 0))) != 2:
        raise ValueError(f"A has shape {getattr(A, 'shape', None)}: expected 2-D, an n x n matrix")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    exec = as_executor(executor, A)
    dtype = A.dtype if isinstance(A, LinOp) else exec.check_dtype(value_dtype(A.dtype, "A"))
    op = as_linop(A, exec, dtype)
    lu = Lu.build()
    spec = None if permc_spec is None else str(permc_spec).upper()
    if spec in ("NATURAL", "COLAMD", "MMD_AT_PLUS_A"):
        lu = lu.with_ordering(spec.lower())
    if diag_pivot_thresh is not None:
        lu = lu.with_pivot_threshold(float(diag_pivot_thresh))
    return Direct.build().with_factorization(lu).on(exec).generate(op)
