"""Stopping criteria; several given together stop each column at the first that is met."""
from ginkpy.core.stop.iteration import Iteration
from ginkpy.core.stop.residual_norm import ImplicitResidualNorm, ResidualNorm
from ginkpy.core.stop.stopping_status import StopReason
from ginkpy.core.stop.time import Time

__all__ = ["ImplicitResidualNorm", "Iteration", "ResidualNorm", "StopReason", "Time"]
