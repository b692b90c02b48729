"""Reference kernels of the triangular solvers LowerTrs and UpperTrs: sequential substitution.

``generate`` keeps the strict triangle of a Csr matrix and its diagonal (entries of the other
triangle are ignored); ``solve`` substitutes row by row, forward for lower, backward for upper.
A Dense system matrix is solved by the dense TRSV kernel instead and needs no preparation.
"""
from __future__ import annotations

import attrs
import numpy as np
import scipy.sparse as sp

from ginkpy.core.matrix.dense import Dense


@attrs.frozen
class Triangle:
    """The strict triangle (CSR arrays) and the diagonal used by the substitution."""

    lower: bool
    row_ptrs: np.ndarray
    col_idxs: np.ndarray
    values: np.ndarray
    diag: np.ndarray


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


def generate(exec, a, lower, unit_diagonal):
    """The prepared triangle (None for Dense) and the first row with a zero diagonal (-1 if none)."""
    if isinstance(a, Dense):
        return None, -1 if unit_diagonal else first_zero(np.diagonal(a.values))
    m = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)
    strict, diag, zero_row = split_triangle(m, lower, unit_diagonal)
    return Triangle(lower, strict.indptr, strict.indices, strict.data, diag), zero_row


def solve(exec, triangle, b, x):
    # x_i = (b_i - sum_{j in triangle of row i} a_ij x_j) / a_ii, rows in dependency order
    ptrs, cols, vals, diag = triangle.row_ptrs, triangle.col_idxs, triangle.values, triangle.diag
    n = diag.shape[0]
    xv, bv = x.values, b.values
    for i in (range(n) if triangle.lower else range(n - 1, -1, -1)):
        s, e = ptrs[i], ptrs[i + 1]
        xv[i] = (bv[i] - vals[s:e] @ xv[cols[s:e]]) / diag[i]
