"""Batched preconditioners, given to a batched solver with ``with_preconditioner``."""
from ginkpy.core.batch.preconditioner.ilu import Ilu
from ginkpy.core.batch.preconditioner.isai import Isai
from ginkpy.core.batch.preconditioner.jacobi import Jacobi

__all__ = ["Ilu", "Isai", "Jacobi"]
