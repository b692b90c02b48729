"""Batched solvers: ``gk.batch.solver.Cg.build().with_tolerance(1e-8).on(exec).generate(A)``."""
from ginkpy.core.batch.solver.bicgstab import Bicgstab
from ginkpy.core.batch.solver.cg import Cg
from ginkpy.core.batch.solver.gmres import Gmres

__all__ = ["Bicgstab", "Cg", "Gmres"]
