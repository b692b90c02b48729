"""Solvers: ``gk.solver.Cg.build().with_criteria(...).on(exec).generate(A)``."""
from ginkpy.core.solver.bicgstab import Bicgstab
from ginkpy.core.solver.cg import Cg
from ginkpy.core.solver.gmres import Gmres
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.upper_trs import UpperTrs

__all__ = ["Bicgstab", "Cg", "Gmres", "LowerTrs", "UpperTrs"]
