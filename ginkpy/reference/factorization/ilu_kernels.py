"""Reference kernels of the ILU(0) factorization: a sequential host algorithm.

ILU(0) keeps the sparsity pattern of A: row by row (the IKJ variant of Gaussian elimination),
each entry left of the diagonal becomes l_ik = a_ik / u_kk and row k's upper part, restricted to
row i's pattern, is subtracted: a_ij -= l_ik u_kj. The work is O(nnz * row length).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _diagonal_positions(m: sp.csr_matrix) -> np.ndarray:
    """Position of each row's diagonal entry in ``m.data`` (-1 where none is stored)."""
    n = m.shape[0]
    rows = np.repeat(np.arange(n), np.diff(m.indptr))
    on_diag = np.flatnonzero(m.indices == rows)
    pos = np.full(n, -1, dtype=np.int64)
    pos[rows[on_diag]] = on_diag
    return pos


def ilu0(m: sp.csr_matrix, name: str = "ILU(0)") -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """ILU(0) of a square CSR matrix with sorted indices: L unit lower (its diagonal of ones
    stored) and U upper, both in float64 with the pattern of ``m``. A zero pivot raises a
    ValueError naming the row (and the factorization ``name``)."""
    n, nnz = m.shape[0], m.nnz
    ptrs, cols = m.indptr, m.indices
    vals = np.zeros(nnz + 1)  # the last slot absorbs updates outside the pattern
    vals[:nnz] = m.data
    diag = _diagonal_positions(m)
    missing = np.flatnonzero(diag < 0)
    if missing.size:
        raise ValueError(f"{name} breaks down: row {missing[0]} has no stored diagonal entry (zero pivot); "
                         f"store the diagonal, or reorder the matrix")
    where = np.full(n, nnz)  # position of each column in the current row (nnz: not in the pattern)
    ptr_list, col_list, diag_list = ptrs.tolist(), cols.tolist(), diag.tolist()
    for i in range(n):
        s, e, d = ptr_list[i], ptr_list[i + 1], diag_list[i]
        where[cols[s:e]] = np.arange(s, e)
        for p in range(s, d):  # the entries left of the diagonal, in column order
            k = col_list[p]
            # l_ik = a_ik / u_kk
            vals[p] /= vals[diag_list[k]]
            # a_ij -= l_ik u_kj for j > k in the pattern of row i
            u_begin, u_end = diag_list[k] + 1, ptr_list[k + 1]
            vals[where[cols[u_begin:u_end]]] -= vals[p] * vals[u_begin:u_end]
        where[cols[s:e]] = nnz
        vals[nnz] = 0
        if vals[d] == 0 or not np.isfinite(vals[d]):
            raise ValueError(f"{name} breaks down: the pivot of row {i} is {vals[d]} (zero or not finite); "
                             f"the matrix has no ILU(0) factorization in this row order")
    vals = vals[:nnz]
    lu = sp.csr_matrix((vals, cols, ptrs), shape=m.shape)
    l_factor = (sp.tril(lu, -1) + sp.eye(n, format="csr")).tocsr()
    u_factor = sp.triu(lu).tocsr()
    for f in (l_factor, u_factor):
        f.sort_indices()
    return l_factor, u_factor


def to_csr_arrays(exec, factor: sp.csr_matrix, dtype) -> tuple:
    """Row pointers, column indices and values of a host factor on ``exec`` (int32, ``dtype``)."""
    with np.errstate(over="ignore"):
        values = factor.data.astype(dtype)
    if not np.isfinite(values).all():
        raise ValueError(f"the incomplete factors overflow {np.dtype(dtype)} (a tiny pivot): "
                         f"use float64, or scale the matrix")
    return (exec.from_host(factor.indptr.astype(np.int32)), exec.from_host(factor.indices.astype(np.int32)),
            exec.from_host(values))


def host_matrix(exec, a) -> sp.csr_matrix:
    """A Csr of ``exec`` as a scipy CSR on the host."""
    row_ptrs, col_idxs, values = exec.to_host(a.row_ptrs, a.col_idxs, a.values)
    return sp.csr_matrix((values, col_idxs, row_ptrs), shape=a.shape)


def factorize(exec, a):
    """L and U of ILU(0) as CSR arrays (L's first): (row_ptrs, col_idxs, values) twice."""
    l_factor, u_factor = ilu0(host_matrix(exec, a))
    return to_csr_arrays(exec, l_factor, a.dtype) + to_csr_arrays(exec, u_factor, a.dtype)
