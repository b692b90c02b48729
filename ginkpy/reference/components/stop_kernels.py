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


def keep_best(exec, x, x_best, best, stop):
    # x_best = x in the running columns whose last recorded residual norm is at most best;
    # best = that norm
    h = stop.checks.astype(np.int64) - 1
    norms = stop.history.values[np.maximum(h, 0) % stop.history.shape[0], np.arange(stop.k)]
    with np.errstate(invalid="ignore"):
        take = (stop.status == StopReason.RUNNING) & (h >= 0) & (norms <= best.values[0])
    x_best.values[:, take] = x.values[:, take]
    best.values[0, take] = norms[take]
