"""Solvers: ``gk.solver.Cg.build().with_criteria(...).on(exec).generate(A)``."""
from ginkpy.core.solver.bicgstab import Bicgstab
from ginkpy.core.solver.cg import Cg
from ginkpy.core.solver.gmres import Gmres

__all__ = ["Bicgstab", "Cg", "Gmres"]
