"""Per-column stopping status, stored on the executor as a uint8 array of length k.

0 means the column still iterates; every kernel that updates a solver's vectors leaves
columns with a nonzero status untouched. Kernels write BREAKDOWN themselves (a zero or
invalid divisor); the host writes the other codes after checking the criteria.
"""
from __future__ import annotations

import enum

import numpy as np

STATUS_DTYPE = np.dtype(np.uint8)


class StopReason(enum.IntEnum):
    RUNNING = 0
    CONVERGED = 1
    ITERATION_LIMIT = 2
    TIME_LIMIT = 3
    BREAKDOWN = 4
    DIVERGED = 5  # the residual norm became NaN or infinite
    PENDING = 6  # converged on an estimate (Gmres): the true residual at the end of the cycle decides

    def describe(self) -> str:
        return self.name.lower().replace("_", " ")
