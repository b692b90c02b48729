"""Batch matrix formats: N items of one size and sparsity pattern, values per item."""
from ginkpy.core.batch.matrix.csr import Csr
from ginkpy.core.batch.matrix.dense import Dense
from ginkpy.core.batch.matrix.ell import Ell

__all__ = ["Csr", "Dense", "Ell"]
