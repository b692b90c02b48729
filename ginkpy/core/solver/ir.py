"""Ir: iterative refinement, x = x + omega S (b - A x), S an inner solver.

``with_solver`` gives S: a solver or preconditioner factory (or a generated LinOp); without
one, S is the identity and Ir is Richardson's iteration. ``with_relaxation_factor`` gives
omega (default 1). As in Ginkgo, the inner solver starts from the residual as its initial
guess, and Ir has no preconditioner of its own: give it to the inner solver, or use it as S
(``with_solver(gk.preconditioner.Jacobi.build())`` is the Jacobi iteration).
"""
from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from ginkpy.core.base.factory import parameters
from ginkpy.core.matrix.dense import Dense, as_scalar
from ginkpy.core.solver.solver_base import IterationMonitor, IterativeSolver, generate_preconditioner


class Ir(IterativeSolver):
    @parameters
    class Parameters(IterativeSolver.Parameters):
        solver: Any = None
        relaxation_factor: float = attrs.field(default=1.0)

    def __init__(self, factory, system_matrix) -> None:
        if factory.parameters.preconditioner is not None:
            raise ValueError("Ir has no preconditioner: give it to the inner solver, or make it the inner "
                             "solver with with_solver(...) (Jacobi there is the Jacobi iteration)")
        omega = factory.parameters.relaxation_factor
        if isinstance(omega, bool) or not isinstance(omega, (int, float, np.number)) or not np.isfinite(omega):
            raise ValueError(f"Ir needs with_relaxation_factor(omega) with a finite number omega, got {omega!r}")
        super().__init__(factory, system_matrix)
        self.solver = generate_preconditioner(self.parameters.solver, self.system_matrix, self.executor,
                                              "inner solver", initial_guess="rhs")
        self.relaxation_factor = as_scalar(self.executor, omega, self.dtype)

    def _solve(self, b: Dense, x: Dense) -> None:
        exec, S = self.executor, self.solver
        r, z = b.empty_like(), b.empty_like()
        # r = b - A x
        self._residual(b, x, r)
        monitor = IterationMonitor(self, b, x, r)
        iteration = 0
        while not monitor.check(iteration, residual=r):
            # r = 0 in stopped columns (the inner solver sees only running ones);  z = r
            exec.run("solver.ir.prepare", r, z, monitor.status)
            # z = S r
            S.apply(r, z)
            # x = x + omega z
            exec.run("solver.ir.update", self.relaxation_factor, z, x, monitor.status)
            # r = b - A x
            self._residual(b, x, r)
            iteration += 1
        monitor.finish()
