"""Iteration: stop after ``max_iters`` iterations."""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import parameters
from ginkpy.core.stop.criterion import Criterion, SolveState
from ginkpy.core.stop.stopping_status import StopReason


class Iteration(Criterion):
    reason = StopReason.ITERATION_LIMIT

    @parameters
    class Parameters(Criterion.Parameters):
        max_iters: int = attrs.field(default=None)

    def __init__(self, factory, args) -> None:
        super().__init__(factory, args)
        m = self.parameters.max_iters
        if m is None or int(m) != m or m < 0:
            raise ValueError(f"Iteration needs with_max_iters(N) with an integer N >= 0, got {m!r}")

    def check(self, state: SolveState) -> np.ndarray:
        return np.full(state.residual_norm.shape, state.iteration >= self.parameters.max_iters)
