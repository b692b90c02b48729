"""The live progress line of ``ginkpy solve``."""
from __future__ import annotations

import sys
from typing import TextIO

import numpy as np

from ginkpy.core.log.solver_progress import SolverProgress


class Progress(SolverProgress):
    """A live progress line (iteration, largest relative residual) rewritten in place with ``\\r``:
    gk.log.SolverProgress with ``in_place``, relative to ||b||.

    Writes only when ``stream`` is a terminal, at most every ``interval`` seconds, and clears
    the line when the solve completes; like SolverProgress it prints only what the solve loop
    reads back anyway (no wait for the device).
    """

    def __init__(self, b_norm: np.ndarray, stream: TextIO | None = None, interval: float = 0.1) -> None:
        stream = sys.stdout if stream is None else stream
        super().__init__(stream, min_interval=interval, relative_to=b_norm, in_place=True)
        self.active = stream.isatty()

    def on_iteration_complete(self, solver, iteration, residual_norm, status) -> None:
        if self.active:
            super().on_iteration_complete(solver, iteration, residual_norm, status)
