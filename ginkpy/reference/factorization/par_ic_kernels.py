"""Reference kernels of ParIC (the fixed-point incomplete Cholesky), vectorized with SciPy.

L is lower with A's lower pattern, its diagonal last in each row (real and positive). For
complex values A = L L^H (A Hermitian). A sweep recomputes

    l_ii = sqrt((1 + shift) a_ii - sum_{k<i} |l_ik|^2)
    l_ij = (a_ij - sum_{k<j} l_ik conj(l_jk)) / l_jj      (i > j)

in two halves: the diagonal (in place: it reads only off-diagonal entries), then the
off-diagonal entries from the new diagonal. The sums are (L_strict L_strict^H)_ij.
"""
from __future__ import annotations

import numpy as np

from ginkpy.reference.factorization.patterns import on_pattern, scipy_view


def _sums(l, l_rows):
    """sum_{k < min(i, j)} l_ik conj(l_jk) at every entry (i, j) of L."""
    strict = scipy_view(l, strict=True)
    return on_pattern(strict @ strict.conj().T.tocsr(), l_rows, l.col_idxs)


def _a_on_l(a, l, l_rows):
    return a.values[a.row_ptrs[l_rows] + (np.arange(l.nnz) - l.row_ptrs[l_rows])]


def sweep_diagonal(exec, a, l, l_rows, shift):
    # l_ii = sqrt((1 + shift) a_ii - sum_{k<i} |l_ik|^2), in place (real)
    diag = l.row_ptrs[1:] - 1
    with np.errstate(invalid="ignore"):
        l.values[diag] = np.sqrt((1 + shift) * _a_on_l(a, l, l_rows)[diag].real - _sums(l, l_rows)[diag].real)


def sweep_off_diagonal(exec, a, l, l_rows, l_out):
    # l_ij = (a_ij - sum_{k<j} l_ik conj(l_jk)) / l_jj (l_jj real), the diagonal kept
    cols = l.col_idxs
    with np.errstate(divide="ignore", invalid="ignore"):
        l_out.values[:] = np.where(cols == l_rows, l.values,
                                   (_a_on_l(a, l, l_rows) - _sums(l, l_rows)) / l.values[l.row_ptrs[cols + 1] - 1].real)
