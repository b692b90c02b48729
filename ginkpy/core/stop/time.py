"""Time: stop once the solve has run for ``time_limit`` seconds (checked on the host at each
read of the device's stop status, so a solve may run a few iterations past it)."""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import number, parameters
from ginkpy.core.stop.criterion import Criterion
from ginkpy.core.stop.stopping_status import StopReason


class Time(Criterion):
    """Stop every running column once the solve has run ``time_limit`` seconds (status
    TIME_LIMIT). The host checks it at each read of the device's stop status, so a solve may
    run a few iterations past it.

    Parameters
    ----------
    time_limit : float, default 10.0
        Seconds, >= 0 (0: no iteration runs).

    Examples
    --------
    >>> limit = gk.stop.Time.build().with_time_limit(2.5)
    >>> solver = gk.solver.Gmres.build().with_criteria(limit).on(exec).generate(A)
    """

    reason = StopReason.TIME_LIMIT

    @parameters
    class Parameters(Criterion.Parameters):
        time_limit: float = attrs.field(default=10.0, validator=number(min=0))

    @property
    def time_limit(self) -> float:
        return float(self.parameters.time_limit)
