"""BatchConvergence: how every item of the last batched solve ended (Ginkgo's
``gko::batch::log::BatchConvergence``)."""
from __future__ import annotations

import numpy as np

from ginkpy.core.log.last_result import LastResult


class BatchConvergence(LastResult):
    """Per item: iterations, final residual norm, converged flag and stop reason of the last
    batched solve of the solver it is attached to (Ginkgo's ``batch::log::BatchConvergence``).

    Use it to see which items of a batch converged and how fast; the properties are
    :class:`~ginkpy.core.log.last_result.LastResult`'s, each an array over the N items, and
    ``num_iterations`` is each item's count (where ``gk.log.Convergence`` gives the largest).
    It takes no parameters.

    Examples
    --------
    >>> logger = gk.batch.log.BatchConvergence()
    >>> solver.add_logger(logger); solver.apply(b, x)
    >>> logger.num_iterations, logger.converged
    """

    def on_batch_solver_completed(self, solver, result) -> None:
        self.result = result

    @property
    def num_iterations(self) -> np.ndarray:
        """(N,) iterations of each item."""
        return self._get().iterations
