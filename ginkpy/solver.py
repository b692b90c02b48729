"""Solvers: ``gk.solver.Cg.build().with_criteria(...).on(exec).generate(A)``."""
from ginkpy.core.solver.cg import Cg

__all__ = ["Cg"]
