"""Reorderings (Ginkgo's experimental::reorder): ``gk.reorder.Rcm.build().on(exec).generate(A)``
gives a ``gk.matrix.Permutation``; ``gk.solver.ScaledReordered`` (also here) solves a system
reordered and scaled with any inner solver."""
from ginkpy.core.reorder.amd import Amd
from ginkpy.core.reorder.mc64 import Mc64
from ginkpy.core.reorder.rcm import Rcm
from ginkpy.core.solver.scaled_reordered import ScaledReordered

__all__ = ["Amd", "Mc64", "Rcm", "ScaledReordered"]
