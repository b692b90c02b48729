"""Reference kernels shared by the factorizations: the diagonal added where A lacks it, the
factors' patterns with their initial values (ParIlu, ParIc), the pivots' floors and the checks
of the pivots, and the largest diagonal shift an incomplete Cholesky needs."""
from __future__ import annotations

import numpy as np

import scipy.sparse as sp

from ginkpy.reference.factorization.elimination import add_diagonal
from ginkpy.reference.factorization.patterns import diagonal_positions, scipy_view


def find_invalid_pivot(exec, factor, lower) -> int:
    """The first row whose diagonal entry (the last of a lower factor's row, the first of an
    upper factor's) is missing, zero or not finite; -1 when every pivot is valid."""
    n = factor.shape[0]
    ptrs, cols, vals = factor.row_ptrs, factor.col_idxs, factor.values
    nonempty = ptrs[1:] > ptrs[:-1]
    pos = np.where(nonempty, ptrs[1:] - 1 if lower else ptrs[:-1], 0)
    valid = nonempty & (cols[pos] == np.arange(n)) & (vals[pos] != 0) & np.isfinite(vals[pos]) if n else nonempty
    bad = np.flatnonzero(~valid)
    return int(bad[0]) if bad.size else -1


def check_factor(exec, factor, lower, floors) -> np.ndarray:
    """[the first row whose pivot (the last entry of a lower factor's row, the first of an upper
    one's) is missing, zero or not finite, the first row holding a value that is not finite,
    with ``floors`` (else 0 and n) the number of rows whose pivot is not above its floor and
    the first of them], each row n where there is none (int32)."""
    n = factor.shape[0]
    invalid = find_invalid_pivot(exec, factor, lower)
    rows = np.repeat(np.arange(n), np.diff(factor.row_ptrs))[~np.isfinite(factor.values)]
    count, first = (0, -1) if floors is None else floored_pivots(exec, factor, lower, floors)
    return np.array([invalid if invalid >= 0 else n, rows[0] if rows.size else n, count,
                     first if first >= 0 else n], np.int32)


def initialize_l_u(exec, a):
    """The pattern of L (A's strictly lower part and a unit diagonal) and U (A's upper part,
    the diagonal included) with the initial guess l_ij = a_ij / a_jj (a_jj = 0: a_ij), u_ij = a_ij;
    returns (L arrays, U arrays, the first row without a stored diagonal entry or -1)."""
    n = a.shape[0]
    diag, missing = diagonal_positions(a)
    if missing >= 0:
        empty = (np.zeros(n + 1, np.int32), np.zeros(0, np.int32), np.zeros(0, a.values.dtype))
        return empty, empty, missing
    rows = np.repeat(np.arange(n), np.diff(a.row_ptrs))
    in_l, in_u = a.col_idxs <= rows, a.col_idxs >= rows
    l_ptrs = np.concatenate([[0], np.cumsum(diag - a.row_ptrs[:-1] + 1)]).astype(np.int32)
    u_ptrs = np.concatenate([[0], np.cumsum(a.row_ptrs[1:] - diag)]).astype(np.int32)
    pivots = a.values[diag]
    scale = np.where(pivots != 0, pivots, 1)
    l_vals = a.values[in_l] / scale[a.col_idxs[in_l]]
    l_vals[l_ptrs[1:] - 1] = 1
    return ((l_ptrs, a.col_idxs[in_l].astype(np.int32), l_vals.astype(a.values.dtype)),
            (u_ptrs, a.col_idxs[in_u].astype(np.int32), a.values[in_u].copy()), missing)


def initialize_l(exec, a, shift):
    """The pattern of L (A's lower part, the diagonal included) with the initial guess
    l_ij = a_ij / sqrt(a_jj'), l_ii = sqrt(a_ii'), a_ii' = (1 + shift) a_ii; returns (L arrays,
    the first row whose diagonal entry is not stored or not positive, or -1). Of a complex
    (Hermitian) A the diagonal's real parts are taken."""
    n = a.shape[0]
    diag, missing = diagonal_positions(a)
    if missing < 0:
        bad = np.flatnonzero(~(a.values[diag].real > 0))
        missing = int(bad[0]) if bad.size else -1
    if missing >= 0:
        return (np.zeros(n + 1, np.int32), np.zeros(0, np.int32), np.zeros(0, a.values.dtype)), missing
    rows = np.repeat(np.arange(n), np.diff(a.row_ptrs))
    in_l = a.col_idxs <= rows
    l_ptrs = np.concatenate([[0], np.cumsum(diag - a.row_ptrs[:-1] + 1)]).astype(np.int32)
    roots = np.sqrt((1 + shift) * a.values[diag].real)
    l_vals = a.values[in_l] / roots[a.col_idxs[in_l]]
    l_vals[l_ptrs[1:] - 1] = roots
    return (l_ptrs, a.col_idxs[in_l].astype(np.int32), l_vals.astype(a.values.dtype)), missing


def add_diagonal_elements(exec, a):
    """A's CSR arrays with a zero stored on every diagonal position A lacks (Ginkgo's
    add_diagonal_elements; the columns stay sorted)."""
    m = add_diagonal(scipy_view(a))
    return m.indptr.astype(np.int32), m.indices.astype(np.int32), m.data.astype(a.values.dtype)


def pivot_floors(exec, a, relative, floors):
    # floor_i = relative * sum_j |a_ij|
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.row_ptrs))
    floors.values[:, 0] = relative * np.bincount(rows, weights=np.abs(a.values), minlength=a.shape[0])


def floored_pivots(exec, factor, lower, floors):
    """The number of rows whose pivot (the last entry of a lower factor's row, the first of an
    upper one's) is not above its floor (a zero floor: 1), and the first of them (-1: none)."""
    ptrs = factor.row_ptrs
    nonempty = np.flatnonzero(ptrs[1:] > ptrs[:-1])
    pos = ptrs[nonempty + 1] - 1 if lower else ptrs[nonempty]
    floor = floors.values[nonempty, 0]
    rows = nonempty[np.abs(factor.values[pos]) <= np.where(floor > 0, floor, 1)]
    return int(rows.size), int(rows[0]) if rows.size else -1


def cholesky_shift_bound(exec, a):
    """For an incomplete Cholesky of A's lower triangle (Hermitian A): the first row whose
    diagonal entry is not positive (-1: none) and the shift alpha beyond which A + alpha diag(A)
    is strictly diagonally dominant, where every incomplete Cholesky exists:
    max_i sum_{j != i} |a_ij| / a_ii - 1 over the symmetric matrix of the lower triangle."""
    lower = sp.tril(scipy_view(a), -1)
    d = scipy_view(a).diagonal().real
    bad = np.flatnonzero(~(d > 0))
    if bad.size:
        return int(bad[0]), 0.0
    off = np.asarray(abs(lower).sum(axis=1)).ravel() + np.asarray(abs(lower).sum(axis=0)).ravel()
    return -1, float(max(np.max(off / d, initial=0) - 1, 0))
