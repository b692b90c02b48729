"""Logger base: the events a solver reports. Attach with ``op.add_logger(logger)``."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.solve_result import SolveResult

__all__ = ["Logger", "SolveResult"]


class Logger:
    """Receives solver events; override the ones of interest.

    Class attributes tell the solve loop what a logger needs: ``wants_iterations`` (default
    True: every iteration's residual norms, read from the device as the solve runs; False: only
    how the solve ended), ``wants_solution`` (default False; True: x after every iteration,
    given to ``on_iteration_solution``, as SciPy's ``callback(xk)`` needs, read one iteration
    behind the device so that the solve does not wait) and ``needs_solution``
    (default False; True: the solve runs on the caller's x and waits for the device after each
    iteration, so that the logger can read the live x itself).

    Examples
    --------
    >>> class Printer(gk.log.Logger):
    ...     def on_solve_complete(self, solver, result):
    ...         print(result.num_iterations)
    >>> solver.add_logger(Printer())
    """

    wants_iterations = True
    wants_solution = False
    needs_solution = False

    def on_iteration_complete(self, solver, iteration: int, residual_norm: np.ndarray,
                              status: np.ndarray) -> None:
        """After the stopping check of ``iteration`` (0 is the initial residual)."""

    def on_iteration_solution(self, solver, iteration: int, x: np.ndarray) -> None:
        """With ``wants_solution``: x after ``iteration`` (>= 1), an n x k host array holding it
        until this method returns (reused for a later iteration: copy it to keep it; writing
        into it changes nothing in the solve)."""

    def on_solve_complete(self, solver, result: SolveResult) -> None:
        """After a solve, with how each column ended."""
