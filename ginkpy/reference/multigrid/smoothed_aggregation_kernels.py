"""Reference kernels of smoothed aggregation: the smoother S = I - (w / rho) D^-1 A on A's
pattern, rho Gershgorin's bound max_i sum_j |a_ij| / |a_ii| on the eigenvalues of D^-1 A
(PyAMG's ``smooth=('jacobi', {'omega': w})`` with its Gershgorin estimate); and P = S P_t
made from S's rows and the aggregates (P_t: one 1 per row, at the row's aggregate), without a
general sparse product."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.multigrid.pgm_kernels import _rows


def smoother_values(exec, a, relax, values, flags):
    """values = those of S = I - (relax / rho) D^-1 A, in A's entry order; flags[0] = 1 where
    a row's diagonal entry is zero or not stored (0 otherwise; that row's values are then not
    finite)."""
    n = a.shape[0]
    rows = _rows(a)
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


def prolongation_pattern(exec, smoother, agg):
    """Row pointers of P = S P_t (row i: the distinct aggregates agg[k] of its columns k) and
    S's entries sorted by (row, aggregate, entry): their aggregates and indices, 2 x nnz, for
    :func:`prolongation_fill`."""
    n, nnz = smoother.shape[0], smoother.nnz
    rows = _rows(smoother)
    keys = np.asarray(agg)[smoother.col_idxs]
    order = np.lexsort((np.arange(nnz), keys, rows))
    new = _new(rows[order], keys[order])
    row_ptrs = np.zeros(n + 1, np.int32)
    np.cumsum(np.bincount(rows[order][new], minlength=n), out=row_ptrs[1:])
    return row_ptrs, np.stack((keys[order], order)).astype(np.int32)


def prolongation_fill(exec, smoother, row_ptrs, sorted_entries, size):
    """Columns (sorted in each row) and values of P = S P_t, ``size`` entries, and the slot of
    each entry of S (the entry of P it adds to): p_iJ = sum of s_ik over the k with agg[k] = J,
    in the order of S's entries (structural: sums that cancel are kept)."""
    keys, order = sorted_entries
    new = _new(_rows(smoother)[order], keys)
    slots = np.empty(smoother.nnz, np.int32)
    slots[order] = np.cumsum(new) - 1
    col_idxs = keys[new].astype(np.int32)
    values = np.empty(size, smoother.dtype)
    _sum_into(values, slots, smoother.values)
    return col_idxs, values, slots


def _new(rows, keys):
    # the first entry of each (row, aggregate) among sorted ones
    new = np.ones(rows.size, bool)
    new[1:] = (rows[1:] != rows[:-1]) | (keys[1:] != keys[:-1])
    return new


def prolongation_values(exec, smoother, slots, prolong):
    """prolong's values = those of P = S P_t on the pattern prolongation gave (its slots)."""
    _sum_into(prolong.values, slots, smoother.values)


def _sum_into(values, slots, s_values):
    # p at slot t = the sum of the s_ik whose slot is t, in the order of S's entries
    values[...] = 0
    np.add.at(values, slots, s_values)  # (unbuffered: in the order of the entries)
