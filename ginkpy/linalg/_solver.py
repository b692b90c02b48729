"""A solver built once and applied many times at SciPy's door: :class:`Solver` (the cache
through which ``gk.linalg.cg(A, b)`` and the other functions reuse what they built for a SciPy
matrix they saw before is ``_solver_cache.py``; :mod:`ginkpy.linalg` describes the arguments)."""
from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any, Callable, Iterator

import attrs
import numpy as np
import scipy.sparse as sp

from ginkpy.config import solver_methods
from ginkpy.core.base.factory import Parameters
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.log.logger import Logger
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense, value_dtype
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm
from ginkpy.linalg._info import BREAKDOWN_INFO, DIVERGED_INFO, check_magnitude, solve_info
from ginkpy.linalg._interface import as_linop, square_operator
from ginkpy.linalg._preconditioner import preconditioner
from ginkpy.linalg._spd import SYMMETRIC_METHODS, check_preconditioner, warn_nonsymmetric

# where M goes: the preconditioner, or Ir's inner solver
_PRECONDITIONER_PARAMETER = {"ir": "solver"}
_log = logging.getLogger("ginkpy")


class Solver:
    """A solver of A x = b built once from A and the method, then applied to many right-hand
    sides: ``solve(b, x0=None)`` returns SciPy's ``(x, info)``; new values of A on the same
    sparsity pattern go in with :meth:`update`.

    Use it where the same system (or the same sparsity pattern) is solved again and again: a
    time step, a Newton iteration, a pressure projection. What SciPy's ``factorized(A)`` and
    PyAMG's ``ml = smoothed_aggregation_solver(A); ml.solve(b)`` are to their users: the
    matrix is copied to the executor, the preconditioner (a multigrid hierarchy, an
    incomplete factorization) generated and the solver's iteration captured once; each solve
    then pays its iterations, b copied in and x out (none of that when b is a
    ``pyopencl.array.Array`` on the executor's context: x comes back as one). It is also an
    operator whose product is an (approximate) solve, with SciPy's LinearOperator interface
    (``shape``, ``dtype``, ``matvec``, ``matmat``, ``@``; ``scipy.sparse.linalg.aslinearoperator``
    takes it as it is, without ginkpy importing scipy.sparse.linalg), so it can be SciPy's or
    PyAMG's ``M``: ``scipy.sparse.linalg.gmres(A, b, M=Solver(A, "cg", M="amg", rtol=1e-2))``.

    Parameters
    ----------
    A : sparse matrix or array, ndarray, LinearOperator or ginkpy LinOp
        The n x n system matrix, as :mod:`ginkpy.linalg`'s functions take it.
    method : str, default "cg"
        Any solver of the command line's ``--solver`` (``gk.config.solver_methods()``, one
        table for both): ``"cg"``, ``"fcg"``, ``"bicg"``, ``"bicgstab"``, ``"cgs"``, ``"gmres"``,
        ``"idr"``, ``"ir"``, ``"minres"``, ``"gcr"``, ``"chebyshev"``, ``"pipecg"``, ``"cb_gmres"``,
        ``"multigrid"``, ``"qmr"``, ``"tfqmr"``, ``"lgmres"``, ``"gcrotmk"``, ...
        or ``"direct"`` (gk.solver.Direct, a sparse LU: no M, tolerances or
        iterations; info 0, or -2 where x is not finite; ``result`` None).
    M : default None
        The preconditioner, as the functions take it: a name (``"jacobi"``, ``"ilu"``, ``"amg"``,
        ...), ``(name, options)``, a ginkpy factory or LinOp, a SciPy operator or matrix.
    rtol, atol : float, default 1e-5 and 0
        Each solve stops once ||b - A x|| <= max(rtol ||b||, atol).
    maxiter : int, optional
        Iteration limit per solve (default 10 n; ``gmres``: restart cycles).
    restart : int, optional
        The Krylov dimension of a method that has one (``gmres``, ``cb_gmres``, ``gcr``; default
        20). ``maxiter`` counts restart cycles of ``gmres`` and ``cb_gmres``, iterations of ``gcr``;
        of ``lgmres`` and ``gcrotmk`` (whose cycles grow or shrink) ``maxiter * restart`` steps.
    executor : executor or name, optional
        Where to run (default: A's executor for a ginkpy LinOp, else the default executor).
    dtype : dtype, optional
        The value type (default A's: a complex right-hand side needs a complex A or ``dtype``).
    **options
        The method's own keywords: ``subspace_dim`` (idr), ``relaxation_factor`` (ir),
        ``storage_precision`` (gmres: its basis stored in ``"reduce1"`` float32 or ``"reduce2"``
        float16, Ginkgo's CbGmres), ``flexible`` (gmres: flexible GMRES) and
        ``left_preconditioner`` (qmr: SciPy's M1, in any form M takes; M is its M2).

    Attributes
    ----------
    solver : the generated ginkpy solver (``gk.solver.Cg``, ...), ``matrix``: A on the executor
    (a Csr for a sparse A), ``result``: the SolveResult of the last solve.

    Examples
    --------
    >>> solver = ginkpy.linalg.Solver(A, "cg", M="amg", rtol=1e-8)
    >>> for step in range(100):
    ...     x, info = solver.solve(b_of(step), x0=x)
    >>> solver.update(A_next)          # same pattern, new values: the hierarchy is recomputed numerically
    """

    def __init__(self, A: Any, method: str = "cg", *, M: Any = None, rtol: float = 1e-5, atol: float = 0.0,
                 maxiter: int | None = None, restart: int | None = None, executor: Any = None, dtype: Any = None,
                 _iterations_per_maxiter: int | None = None, **options: Any) -> None:
        methods = solver_methods()
        if not isinstance(method, str) or method.lower() not in methods:
            raise ValueError(f"unknown method {method!r}: use one of {', '.join(sorted(methods))}")
        method = method.lower()
        if method in SYMMETRIC_METHODS and not isinstance(A, LinOp):
            warn_nonsymmetric(method, A)
        exec, A = square_operator(A, executor)
        n = A.shape[0]
        if isinstance(A, LinOp):
            if dtype is not None and np.dtype(dtype) != A.dtype:
                raise TypeError(f"dtype={np.dtype(dtype)} but A, a ginkpy {type(A).__name__}, has the value type "
                                f"{A.dtype}: create A with that dtype")
            dtype = A.dtype  # (checked where A's solver is generated)
        else:
            dtype = exec.check_dtype(value_dtype(A.dtype if dtype is None else
                                                 np.result_type(value_dtype(A.dtype, "A"), dtype), "A"))
        self.executor, self.dtype, self.shape = exec, np.dtype(dtype), (n, n)
        check_tolerances(rtol, atol)
        self.rtol, self.atol, self.method = float(rtol), float(atol), method
        self.maxiter = 10 * n if maxiter is None else check_maxiter(maxiter)
        self.matrix = as_linop(A, exec, dtype)
        if method == "direct":
            if M is not None or restart is not None or options:
                raise ValueError("method 'direct' (gk.solver.Direct, a sparse LU) solves exactly: it takes no M, "
                                 "restart or solver options")
            self.preconditioner_value, self._options = None, options
            self._params = methods["direct"].build()
        else:
            self._params = self._iterative(methods, method, M, restart, _iterations_per_maxiter, options)
        self.solver = self._params.on(exec).generate(self.matrix)
        self._outcome = _Result()
        self.solver.add_logger(self._outcome)
        self.result = None
        self._vectors: tuple[Dense, Dense] | None = None  # b and x of host solves, kept
        self._lock = threading.RLock()

    def _iterative(self, methods: dict, method: str, M: Any, restart: int | None, per_maxiter: int | None,
                   options: dict) -> Parameters:
        """The parameters of an iterative method: criteria of rtol, atol and maxiter, M where
        the method takes it, the Krylov dimension of ``restart`` and the method's options."""
        n = self.shape[0]
        if "krylov_dim" in attrs.fields_dict(methods[method].Parameters):
            if restart is None:
                restart = 20
            elif isinstance(restart, bool) or not isinstance(restart, (int, np.integer)) or restart < 1:
                raise ValueError(f"restart must be an integer >= 1, got {restart!r}")
            restart = int(min(restart, max(n, 1)))
            options["krylov_dim"] = restart
            if methods[method] is not methods["gcr"]:  # SciPy's gmres: maxiter counts restart cycles
                per_maxiter = restart if per_maxiter is None else per_maxiter
        elif restart is not None:
            raise TypeError(f"restart is a parameter of the methods with a Krylov dimension (gmres, cb_gmres, gcr), "
                            f"not of {method}")
        self.preconditioner_value = preconditioner(M, self.matrix, self.executor, self.dtype)
        check_preconditioner(method, M, self.preconditioner_value)
        if options.get("left_preconditioner") is not None:  # (qmr's M1)
            options["left_preconditioner"] = preconditioner(options["left_preconditioner"], self.matrix,
                                                            self.executor, self.dtype)
        self._options = options
        # gmres with a storage precision for its basis: Ginkgo's CbGmres
        kind = "cbgmres" if method == "gmres" and "storage_precision" in options else method
        params = methods[kind].build().with_criteria(
            *tolerance_criteria(self.rtol, self.atol), Iteration.build().with_max_iters(self.maxiter * (per_maxiter or 1)))
        for key, value in {_PRECONDITIONER_PARAMETER.get(method, "preconditioner"): self.preconditioner_value,
                           **options}.items():
            getattr(params, f"with_{key}")(value)
        return params

    # -- solving ------------------------------------------------------------------------------
    def solve(self, b: Any, x0: Any = None) -> tuple[Any, int]:
        """Solve A x = b: ``(x, info)`` as SciPy's solvers return them.

        Parameters
        ----------
        b : array of shape (n,) or (n, 1), or pyopencl.array.Array
            The right-hand side. A pyopencl array in the executor's context is used where it
            is (no copy), and x is then a pyopencl array of shape (n,) too.
        x0 : array, pyopencl.array.Array, "Mb" or None, default None
            The initial guess (0 where None; ``"Mb"``: M b). It is not changed.

        Returns
        -------
        x : ndarray of shape (n,) (a pyopencl array where b is one)
        info : int
            0 converged, ``maxiter`` at the iteration limit, -1 breakdown (qmr: -10 to -15, which
            one, as SciPy's), -2 NaN or Inf.

        Examples
        --------
        >>> solver = ginkpy.linalg.Solver(A, "cg", M="jacobi", rtol=1e-8)
        >>> x, info = solver.solve(b)
        >>> x, info = solver.solve(b2, x0=x)
        """
        return self._solve(b, x0)

    def _solve(self, b: Any, x0: Any, observer: Callable[[Dense, float], Logger] | None = None,
               loggers: tuple = (), before: Callable | None = None) -> tuple[Any, int]:
        """:meth:`solve`, with ``observer(x, ||b||)`` giving a logger that reports the iterations to
        a callback (the functions' ``callback``), ``loggers`` attached for this solve and
        ``before(solver, b)`` called before it runs."""
        n, exec, dtype = self.shape[0], self.executor, self.dtype
        device = is_pyopencl(b)
        guess_from_m = isinstance(x0, str) and x0 == "Mb"
        if isinstance(x0, str) and not guess_from_m:
            raise ValueError(f"x0 must be an array, None (x0 = 0) or 'Mb' (x0 = M b), not {x0!r}")
        with self._lock, self._writes_done() as writes:
            if device:
                B, X = self._device_vectors(b, x0)
                zero_guess = x0 is None
            else:
                b, B, X, zero_guess = self._write_host_vectors(b, x0, guess_from_m, writes)
            if self.method == "direct":  # exact: x0 and the tolerances play no part
                self.solver.apply(B, X)
                self.result = None
                return self._out(X, device), 0 if X.is_finite() else DIVERGED_INFO
            if guess_from_m:  # x0 = M b, by the solver's own preconditioner
                self.solver.preconditioner.apply(B, X)
            threshold_inf = self.rtol == np.inf or self.atol == np.inf
            if threshold_inf or self.shape[0] == 0:  # converged at once (a 0 x 0 system too), as SciPy answers
                if zero_guess:
                    X.fill(0.0)
                return self._out(X, device), 0
            attached = list(loggers)
            if observer is not None:
                attached.append(observer(X, host_norm(b) if not device else float(
                    np.asarray(exec.to_host(B.compute_norm2().values)).ravel()[0])))
            for logger in attached:
                self.solver.add_logger(logger)
            try:
                if before is not None:
                    before(self.solver, B)
                self.solver.apply_with_initial_guess(B, X, zero_guess)
            finally:
                for logger in attached:
                    self.solver.remove_logger(logger)
            self.result = result = self._outcome.result
            threshold = max(self.rtol * float(result.rhs_norm[0]) if self.rtol > 0 else 0.0, self.atol)
            info = solve_info(self.matrix, B, X, threshold, result, self.maxiter)
            if info in (BREAKDOWN_INFO, DIVERGED_INFO):
                check_magnitude(self.matrix, self.method)  # (after a failure only: no cost on success)
            if info == BREAKDOWN_INFO and hasattr(self.solver, "breakdown_info"):
                info = int(self.solver.breakdown_info()[0]) or info  # (qmr: which breakdown, as SciPy's)
            return self._out(X, device), info

    @contextlib.contextmanager
    def _writes_done(self) -> Iterator[list]:
        """A list for the events of host writes not waited for, waited for at the end (the
        caller's b and x0 may change once the solve returned or raised)."""
        writes: list = []
        try:
            yield writes
        finally:
            for event in writes:
                if event is not None:
                    event.wait()

    def _write_host_vectors(self, b: Any, x0: Any, guess_from_m: bool,
                            writes: list) -> tuple[np.ndarray, Dense, Dense, bool]:
        """The checked host b, the kept B and X with b and x0 written to them (enqueued: the
        events go to ``writes``), and whether the guess is zero."""
        n, exec, dtype = self.shape[0], self.executor, self.dtype
        b = vector(b, n, "b")
        x0 = None if x0 is None or guess_from_m else (x0.get() if is_pyopencl(x0) else vector(x0, n, "x0"))
        for what, v in (("b", b), ("x0", x0)):
            if v is not None and v.dtype.kind == "c" and dtype.kind != "c":
                raise TypeError(f"{what} is complex but the solver's value type {dtype} is real: build it "
                                f"with a complex A or dtype=numpy.complex128, or pass a real {what}")
        zero_guess = x0 is None and not guess_from_m or x0 is not None and not x0.any()
        B, X = self._host_vectors()
        writes.append(exec.write_async(B.values, np.ascontiguousarray(b.reshape(n, 1), dtype)))
        if x0 is not None and not zero_guess:
            writes.append(exec.write_async(X.values, np.ascontiguousarray(x0.reshape(n, 1), dtype)))
        return b, B, X, zero_guess

    def _host_vectors(self) -> tuple[Dense, Dense]:
        """b and x of a solve from the host, made once and kept (no allocation per solve)."""
        if self._vectors is None:
            exec, n = self.executor, self.shape[0]
            self._vectors = tuple(Dense(exec, exec.alloc((n, 1), self.dtype)) for _ in range(2))
        return self._vectors

    def _device_vectors(self, b: Any, x0: Any) -> tuple[Dense, Dense]:
        """b as it is (a view) and a new x (x0 copied in) for a pyopencl b."""
        n, exec = self.shape[0], self.executor
        if b.shape not in ((n,), (n, 1)):
            raise ValueError(f"b has shape {b.shape}, but A is {n} x {n}: b must have shape ({n},) or ({n}, 1)")
        B = Dense.from_pyopencl(exec, b.reshape(n, 1), self.dtype)
        X = B.empty_like()
        if x0 is not None and not isinstance(x0, str):
            if getattr(x0, "shape", None) not in ((n,), (n, 1)):
                raise ValueError(f"x0 has shape {getattr(x0, 'shape', None)}, but A is {n} x {n}")
            source = Dense.from_pyopencl(exec, x0.reshape(n, 1), self.dtype) if is_pyopencl(x0) else \
                Dense.from_numpy(exec, vector(x0, n, "x0").reshape(n, 1), self.dtype)
            X.copy_from(source)
        return B, X

    def _out(self, X: Dense, device: bool) -> Any:
        """x as the caller gets it: a new NumPy array, or the pyopencl array of x (shape (n,))."""
        if device:
            return X.to_pyopencl().reshape(self.shape[0])
        return X.to_numpy()[:, 0]

    # -- as a LinearOperator: the product is a solve ------------------------------------------------
    ndim = 2

    def matvec(self, b: Any) -> np.ndarray:
        """x = (approximately) A^-1 b, of b's shape ((n,) or (n, 1)): SciPy's LinearOperator.matvec."""
        b = np.asarray(b)
        return self.solve(b.reshape(-1))[0].reshape(b.shape)

    def matmat(self, B: Any) -> np.ndarray:
        """The solves of B's columns (n x k): SciPy's LinearOperator.matmat."""
        B = np.asarray(B)
        if B.ndim != 2:
            raise ValueError(f"matmat takes a 2-D array, got shape {B.shape}")
        return np.stack([self.solve(B[:, j])[0] for j in range(B.shape[1])], axis=1)

    def __matmul__(self, other: Any) -> np.ndarray:
        other = np.asarray(other)
        return self.matmat(other) if other.ndim == 2 and other.shape[1] != 1 else self.matvec(other)

    dot = __matmul__

    # -- new values ---------------------------------------------------------------------------
    def update(self, A: Any) -> "Solver":
        """Take new values of A on the same sparsity pattern: one copy of the values to the
        executor, then the preconditioner recomputed numerically, its symbolic parts kept
        (block-Jacobi's blocks, ILU/IC patterns and the triangular solves' level sets, ISAI
        patterns, multigrid aggregates and transfer operators: only the Galerkin products and
        smoothers recomputed) and so the captured iteration: AmgX's structure reuse
        (``AMGX_matrix_replace_coefficients``, ``AMGX_solver_resetup``).

        A matrix of another sparsity pattern (other stored positions, shape) is a ValueError:
        build a new Solver for it. A part without a values update of its own (Gauss-Seidel,
        ILUT) is generated anew, said in one ``logging`` line.

        Parameters
        ----------
        A : sparse matrix or array, or the ginkpy Csr the solver was built on
            The new matrix; the Csr itself (``solver.matrix``) after its own ``update_values``.

        Examples
        --------
        >>> solver = ginkpy.linalg.Solver(A, "cg", M="amg", rtol=1e-8)
        >>> A.data[:] = new_values                 # same pattern
        >>> solver.update(A)
        """
        with self._lock:
            matrix = self.matrix
            if not isinstance(matrix, Csr):
                raise TypeError(f"update needs a solver built on a matrix; this one runs on a "
                                f"{type(matrix).__name__}, whose values it does not hold")
            if A is not matrix:
                if isinstance(A, np.ndarray):
                    A = sp.csr_matrix(A)
                matrix.copy_values_from(A)
            self.refresh()
        return self

    def refresh(self) -> None:
        """What depends on the matrix's values recomputed after they changed in place
        (``solver.matrix.update_values(...)``): :meth:`update` without the copy."""
        with self._lock:
            try:
                self.solver.update()
            except NotImplementedError as err:
                _log.info("Solver: %s: the solver is generated anew", err)
                self.solver.remove_logger(self._outcome)
                self.solver = self._params.on(self.executor).generate(self.matrix)
                self.solver.add_logger(self._outcome)

    def __repr__(self) -> str:
        n = self.shape[0]
        M = type(getattr(self.solver, "preconditioner", None)).__name__
        return (f"Solver({self.method}, {n} x {n}, {self.dtype}, M={M}, "
                f"rtol={self.rtol:g}, atol={self.atol:g}, {self.executor!r})")


# -- the arguments and results of SciPy's solvers ------------------------------------------------------

class _Result(Logger):
    """Keeps how the solve ended (no per-iteration events)."""

    wants_iterations = False
    result = None

    def on_solve_complete(self, solver, result) -> None:
        self.result = result


def host_norm(v: np.ndarray) -> float:
    """||v|| without underflow or overflow where it is representable."""
    magnitude = np.abs(v).astype(np.float64)
    scale = float(magnitude.max(initial=0))
    return 0.0 if scale == 0 else scale * float(np.sqrt(np.sum((magnitude / scale) ** 2)))


def is_pyopencl(v: Any) -> bool:
    """Whether ``v`` is a pyopencl.array.Array (without importing pyopencl)."""
    return type(v).__module__.startswith("pyopencl") and hasattr(v, "context")


def vector(v: Any, n: int, what: str) -> np.ndarray:
    """``v`` as a finite 1-D float or complex array of length n (accepting (n,) and (n, 1), as SciPy does)."""
    v = np.asarray(v)
    if v.shape not in ((n,), (n, 1)):
        raise ValueError(f"{what} has shape {v.shape}, but A is {n} x {n}: {what} must have shape ({n},) or "
                         f"({n}, 1) (for several right-hand sides use gk.solver directly)")
    v = v.reshape(n).astype(value_dtype(v.dtype, what), copy=False)
    if not np.isfinite(v).all():
        raise ValueError(f"{what} contains NaN or Inf values")
    return v


def check_tolerances(rtol: float, atol: float) -> None:
    """rtol and atol: numbers >= 0 or inf (converged at once, as in SciPy)."""
    for name, value in (("rtol", rtol), ("atol", atol)):
        if isinstance(value, (bool, str)) or value is None or np.isnan(value) or value < 0:
            raise ValueError(f"{name} must be a number >= 0 (or inf), got {value!r}")


def tolerance_criteria(rtol: float, atol: float) -> list:
    """The ResidualNorm criteria of SciPy's threshold max(rtol ||b||, atol) (||b|| computed by
    the solver); an exact 0 where both tolerances are 0."""
    criteria = [ResidualNorm.build().with_reduction_factor(float(rtol)).with_baseline("rhs_norm")] if rtol > 0 else []
    if atol > 0 or not criteria:
        criteria.append(ResidualNorm.build().with_reduction_factor(float(atol)).with_baseline("absolute"))
    return criteria


def check_maxiter(maxiter: Any) -> int:
    if isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)) or maxiter < 1:
        raise ValueError(f"maxiter must be an integer >= 1 (or None for 10 n), got {maxiter!r}")
    return int(maxiter)
