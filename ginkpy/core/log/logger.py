"""Logger base: the events a solver reports. Attach with ``op.add_logger(logger)``."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.solve_result import SolveResult

__all__ = ["Logger", "SolveResult"]


class Logger:
    """Receives solver events; override the ones of interest.

    Two class attributes tell the solve loop what a logger needs: ``wants_iterations``
    (default True: every iteration's residual norms, read from the device as the solve runs;
    False: only how the solve ended) and ``needs_solution`` (default False; True: the live x
    after every iteration, as SciPy's ``callback(xk)``, which makes the solve wait for the
    device after each iteration).

    Examples
    --------
    >>> class Printer(gk.log.Logger):
    ...     def on_solve_complete(self, solver, result):
    ...         print(result.num_iterations)
    >>> solver.add_logger(Printer())
    """

    wants_iterations = True
    needs_solution = False

    def on_iteration_complete(self, solver, iteration: int, residual_norm: np.ndarray,
                              status: np.ndarray) -> None:
        """After the stopping check of ``iteration`` (0 is the initial residual)."""

    def on_solve_complete(self, solver, result: SolveResult) -> None:
        """After a solve, with how each column ended."""
