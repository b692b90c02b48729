"""Preconditioners, given to a solver with ``with_preconditioner``."""
from ginkpy.core.base.lazy import lazy_attributes as _lazy_attributes

# each name's module is imported at its first use (``import ginkpy`` stays fast)
_EXPORTS = {
    "GaussSeidel": "ginkpy.core.preconditioner.gauss_seidel",
    "Ic": "ginkpy.core.preconditioner.ic",
    "Ilu": "ginkpy.core.preconditioner.ilu",
    "GeneralIsai": "ginkpy.core.preconditioner.isai",
    "Isai": "ginkpy.core.preconditioner.isai",
    "LowerIsai": "ginkpy.core.preconditioner.isai",
    "SpdIsai": "ginkpy.core.preconditioner.isai",
    "UpperIsai": "ginkpy.core.preconditioner.isai",
    "Jacobi": "ginkpy.core.preconditioner.jacobi",
    "Sor": "ginkpy.core.preconditioner.sor",
}
__getattr__, __dir__ = _lazy_attributes(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
