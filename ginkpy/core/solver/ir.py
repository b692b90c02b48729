"""Ir: iterative refinement, x = x + omega S (b - A x), S an inner solver.

``with_solver`` gives S: a solver or preconditioner factory (or a generated LinOp); without
one, S is the identity and Ir is Richardson's iteration. ``with_relaxation_factor`` gives
omega (default 1). An iterative inner solver starts each apply from 0 (Ginkgo starts it from
the residual), so that S is a fixed linear operator: one Multigrid cycle from 0 approximates
A^-1, one from r does not. Ir has no preconditioner of its own: give it to the inner solver,
or use it as S (``with_solver(gk.preconditioner.Jacobi.build())`` is the Jacobi iteration).
"""
from __future__ import annotations

from typing import Any

import attrs

from ginkpy.core.base.factory import Factory, Parameters, number, parameters
from ginkpy.core.matrix.dense import as_scalar
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.core.solver.solver_base import IterativeParameters, IterativeSolver, generate_preconditioner, updated_part


class Ir(IterativeSolver):
    @parameters
    class Parameters(IterativeParameters):
        solver: Any = None
        relaxation_factor: float = attrs.field(default=1.0, validator=number())

    def __init__(self, factory, system_matrix) -> None:
        super().__init__(factory, system_matrix)
        omega = self.parameters.relaxation_factor
        self.solver = generate_preconditioner(self.parameters.solver, self.system_matrix, self.executor,
                                              "inner solver")
        self.relaxation_factor = as_scalar(self.executor, omega, self.dtype)

    def update(self) -> bool:
        """As :meth:`IterativeSolver.update`, for the inner solver S (generated from a factory)."""
        valid = super().update()
        value = self.parameters.solver
        if isinstance(value, (Parameters, Factory)):
            self.solver, ok = updated_part(self.solver, lambda: generate_preconditioner(
                value, self.system_matrix, self.executor, "inner solver"), self, "inner solver")
            if not ok:
                valid = False
                self._forget_captures()
        return valid

    def _solve(self, monitor: IterationMonitor) -> None:
        exec, S, x = self.executor, self.solver, monitor.x
        r, z = monitor.ws.vectors("r", "z")
        # r = b - A x
        monitor.start(r)
        status = monitor.stop.status
        monitor.check(r)

        def iteration():
            # r = 0 in stopped columns (the inner solver sees only running ones);  z = r
            exec.run("solver.ir.prepare", r, z, status)
            # z = S r
            S.apply(r, z)
            # x = x + omega z
            exec.run("solver.ir.update", self.relaxation_factor, z, x, status)
            # r = b - A x
            monitor.residual(r)
            monitor.check(r)

        monitor.run(iteration)
