"""Loggers, attached to an operator with ``add_logger``."""
from ginkpy.core.log.convergence import Convergence
from ginkpy.core.log.logger import Logger, SolveResult
from ginkpy.core.log.profiler_hook import ProfilerHook
from ginkpy.core.log.solver_progress import SolverProgress
from ginkpy.core.log.stream import Stream

__all__ = ["Convergence", "Logger", "ProfilerHook", "SolveResult", "SolverProgress", "Stream"]
