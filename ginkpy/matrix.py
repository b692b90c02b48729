"""Matrix formats."""
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.identity import Identity

__all__ = ["Csr", "Dense", "Identity"]
