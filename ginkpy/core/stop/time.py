"""Time: stop once the solve has run for ``time_limit`` seconds (checked on the host at each
read of the device's stop status, so a solve may run a few iterations past it)."""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import number, parameters
from ginkpy.core.stop.criterion import Criterion, SolveState
from ginkpy.core.stop.stopping_status import StopReason


class Time(Criterion):
    reason = StopReason.TIME_LIMIT

    @parameters
    class Parameters(Criterion.Parameters):
        time_limit: float = attrs.field(default=10.0, validator=number(min=0))

    @property
    def time_limit(self) -> float:
        return float(self.parameters.time_limit)

    def check(self, state: SolveState) -> np.ndarray:
        return np.full(state.residual_norm.shape, state.elapsed >= self.time_limit)
