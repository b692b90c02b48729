"""Reference kernels of Multigrid's cycle: restriction, and prolongation alone or fused with the
smoothing step after it (see core/solver/multigrid.py)."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp


def _scipy(a):
    return sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)


def restrict(exec, agg_ptrs, agg_rows, r, coarse_r):
    """coarse_r = P^T r: coarse row I sums r over the rows of aggregate I, in the order of
    agg_rows."""
    m = coarse_r.shape[0]
    owner = np.repeat(np.arange(m), np.diff(agg_ptrs))
    sums = np.zeros_like(coarse_r.values)
    np.add.at(sums, owner, r.values[agg_rows])
    coarse_r.values[...] = sums


def prolong(exec, agg, coarse_x, x):
    """x = x + P e: x_i += e_I for the aggregate I of row i."""
    x.values[...] = x.values + coarse_x.values[agg]


def prolong_relax(exec, beta, a, inv_diag, agg, coarse_x, b, x, x_new):
    """The correction and a weighted Jacobi step after it: y = x + P e;
    x_new = y + beta D^-1 (b - A y)."""
    y = x.values + coarse_x.values[agg]
    x_new.values[...] = y + beta * (inv_diag.values * (b.values - _scipy(a) @ y))


def dense_inverse(exec, a):
    """A^-1 as a dense array (a host kernel: the coarsest level's direct solve), from the LU
    factors; the pseudo-inverse where A is singular to working precision (a pure Neumann problem
    keeps its null space down to the coarsest level)."""
    dense = _scipy(a).toarray().astype(np.result_type(a.dtype, np.float64))
    with warnings.catch_warnings():  # a singular A is handled below
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        lu, piv = scipy.linalg.lu_factor(dense, check_finite=False)
    pivots = np.abs(np.diag(lu))
    if pivots.size and pivots.min() > dense.shape[0] * np.finfo(np.float64).eps * pivots.max():
        return scipy.linalg.lu_solve((lu, piv), np.eye(dense.shape[0]), check_finite=False)
    return np.linalg.pinv(dense, hermitian=np.array_equal(dense, dense.conj().T))
