"""What every iterative solver shares: its parameters (criteria, preconditioner), the checks
on its system, and the IterationMonitor that decides each iteration which columns stop."""
from __future__ import annotations

import time
from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, parameters, variadic
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.log.logger import SolveResult
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.stop.criterion import CriterionArgs, SolveState, as_criterion_factory
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason
from ginkpy.core.stop.time import Time

INITIAL_GUESSES = (None, "provided", "zero", "rhs")
# the stop codes as plain ints: the monitor compares with them every iteration (enum look-ups are slow)
_RUNNING, _CONVERGED, _BREAKDOWN, _DIVERGED = (int(StopReason[name]) for name in
                                               ("RUNNING", "CONVERGED", "BREAKDOWN", "DIVERGED"))


def check_system_matrix(A: Any, exec, what: str = "system matrix") -> LinOp:
    """``A`` on ``exec`` after checking it is a square LinOp with finite values."""
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


def generate_preconditioner(value: Any, A: LinOp, exec, what: str = "preconditioner",
                            initial_guess: str = "zero") -> LinOp:
    """The preconditioner LinOp from a parameter value: None (identity), a LinOp, or a factory.
    ``what`` names the parameter in errors (Ir builds its inner solver with this too).

    An iterative solver generated here starts each apply from ``initial_guess`` (x = 0 by
    default) unless its own parameters say otherwise (``with_default_initial_guess``), so that
    it acts as a fixed operator M, not as a continuation of its previous output.
    """
    if value is None:
        return Identity(exec, A.shape, A.dtype)
    if isinstance(value, LinOp):
        if value.shape != A.shape:
            raise ValueError(f"{what} is {value.shape[0]} x {value.shape[1]}, the system {A.shape[0]} x {A.shape[1]}")
        return value
    if isinstance(value, (Parameters, Factory)):
        factory = value.on(exec) if isinstance(value, Parameters) else value
        params = factory.parameters
        if isinstance(params, IterativeSolver.Parameters) and params.default_initial_guess is None:
            factory = attrs.evolve(params, default_initial_guess=initial_guess).on(factory.executor)
        return factory.generate(A)
    raise TypeError(f"{what} must be a factory, parameters or LinOp, not {type(value).__name__}")


class IterativeSolver(EnableBuild, LinOp):
    """Base of the Krylov solvers. ``apply(b, x)`` solves A x = b with x as the initial guess.

    ``with_default_initial_guess`` as in Ginkgo: ``"provided"`` (x as given; the default for a
    solver applied directly), ``"zero"`` (the default for a solver used as a preconditioner or
    inner solver) or ``"rhs"`` (x = b).

    Without an Iteration or Time criterion the solver adds an iteration limit of
    max(1000, 10 n), as SciPy's default ``maxiter``, so that no solve can run forever.
    """

    @parameters
    class Parameters(Parameters):
        criteria: tuple = variadic()
        preconditioner: Any = None
        default_initial_guess: str | None = None

    def __init__(self, factory: Factory, system_matrix: LinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        A = check_system_matrix(system_matrix, exec)
        LinOp.__init__(self, exec, A.shape, A.dtype)
        self.system_matrix = A
        self.preconditioner = generate_preconditioner(self.parameters.preconditioner, A, exec)
        if self.parameters.default_initial_guess not in INITIAL_GUESSES:
            raise ValueError(f"unknown default_initial_guess {self.parameters.default_initial_guess!r}: "
                             f"use one of {INITIAL_GUESSES[1:]}")
        self.criteria = [as_criterion_factory(c, exec) for c in self.parameters.criteria]
        if not any(issubclass(c.parameters.product, (Iteration, Time)) for c in self.criteria):
            self.criteria.append(Iteration.build().with_max_iters(max(1000, 10 * A.shape[0])).on(exec))

    def _apply_impl(self, b: Dense, x: Dense) -> None:
        if b.shape[0] == 0 or b.shape[1] == 0:
            return
        if self.parameters.default_initial_guess == "zero":
            x.fill(0.0)
        elif self.parameters.default_initial_guess == "rhs":
            x.copy_from(b)
        self._solve(b, x)

    def _solve(self, b: Dense, x: Dense) -> None:
        raise NotImplementedError

    def _precondition(self, b: Dense, x: Dense) -> Dense:
        """M b: computed into x, or b itself when there is no preconditioner (saves a copy per
        iteration; callers only read the result)."""
        if isinstance(self.preconditioner, Identity):
            return b
        self.preconditioner.apply(b, x)
        return x

    def _residual(self, b: Dense, x: Dense, r: Dense) -> Dense:
        # r = b - A x
        r.copy_from(b)
        self.system_matrix.apply(-1.0, x, 1.0, r)
        return r


class IterationMonitor:
    """The stopping logic of one solve, shared by every solver.

    Keeps the per-column stop status on the device (kernels skip stopped columns and flag
    breakdowns there) and on the host; each ``check`` reads the residual norms and the status
    (the one host round trip per iteration), evaluates the criteria, and logs the iteration.
    A column only counts as converged once the true residual b - A x meets the criterion too.
    """

    def __init__(self, solver: IterativeSolver, b: Dense, x: Dense, r: Dense) -> None:
        self.solver, self.b, self.x = solver, b, x
        exec = self.exec = solver.executor
        k = b.shape[1]
        b_norm, r_norm = b.compute_norm2(), r.compute_norm2()
        b_norm, r_norm = (v[0].astype(np.float64) for v in exec.to_host(b_norm.values, r_norm.values))
        if not np.isfinite(b_norm).all():
            raise ValueError("the right-hand side b contains NaN or Inf values")
        if not np.isfinite(r_norm).all():
            raise ValueError("the initial residual b - A x is not finite: the initial guess x contains NaN or Inf")
        args = CriterionArgs(solver.system_matrix, b_norm, r_norm)
        self.criteria = [c.generate(args) for c in solver.criteria]
        self.rhs_norm = b_norm
        thresholds = [c.threshold for c in self.criteria if hasattr(c, "threshold")]
        self.threshold = np.max(thresholds, axis=0) if thresholds else np.full(k, np.nan)
        self.host_status = np.zeros(k, dtype=STATUS_DTYPE)
        self.status = exec.from_host(self.host_status)
        self.iterations = np.zeros(k, dtype=np.int64)
        self.norms = r_norm
        self.pending = np.zeros(k, dtype=bool)  # converged on an estimate, true residual not yet checked
        self._norm = Dense.empty(exec, (1, k), b.dtype)
        self._start = time.perf_counter()

    @property
    def done(self) -> bool:
        return bool((self.host_status != _RUNNING).all())

    def _reasons(self, iteration: int, norms: np.ndarray) -> np.ndarray:
        """Per column, the StopReason of the first criterion met (RUNNING where none is)."""
        state = SolveState(iteration, norms, time.perf_counter() - self._start)
        reasons = np.zeros(norms.shape, dtype=STATUS_DTYPE)
        for crit in self.criteria:
            met = crit.check(state) & (reasons == _RUNNING)
            reasons[met] = crit.reason
        return reasons

    def check(self, iteration: int, residual: Dense | None = None, residual_norm: Dense | None = None,
              provisional: bool = False) -> bool:
        """Check the criteria after ``iteration`` iterations; True once every column has stopped.

        Pass the residual vector (its norm is computed here, unless ``residual_norm`` gives it,
        as Cg's fused step computes it) or only a 1 x k residual norm estimate.
        With a residual vector, newly converged columns are confirmed with the true residual,
        which replaces ``residual`` where it does not meet the criterion (residual replacement).
        With ``provisional`` (an estimate while x is not yet updated, as in GMRES), converged
        columns wait for :meth:`confirm`.
        """
        if residual_norm is None:
            residual_norm = residual.compute_norm2(self._norm)
        norms, dev_status = self.exec.to_host(residual_norm.values, self.status)
        norms = norms[0].astype(np.float64)
        running = self.host_status == _RUNNING
        reasons = self._reasons(iteration, norms)
        new = np.where(reasons == _CONVERGED, reasons,
                       np.where(dev_status == _BREAKDOWN, _BREAKDOWN,
                                np.where(~np.isfinite(norms), _DIVERGED, reasons)))
        new = np.where(running, new, self.host_status).astype(STATUS_DTYPE)
        converged = running & (new == _CONVERGED)
        if converged.any():
            if provisional:
                self.pending |= converged
            elif residual is not None:
                true_norms = self._true_residual_check(iteration, converged, new, residual)
                norms = np.where(converged, true_norms, norms)
        self._update(iteration, running, new, norms)
        return self.done

    def confirm(self, iteration: int, residual: Dense) -> bool:
        """Check provisionally converged columns against the true ``residual`` (= b - A x)."""
        if self.pending.any():
            norms = residual.compute_norm2(self._norm).to_numpy()[0].astype(np.float64)
            reasons = self._reasons(iteration, norms)
            failed = self.pending & (reasons != _CONVERGED)
            self.norms = np.where(self.pending, norms, self.norms)
            if failed.any():
                # iterate on (RUNNING), unless another criterion (iterations, time) is met now
                self.host_status[failed] = reasons[failed]
                self.exec.write(self.status, self.host_status)
            self.pending[:] = False
        return self.done

    def _true_residual_check(self, iteration, converged, new, residual) -> np.ndarray:
        true_r = self.solver._residual(self.b, self.x, residual.empty_like())
        true_norms = true_r.compute_norm2(self._norm).to_numpy()[0].astype(np.float64)
        reasons = self._reasons(iteration, true_norms)
        failed = converged & (reasons != _CONVERGED)
        if failed.any():
            new[failed] = reasons[failed]
            residual.copy_from(true_r)
        return true_norms

    def _update(self, iteration, running, new, norms) -> None:
        stopped = running & (new != _RUNNING)
        self.iterations[running] = iteration
        self.norms = np.where(running, norms, self.norms)
        if stopped.any():
            self.host_status = new
            self.exec.write(self.status, new)
        self.solver._log("on_iteration_complete", iteration, norms, self.host_status.copy())

    def finish(self) -> SolveResult:
        """Report how the solve ended to the solver's loggers."""
        result = SolveResult(self.iterations.copy(), self.norms.copy(),
                             [StopReason(s) for s in self.host_status], time.perf_counter() - self._start,
                             self.rhs_norm.copy(), self.threshold.copy())
        self.solver._log("on_solve_complete", result)
        return result
