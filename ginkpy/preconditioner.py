"""Preconditioners, given to a solver with ``with_preconditioner``."""
from ginkpy.core.preconditioner.jacobi import Jacobi

__all__: list[str] = ["Jacobi"]
