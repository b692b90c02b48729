"""Matrix formats."""
from ginkpy.core.matrix.coo import Coo
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.ell import Ell
from ginkpy.core.matrix.hybrid import Hybrid
from ginkpy.core.matrix.identity import Identity
from ginkpy.core.matrix.permutation import Permutation, permute
from ginkpy.core.matrix.sellp import Sellp

__all__ = ["Coo", "Csr", "Dense", "Ell", "Hybrid", "Identity", "Permutation", "Sellp", "permute"]
