"""What the batched solvers share (Ginkgo's ``EnableBatchSolver``): parameters, the checks of
the system and operands, and the one kernel launch that solves every item.

Each item iterates and stops on its own inside the kernel: converged once its TRUE residual
||b_i - A_i x_i|| meets the tolerance (``tolerance`` itself, or ``tolerance * ||b_i||`` for
``tolerance_type="relative"``), else at ``max_iterations``, a breakdown (a zero or invalid
divisor: that item stops, the others go on) or a residual that is no longer finite. x_i is
only updated by finite steps, so a stopped item keeps its last finite iterate, never NaN.
"""
from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters, integer, number, one_of, parameters
from ginkpy.core.base.types import real_dtype
from ginkpy.core.batch.batch_lin_op import BatchLinOp
from ginkpy.core.batch.matrix.checks import check_system_matrix
from ginkpy.core.batch.multi_vector import MultiVector
from ginkpy.core.batch.preconditioner.ilu import Ilu
from ginkpy.core.batch.preconditioner.isai import Isai
from ginkpy.core.batch.preconditioner.jacobi import Jacobi
from ginkpy.core.stop.solve_result import SolveResult
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason

TOLERANCE_TYPES = ("absolute", "relative")


class BatchSolver(EnableBuild, BatchLinOp):
    """Base of the batched Krylov solvers. ``apply(b, x)`` solves A_i x_i = b_i for every item,
    x the initial guess, all items in one launch (one work-group each). Not used itself.

    Parameters
    ----------
    max_iterations : int, default 100
        The iteration limit of every item (Ginkgo's default).
    tolerance : float, default 1e-11
        The residual norm an item must reach: absolute or relative to ||b_i||.
    tolerance_type : {"absolute", "relative"}, default "absolute"
        How ``tolerance`` is read (Ginkgo's default: absolute).
    preconditioner : batch preconditioner factory, default None (none)
        ``gk.batch.preconditioner.Jacobi``, ``Ilu`` or ``Isai``, applied inside the kernel.

    Examples
    --------
    >>> solver = gk.batch.solver.Cg.build().with_tolerance(1e-8).with_tolerance_type("relative")
    >>> X = solver.on(exec).generate(A).apply(B, X)
    >>> gk.linalg.batched_cg(matrices, B, rtol=1e-8)              # the same from SciPy's side
    """

    @parameters
    class Parameters(Parameters):
        max_iterations: int = attrs.field(default=100, validator=integer(min=0, max=np.iinfo(np.int32).max))
        tolerance: float = attrs.field(default=1e-11, validator=number(min=0))
        tolerance_type: str = attrs.field(default="absolute", validator=one_of(*TOLERANCE_TYPES))
        preconditioner: Any = None

    def __init__(self, factory: Factory, system_matrix: BatchLinOp) -> None:
        EnableBuild.__init__(self, factory)
        exec = factory.executor
        A = check_system_matrix(system_matrix, exec)
        BatchLinOp.__init__(self, exec, A.num_batch_items, A.common_size, A.dtype)
        self.system_matrix = A
        self.preconditioner = self._generate_preconditioner(self.parameters.preconditioner)

    def _generate_preconditioner(self, value: Any) -> Any:
        """None (no preconditioner) or a generated batch Jacobi, Ilu or Isai for this system."""
        kinds, names = (Jacobi, Ilu, Isai), "gk.batch.preconditioner.Jacobi, Ilu or Isai"
        if value is None:
            return None
        if isinstance(value, kinds):
            if value.shape != self.shape:
                raise ValueError(f"the preconditioner has {value.num_batch_items} items of {value.common_size}, "
                                 f"the system {self.num_batch_items} of {self.common_size}")
            if not value.executor.same_memory(self.executor):
                raise ValueError("the generated preconditioner lives on another executor: generate it on the "
                                 f"solver's executor, or pass its factory ({type(value).__name__}.build()...)")
            return value
        if isinstance(value, (Parameters, Factory)):
            params = value if isinstance(value, Parameters) else value.parameters
            if params.product not in kinds:
                raise TypeError(f"the batched solvers take {names} as preconditioner, "
                                f"not {params.product.__name__}")
            return params.on(self.executor).generate(self.system_matrix)
        raise TypeError(f"preconditioner must be {names} (their build()... or generated), "
                        f"not {type(value).__name__}")

    def _apply_impl(self, b: MultiVector, x: MultiVector) -> None:
        p = self.parameters
        rtol, atol = (p.tolerance, 0.0) if p.tolerance_type == "relative" else (0.0, p.tolerance)
        self._run(b, x, int(p.max_iterations), rtol, atol)

    def apply_with_tolerances(self, b: MultiVector, x: MultiVector, rtol: float, atol: float,
                              max_iterations: int | None = None,
                              while_solving: Callable[[], Any] | None = None) -> SolveResult:
        """``apply(b, x)`` with SciPy's stopping threshold: item i has converged once
        ||b_i - A_i x_i|| <= max(rtol ||b_i||, atol) (and at most ``max_iterations``, default
        the parameter's, iterations). Returns how each item ended, as the loggers get it.
        ``while_solving()``, where given, runs on the host once the solve is enqueued and
        before its results are read: host work beside the device's."""
        for name, value in (("rtol", rtol), ("atol", atol)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or \
                    not np.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        max_iterations = self.parameters.max_iterations if max_iterations is None else max_iterations
        results = []
        self._apply_checked(b, x, lambda b, x: results.append(self._run(b, x, int(max_iterations), rtol, atol,
                                                                          while_solving)))
        return results[0]

    def _run(self, b: MultiVector, x: MultiVector, max_iterations: int, rtol: float, atol: float,
             while_solving: Callable[[], Any] | None = None) -> SolveResult:
        """Solve every item (one kernel launch), then report to the loggers."""
        if b.common_size[1] != 1:
            raise ValueError(f"the batched solvers take one right-hand side per item (b of shape (N, n)), "
                             f"but b has {b.common_size[1]} columns per item: solve each column separately")
        exec, N = self.executor, self.num_batch_items
        real = real_dtype(self.dtype)  # residual norms and tolerances are real, also for complex values
        # every item's results are written by the kernel: nothing to copy in
        iterations, residual_norms = exec.alloc((N,), np.int32), exec.alloc((N,), real)
        reasons = exec.alloc((N,), STATUS_DTYPE)
        x0 = None
        if self.common_size[0] > 0:
            x0 = x.clone()  # (one copy per solve: an item that ends worse gets it back)
            self._solve(b, x, max_iterations, real.type(rtol), real.type(atol), iterations,
                        residual_norms, reasons)
        else:
            exec.write(iterations, np.zeros(N, np.int32))
            exec.write(residual_norms, np.zeros(N, real))
            exec.write(reasons, np.full(N, StopReason.CONVERGED, STATUS_DTYPE))
        if while_solving is not None:
            exec.flush()  # the device starts on the solve
            while_solving()
        iterations, residual_norms, reasons = exec.to_host(iterations, residual_norms, reasons)
        _check_inputs(iterations, reasons)
        residual_norms = self._never_worse_than_x0(b, x, x0, reasons, residual_norms.astype(np.float64))
        result = SolveResult(iterations.astype(np.int64), residual_norms, reasons, method="batch")
        self._log("on_batch_solver_completed", result)
        return result

    def _never_worse_than_x0(self, b: MultiVector, x: MultiVector, x0: MultiVector | None, reasons: np.ndarray,
                             norms: np.ndarray) -> np.ndarray:
        """The honest end: an item that did not converge keeps x where its true residual is no
        larger than x0's, else gets x0 back; returns the residual norms of what each item
        returns (the true ones where it did not converge). Nothing where every item converged."""
        unconverged = reasons != StopReason.CONVERGED
        if x0 is None or not unconverged.any():
            return norms
        exec = self.executor
        B = exec.to_host(b.values)

        def true_norms(v: MultiVector) -> np.ndarray:
            # ||b_i - A_i v_i|| per item
            with np.errstate(all="ignore"):
                return np.linalg.norm(B - exec.to_host(self.system_matrix.apply(v, v.empty_like()).values), axis=(1, 2))

        final, initial = true_norms(x), true_norms(x0)
        X, X0 = exec.to_host(x.values, x0.values)
        use_x0 = unconverged & ~(final <= initial)
        if use_x0.any():
            X[use_x0] = X0[use_x0]
            exec.write(x.values, X)
        return np.where(use_x0, initial, np.where(unconverged, final, norms))

    def _solve(self, b: MultiVector, x: MultiVector, max_iterations: int, rtol, atol, iterations,
               residual_norms, reasons) -> None:
        """Run the solver's kernel: item i stops once ||r_i|| <= max(rtol ||b_i||, atol)."""
        raise NotImplementedError


def _check_inputs(iterations: np.ndarray, reasons: np.ndarray) -> None:
    """The kernels stop an item whose ||b|| or initial residual is not finite before its first
    iteration, leaving its x as it was, with -1 iterations: that is bad input."""
    bad = np.flatnonzero(iterations < 0)
    if bad.size:
        more = f" (and {bad.size - 1} more items)" if bad.size > 1 else ""
        raise ValueError(f"item {int(bad[0])}{more}: the right-hand side b or the initial guess x contains NaN "
                         f"or Inf values, so that its residual b - A x is not finite; its x was left as it "
                         f"was (the other items were solved)")
