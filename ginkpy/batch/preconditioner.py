"""Batched preconditioners, given to a batched solver with ``with_preconditioner``."""
from ginkpy.core.batch.preconditioner.jacobi import Jacobi

__all__ = ["Jacobi"]
