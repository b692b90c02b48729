"""Solvers: ``gk.solver.Cg.build().with_criteria(...).on(exec).generate(A)``."""
from ginkpy.core.base.lazy import lazy_attributes as _lazy_attributes

# each name's module is imported at its first use (``import ginkpy`` stays fast)
_EXPORTS = {
    "Bicg": "ginkpy.core.solver.bicg",
    "Bicgstab": "ginkpy.core.solver.bicgstab",
    "CbGmres": "ginkpy.core.solver.cb_gmres",
    "Cg": "ginkpy.core.solver.cg",
    "Cgs": "ginkpy.core.solver.cgs",
    "Chebyshev": "ginkpy.core.solver.chebyshev",
    "Direct": "ginkpy.core.solver.direct",
    "Fcg": "ginkpy.core.solver.fcg",
    "Gcr": "ginkpy.core.solver.gcr",
    "Gcrotmk": "ginkpy.core.solver.gcrotmk",
    "Gmres": "ginkpy.core.solver.gmres",
    "Idr": "ginkpy.core.solver.idr",
    "Ir": "ginkpy.core.solver.ir",
    "Lgmres": "ginkpy.core.solver.lgmres",
    "LowerTrs": "ginkpy.core.solver.lower_trs",
    "Lsmr": "ginkpy.core.solver.lsmr",
    "Lsqr": "ginkpy.core.solver.lsqr",
    "Minres": "ginkpy.core.solver.minres",
    "Multigrid": "ginkpy.core.solver.multigrid",
    "Qmr": "ginkpy.core.solver.qmr",
    "PipeCg": "ginkpy.core.solver.pipe_cg",
    "ScaledReordered": "ginkpy.core.solver.scaled_reordered",
    "Tfqmr": "ginkpy.core.solver.tfqmr",
    "UpperTrs": "ginkpy.core.solver.upper_trs",
}
__getattr__, __dir__ = _lazy_attributes(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
