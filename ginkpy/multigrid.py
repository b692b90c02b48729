"""Multigrid levels, given to ``gk.solver.Multigrid`` with ``with_mg_level``."""
from ginkpy.core.multigrid.pgm import Pgm

__all__ = ["Pgm"]
