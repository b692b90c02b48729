"""Incomplete factorizations, used by the Ilu and Ic preconditioners or on their own."""
from ginkpy.core.factorization.ic import Ic
from ginkpy.core.factorization.ilu import Ilu
from ginkpy.core.factorization.ilut import Ilut
from ginkpy.core.factorization.par_ic import ParIc
from ginkpy.core.factorization.par_ict import ParIct
from ginkpy.core.factorization.par_ilu import ParIlu
from ginkpy.core.factorization.par_ilut import ParIlut

__all__ = ["Ic", "Ilu", "Ilut", "ParIc", "ParIct", "ParIlu", "ParIlut"]
