"""Preconditioners of distributed matrices."""
from ginkpy.core.distributed.preconditioner.schwarz import Schwarz

__all__ = ["Schwarz"]
