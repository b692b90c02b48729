"""Solvers: ``gk.solver.Cg.build().with_criteria(...).on(exec).generate(A)``."""
from ginkpy.core.solver.bicg import Bicg
from ginkpy.core.solver.bicgstab import Bicgstab
from ginkpy.core.solver.cb_gmres import CbGmres
from ginkpy.core.solver.cg import Cg
from ginkpy.core.solver.cgs import Cgs
from ginkpy.core.solver.chebyshev import Chebyshev
from ginkpy.core.solver.direct import Direct
from ginkpy.core.solver.fcg import Fcg
from ginkpy.core.solver.gcr import Gcr
from ginkpy.core.solver.gmres import Gmres
from ginkpy.core.solver.idr import Idr
from ginkpy.core.solver.ir import Ir
from ginkpy.core.solver.lower_trs import LowerTrs
from ginkpy.core.solver.lsmr import Lsmr
from ginkpy.core.solver.lsqr import Lsqr
from ginkpy.core.solver.minres import Minres
from ginkpy.core.solver.multigrid import Multigrid
from ginkpy.core.solver.qmr import Qmr
from ginkpy.core.solver.pipe_cg import PipeCg
from ginkpy.core.solver.scaled_reordered import ScaledReordered
from ginkpy.core.solver.tfqmr import Tfqmr
from ginkpy.core.solver.upper_trs import UpperTrs

__all__ = ["Bicg", "Bicgstab", "CbGmres", "Cg", "Cgs", "Chebyshev", "Direct", "Fcg", "Gcr", "Gmres", "Idr", "Ir",
           "LowerTrs", "Lsmr", "Lsqr", "Minres", "Multigrid", "PipeCg", "Qmr", "ScaledReordered",
           "Tfqmr", "UpperTrs"]
