"""The solver functions of :mod:`ginkpy.linalg`, which describes their arguments and results."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.log.logger import Logger
from ginkpy.core.matrix.dense import Dense, value_dtype
from ginkpy.linalg._interface import host_operator
from ginkpy.linalg._solver import Solver, as_executor, cached_solver, is_pyopencl

_as_executor = as_executor  # (the name gk.linalg's other modules import)
# SciPy's warning for a gmres callback without callback_type (its meaning of maxiter changes)
_CALLBACK_TYPE_WARNING = (
    "scipy.sparse.linalg.gmres called without specifying `callback_type`. The default value will be changed in"
    " a future release. For compatibility, specify a value for `callback_type` explicitly, e.g., "
    "``gmres(..., callback_type='pr_norm')``, or to retain the old behavior ``gmres(..., callback_type='legacy')``")


def cg(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
       M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    """Solve A x = b with the conjugate gradient method (A symmetric positive definite), as
    ``scipy.sparse.linalg.cg``; the arguments are described in :mod:`ginkpy.linalg`."""
    return _solve("cg", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


def fcg(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
        M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    """Solve A x = b with the flexible conjugate gradient method (A symmetric positive definite,
    M may change between iterations); the arguments are those of :func:`cg`."""
    return _solve("fcg", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


def bicg(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
         M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    """Solve A x = b with the biconjugate gradient method, as ``scipy.sparse.linalg.bicg``
    (A and M need a transpose: matrices, or LinearOperators with ``rmatvec``)."""
    return _solve("bicg", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


def bicgstab(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
             M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    """Solve A x = b with the biconjugate gradient stabilized method, as
    ``scipy.sparse.linalg.bicgstab``; the arguments are described in :mod:`ginkpy.linalg`."""
    return _solve("bicgstab", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


def cgs(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
        M: Any = None, callback: Callable | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    """Solve A x = b with the conjugate gradient squared method, as ``scipy.sparse.linalg.cgs``."""
    return _solve("cgs", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback))


def gmres(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, restart: int | None = None,
          maxiter: int | None = None, M: Any = None, callback: Callable | None = None,
          callback_type: str | None = None, executor: Any = None) -> tuple[np.ndarray, int]:
    """Solve A x = b with the restarted GMRES method, as ``scipy.sparse.linalg.gmres``.

    ``restart`` is the Krylov dimension (default 20, at most n); ``maxiter`` counts restart
    cycles (default 10 n), or inner iterations for ``callback_type="legacy"``. The callback
    gets, after each inner iteration, the relative residual norm estimate ||r|| / ||b||
    as a NumPy scalar (``"pr_norm"``, and ``"legacy"``, the default when a callback is given,
    with SciPy's DeprecationWarning that asks for ``callback_type``), or the solution after each
    restart cycle (``"x"``). ginkpy's GMRES is right-preconditioned, so its estimate is of
    b - A x itself, where SciPy's is of the left-preconditioned residual M (b - A x).
    """
    if callback is not None and callback_type is None:
        warnings.warn(_CALLBACK_TYPE_WARNING, DeprecationWarning, stacklevel=2)
        callback_type = "legacy"
    if callback_type not in (None, "x", "pr_norm", "legacy"):
        raise ValueError(f"unknown callback_type {callback_type!r}: use 'x', 'pr_norm' or 'legacy'")
    callback_type = None if callback is None else callback_type
    if restart is None:
        restart = 20
    elif isinstance(restart, bool) or not isinstance(restart, (int, np.integer)) or restart < 1:
        raise ValueError(f"restart must be an integer >= 1, got {restart!r}")
    restart = int(min(restart, max(getattr(A, "shape", (restart,))[0], 1)))
    if callback_type == "x":
        observer = _solution_callback(callback, every=restart)
    else:
        observer = _residual_callback(callback)
    return _solve("gmres", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=observer, iterations_per_maxiter=1 if callback_type == "legacy" else None,
                  restart=restart)


def idr(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
        M: Any = None, callback: Callable | None = None, executor: Any = None,
        subspace_dim: int = 2) -> tuple[np.ndarray, int]:
    """Solve A x = b with the induced dimension reduction method IDR(s), s = ``subspace_dim``;
    the other arguments are those of :func:`bicgstab`."""
    return _solve("idr", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback), subspace_dim=subspace_dim)


def ir(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
       M: Any = None, callback: Callable | None = None, executor: Any = None,
       relaxation_factor: float = 1.0) -> tuple[np.ndarray, int]:
    """Solve A x = b with iterative refinement x = x + omega M (b - A x), omega =
    ``relaxation_factor``: Richardson's iteration without M, the Jacobi iteration with
    ``M="jacobi"``; the other arguments are those of :func:`cg`."""
    return _solve("ir", A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, executor=executor,
                  observer=_solution_callback(callback), relaxation_factor=relaxation_factor)


def _solve(name: str, A: Any, b: Any, x0: Any, *, rtol: float, atol: float, maxiter: int | None, M: Any,
           executor: Any, observer: Callable[[Dense, float], Logger] | None = None,
           iterations_per_maxiter: int | None = None, **solver_parameters: Any) -> tuple[Any, int]:
    """Solve with the ginkpy solver ``name`` under SciPy's conventions, through a
    :class:`~ginkpy.linalg._solver.Solver`: the one kept from an earlier call on the same SciPy
    matrix with the same arguments (``cached_solver``), else a new one.

    ``observer(x, ||b||)`` gives a logger that reports iterations to the user's callback;
    ``solver_parameters`` are the method's own (restart, subspace_dim, relaxation_factor).
    """
    if len(getattr(A, "shape", (0, 0))) != 2:
        raise ValueError(f"A has shape {A.shape}: expected 2-D, an n x n matrix or operator")
    exec = as_executor(executor, A)
    operator = host_operator(A)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    n = A.shape[0]
    # (b and x0 are checked by the solver: here only their value types count)
    b_dtype = value_dtype(b.dtype if is_pyopencl(b) else np.asarray(b).dtype, "b")
    x0_dtype = None if x0 is None or isinstance(x0, str) else \
        value_dtype(x0.dtype if is_pyopencl(x0) else np.asarray(x0).dtype, "x0")
    if isinstance(operator, LinOp):
        dtype = operator.dtype
        for what, v in (("b", b_dtype), ("x0", x0_dtype)):
            if v is not None and np.dtype(v).kind == "c" and dtype.kind != "c":
                raise TypeError(f"{what} is complex but A, a ginkpy {type(operator).__name__}, has the real value type "
                                f"{dtype}: create A with a complex dtype (complex64 or complex128), or pass a real {what}")
    else:
        dtype = np.result_type(value_dtype(operator.dtype, "A"), b_dtype, *(() if x0_dtype is None else
                                                                                     (x0_dtype,)))
    dtype = exec.check_dtype(dtype)
    arguments = dict(rtol=rtol, atol=atol, maxiter=maxiter, **solver_parameters)
    if iterations_per_maxiter is not None:
        arguments["_iterations_per_maxiter"] = iterations_per_maxiter
    solver = cached_solver(A, exec, dtype, name, M, **arguments)
    if solver is None:
        solver = Solver(A, name, M=M, executor=exec, dtype=None if isinstance(operator, LinOp) else dtype, **arguments)
    return solver._solve(b, x0, observer)


class _SolutionCallback(Logger):
    """Calls ``callback(xk)`` with the solution after every ``every``-th iteration and after the
    last one. The solve hands it a copy of x read one iteration behind the device
    (``wants_solution``): the callback runs while the device computes the next iteration.

    With ``every`` > 1 (the restart cycles of GMRES) a cycle's solution is the x of the next
    iteration, or the final one at the end of the solve, since GMRES updates x only at the end
    of the cycle, after its last iteration.
    """

    wants_solution = True
    wants_iterations = False

    def __init__(self, callback: Callable, x: Dense, every: int = 1) -> None:
        self.callback, self.x, self.every = callback, x, every
        self.reported = 0

    def on_iteration_solution(self, solver, iteration, x) -> None:
        if self.every == 1:
            self.reported = iteration
            self.callback(x[:, 0])
        elif iteration > self.every and (iteration - 1) % self.every == 0:
            self.reported = iteration - 1
            self.callback(x[:, 0])

    def on_solve_complete(self, solver, result) -> None:
        if result.num_iterations > self.reported:
            self.reported = result.num_iterations
            self.callback(self.x.to_numpy()[:, 0])


def _solution_callback(callback: Callable | None, every: int = 1) -> Callable[[Dense, float], Logger] | None:
    if callback is None:
        return None
    _check_callable(callback)
    return lambda x, b_norm: _SolutionCallback(callback, x, every)


class _ResidualCallback(Logger):
    """Calls ``callback(||r|| / ||b||)`` after each iteration (gmres' ``callback_type="pr_norm"``
    and ``"legacy"``), the value a NumPy float64 scalar, as SciPy's."""

    def __init__(self, callback: Callable, b_norm: float) -> None:
        self.callback, self.b_norm = callback, b_norm

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if iteration > 0:
            self.callback(np.float64(residual_norm[0]) / np.float64(self.b_norm))


def _residual_callback(callback: Callable | None) -> Callable[[Dense, float], Logger] | None:
    if callback is None:
        return None
    _check_callable(callback)
    return lambda x, b_norm: _ResidualCallback(callback, b_norm)


def _check_callable(callback: Any) -> None:
    if not callable(callback):
        raise TypeError(f"callback must be callable, not {type(callback).__name__}")
