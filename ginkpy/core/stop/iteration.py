"""Iteration: stop after ``max_iters`` iterations."""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import integer, parameters
from ginkpy.core.stop.criterion import Criterion, SolveState
from ginkpy.core.stop.stopping_status import StopReason


class Iteration(Criterion):
    reason = StopReason.ITERATION_LIMIT

    @parameters
    class Parameters(Criterion.Parameters):
        max_iters: int | None = attrs.field(default=None, validator=integer(min=0, optional=True))

    def __init__(self, factory, args) -> None:
        super().__init__(factory, args)
        if self.parameters.max_iters is None:
            raise ValueError("Iteration needs with_max_iters(N) with an integer N >= 0")

    @property
    def max_iters(self) -> int:
        return int(self.parameters.max_iters)

    def check(self, state: SolveState) -> np.ndarray:
        return np.full(state.residual_norm.shape, state.iteration >= self.max_iters)
