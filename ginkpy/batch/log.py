"""Batched loggers, attached to a batched solver with ``add_logger``."""
from ginkpy.core.batch.log.batch_convergence import BatchConvergence

__all__ = ["BatchConvergence"]
