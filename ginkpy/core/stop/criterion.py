"""Stopping criteria: generated once per solve, asked each iteration which columns may stop."""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters
from ginkpy.core.stop.stopping_status import StopReason


@attrs.define
class SolveState:
    """What a criterion sees each iteration (host values, one per right-hand-side column)."""

    iteration: int
    residual_norm: np.ndarray
    elapsed: float


@attrs.define
class CriterionArgs:
    """What a criterion is generated from: the system and the norms known before iterating."""

    system_matrix: object
    rhs_norm: np.ndarray
    initial_residual_norm: np.ndarray


class Criterion(EnableBuild):
    """Base of the stopping criteria; ``reason`` is the StopReason a met criterion gives."""

    reason: StopReason = StopReason.ITERATION_LIMIT

    def __init__(self, factory: Factory, args: CriterionArgs) -> None:
        super().__init__(factory)
        self.args = args

    def check(self, state: SolveState) -> np.ndarray:
        """Boolean per column: True where this criterion is met."""
        raise NotImplementedError


def as_criterion_factory(value, exec) -> Factory:
    """A criterion factory from a factory or parameters, checked to build a criterion."""
    if isinstance(value, Parameters):
        value = value.on(exec)
    if not (isinstance(value, Factory) and issubclass(value.parameters.product, Criterion)):
        raise TypeError(f"criteria must be gk.stop criteria (gk.stop.Iteration.build().with_max_iters(100), ...), "
                        f"got {value!r}")
    return value
