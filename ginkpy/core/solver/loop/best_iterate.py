"""BestIterate: what a solve that does not converge gives back: the best iterate it had, never
worse than x0 (the design's honest end, issue 21 item 5).

Converging solves pay almost nothing: the device keeps a copy of x at sampled iterations only
(4, 8, 16, 32, 64, then every 64), and only in the columns whose recurrence residual norm is
then at its lowest so far (``components.stop.keep_best``: one launch, no host round trip). At
the end, the columns that did not converge compare the true residuals of their last x, of the
kept copy and of x0, and take the smallest.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ginkpy.core.matrix.dense import Dense
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason

FIRST_SAMPLE = 4          # the first iteration at which x is kept where it is the best so far
MAX_SAMPLE_INTERVAL = 64  # iterations between two samples at most


class BestIterate:
    """The best iterate of one solve (per column).

    Parameters
    ----------
    exec : Executor
        The solver's executor.
    ws : Workspace
        The solver's workspace (``x_best`` and the ``best`` norms are kept there).
    stop : StopState
        The device stop state, whose recorded norms decide.
    x : Dense
        The iterate of the loop.
    track : bool
        Whether to keep copies (False: only x and x0 are compared at the end; Gmres, whose
        cycles never raise the residual).

    Examples
    --------
    >>> best = BestIterate(exec, ws, stop, x, track=True)
    >>> best.start(r0_norms, r0_host)       # after the initial residual
    >>> best.sample(iteration)              # after each iteration
    >>> use_x0, norms = best.choose(...)    # at the end
    """

    def __init__(self, exec, ws, stop, x: Dense, track: bool) -> None:
        self.exec, self.ws, self.stop, self.x = exec, ws, stop, x
        self.x_best = ws.vector("x_best") if track else None
        self.best = ws.norms("best") if track else None
        self.next_sample = FIRST_SAMPLE

    def start(self, r_norms: Dense, host: np.ndarray) -> None:
        """The norms of the initial residual (1 x k, on the device; ``host``: the same values
        read) as the ones to beat."""
        self.initial = host.copy()
        if self.best is not None:
            self.best.copy_from(r_norms)

    def sample(self, iteration: int) -> None:
        """After ``iteration``: at a sample, x_best = x where its residual norm is the lowest yet."""
        if self.best is not None and iteration >= self.next_sample:
            self.exec.run("components.stop.keep_best", self.x, self.x_best, self.best, self.stop)
            self.next_sample = iteration + min(iteration, MAX_SAMPLE_INTERVAL)

    def choose(self, status: np.ndarray, norms: np.ndarray, initial: np.ndarray,
               true_norms: Callable[[Dense], np.ndarray], finite: Callable[[Dense], np.ndarray],
               x_finite: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """At the end: in the columns that did not converge, x takes the iterate with the
        smallest true residual among x, the kept copy and x0 (``initial``: ||b - A x0||), an
        iterate with NaN or Inf entries never (its residual may not show them: a zero column of
        A). ``true_norms(v)`` gives ||b - A v|| per column, ``finite(v)`` whether each column's
        entries are finite (``x_finite``: that of x). Returns the columns that take x0 back (after the scaling is undone)
        and the norms of what each column returns."""
        open_ = status != StopReason.CONVERGED
        if not open_.any():
            return np.zeros_like(open_), norms
        final = np.where(x_finite, np.nan_to_num(true_norms(self.x), nan=np.inf), np.inf)
        kept = np.full_like(final, np.inf)
        if self.best is not None:
            # a column's copy is of this solve where a sample lowered its norm (x_best holds an
            # earlier solve's iterate where none did)
            sampled = self.exec.to_host(self.best.values)[0].astype(np.float64)
            kept_here = open_ & (sampled < self.initial)
            if kept_here.any():
                kept = np.where(kept_here, np.nan_to_num(true_norms(self.x_best), nan=np.inf), np.inf)
        use_best = open_ & (kept < final) & (kept <= initial)
        if use_best.any():
            use_best &= finite(self.x_best)
        use_x0 = open_ & ~use_best & (initial < final)
        if use_best.any():
            mask = self.ws.array("mask", (len(status),), STATUS_DTYPE)
            self.exec.write(mask, use_best.astype(STATUS_DTYPE))
            self.exec.run("matrix.dense.copy_columns", self.x_best, self.x, mask)
        norms = np.where(use_best, kept, np.where(use_x0, initial, np.where(open_, final, norms)))
        return use_x0, norms
