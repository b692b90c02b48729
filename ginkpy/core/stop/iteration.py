"""Iteration: stop after ``max_iters`` iterations."""
from __future__ import annotations

import attrs

from ginkpy.core.base.factory import integer, parameters
from ginkpy.core.stop.criterion import Criterion
from ginkpy.core.stop.stopping_status import StopReason


class Iteration(Criterion):
    """Stop a column after ``max_iters`` iterations (its status ITERATION_LIMIT).

    Parameters
    ----------
    max_iters : int
        The iteration limit, an integer >= 0 (required).

    Examples
    --------
    >>> limit = gk.stop.Iteration.build().with_max_iters(500)
    >>> solver = gk.solver.Cg.build().with_criteria(limit).on(exec).generate(A)
    """

    reason = StopReason.ITERATION_LIMIT

    @parameters
    class Parameters(Criterion.Parameters):
        max_iters: int | None = attrs.field(default=None, validator=integer(min=0, optional=True))

    def __init__(self, factory, args) -> None:
        super().__init__(factory, args)
        if self.parameters.max_iters is None:
            raise ValueError("Iteration needs with_max_iters(N) with an integer N >= 0")

    @property
    def max_iters(self) -> int:
        return int(self.parameters.max_iters)
