"""Factorizations: incomplete (Ilu, Ic, ParIlu, ... for the Ilu and Ic preconditioners) and complete
(Lu, Cholesky for gk.solver.Direct)."""
from ginkpy.core.base.lazy import lazy_attributes as _lazy_attributes

# each name's module is imported at its first use (``import ginkpy`` stays fast)
_EXPORTS = {
    "Cholesky": "ginkpy.core.factorization.cholesky",
    "Ic": "ginkpy.core.factorization.ic",
    "Ilu": "ginkpy.core.factorization.ilu",
    "Ilut": "ginkpy.core.factorization.ilut",
    "Lu": "ginkpy.core.factorization.lu",
    "ParIc": "ginkpy.core.factorization.par_ic",
    "ParIct": "ginkpy.core.factorization.par_ict",
    "ParIlu": "ginkpy.core.factorization.par_ilu",
    "ParIlut": "ginkpy.core.factorization.par_ilut",
}
__getattr__, __dir__ = _lazy_attributes(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
