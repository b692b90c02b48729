"""SolverProgress: prints a solve's iterations and residual norms as it runs (Ginkgo 1.9's
``log::SolverProgress``)."""
from __future__ import annotations

import sys
import time
from typing import Any, TextIO

import numpy as np

from ginkpy.core.log.logger import Logger


class SolverProgress(Logger):
    """Prints the iteration and the residual norm of a running solve every ``every``-th
    iteration (and at most every ``min_interval`` seconds), then how it ended (Ginkgo 1.9's
    ``log::SolverProgress``).

    Use it to watch a long solve. It adds no read of the device: the solve loop reads the
    residual norm history back asynchronously every few iterations (more rarely as the solve
    goes on), and this logger prints from what each read brings, so the lines come in bursts
    and the solve never waits for them. ``ginkpy solve`` shows its progress line with it.

    Parameters
    ----------
    stream : file-like, default None (sys.stdout at each write)
        Where the lines go.
    every : int, default 1
        Print every n-th iteration (iteration 0 is the initial residual).
    min_interval : float, default 0.0
        At most one line per this many seconds (0: no limit).
    relative_to : array of float, optional
        Print ||r|| / relative_to (one value per right-hand side, such as ||b||; zeros taken
        as 1) as "relative residual", the largest over the right-hand sides.
    in_place : bool, default False
        Rewrite one line in place (``\\r``) instead of a line per report, and clear it when the
        solve ends (a terminal's progress line).
    summary : bool, default True
        After the solve, a line with the iterations, the stop reasons and the residual norms
        (not with ``in_place``).

    Examples
    --------
    >>> solver.add_logger(gk.log.SolverProgress(every=10))
    >>> solver.apply(b, x)
    [Cg] iteration        0  residual norm 3.162278e+01
    [Cg] iteration       10  residual norm 2.040146e+00
    ...
    [Cg] stopped after 48 iterations (converged); residual norm 2.905517e-07
    >>> gk.log.SolverProgress.create_scalar_table_writer(open("progress.txt", "w"))   # Ginkgo's name
    """

    def __init__(self, stream: TextIO | None = None, every: int = 1, min_interval: float = 0.0,
                 relative_to: Any = None, in_place: bool = False, summary: bool = True) -> None:
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError(f"every must be an integer >= 1 (print every n-th iteration), got {every!r}")
        if not min_interval >= 0:
            raise ValueError(f"min_interval must be a number of seconds >= 0, got {min_interval!r}")
        self.stream = stream
        self.every = int(every)
        self.min_interval = float(min_interval)
        self.relative_to = None if relative_to is None else \
            np.where(np.asarray(relative_to, dtype=np.float64) > 0, np.asarray(relative_to, dtype=np.float64), 1.0)
        self.in_place = bool(in_place)
        self.summary = bool(summary)
        self._last_time = -np.inf
        self._last_iteration = -1
        self._width = 0

    @classmethod
    def create_scalar_table_writer(cls, stream: TextIO | None = None, every: int = 1) -> "SolverProgress":
        """Ginkgo's ``SolverProgress::create_scalar_table_writer(stream)``: a line per iteration
        (every n-th) with its residual norms."""
        return cls(stream, every=every)

    def _out(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stdout

    def _text(self, solver: Any, iteration: int, residual_norm: np.ndarray) -> str:
        norms = np.asarray(residual_norm, dtype=np.float64)
        if self.relative_to is not None:
            return f"iteration {iteration:>8d}   relative residual {np.max(norms / self.relative_to):.3e}"
        return f"[{type(solver).__name__}] iteration {iteration:>8d}  residual norm " + \
            " ".join(f"{v:.6e}" for v in norms)

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if iteration % self.every:
            return
        if self.min_interval > 0:
            now = time.perf_counter()
            if now - self._last_time < self.min_interval:
                return
            self._last_time = now
        self._last_iteration = iteration
        text = self._text(solver, iteration, residual_norm)
        out = self._out()
        if self.in_place:
            self._width = max(self._width, len(text))
            out.write("\r" + text.ljust(self._width))
        else:
            out.write(text + "\n")
        out.flush()

    def on_solve_complete(self, solver, result) -> None:
        out = self._out()
        if self.in_place:
            if self._width:
                out.write("\r" + " " * self._width + "\r")
                out.flush()
        elif self.summary:
            reasons = ", ".join(sorted({r.describe() for r in result.stop_reasons}))
            norms = " ".join(f"{v:.6e}" for v in result.residual_norm)
            out.write(f"[{type(solver).__name__}] stopped after {result.num_iterations} iterations ({reasons}); "
                      f"residual norm {norms}\n")
            out.flush()
        self._last_time, self._last_iteration, self._width = -np.inf, -1, 0
