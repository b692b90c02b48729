"""SciPy's ``lobpcg(A, X, B, M, Y, tol, maxiter, largest, ...)``: the extreme eigenpairs of a
Hermitian (generalized) eigenproblem by gk's :class:`~ginkpy.core.eigensolver.lobpcg.Lobpcg`,
its block vectors on the executor and ``M`` any preconditioner gk.linalg's solvers take
(``M="amg"``, ``"jacobi"``, a ginkpy preconditioner, a SciPy operator or matrix).

Per iteration the device block vectors meet the host twice: one download of the residual
norms with two k x k Gram matrices, one of the Rayleigh-Ritz Gram matrices (at most 3k x 3k),
whose small dense eigenproblem is solved on the host (scipy.linalg.eigh). A problem too
small for the block (n - constraints < 5 k) is solved densely on the host, as SciPy does.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.factory import Factory, Parameters, as_factory
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.eigensolver.lobpcg import Lobpcg
from ginkpy.core.matrix.dense import Dense, value_dtype
from ginkpy.core.multigrid.pgm import default_levels
from ginkpy.core.solver.multigrid import Multigrid
from ginkpy.linalg._interface import as_executor, as_linop
from ginkpy.linalg._preconditioner import preconditioner


# M="amg" for an eigensolve: smoothed aggregation (the levels' prolongation smoothed with this
# Jacobi weight, PyAMG's SA) and a V-cycle. 2D Poisson 300^2, 10 smallest pairs, tol 1e-5, on
# PoCL (2 loaded cores; /tmp runs interleaved, process CPU s): 20 iterations against the device
# default's (piecewise-constant levels, W-cycle) 35, a cycle of SA's denser levels 0.09 s (V)
# or 0.19 s (W) against 0.065 s, the run 4.4-5.0 against 6.9-10.6 s; SA's W-cycle saves 1
# iteration of 20
EIGEN_PROLONGATION_RELAX = 4 / 3


def _eigen_amg(M: Any, A: LinOp, exec: Any) -> Any:
    """M="amg" (Multigrid parameters naming no levels) for an eigensolve: smoothed
    aggregation on every level, a V-cycle where none is named, the device's sweeps; any other
    M unchanged."""
    if not isinstance(M, Multigrid.Parameters) or M.mg_level or getattr(A, "nnz", None) is None:
        return M
    choice = dataclasses.replace(exec.device_choices().multigrid, prolongation_relax=EIGEN_PROLONGATION_RELAX,
                                 smoothed_levels=None)
    M.with_mg_level(*default_levels(choice, exec, A))
    return M if M.cycle is not None else M.with_cycle("v")


def _operator(op: Any, n: int, dtype: np.dtype, what: str) -> Any:
    """A callable (not an operator or matrix) as a SciPy LinearOperator, as SciPy's lobpcg
    takes it; anything else unchanged."""
    if op is None or isinstance(op, (LinOp, np.ndarray, str, tuple, Parameters, Factory)) or sp.issparse(op) \
            or not callable(op):
        return op
    import scipy.sparse.linalg as spla
    if isinstance(op, spla.LinearOperator):
        return op
    return spla.LinearOperator((n, n), matvec=op, matmat=op, dtype=dtype)


def _dense(op: Any, n: int, what: str) -> np.ndarray:
    """The n x n array of A or B (the dense path of small problems)."""
    if isinstance(op, LinOp):
        eye = Dense.from_numpy(op.executor, np.eye(n), op.dtype)
        return op.apply(eye, eye.empty_like()).to_numpy()
    if sp.issparse(op):
        return op.toarray()
    if isinstance(op, np.ndarray):
        return op
    out = np.asarray(op(np.eye(n, dtype=int)) if callable(op) else op.matmat(np.eye(n)))
    if out.shape != (n, n):
        raise ValueError(f"The shape {out.shape} of the {what} matrix defined by a callable object is wrong.")
    return out


def _small(A: Any, B: Any, n: int, k: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """SciPy's dense path: eigh of the whole (small) problem on the host."""
    import scipy.linalg as sla
    A, B = _dense(A, n, "primary"), None if B is None else _dense(B, n, "secondary")
    k = min(k, n)
    values, vectors = sla.eigh(A, B, subset_by_index=(n - k, n - 1) if largest else (0, k - 1), check_finite=False)
    return (values[::-1], vectors[:, ::-1]) if largest else (values, vectors)


def _checked_blocks(X: Any, Y: Any) -> tuple[np.ndarray, Any]:
    """X as a 2-D inexact array and Y (None where not 2-D), with SciPy's errors and warnings."""
    if X is None:
        raise ValueError("The mandatory initial matrix X cannot be None")
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"expected rank-2 array for argument X (n x k), got shape {X.shape}")
    if not np.issubdtype(X.dtype, np.inexact):
        warnings.warn(f"Data type for argument X is {X.dtype}, which is not inexact, so casted to np.float32.",
                      UserWarning, stacklevel=3)
        X = X.astype(np.float32)
    if Y is not None and np.ndim(Y) != 2:
        warnings.warn(f"Expected rank-2 array for argument Y, instead got {np.ndim(Y)}, so ignore it and use no "
                      f"constraints.", UserWarning, stacklevel=3)
        Y = None
    return X, Y


def lobpcg(A: Any, X: Any, B: Any = None, M: Any = None, Y: Any = None, tol: float | None = None,
           maxiter: int | None = None, largest: bool = True, verbosityLevel: int = 0,
           retLambdaHistory: bool = False, retResidualNormsHistory: bool = False, restartControl: int = 20,
           *, executor: Any = None) -> tuple:
    """The extreme eigenpairs of A x = lambda B x by LOBPCG, as ``scipy.sparse.linalg.lobpcg``,
    the block vectors on ``executor``.

    Parameters
    ----------
    A : sparse matrix, array, LinearOperator, callable or ginkpy LinOp
        Hermitian, n x n.
    X : array (n, k)
        Initial approximation of the k eigenvectors (full rank; random columns do).
    B : same forms as A, optional
        Hermitian positive definite (default: the identity).
    M : optional
        The preconditioner, in any form gk.linalg's solvers take: a name (``"amg"``,
        ``"jacobi"``, ``("ilu", options)``, built on A, which must then be a matrix), ginkpy
        parameters, a factory or a LinOp, a SciPy operator, matrix or callable; ``"amg"``:
        smoothed aggregation (PyAMG's SA), unless levels are given.
    Y : array (n, c), optional
        Constraints: iterate B-orthogonally to Y's columns.
    tol, maxiter : float, int, optional
        Residual norm at which a pair has converged (default sqrt(eps) n); iterations (20).
    largest, verbosityLevel, retLambdaHistory, retResidualNormsHistory, restartControl
        As SciPy's (largest, default True: the largest eigenvalues, else the smallest).
    executor : executor or name, optional
        Where the block vectors live (default: A's or the default executor).

    Returns
    -------
    lambda, v : arrays (k,) and (n, k)
        The eigenvalues (descending where largest, else ascending), the B-orthonormal eigenvectors.
    lambdaHistory, residualNormsHistory : lists of arrays, where asked for

    Examples
    --------
    >>> from ginkpy.linalg import lobpcg
    >>> X = np.random.default_rng(0).standard_normal((A.shape[0], 10))
    >>> w, v = lobpcg(A, X, M="amg", tol=1e-6, maxiter=200, largest=False)   # 10 smallest
    """
    X, Y = _checked_blocks(X, Y)
    n, k = X.shape
    size_y = 0 if Y is None else np.shape(Y)[1]
    if n - size_y < 5 * k:
        warnings.warn(f"The problem size {n} minus the constraints size {size_y} is too small relative to the "
                      f"block size {k}. Using a dense eigensolver instead of LOBPCG iterations.No output of the "
                      f"history of the iterations.", UserWarning, stacklevel=2)
        if Y is not None:
            raise NotImplementedError("The dense eigensolver does not support constraints.")
        return _small(A, B, n, k, largest)
    result = _solve(A, X, B, M, Y, tol, 20 if maxiter is None else maxiter, largest, verbosityLevel,
                    restartControl, executor)
    out = (result.eigenvalues, result.X.to_numpy())
    if retLambdaHistory:
        out += (result.lambda_history,)
    if retResidualNormsHistory:
        out += (result.residual_norms_history,)
    return out


def _solve(A, X, B, M, Y, tol, maxiter, largest, verbosity, restart_control, executor):
    """The ginkpy operators of the arguments and the core solver's result."""
    n = X.shape[0]
    exec = as_executor(executor, A)
    types = [X.dtype] + [value_dtype(op.dtype, what) for op, what in ((A, "A"), (B, "B"), (Y, "Y"))
                         if op is not None and getattr(op, "dtype", None) is not None]
    dtype = exec.check_dtype(np.result_type(*types))
    if getattr(A, "shape", (n, n)) != (n, n):
        raise ValueError(f"A has shape {A.shape} but X has {n} rows: A must be {n} x {n}")
    A = as_linop(_operator(A, n, dtype, "A"), exec, dtype, "A")
    B = None if B is None else as_linop(_operator(B, n, dtype, "B"), exec, dtype, "B")
    if B is not None and B.shape != (n, n):
        raise ValueError(f"B has shape {B.shape} but A is {n} x {n}")
    named = isinstance(M, (str, tuple))
    M = preconditioner(_operator(M, n, dtype, "M"), A, exec, dtype)
    if named:
        M = _eigen_amg(M, A, exec)
    if isinstance(M, (Parameters, Factory)):
        M = as_factory(M, exec).generate(A)
    if Y is not None:
        Y = np.asarray(Y)
        if Y.shape[0] != n:
            raise ValueError(f"Y has shape {Y.shape} but X has {n} rows")
        Y = Dense.from_numpy(exec, Y, dtype)
    solver = Lobpcg(A, B, M, Y, tol=tol, maxiter=maxiter, largest=largest, restart_control=restart_control,
                    verbosity=verbosity)
    return solver.solve(Dense.from_numpy(exec, X, dtype))
