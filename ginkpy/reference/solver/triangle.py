"""Host helpers of the triangular solves' kernels (reference and OpenCL): the strict triangle
and the diagonal of a matrix."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def first_zero(diag: np.ndarray) -> int:
    """Index of the first zero in ``diag``, or -1 when there is none."""
    zeros = np.flatnonzero(diag == 0)
    return int(zeros[0]) if zeros.size else -1


def split_triangle(m: sp.csr_matrix, lower: bool, unit_diagonal: bool):
    """The strict lower (or upper) triangle of ``m`` as a sorted CSR, its diagonal (ones with
    ``unit_diagonal``) and the first row whose diagonal is zero or not stored (-1 if none)."""
    strict = (sp.tril(m, -1) if lower else sp.triu(m, 1)).tocsr()
    strict.sort_indices()
    diag = np.ones(m.shape[0], m.dtype) if unit_diagonal else m.diagonal()
    return strict, diag, first_zero(diag)
