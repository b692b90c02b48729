"""Stopping criteria: factories given to a solver (``with_criteria``), turned into the device
stop state of each solve (:class:`~ginkpy.core.stop.combined.Combined`)."""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import EnableBuild, Factory, Parameters
from ginkpy.core.stop.stopping_status import StopReason


@attrs.define
class CriterionArgs:
    """What a criterion is generated from at the start of a solve: the system and the norms
    known before iterating (one per right-hand-side column, absolute)."""

    system_matrix: object
    rhs_norm: np.ndarray
    initial_residual_norm: np.ndarray


class Criterion(EnableBuild):
    """Base of the stopping criteria; ``reason`` is the StopReason a met criterion gives.

    A criterion is checked on the device: :class:`~ginkpy.core.stop.iteration.Iteration` and
    :class:`~ginkpy.core.stop.time.Time` give limits, :class:`~ginkpy.core.stop.residual_norm.ResidualNorm`
    an absolute residual norm per column, generated at the start of each solve from
    :class:`CriterionArgs`.
    """

    reason: StopReason = StopReason.ITERATION_LIMIT

    def __init__(self, factory: Factory, args: CriterionArgs) -> None:
        super().__init__(factory)
        self.args = args


def as_criterion_factory(value, exec) -> Factory:
    """A criterion factory from a factory or parameters, checked to build a criterion."""
    if isinstance(value, Parameters):
        value = value.on(exec)
    if not (isinstance(value, Factory) and issubclass(value.parameters.product, Criterion)):
        raise TypeError(f"criteria must be gk.stop criteria (gk.stop.Iteration.build().with_max_iters(100), ...), "
                        f"got {value!r}")
    return value
