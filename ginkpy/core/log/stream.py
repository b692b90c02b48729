"""Stream: prints solver events to a stream as they happen."""
from __future__ import annotations

import sys
from typing import TextIO

from ginkpy.core.log.logger import Logger


class Stream(Logger):
    """Prints solver events as they happen (Ginkgo's ``log::Stream``): one line per iteration
    with the residual norms (``every`` > 1: every n-th) and one at the end with the stop
    reasons and the time.

    Use it to watch a solve; :class:`Convergence` keeps the numbers instead. Printing every
    iteration makes the solve read the residual norms back as it runs.

    Parameters
    ----------
    stream : file-like, default None (sys.stdout)
        Where the lines go.
    every : int, default 1
        Print every n-th iteration.

    Examples
    --------
    >>> solver.add_logger(gk.log.Stream(every=10))
    >>> solver.apply(b, x)
    [Cg] iteration 0: residual norm 1.000000e+01 ...
    """

    def __init__(self, stream: TextIO | None = None, every: int = 1) -> None:
        self.stream = stream
        self.every = max(1, int(every))

    def _write(self, text: str) -> None:
        print(text, file=self.stream if self.stream is not None else sys.stdout, flush=True)

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if iteration % self.every == 0:
            norms = " ".join(f"{v:.6e}" for v in residual_norm)
            self._write(f"[{type(solver).__name__}] iteration {iteration}: residual norm {norms}")

    def on_solve_complete(self, solver, result) -> None:
        reasons = ", ".join(r.describe() for r in result.stop_reasons)
        norms = " ".join(f"{v:.6e}" for v in result.residual_norm)
        self._write(f"[{type(solver).__name__}] stopped after {result.num_iterations} iterations "
                    f"({reasons}); residual norm {norms}; {result.time:.4f} s")
