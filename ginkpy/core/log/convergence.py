"""Convergence: records how the last solve converged."""
from __future__ import annotations

import numpy as np

from ginkpy.core.log.logger import Logger, SolveResult
from ginkpy.core.stop.stopping_status import StopReason


class Convergence(Logger):
    """Iterations, final residual norms, converged flag, stop reasons and residual history of the
    last solve of the operator it is attached to (Ginkgo's ``log::Convergence``).

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

    def _get(self):
        if self.result is None:
            raise RuntimeError("no solve has completed yet: call solver.apply(b, x) first")
        return self.result

    @property
    def num_iterations(self) -> int:
        """Iterations of the last solve (the most any column ran)."""
        return self._get().num_iterations

    @property
    def iterations(self) -> np.ndarray:
        """Iterations of each right-hand-side column."""
        return self._get().iterations

    @property
    def residual_norm(self) -> np.ndarray:
        """Final residual norm ||b - A x|| of each column, absolute (the true residual of the x
        returned where the column converged or did not converge; see relative_residual_norm)."""
        return self._get().residual_norm

    @property
    def relative_residual_norm(self) -> np.ndarray:
        """Final ||b - A x|| / ||b|| of each column (0 where b = 0)."""
        return self._get().relative_residual_norm

    @property
    def converged(self) -> np.ndarray:
        """Per column: did the residual criterion stop it?"""
        return self._get().converged

    @property
    def has_converged(self) -> bool:
        """True when every column converged."""
        return bool(self._get().converged.all())

    @property
    def stop_reasons(self) -> list[StopReason]:
        """Why each column stopped."""
        return self._get().stop_reasons

    @property
    def stop_reason(self) -> StopReason:
        """Why the solve stopped, as one StopReason: CONVERGED when every column converged, else
        the reason of the first column that did not (``stop_reasons`` has every column's).
        Printed, it reads as words ("iteration limit")."""
        reasons = self._get().stop_reasons
        return next((r for r in reasons if r != StopReason.CONVERGED), StopReason.CONVERGED)

    def plot(self, ax=None, title: str | None = None):
        """Plot the relative residual per right-hand side on a logarithmic axis, with the
        tolerance and how each column ended (needs ginkpy[plot]; see plot_residual_history)."""
        from ginkpy.core.log.plot import plot_residual_history
        return plot_residual_history(self.residual_norm_history, ax=ax, title=title, result=self._get())
