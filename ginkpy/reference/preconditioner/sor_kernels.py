"""Reference kernel of the (S)SOR and Gauss-Seidel preconditioners: the values of the weighted
triangular factors, written into patterns made by ``factorization.factorization.initialize_l_u``
(L: A's lower part with the diagonal last in each row; U: A's upper part with the diagonal
first)."""
from __future__ import annotations

import numpy as np


def initialize_weighted_l_u(exec, a, omega, l, u, symmetric) -> int:
    """l = D / omega + L_A (the strictly lower part of A as it is); u (unless None) =
    D^-1 (D + omega U_A) / (2 - omega) where ``symmetric`` (SSOR's second factor, as Ginkgo's
    Sor), else D / omega + U_A (the backward sweep). Returns the first row whose diagonal entry
    is zero, -1 if none (the factors' values there are not to be used)."""
    n = a.shape[0]
    rows = np.repeat(np.arange(n), np.diff(a.row_ptrs))
    diag = a.values[l.row_ptrs[1:] - 1 - l.row_ptrs[:-1] + a.row_ptrs[:-1]] if n else a.values[:0]
    zero = diag == 0
    # symmetric: u_ij = omega a_ij / ((2 - omega) a_ii) (0 in a row whose diagonal is zero)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(zero, 0, (omega / (2 - omega)) / np.where(zero, 1, diag))
    l.values[...] = a.values[a.col_idxs <= rows]
    l.values[l.row_ptrs[1:] - 1] = diag / omega
    if u is not None:
        upper = a.values[a.col_idxs >= rows]
        first = u.row_ptrs[:-1]
        if symmetric:
            u_rows = np.repeat(np.arange(n), np.diff(u.row_ptrs))
            u.values[...] = upper * scale[u_rows]
            u.values[first] = 1 / (2 - omega)
        else:
            u.values[...] = upper
            u.values[first] = diag / omega
    return int(np.argmax(zero)) if zero.any() else -1
