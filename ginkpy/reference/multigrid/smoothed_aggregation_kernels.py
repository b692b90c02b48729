"""Reference kernels of smoothed aggregation: the smoother S = I - (w / rho) D^-1 A on A's
pattern, rho Gershgorin's bound max_i sum_j |a_ij| / |a_ii| on the eigenvalues of D^-1 A
(PyAMG's ``smooth=('jacobi', {'omega': w})`` with its Gershgorin estimate)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def smoother_values(exec, a, relax, values, flags):
    """values = those of S = I - (relax / rho) D^-1 A, in A's entry order; flags[0] = 1 where
    a row's diagonal entry is zero or not stored (0 otherwise; that row's values are then not
    finite)."""
    n = a.shape[0]
    rows = np.repeat(np.arange(n), np.diff(a.row_ptrs))
    diagonal = rows == a.col_idxs
    diag = np.zeros(n, a.dtype)
    diag[rows[diagonal]] = a.values[diagonal]
    magnitude = np.abs(diag)
    flags[0] = int(bool(np.any(magnitude == 0)))
    sums = np.asarray(sp.csr_matrix((np.abs(a.values), a.col_idxs, a.row_ptrs), shape=a.shape).sum(axis=1)).ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        bounds = np.where(magnitude == 0, 0, sums / np.where(magnitude == 0, 1, magnitude))
        rho = float(np.max(bounds, initial=0.0)) or 1.0
        s = -(relax / rho) * (a.values / diag[rows])
    values[...] = np.where(diagonal, s + 1, s).astype(a.dtype, copy=False)
