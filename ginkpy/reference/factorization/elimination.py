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

from ginkpy.reference.factorization.patterns import positions


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
    strictly lower entries and U's upper entries in one array, float64 or complex128), and the diagonal
    positions. A zero pivot raises a ValueError naming the row."""
    n = m.shape[0]
    ptrs, cols = m.indptr.astype(np.int64), m.indices
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptrs))
    diag = _diagonal(m, rows, name)
    lower = np.flatnonzero(cols < rows)  # the positions of the l_ik, numbered 0 .. len(lower) - 1
    l_rows, l_cols = rows[lower], cols[lower]
    # the updates a_ij -= l_ik u_kj: l_ik numbered o, u_kj at position q (j > k in row k), a_ij at t
    q, lengths = ranges(diag[l_cols] + 1, ptrs[l_cols + 1])
    o = np.repeat(np.arange(lower.size), lengths)
    t = positions(m, l_rows[o], cols[q])
    kept = t >= 0
    o, q, t = o[kept], q[kept], t[kept]
    # when l_ik is final: its row's level, and within the row its depth (0 when no update of
    # the row reaches it, else one more than the deepest l_ik' whose update does)
    level = exec.host.run("components.level_set.compute_levels", _strict_lower_ptrs(diag, ptrs), l_cols)
    depth = np.zeros(lower.size, dtype=np.int64)
    into_l = np.flatnonzero(cols[t] < rows[t])
    if into_l.size:
        target = np.searchsorted(lower, t[into_l])  # the number of the l_ij updated
        ranked = np.argsort(target, kind="stable")  # the leftmost targets first
        source, target = o[into_l][ranked], target[ranked]
        rank = target - np.searchsorted(l_rows, l_rows[target])
        for r in np.unique(rank):  # the entries left of the diagonal of a row, in column order
            sel = rank == r
            np.maximum.at(depth, target[sel], depth[source[sel]] + 1)
    step = level[l_rows] * (int(depth.max(initial=0)) + 1) + depth
    order = np.argsort(step, kind="stable")
    bounds = np.flatnonzero(np.diff(step[order], prepend=-1, append=step.max(initial=0) + 1))
    # the updates in the order of their l_ik's steps: o is sorted, so each l_ik's updates are a
    # contiguous run, taken in the order of the l_ik's
    runs = np.zeros(lower.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(o, minlength=lower.size), out=runs[1:])
    update, counts = ranges(runs[order], runs[order + 1])
    update_bounds = np.concatenate([[0], np.cumsum(counts)])[bounds]
    up, uq, ut = lower[o[update]], q[update], t[update]
    p_sorted, pivot = lower[order], diag[l_cols[order]]
    vals = m.data.astype(np.result_type(m.data.dtype, np.float64))
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
    stored) and U upper, both in float64 (complex128 for complex values) with the pattern of ``m``. A zero pivot raises a
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
        values = factor.data.astype(dtype, copy=False)
    if not np.isfinite(values).all():
        raise ValueError(f"the incomplete factors overflow {np.dtype(dtype)} (a tiny pivot): "
                         f"use float64, or scale the matrix")
    return (exec.from_host(factor.indptr.astype(np.int32, copy=False)),
            exec.from_host(factor.indices.astype(np.int32, copy=False)), exec.from_host(values))
