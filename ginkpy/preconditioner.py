"""Preconditioners, given to a solver with ``with_preconditioner``."""
from ginkpy.core.preconditioner.ic import Ic
from ginkpy.core.preconditioner.ilu import Ilu
from ginkpy.core.preconditioner.isai import GeneralIsai, Isai, LowerIsai, SpdIsai, UpperIsai
from ginkpy.core.preconditioner.jacobi import Jacobi

__all__: list[str] = ["GeneralIsai", "Ic", "Ilu", "Isai", "Jacobi", "LowerIsai", "SpdIsai", "UpperIsai"]
