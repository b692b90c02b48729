"""Combined: the criteria of a solver together (Ginkgo's ``stop::Combined``): each column stops
at the first that is met. What the solve loop needs from them: the iteration and time limits,
and per column one absolute residual norm threshold (the largest of the ResidualNorm
criteria), which the device compares with every residual norm it computes."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ginkpy.core.base.factory import Factory
from ginkpy.core.stop.criterion import CriterionArgs
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ResidualNorm
from ginkpy.core.stop.time import Time

NO_LIMIT = np.iinfo(np.int64).max


class Combined:
    """The criteria factories of a solver, read once per solve.

    Parameters
    ----------
    factories : sequence of Factory
        Criterion factories on the solver's executor (``as_criterion_factory``).

    Attributes
    ----------
    max_iters : int
        The smallest Iteration limit (``NO_LIMIT`` without one).
    time_limit : float
        The smallest Time limit in seconds (inf without one).
    has_residual_norm : bool
        Whether a ResidualNorm criterion is among them.

    Examples
    --------
    >>> criteria = Combined([gk.stop.Iteration.build().with_max_iters(50).on(exec)])
    >>> criteria.max_iters, criteria.has_residual_norm
    (50, False)
    """

    def __init__(self, factories: Sequence[Factory]) -> None:
        self.factories = list(factories)
        products = [f.parameters.product for f in self.factories]
        self.max_iters = min([int(f.parameters.max_iters) for f in self.factories
                              if f.parameters.product is Iteration] or [NO_LIMIT])
        self.time_limit = min([float(f.parameters.time_limit) for f in self.factories
                               if f.parameters.product is Time] or [np.inf])
        self.has_residual_norm = any(issubclass(p, ResidualNorm) for p in products)
        # only Iteration criteria: a solve runs exactly max_iters iterations (None: not so)
        self.fixed_iterations = (self.max_iters if self.factories and all(p is Iteration for p in products)
                                 else None)

    def thresholds(self, args: CriterionArgs) -> np.ndarray:
        """The absolute residual norm per column at which a column converges: the largest
        threshold of the ResidualNorm criteria, -1 (never) without one."""
        thresholds = [f.generate(args).threshold for f in self.factories
                      if issubclass(f.parameters.product, ResidualNorm)]
        return np.max(thresholds, axis=0) if thresholds else np.full(len(args.rhs_norm), -1.0)
