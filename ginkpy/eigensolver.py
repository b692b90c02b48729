"""Eigensolvers: ``Lobpcg`` (the extreme eigenpairs of a Hermitian A x = lambda B x, its block
vectors on the executor; ``gk.linalg.lobpcg`` is SciPy's door to it)."""
from ginkpy.core.eigensolver.lobpcg import Lobpcg, LobpcgResult

__all__ = ["Lobpcg", "LobpcgResult"]
