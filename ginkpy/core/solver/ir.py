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
    """Iterative refinement, x = x + omega S (b - A x) with an inner solver S: Ginkgo's
    ``solver::Ir``; without S it is Richardson's iteration.

    Use it to wrap an approximate solver in an outer loop with stopping criteria: a Jacobi
    or Gauss-Seidel iteration (S a preconditioner), mixed-precision refinement (S in lower
    precision), or a smoother. Ir has no preconditioner of its own: S plays that part.

    Parameters
    ----------
    solver : factory or LinOp, default None (the identity)
        S, generated on the system matrix; an iterative one starts each apply from 0.
    relaxation_factor : float, default 1.0
        omega.
    criteria : stopping criteria, default an iteration limit of max(1000, 10 n)
        The outer loop's criteria.
    default_initial_guess : {"provided", "zero", "rhs"}, default "provided"
        What x each apply starts from.

    Examples
    --------
    >>> jacobi = gk.solver.Ir.build().with_solver(gk.preconditioner.Jacobi.build().with_max_block_size(1))
    >>> solver = jacobi.with_criteria(gk.stop.Iteration.build().with_max_iters(50)).on(exec).generate(A)
    >>> solver.apply(b, x)
    """
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
