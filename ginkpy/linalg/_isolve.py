"""The solver functions of :mod:`ginkpy.linalg`, which describes their arguments and results."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ginkpy.config import short_names
from ginkpy.core.base.executor import Executor, default_executor
from ginkpy.core.base.executor import executor as executor_by_name
from ginkpy.core.base.factory import Factory, Parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.log.convergence import Convergence
from ginkpy.core.log.logger import Logger
from ginkpy.core.matrix.dense import Dense, value_dtype
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.linalg._interface import ScipyOperator, as_linop, host_operator

BREAKDOWN_INFO = -1
DIVERGED_INFO = -2


def cg(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
       M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    """Solve A x = b with the conjugate gradient method (A symmetric positive definite), as
    ``scipy.sparse.linalg.cg``; the arguments are described in :mod:`ginkpy.linalg`."""
    return _solve("cg", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


def bicgstab(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
             M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    """Solve A x = b with the biconjugate gradient stabilized method, as
    ``scipy.sparse.linalg.bicgstab``; the arguments are described in :mod:`ginkpy.linalg`."""
    return _solve("bicgstab", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


def _solve(name: str, A: Any, b: Any, x0: Any, *, rtol: float, atol: float, maxiter: int | None, M: Any,
           executor: Any, observer: Callable[[Dense, float], Logger] | None = None,
           iterations_per_maxiter: int = 1, **solver_parameters: Any) -> tuple[np.ndarray, int]:
    """Solve with the ginkpy solver ``name`` under SciPy's conventions; ``observer(x, ||b||)``
    gives a logger that reports iterations to the user's callback."""
    exec = _as_executor(executor, A)
    A = host_operator(A)
    if len(A.shape) != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    n = A.shape[0]
    b = _vector(b, n, "b")
    x0 = np.zeros(n, b.dtype) if x0 is None else _vector(x0, n, "x0")
    if isinstance(A, LinOp):
        dtype = A.dtype
    else:
        dtype = np.result_type(value_dtype(A.dtype, "A"), b.dtype, x0.dtype)
    dtype = exec.check_dtype(dtype)
    b_norm = float(np.linalg.norm(b.astype(np.float64)))
    threshold = _threshold(rtol, atol, b_norm)
    maxiter = 10 * n if maxiter is None else _check_maxiter(maxiter)
    op = as_linop(A, exec, dtype)
    preconditioner = _preconditioner(M, op, exec, dtype)
    if b_norm == 0:  # x = 0 solves it exactly, as SciPy answers
        return np.zeros(n, dtype), 0

    params = (short_names("solver")[name].build()
              .with_criteria(ResidualNorm.build().with_reduction_factor(threshold).with_baseline("absolute"),
                             Iteration.build().with_max_iters(maxiter * iterations_per_maxiter))
              .with_preconditioner(preconditioner))
    for key, value in solver_parameters.items():
        getattr(params, f"with_{key}")(value)
    solver = params.on(exec).generate(op)
    B = Dense.from_numpy(exec, b, dtype)
    X = Dense.from_numpy(exec, x0, dtype)
    convergence = Convergence()
    solver.add_logger(convergence)
    if observer is not None:
        solver.add_logger(observer(X, b_norm))
    solver.apply(B, X)
    return X.to_numpy()[:, 0], _info(op, B, X, threshold, convergence.stop_reasons[0], maxiter)


def _info(A: LinOp, b: Dense, x: Dense, threshold: float, reason: StopReason, maxiter: int) -> int:
    """SciPy's info from the true residual ||b - A x|| and how the solver stopped."""
    # r = b - A x
    r = b.clone()
    A.apply(-1.0, x, 1.0, r)
    r_norm = float(r.compute_norm2().to_numpy()[0, 0])
    if r_norm <= threshold:
        return 0
    if reason == StopReason.BREAKDOWN:
        return BREAKDOWN_INFO
    if reason == StopReason.DIVERGED or not np.isfinite(r_norm):
        return DIVERGED_INFO
    return maxiter


def _as_executor(executor: Any, A: Any) -> Executor:
    if executor is None:
        return A.executor if isinstance(A, LinOp) else default_executor()
    if isinstance(executor, str):
        return executor_by_name(executor)
    if not isinstance(executor, Executor):
        raise TypeError(f"executor must be a ginkpy executor or its name ('reference', 'opencl'), "
                        f"not {type(executor).__name__}")
    return executor


def _vector(v: Any, n: int, what: str) -> np.ndarray:
    """``v`` as a finite 1-D float array of length n (accepting (n,) and (n, 1), as SciPy does)."""
    v = np.asarray(v)
    if v.shape not in ((n,), (n, 1)):
        raise ValueError(f"{what} has shape {v.shape}, but A is {n} x {n}: {what} must have shape ({n},) or "
                         f"({n}, 1) (for several right-hand sides use gk.solver directly)")
    v = v.reshape(n).astype(value_dtype(v.dtype, what), copy=False)
    if not np.isfinite(v).all():
        raise ValueError(f"{what} contains NaN or Inf values")
    return v


def _threshold(rtol: float, atol: float, b_norm: float) -> float:
    """SciPy's stopping threshold max(rtol ||b||, atol), after checking both tolerances."""
    for name, value in (("rtol", rtol), ("atol", atol)):
        if isinstance(value, (bool, str)) or value is None or not np.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return max(float(rtol) * b_norm, float(atol))


def _check_maxiter(maxiter: Any) -> int:
    if isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)) or maxiter < 1:
        raise ValueError(f"maxiter must be an integer >= 1 (or None for 10 n), got {maxiter!r}")
    return int(maxiter)


def _preconditioner(M: Any, A: LinOp, exec: Executor, dtype: np.dtype) -> Any:
    """The solver's preconditioner parameter from any form of SciPy's ``M`` or a ginkpy one."""
    if M is None:
        return None
    if isinstance(M, str):
        names = short_names("preconditioner")
        if M.lower() == "none":
            return None
        if M.lower() not in names:
            raise ValueError(f"unknown preconditioner {M!r}: use one of {', '.join([*sorted(names), 'none'])}")
        if isinstance(A, ScipyOperator):
            raise ValueError(f"M={M!r} is built from the entries of A, which a LinearOperator does not "
                             f"expose: pass A as a sparse matrix or array, or M as an operator")
        return names[M.lower()].build()
    if isinstance(M, (Parameters, Factory)):
        return M
    M = as_linop(M, exec, dtype, "M")
    if M.shape != A.shape:
        raise ValueError(f"M is {M.shape[0]} x {M.shape[1]} but A is {A.shape[0]} x {A.shape[1]}: M must be "
                         f"an approximate inverse of A of the same shape")
    if hasattr(M, "is_finite") and not M.is_finite():
        raise ValueError("M contains NaN or Inf values")
    return M


class _SolutionCallback(Logger):
    """Calls ``callback(xk)`` with a copy of the current solution after each iteration."""

    def __init__(self, callback: Callable, x: Dense) -> None:
        self.callback, self.x = callback, x

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if iteration > 0:
            self.callback(self.x.to_numpy()[:, 0])


def _solution_callback(callback: Callable | None) -> Callable[[Dense, float], Logger] | None:
    if callback is None:
        return None
    if not callable(callback):
        raise TypeError(f"callback must be callable, not {type(callback).__name__}")
    return lambda x, b_norm: _SolutionCallback(callback, x)
