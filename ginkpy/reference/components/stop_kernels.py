"""Reference kernels of the device side of the stopping check (core/stop/stop_state.py)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.reference.components.stopping import stop_check


def check(exec, partials, stop):
    # the stopping check on the residual norms sqrt(sum of the partial sums of ||r||^2)
    stop_check(stop, np.sqrt(partials.values.sum(axis=0).real))


def stop_running(exec, stop, reason):
    # status = reason in the columns that still run
    stop.status[stop.status == StopReason.RUNNING] = reason
