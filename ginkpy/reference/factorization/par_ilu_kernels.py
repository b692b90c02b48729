"""Reference kernels of ParILU (Chow and Patel's fixed-point ILU), vectorized with SciPy.

The factors are L (unit lower, the diagonal of ones stored last in each row) and U (upper,
the diagonal first in each row), each on its part of A's pattern. A sweep recomputes every
entry from the others by the ILU equations restricted to the pattern:

    u_ij = a_ij - sum_{k<i} l_ik u_kj               (i <= j, u_ii kept at least its floor)
    l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj      (i > j)

The sums are (L_strict U_strict)_ij: an entry of the product of the strict parts accumulates
exactly the k < min(i, j), in increasing k as the OpenCL kernels do.
"""
from __future__ import annotations

import numpy as np

from ginkpy.reference.factorization.patterns import floor_pivots, on_pattern, scipy_view


def sweep_u(exec, a, l, u, u_rows, floors, u_out):
    # u_ij = a_ij - sum_{k<i} l_ik u_kj; a pivot u_ii not above floors[i] becomes the floor
    cols = u.col_idxs
    a_u = a.values[a.row_ptrs[u_rows + 1] - (u.row_ptrs[u_rows + 1] - np.arange(u.nnz))]
    u_out.values[:] = a_u - on_pattern(scipy_view(l, strict=True) @ scipy_view(u, strict=True), u_rows, cols)
    floor_pivots(u_out.values, u.row_ptrs[:-1], floors.values[:, 0])


def sweep_l(exec, a, l, l_rows, u, l_out):
    # l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj, the unit diagonal kept
    cols = l.col_idxs
    a_l = a.values[a.row_ptrs[l_rows] + (np.arange(l.nnz) - l.row_ptrs[l_rows])]
    sums = on_pattern(scipy_view(l, strict=True) @ scipy_view(u, strict=True), l_rows, cols)
    with np.errstate(divide="ignore", invalid="ignore"):
        l_out.values[:] = np.where(cols == l_rows, 1, (a_l - sums) / u.values[u.row_ptrs[cols]])
