"""Preconditioners, given to a solver with ``with_preconditioner``."""
from ginkpy.core.preconditioner.gauss_seidel import GaussSeidel
from ginkpy.core.preconditioner.ic import Ic
from ginkpy.core.preconditioner.ilu import Ilu
from ginkpy.core.preconditioner.isai import GeneralIsai, Isai, LowerIsai, SpdIsai, UpperIsai
from ginkpy.core.preconditioner.jacobi import Jacobi
from ginkpy.core.preconditioner.sor import Sor

__all__: list[str] = ["GaussSeidel", "GeneralIsai", "Ic", "Ilu", "Isai", "Jacobi", "LowerIsai", "Sor", "SpdIsai",
                      "UpperIsai"]
