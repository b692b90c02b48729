"""Stopping criteria; several given together stop each column at the first that is met."""
from ginkpy.core.base.lazy import lazy_attributes as _lazy_attributes

# each name's module is imported at its first use (``import ginkpy`` stays fast)
_EXPORTS = {
    "Iteration": "ginkpy.core.stop.iteration",
    "ImplicitResidualNorm": "ginkpy.core.stop.residual_norm",
    "ResidualNorm": "ginkpy.core.stop.residual_norm",
    "StopReason": "ginkpy.core.stop.stopping_status",
    "Time": "ginkpy.core.stop.time",
}
__getattr__, __dir__ = _lazy_attributes(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
