"""Incomplete factorizations, used by the Ilu and Ic preconditioners or on their own."""
from ginkpy.core.factorization.ic import Ic
from ginkpy.core.factorization.ilu import Ilu

__all__ = ["Ic", "Ilu"]
