"""Per-column stopping status, stored on the executor as a uint8 array of length k: the one
definition of the stop codes. The reference kernels use :class:`StopReason` itself, the OpenCL
kernels get each code as a macro ``STATUS_<NAME>`` (:func:`status_defines`, passed to every
program they are compiled in).

0 means the column still iterates; every kernel that updates a solver's vectors leaves
columns with a nonzero status untouched. Kernels write BREAKDOWN themselves (a zero or
invalid divisor) and the codes of the stopping check (CONVERGED, PENDING, DIVERGED,
ITERATION_LIMIT); the host writes TIME_LIMIT, ITERATION_LIMIT at the end of its loop, and the
outcome of a confirmation with the true residual.
"""
from __future__ import annotations

import enum

import numpy as np

STATUS_DTYPE = np.dtype(np.uint8)


class StopReason(enum.IntEnum):
    """Why a column (a right-hand side, a batch item) stopped, or that it still runs.

    ``RUNNING`` (0): still iterating. ``CONVERGED``: its true residual met the criterion.
    ``ITERATION_LIMIT``, ``TIME_LIMIT``: a limit was reached first. ``BREAKDOWN``: the method
    met a zero or invalid divisor. ``DIVERGED``: the residual norm became NaN or infinite.
    ``PENDING``: converged on an estimate (Gmres), the true residual at the end of the cycle
    decides.

    Printed, a reason reads as words (``str``, ``describe()``).

    Examples
    --------
    >>> StopReason.ITERATION_LIMIT.describe()
    'iteration limit'
    >>> print(StopReason(1), StopReason(1) is StopReason.CONVERGED)
    converged True
    """

    RUNNING = 0
    CONVERGED = 1
    ITERATION_LIMIT = 2
    TIME_LIMIT = 3
    BREAKDOWN = 4
    DIVERGED = 5
    PENDING = 6

    def describe(self) -> str:
        """The reason in words, as loggers and the CLI print it ("iteration limit")."""
        return self.name.lower().replace("_", " ")

    def __str__(self) -> str:  # print(reason), f"{reason}": the words
        return self.describe()

    def __format__(self, spec: str) -> str:
        return format(self.describe(), spec)


def status_defines() -> dict[str, int]:
    """The stop codes as OpenCL macros: ``{"STATUS_RUNNING": 0, "STATUS_CONVERGED": 1, ...}``."""
    return {f"STATUS_{reason.name}": int(reason) for reason in StopReason}
