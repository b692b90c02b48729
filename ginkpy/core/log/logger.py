"""Logger base: the events a solver reports. Attach with ``op.add_logger(logger)``."""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.stop.stopping_status import StopReason


@attrs.define
class SolveResult:
    """How a solve ended, per right-hand-side column."""

    iterations: np.ndarray          # iterations each column ran
    residual_norm: np.ndarray       # final residual norm of each column
    stop_reasons: list[StopReason]  # why each column stopped
    time: float                     # seconds
    rhs_norm: np.ndarray = attrs.field(factory=lambda: np.zeros(0))   # ||b|| of each column
    threshold: np.ndarray = attrs.field(factory=lambda: np.zeros(0))  # residual norm that counts as
    # converged, per column (negative where no residual criterion was given)
    method: str = "loop"            # "loop", or "batch of one" (a small system in one launch)

    @property
    def num_iterations(self) -> int:
        return int(self.iterations.max(initial=0))

    @property
    def converged(self) -> np.ndarray:
        return np.array([r == StopReason.CONVERGED for r in self.stop_reasons], dtype=bool)


class Logger:
    """Receives solver events; override the ones of interest."""

    def on_iteration_complete(self, solver, iteration: int, residual_norm: np.ndarray,
                              status: np.ndarray) -> None:
        """After the stopping check of ``iteration`` (0 is the initial residual)."""

    def on_solve_complete(self, solver, result: SolveResult) -> None:
        """After a solve, with how each column ended."""
