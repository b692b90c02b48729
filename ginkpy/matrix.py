"""Matrix formats."""
from ginkpy.core.base.lazy import lazy_attributes as _lazy_attributes

# each name's module is imported at its first use (``import ginkpy`` stays fast)
_EXPORTS = {
    "Coo": "ginkpy.core.matrix.coo",
    "Csr": "ginkpy.core.matrix.csr",
    "Dense": "ginkpy.core.matrix.dense",
    "Ell": "ginkpy.core.matrix.ell",
    "Hybrid": "ginkpy.core.matrix.hybrid",
    "Identity": "ginkpy.core.matrix.identity",
    "Permutation": "ginkpy.core.matrix.permutation",
    "permute": "ginkpy.core.matrix.permutation",
    "Sellp": "ginkpy.core.matrix.sellp",
}
__getattr__, __dir__ = _lazy_attributes(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
