"""The batched solver functions of :mod:`ginkpy.linalg`: many systems of one sparsity pattern,
solved in one launch, with SciPy's arguments per system.

Each function's docstring (``help(ginkpy.linalg.batched_cg)``) describes its arguments
(As: N SciPy matrices of one pattern, a 3-D array, ``(pattern, values)``, CSR arrays or a batch
matrix; B and X0 of shape (N, n); SciPy's rtol, atol, maxiter per system; M a name or a batch
preconditioner) and results: X (N, n) and SciPy's info per system.
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp

from ginkpy.core.base.factory import Factory, Parameters
from ginkpy.core.batch.batch_lin_op import BatchLinOp
from ginkpy.core.batch.matrix import batch_pattern
from ginkpy.core.batch.matrix.csr import Csr
from ginkpy.core.batch.multi_vector import MultiVector
from ginkpy.core.batch.preconditioner.ilu import Ilu
from ginkpy.core.batch.preconditioner.isai import Isai
from ginkpy.core.batch.preconditioner.jacobi import Jacobi
from ginkpy.core.batch.solver.bicgstab import Bicgstab
from ginkpy.core.batch.solver.cg import Cg
from ginkpy.core.batch.solver.gmres import Gmres
from ginkpy.core.matrix.dense import Dense, value_dtype
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.linalg._docs import BATCHED, BATCHED_NOTES, BATCHED_RETURNS, scipy_door
from ginkpy.linalg._info import BREAKDOWN_INFO, DIVERGED_INFO
from ginkpy.linalg._interface import as_executor

# M names: their batched preconditioner's parameters
PRECONDITIONERS = {"jacobi": lambda: Jacobi.build().with_max_block_size(1), "block_jacobi": Jacobi.build,
                   "ilu": Ilu.build, "isai": Isai.build}


@scipy_door(
    "Solve A_i x_i = b_i for every system of a batch with the conjugate gradient method.",
    """Use it for many small symmetric (Hermitian) positive definite systems of one sparsity
    pattern: ``gk.batch.solver.Cg`` solves them all in one launch.""",
    """
    >>> from ginkpy.linalg import batched_cg
    >>> X, info = batched_cg(matrices, B, rtol=1e-8, M="jacobi")     # B: (N, n)
    >>> (info == 0).all()
    """, own=BATCHED, returns=BATCHED_RETURNS, notes=BATCHED_NOTES)
def batched_cg(As: Any, B: Any, X0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0,
               maxiter: int | None = None, M: Any = None, executor: Any = None) -> tuple[np.ndarray, np.ndarray]:
    return _solve(Cg, As, B, X0, rtol, atol, maxiter, M, executor)


@scipy_door(
    "Solve A_i x_i = b_i for every system of a batch with BiCGStab.",
    """Use it for many small nonsymmetric systems of one sparsity pattern
    (``gk.batch.solver.Bicgstab``, one launch); ``M="ilu"`` for harder ones.""",
    """
    >>> from ginkpy.linalg import batched_bicgstab
    >>> X, info = batched_bicgstab((pattern, values), B, rtol=1e-8, M="ilu")
    >>> X.shape == B.shape
    """, own=BATCHED, returns=BATCHED_RETURNS, notes=BATCHED_NOTES)
def batched_bicgstab(As: Any, B: Any, X0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0,
                     maxiter: int | None = None, M: Any = None, executor: Any = None) -> tuple[np.ndarray, np.ndarray]:
    return _solve(Bicgstab, As, B, X0, rtol, atol, maxiter, M, executor)


@scipy_door(
    "Solve A_i x_i = b_i for every system of a batch with restarted GMRES.",
    """Use it for many small nonsymmetric systems of one sparsity pattern where
    :func:`batched_bicgstab` breaks down (``gk.batch.solver.Gmres``, one launch).""",
    """
    >>> from ginkpy.linalg import batched_gmres
    >>> X, info = batched_gmres(matrices, B, restart=20, M="isai")
    >>> info
    """, own={**BATCHED, "restart": """restart : int, default None
    The Krylov dimension (None: 20, as SciPy's; at most n).""", "maxiter": """maxiter : int, default None
    The limit of restart cycles of every system (None: 10 n), as SciPy's."""},
    returns=BATCHED_RETURNS, notes=BATCHED_NOTES)
def batched_gmres(As: Any, B: Any, X0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0,
                  restart: int | None = None, maxiter: int | None = None, M: Any = None,
                  executor: Any = None) -> tuple[np.ndarray, np.ndarray]:
    if restart is None:
        restart = 20
    elif isinstance(restart, bool) or not isinstance(restart, (int, np.integer)) or restart < 1:
        raise ValueError(f"restart must be an integer >= 1, got {restart!r}")
    return _solve(Gmres, As, B, X0, rtol, atol, maxiter, M, executor, restart=int(restart))


def _solve(solver: type, As: Any, B: Any, X0: Any, rtol: float, atol: float, maxiter: int | None, M: Any,
           executor: Any, restart: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The batched solve; a list's pattern check (its index arrays compared with item 0's)
    runs on the host while the device solves. Where it finds items stored in another order
    (their values were uploaded in theirs), the batch is built again and solved again; where it
    finds a differing pattern, its error is raised, also in place of an error the misplaced
    values caused on the way (a singular block)."""
    exec = as_executor(executor, As)
    B = np.asarray(B)
    A, host = _batch_matrix(As, exec, B, X0)
    check = host.verify if host is not None else (lambda: False)
    try:
        X, info = _solve_batch(solver, A, exec, B, X0, rtol, atol, maxiter, M, restart, check)
    except Exception:
        if not check():  # the pattern held (else its error, or the batch in order below)
            raise
    else:
        if not check():  # run already, beside the solve
            return X, info
    A = Csr.from_host_batch(exec, host)  # items stored in another order: their values now in the pattern's
    return _solve_batch(solver, A, exec, B, X0, rtol, atol, maxiter, M, restart, None)


def _solve_batch(solver: type, A: BatchLinOp, exec, B: np.ndarray, X0: Any, rtol: float, atol: float,
                 maxiter: int | None, M: Any, restart: int | None, while_solving) -> tuple[np.ndarray, np.ndarray]:
    """X and SciPy's info of the batch A on ``exec`` (``while_solving``: host work run once
    the solve is enqueued)."""
    dtype = A.dtype
    N, n = A.num_batch_items, A.common_size[0]
    if A.common_size[0] != A.common_size[1]:
        raise ValueError(f"each system must be square, but they are {A.common_size[0]} x {A.common_size[1]}")
    if maxiter is None:
        maxiter = 10 * n
    elif isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)) or maxiter < 1:
        raise ValueError(f"maxiter must be an integer >= 1 (or None for 10 n), got {maxiter!r}")
    b = _vectors(exec, B, N, n, "B", dtype)
    if X0 is None:
        X = MultiVector.zeros(exec, (N, n), dtype)
    else:
        X0 = np.array(X0, dtype=dtype)  # a copy: systems with b_i = 0 get x_i = 0, as SciPy answers
        if X0.shape == (N, n):
            X0[~B.any(axis=1)] = 0
        X = _vectors(exec, X0, N, n, "X0", dtype)
    params = solver.build().with_preconditioner(_preconditioner(M))
    max_iterations = maxiter
    if restart is not None:
        restart = min(restart, max(n, 1))
        params = params.with_krylov_dim(restart)
        max_iterations = maxiter * restart
    s = params.on(exec).generate(A)
    result = s.apply_with_tolerances(b, X, rtol, atol, min(max_iterations, np.iinfo(np.int32).max), while_solving)
    codes = result.codes
    info = np.full(N, maxiter, dtype=np.int64)
    info[codes == StopReason.CONVERGED] = 0
    info[codes == StopReason.BREAKDOWN] = BREAKDOWN_INFO
    info[codes == StopReason.DIVERGED] = DIVERGED_INFO
    return X.to_numpy(), info


def _batch_matrix(As: Any, exec, B: np.ndarray, X0: Any) -> tuple[BatchLinOp, batch_pattern.HostBatch | None]:
    """The systems as a batch matrix on ``exec``: a batch matrix (its value type decides), or a
    list of SciPy matrices, a 3-D array, (pattern, values), (indptr, indices, values) or
    SciPy's (data, indices, indptr), built on the host first (its values' type: float32 where
    they, B and X0 are all float32, else float64 or complex), then uploaded in that type; and
    the host batch, whose pattern check (``verify``) is left to the caller (None: nothing
    built on the host)."""
    if isinstance(As, BatchLinOp):
        return As.to_executor(exec), None
    host = _host_batch(As)
    types = [host.dtype, value_dtype(B.dtype, "B")] + ([value_dtype(np.asarray(X0).dtype, "X0")] if X0 is not None else [])
    host = attrs.evolve(host, dtype=np.result_type(*types))
    return Csr.from_host_batch(exec, host, verify=False), host


def _host_batch(As: Any) -> batch_pattern.HostBatch:
    """The batch of ``As`` on the host (see :func:`_batch_matrix`), in the values' own type."""
    if isinstance(As, tuple):
        if len(As) == 2 and sp.issparse(As[0]):
            return batch_pattern.from_scipy_pattern(As[0], As[1])
        if len(As) == 3 and not any(sp.issparse(a) for a in As):
            arrays = [np.asarray(a) for a in As]
            if arrays[0].ndim == 2 and arrays[2].ndim == 1:  # SciPy's order: (data, indices, indptr)
                arrays = arrays[::-1]
            if arrays[2].ndim == 2:
                return batch_pattern.from_arrays(arrays[0], arrays[1], arrays[2])
        raise TypeError("As as a tuple must be (pattern, values): a SciPy sparse matrix giving the stored "
                        "entries and an array (N, nnz) of each system's values; or (indptr, indices, values) "
                        "with values of shape (N, nnz)")
    if isinstance(As, np.ndarray) and As.ndim == 3:
        return batch_pattern.from_dense(As)
    return batch_pattern.from_list(As)


def _vectors(exec, V: np.ndarray, N: int, n: int, what: str, dtype) -> MultiVector:
    """``V`` on ``exec`` as a finite (N, n) MultiVector of ``dtype`` (one transfer, checked there);
    an error names the first system with NaN or Inf."""
    if V.shape != (N, n):
        raise ValueError(f"{what} has shape {V.shape}, but there are {N} systems of {n} x {n}: {what} must have "
                         f"shape ({N}, {n}), one row per system")
    value_dtype(V.dtype, what)
    out = MultiVector.from_numpy(exec, V, dtype)
    if V.size and not exec.run("matrix.dense.is_finite", Dense(exec, out.values.reshape(V.size, 1))):
        bad = np.flatnonzero(~np.isfinite(V).all(axis=1))
        more = f" (and {bad.size - 1} more)" if bad.size > 1 else ""
        raise ValueError(f"{what} of system {int(bad[0])}{more} contains NaN or Inf values")
    return out


def _preconditioner(M: Any) -> Any:
    """The batched solver's preconditioner parameter from M."""
    if M is None:
        return None
    if isinstance(M, str):
        if M.lower() == "none":
            return None
        if M.lower() not in PRECONDITIONERS:
            raise ValueError(f"unknown preconditioner {M!r} for the batched solvers: use "
                             f"{', '.join(repr(k) for k in PRECONDITIONERS)}, 'none', or "
                             f"gk.batch.preconditioner.Jacobi.build()... (Ilu, Isai)")
        return PRECONDITIONERS[M.lower()]()
    if isinstance(M, (Parameters, Factory, Jacobi, Ilu, Isai)):
        return M
    raise TypeError(f"M must be None, one of {', '.join(repr(k) for k in PRECONDITIONERS)} or a "
                    f"gk.batch.preconditioner.Jacobi, Ilu or Isai (parameters or generated), not {type(M).__name__}")
