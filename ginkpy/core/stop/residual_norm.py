"""ResidualNorm: stop a column once ||r|| <= reduction_factor * baseline.

The baseline is ||b|| (``"rhs_norm"``, the default), the initial residual norm
(``"initial_resnorm"``) or 1 (``"absolute"``).
"""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import number, one_of, parameters
from ginkpy.core.stop.criterion import Criterion, SolveState
from ginkpy.core.stop.stopping_status import StopReason

BASELINES = ("rhs_norm", "initial_resnorm", "absolute")


class ResidualNorm(Criterion):
    reason = StopReason.CONVERGED

    @parameters
    class Parameters(Criterion.Parameters):
        reduction_factor: float = attrs.field(default=1e-15, validator=number(min=0, allow_inf=True))
        baseline: str = attrs.field(default="rhs_norm", validator=one_of(*BASELINES))

    def __init__(self, factory, args) -> None:
        super().__init__(factory, args)
        p = self.parameters
        base = {"rhs_norm": args.rhs_norm, "initial_resnorm": args.initial_residual_norm,
                "absolute": np.ones_like(args.rhs_norm)}[p.baseline]
        self.threshold = float(p.reduction_factor) * base

    def check(self, state: SolveState) -> np.ndarray:
        return state.residual_norm <= self.threshold
