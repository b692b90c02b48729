"""The exact ILU(0) elimination on the host, shared by the reference kernels of Ilu and Ic.

ILU(0) keeps the sparsity pattern of A. Row by row (the IKJ variant of Gaussian elimination),
each entry left of the diagonal becomes l_ik = a_ik / u_kk, and row k's upper part, restricted
to row i's pattern, is subtracted: a_ij -= l_ik u_kj. Rows that need no unfinished row are
independent, so the rows are grouped by level (components.level_set) and each step eliminates
the r-th entry left of the diagonal of every row of one level at once: one vectorized numpy
step per (level, r), no loop over rows. A 2D five-point matrix of 700^2 rows has 1399 levels.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def ranges(begins: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The concatenated index ranges begins[r]:ends[r] and their lengths."""
    lengths = ends - begins
    offsets = np.repeat(begins - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) + offsets, lengths


def _diagonal(m: sp.csr_matrix, rows: np.ndarray, name: str) -> np.ndarray:
    """The position of every row's diagonal entry; a row without one raises a ValueError."""
    n = m.shape[0]
    diag = m.indptr[:-1] + np.bincount(rows[m.indices < rows], minlength=n)
    stored = diag < m.indptr[1:]
    stored[stored] = m.indices[diag[stored]] == np.flatnonzero(stored)
    missing = np.flatnonzero(~stored)
    if missing.size:
        raise ValueError(f"{name} breaks down: row {missing[0]} has no stored diagonal entry (zero pivot); "
                         f"store the diagonal, or reorder the matrix")
    return diag.astype(np.int64)


def ilu0_values(exec, m: sp.csr_matrix, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The ILU(0) values of a square CSR matrix with sorted indices, in its own pattern (L's
    strictly lower entries and U's upper entries in one array, float64), and the diagonal
    positions. A zero pivot raises a ValueError naming the row."""
    n, nnz = m.shape[0], m.nnz
    ptrs, cols = m.indptr.astype(np.int64), m.indices.astype(np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptrs))
    diag = _diagonal(m, rows, name)
    lower = np.flatnonzero(cols < rows)  # the positions of the l_ik
    # the updates a_ij -= l_ik u_kj: l_ik at p, u_kj at q (j > k in row k), a_ij at t (in the pattern)
    q, lengths = ranges(diag[cols[lower]] + 1, ptrs[cols[lower] + 1])
    p = np.repeat(lower, lengths)
    keys = rows * n + cols  # sorted: the pattern, row by row
    wanted = rows[p] * n + cols[q]
    t = np.minimum(np.searchsorted(keys, wanted), max(nnz - 1, 0))
    kept = keys[t] == wanted
    p, q, t = p[kept], q[kept], t[kept]
    # when l_ik is final: its row's level, and within the row its depth (0 when no update of
    # the row reaches it, else one more than the deepest l_ik' whose update does)
    level = exec.host.run("components.level_set.compute_levels", _strict_lower_ptrs(diag, ptrs), cols[lower])
    depth = np.zeros(nnz, dtype=np.int64)
    into_l = cols[t] < rows[t]
    ranked = np.argsort(t[into_l], kind="stable")  # updates of L entries, the leftmost targets first
    l_p, l_t = p[into_l][ranked], t[into_l][ranked]
    rank = l_t - ptrs[rows[l_t]]
    for r in np.unique(rank):  # the entries left of the diagonal of a row, in column order
        sel = rank == r
        np.maximum.at(depth, l_t[sel], depth[l_p[sel]] + 1)
    width = int(depth.max(initial=0)) + 1
    step = level[rows[lower]] * width + depth[lower]
    order = np.argsort(step, kind="stable")
    p_sorted = lower[order]
    bounds = np.flatnonzero(np.diff(step[order], prepend=-1, append=step.max(initial=0) + 1))
    # the updates in the order of their l_ik's steps: p is sorted, so each l_ik's updates are a
    # contiguous run, taken in the order of the l_ik's
    runs = np.zeros(nnz + 1, dtype=np.int64)
    np.cumsum(np.bincount(p, minlength=nnz), out=runs[1:])
    update, counts = ranges(runs[p_sorted], runs[p_sorted + 1])
    update_bounds = np.concatenate([[0], np.cumsum(counts)])[bounds]
    up, uq, ut = p[update], q[update], t[update]
    pivot = diag[cols[p_sorted]]
    vals = m.data.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for s in range(len(bounds) - 1):
            a, b = bounds[s], bounds[s + 1]
            # l_ik = a_ik / u_kk
            vals[p_sorted[a:b]] /= vals[pivot[a:b]]
            # a_ij -= l_ik u_kj (several l_ik of a row may update the same a_ij in one step)
            c, d = update_bounds[s], update_bounds[s + 1]
            np.subtract.at(vals, ut[c:d], vals[up[c:d]] * vals[uq[c:d]])
    pivots = vals[diag]
    bad = np.flatnonzero((pivots == 0) | ~np.isfinite(pivots))
    if bad.size:
        raise ValueError(f"{name} breaks down: the pivot of row {bad[0]} is {pivots[bad[0]]} (zero or not finite); "
                         f"the matrix has no {name} factorization in this row order")
    return vals, diag


def _strict_lower_ptrs(diag: np.ndarray, ptrs: np.ndarray) -> np.ndarray:
    """Row pointers of the strictly lower part (the entries before each row's diagonal)."""
    out = np.zeros(diag.shape[0] + 1, dtype=np.int64)
    np.cumsum(diag - ptrs[:-1], out=out[1:])
    return out


def _split(m: sp.csr_matrix, vals: np.ndarray, diag: np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """L (its unit diagonal stored) and U from the combined values in m's pattern."""
    n = m.shape[0]
    rows = np.repeat(np.arange(n), np.diff(m.indptr))
    in_l = m.indices <= rows
    l_vals = vals[in_l]
    l_ptrs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(diag - m.indptr[:-1] + 1, out=l_ptrs[1:])
    l_vals[l_ptrs[1:] - 1] = 1.0
    u_ptrs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(m.indptr[1:] - diag, out=u_ptrs[1:])
    in_u = m.indices >= rows
    return (sp.csr_matrix((l_vals, m.indices[in_l], l_ptrs), shape=m.shape),
            sp.csr_matrix((vals[in_u], m.indices[in_u], u_ptrs), shape=m.shape))


def ilu0(exec, m: sp.csr_matrix, name: str = "ILU(0)") -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """ILU(0) of a square CSR matrix with sorted indices: L unit lower (its diagonal of ones
    stored) and U upper, both in float64 with the pattern of ``m``. A zero pivot raises a
    ValueError naming the row (and the factorization ``name``)."""
    vals, diag = ilu0_values(exec, m, name)
    return _split(m, vals, diag)


def host_matrix(exec, a) -> sp.csr_matrix:
    """A Csr of ``exec`` as a scipy CSR on the host."""
    row_ptrs, col_idxs, values = exec.to_host(a.row_ptrs, a.col_idxs, a.values)
    return sp.csr_matrix((values, col_idxs, row_ptrs), shape=a.shape)


def to_csr_arrays(exec, factor: sp.csr_matrix, dtype) -> tuple:
    """Row pointers, column indices and values of a host factor on ``exec`` (int32, ``dtype``)."""
    with np.errstate(over="ignore"):
        values = factor.data.astype(dtype)
    if not np.isfinite(values).all():
        raise ValueError(f"the incomplete factors overflow {np.dtype(dtype)} (a tiny pivot): "
                         f"use float64, or scale the matrix")
    return (exec.from_host(factor.indptr.astype(np.int32)), exec.from_host(factor.indices.astype(np.int32)),
            exec.from_host(values))
