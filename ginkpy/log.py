"""Loggers, attached to an operator with ``add_logger``."""
from ginkpy.core.base.lazy import lazy_attributes as _lazy_attributes

# each name's module is imported at its first use (``import ginkpy`` stays fast)
_EXPORTS = {
    "Convergence": "ginkpy.core.log.convergence",
    "Logger": "ginkpy.core.log.logger",
    "SolveResult": "ginkpy.core.log.logger",
    "ProfilerHook": "ginkpy.core.log.profiler_hook",
    "SolverProgress": "ginkpy.core.log.solver_progress",
    "Stream": "ginkpy.core.log.stream",
}
__getattr__, __dir__ = _lazy_attributes(globals(), _EXPORTS)

__all__ = sorted(_EXPORTS)
