"""LastResult: what a logger that keeps the :class:`SolveResult` of the last solve shows of it,
shared by ``gk.log.Convergence`` (per right-hand-side column) and
``gk.batch.log.BatchConvergence`` (per batch item)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.solve_result import SolveResult
from ginkpy.core.stop.stopping_status import StopReason


class LastResult:
    """Mixin: ``result`` (the SolveResult of the last solve, None before one) and its
    properties per column (or batch item): ``iterations``, ``residual_norm``,
    ``relative_residual_norm``, ``converged``, ``has_converged``, ``stop_reasons`` and
    ``stop_reason``. Each raises a RuntimeError before a solve has completed.

    Examples
    --------
    >>> logger = gk.log.Convergence()           # a LastResult
    >>> solver.add_logger(logger); solver.apply(b, x)
    >>> logger.stop_reason, logger.relative_residual_norm
    """

    result: SolveResult | None = None

    def _get(self) -> SolveResult:
        if self.result is None:
            raise RuntimeError("no solve has completed yet: call solver.apply(b, x) first")
        return self.result

    @property
    def iterations(self) -> np.ndarray:
        """Iterations of each column (item)."""
        return self._get().iterations

    @property
    def residual_norm(self) -> np.ndarray:
        """Final residual norm ||b - A x|| of each column (item), absolute (the true residual of
        the x returned where the column converged or did not converge; see relative_residual_norm)."""
        return self._get().residual_norm

    @property
    def relative_residual_norm(self) -> np.ndarray:
        """Final ||b - A x|| / ||b|| of each column (item; 0 where b = 0)."""
        return self._get().relative_residual_norm

    @property
    def converged(self) -> np.ndarray:
        """Per column (item): did the residual criterion stop it?"""
        return self._get().converged

    @property
    def has_converged(self) -> bool:
        """True when every column (item) converged."""
        return bool(self._get().converged.all())

    @property
    def stop_reasons(self) -> list[StopReason]:
        """Why each column (item) stopped."""
        return self._get().stop_reasons

    @property
    def stop_reason(self) -> StopReason:
        """Why the solve stopped, as one StopReason: CONVERGED when every column (item)
        converged, else the reason of the first that did not (``stop_reasons`` has each one's).
        Printed, it reads as words ("iteration limit")."""
        reasons = self._get().stop_reasons
        return next((r for r in reasons if r != StopReason.CONVERGED), StopReason.CONVERGED)
