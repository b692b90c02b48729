"""Factorizations: incomplete (Ilu, Ic, ParIlu, ... for the Ilu and Ic preconditioners) and complete
(Lu, Cholesky for gk.solver.Direct)."""
from ginkpy.core.factorization.cholesky import Cholesky
from ginkpy.core.factorization.ic import Ic
from ginkpy.core.factorization.ilu import Ilu
from ginkpy.core.factorization.ilut import Ilut
from ginkpy.core.factorization.lu import Lu
from ginkpy.core.factorization.par_ic import ParIc
from ginkpy.core.factorization.par_ict import ParIct
from ginkpy.core.factorization.par_ilu import ParIlu
from ginkpy.core.factorization.par_ilut import ParIlut

__all__ = ["Cholesky", "Ic", "Ilu", "Ilut", "Lu", "ParIc", "ParIct", "ParIlu", "ParIlut"]
