"""Convergence: records how the last solve converged."""
from __future__ import annotations

import numpy as np

from ginkpy.core.log.last_result import LastResult
from ginkpy.core.log.logger import Logger, SolveResult


class Convergence(LastResult, Logger):
    """Iterations, final residual norms, converged flag, stop reasons and residual history of the
    last solve of the operator it is attached to (Ginkgo's ``log::Convergence``; the properties
    of the result are :class:`LastResult`'s).

    Residual norms come two ways: ``residual_norm`` is absolute, ||b - A x|| (Ginkgo's), and
    ``relative_residual_norm`` is ||b - A x|| / ||b||, the quantity a ResidualNorm criterion
    with its default baseline (and SciPy's ``rtol``) compares with its factor.

    Parameters
    ----------
    history : bool, default True
        Keep every iteration's residual norms (``residual_norm_history``). False keeps only
        how the solve ended: the solve then reads no residual norms back while it runs, and a
        small single system may run in one launch (``result.method``).

    Examples
    --------
    >>> logger = gk.log.Convergence()
    >>> solver.add_logger(logger)
    >>> solver.apply(b, x)
    >>> print(logger.stop_reason, logger.num_iterations, logger.relative_residual_norm)
    converged 42 [8.7e-11]
    """

    def __init__(self, history: bool = True) -> None:
        self.wants_iterations = bool(history)
        self.residual_norm_history: list[np.ndarray] = []
        self.result: SolveResult | None = None

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if iteration == 0:
            self.residual_norm_history = []
            self.result = None
        self.residual_norm_history.append(np.array(residual_norm, copy=True))

    def on_solve_complete(self, solver, result: SolveResult) -> None:
        self.result = result

    @property
    def num_iterations(self) -> int:
        """Iterations of the last solve (the most any column ran)."""
        return self._get().num_iterations

    def plot(self, ax=None, title: str | None = None):
        """Plot the relative residual per right-hand side on a logarithmic axis, with the
        tolerance and how each column ended (needs ginkpy[plot]; see plot_residual_history)."""
        from ginkpy.core.log.plot import plot_residual_history
        return plot_residual_history(self.residual_norm_history, ax=ax, title=title, result=self._get())
