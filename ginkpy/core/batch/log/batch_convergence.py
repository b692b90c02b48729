"""BatchConvergence: how every item of the last batched solve ended (Ginkgo's
``gko::batch::log::BatchConvergence``)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason


class BatchConvergence:
    """Per item: iterations, final residual norm, converged flag and stop reason of the last
    batched solve of the solver it is attached to (``solver.add_logger(logger)``)."""

    def __init__(self) -> None:
        self.result = None

    def on_batch_solver_completed(self, solver, result) -> None:
        self.result = result

    def _get(self):
        if self.result is None:
            raise RuntimeError("no batched solve has completed yet: call solver.apply(b, x) first")
        return self.result

    @property
    def num_iterations(self) -> np.ndarray:
        """(N,) iterations of each item."""
        return self._get().iterations

    @property
    def residual_norm(self) -> np.ndarray:
        """(N,) final residual norm of each item (its true residual ||b - A x|| where converged)."""
        return self._get().residual_norm

    @property
    def converged(self) -> np.ndarray:
        """(N,) bool: did the item meet the tolerance?"""
        return self._get().converged

    @property
    def has_converged(self) -> bool:
        """True when every item converged."""
        return bool(self.converged.all())

    @property
    def stop_reasons(self) -> list[StopReason]:
        """Why each item stopped."""
        return self._get().stop_reasons
