"""The stopping check of the reference kernels: the twin of ``stop_check`` in opencl/common.cl."""
from __future__ import annotations

import numpy as np

from ginkpy.core.stop.stopping_status import StopReason

# the codes as plain numbers: an enum member's look-up costs microseconds in the loop
RUNNING, CONVERGED, DIVERGED, LIMIT = (int(c) for c in (StopReason.RUNNING, StopReason.CONVERGED,
                                                        StopReason.DIVERGED, StopReason.ITERATION_LIMIT))


def _verdict(stop, norms: np.ndarray, converged: int) -> np.ndarray:
    threshold = stop.threshold.values[0]
    with np.errstate(invalid="ignore"):
        return np.where(norms <= threshold, converged,
                        np.where(np.isfinite(norms), StopReason.RUNNING, StopReason.DIVERGED))


def stop_check(stop, norms: np.ndarray, converged: int = CONVERGED,
               only: np.ndarray | None = None) -> np.ndarray:
    """Check the running columns (of ``only``, a mask, if given) on their residual ``norms``
    (1-D, one per column): record the norms in the history, count the check, stop the columns
    that converged (norm <= threshold: status ``converged``, PENDING for an estimate that the
    true residual confirms later), diverged (norm not finite) or reached the iteration limit
    (``stop.max_iters`` checks before this one). Returns the mask of the checked columns that
    still run."""
    running = stop.status == RUNNING
    if only is not None:
        running &= only
    if running.size == 1:  # one column: plain numbers (the common case; numpy's overhead dominates)
        if running[0]:
            running[0] = check_one(stop, float(norms[0]), converged)
        return running
    if not running.any():
        return running
    reason = _verdict(stop, norms, converged)
    reason = np.where((reason == StopReason.RUNNING) & (stop.checks >= stop.max_iters), StopReason.ITERATION_LIMIT, reason)
    h = stop.checks[running]
    stop.history.values[h % stop.history.shape[0], np.flatnonzero(running)] = norms[running]
    stop.checks[running] = h + 1
    stop.status[running] = reason[running]
    return running & (reason == StopReason.RUNNING)


def stop_confirm(stop, norms: np.ndarray) -> None:
    """Columns PENDING (converged on an estimate) meet their true residual ``norms``: converged
    if it meets the threshold, else running again; the norm replaces the estimate in the history."""
    pending = stop.status == StopReason.PENDING
    if not pending.any():
        return
    h = stop.checks[pending] - 1
    stop.history.values[h % stop.history.shape[0], np.flatnonzero(pending)] = norms[pending]
    reason = _verdict(stop, norms, StopReason.CONVERGED)
    reason = np.where((reason == StopReason.RUNNING) & (stop.checks - 1 >= stop.max_iters), StopReason.ITERATION_LIMIT, reason)
    stop.status[pending] = reason[pending]


def check_one(stop, norm: float, converged: int = CONVERGED) -> bool:
    """stop_check of a single running column (plain numbers); whether it still runs."""
    h = int(stop.checks[0])
    stop.history.values[h % stop.history.shape[0], 0] = norm
    stop.checks[0] = h + 1
    if norm <= stop.threshold.values[0, 0]:
        stop.status[0] = converged
    elif norm != norm or norm in (np.inf, -np.inf):
        stop.status[0] = DIVERGED
    elif h >= stop.max_iters:
        stop.status[0] = LIMIT
    else:
        return True
    return False
