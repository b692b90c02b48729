"""Multigrid levels, given to ``gk.solver.Multigrid`` with ``with_mg_level``."""
from ginkpy.core.base.lazy import lazy_attributes as _lazy_attributes

# each name's module is imported at its first use (``import ginkpy`` stays fast)
_EXPORTS = {
    "Pgm": "ginkpy.core.multigrid.pgm",
}
__getattr__, __dir__ = _lazy_attributes(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
