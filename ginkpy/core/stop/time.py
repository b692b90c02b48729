"""Time: stop once the solve has run for ``time_limit`` seconds."""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import parameters
from ginkpy.core.stop.criterion import Criterion, SolveState
from ginkpy.core.stop.stopping_status import StopReason


class Time(Criterion):
    reason = StopReason.TIME_LIMIT

    @parameters
    class Parameters(Criterion.Parameters):
        time_limit: float = attrs.field(default=10.0)

    def __init__(self, factory, args) -> None:
        super().__init__(factory, args)
        if not self.parameters.time_limit >= 0:
            raise ValueError(f"Time needs with_time_limit(seconds) >= 0, got {self.parameters.time_limit!r}")

    def check(self, state: SolveState) -> np.ndarray:
        return np.full(state.residual_norm.shape, state.elapsed >= self.parameters.time_limit)
