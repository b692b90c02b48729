"""ResidualNorm: stop a column once ||r|| <= reduction_factor * baseline."""
from __future__ import annotations

import attrs
import numpy as np

from ginkpy.core.base.factory import number, one_of, parameters
from ginkpy.core.stop.criterion import Criterion
from ginkpy.core.stop.stopping_status import StopReason

BASELINES = ("rhs_norm", "initial_resnorm", "absolute")


class ResidualNorm(Criterion):
    """Stop a column once its residual norm ||b - A x|| <= reduction_factor * baseline (status
    CONVERGED, confirmed with the true residual).

    Parameters
    ----------
    reduction_factor : float, default 1e-15
        The factor, >= 0 (inf: converged at once).
    baseline : {"rhs_norm", "initial_resnorm", "absolute"}, default "rhs_norm"
        What it multiplies: ||b|| (SciPy's rtol), the initial residual norm ||b - A x0||, or
        1 (an absolute threshold, SciPy's atol). Given together, criteria stop a column at
        the first met: a ResidualNorm relative to ``rhs_norm`` and one ``absolute`` make
        SciPy's max(rtol ||b||, atol).

    Attributes
    ----------
    threshold : array
        After generation: the absolute residual norm per column below which it stops.

    Examples
    --------
    >>> tol = gk.stop.ResidualNorm.build().with_reduction_factor(1e-10)
    >>> solver = gk.solver.Cg.build().with_criteria(tol, gk.stop.Iteration.build().with_max_iters(1000))
    """

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


class ImplicitResidualNorm(ResidualNorm):
    """Ginkgo's ``ImplicitResidualNorm``: stop a column once the residual norm the solver's
    recurrence gives (its implicit residual) is <= reduction_factor * baseline.

    ginkpy's solvers check every criterion on their recurrence's residual norm on the device
    (Minres: the rotated right-hand side), so this is :class:`ResidualNorm` under Ginkgo's
    name, for its configurations (``"ImplicitResidualNorm"``, the short forms
    ``"relative_implicit_residual_norm"`` and the like); ginkpy then confirms a converged
    column with its true residual b - A x, as for ResidualNorm.

    Parameters
    ----------
    reduction_factor : float, default 1e-15
        As ResidualNorm's.
    baseline : {"rhs_norm", "initial_resnorm", "absolute"}, default "rhs_norm"
        As ResidualNorm's.

    Examples
    --------
    >>> tol = gk.stop.ImplicitResidualNorm.build().with_reduction_factor(1e-10)
    >>> solver = gk.solver.Minres.build().with_criteria(tol).on(exec).generate(A)
    >>> solver.apply(b, x)
    """
