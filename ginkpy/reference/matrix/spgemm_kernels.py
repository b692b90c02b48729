"""Reference kernels of the sparse matrix-matrix product C = A B and of the transpose with its
entry map, vectorized with SciPy.

The product is structural, as Ginkgo's: C stores every (i, j) where some a_ik and b_kj are both
stored, also where the sum cancels to zero (SciPy's product drops exact zeros: its pattern is
made from the patterns alone, its values placed into it), so that new values on the same
patterns fill the same pattern (:func:`spgemm_values`).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _scipy(a, data=None):
    return sp.csr_matrix((a.values if data is None else data, a.col_idxs, a.row_ptrs), shape=a.shape)


def _keys(m, row_ptrs, col_idxs) -> np.ndarray:
    """row * m + column of every stored entry (ascending for sorted rows)."""
    rows = np.repeat(np.arange(row_ptrs.size - 1, dtype=np.int64), np.diff(row_ptrs))
    return rows * m + col_idxs


def _place(a, b, row_ptrs, col_idxs, out) -> None:
    """out = the values of A B at the sorted pattern (row_ptrs, col_idxs), zero where they cancel."""
    product = (_scipy(a) @ _scipy(b)).tocsr()
    product.sort_indices()
    m = b.shape[1]
    pattern = _keys(m, row_ptrs, col_idxs)
    out[...] = 0
    if product.nnz:
        out[np.searchsorted(pattern, _keys(m, product.indptr, product.indices))] = product.data


def spgemm(exec, a, b):
    """Row pointers, column indices (sorted in each row) and values of A B (structural)."""
    ones = np.ones(max(a.nnz, b.nnz), np.float64)
    pattern = (_scipy(a, ones[:a.nnz]) @ _scipy(b, ones[:b.nnz])).tocsr()
    pattern.sort_indices()
    row_ptrs, col_idxs = pattern.indptr.astype(np.int32), pattern.indices.astype(np.int32)
    values = np.empty(col_idxs.size, np.result_type(a.dtype, b.dtype))
    _place(a, b, row_ptrs, col_idxs, values)
    return row_ptrs, col_idxs, values


def spgemm_values(exec, a, b, c):
    """c's values (in place) = those of A B on c's pattern, the one spgemm gave for these patterns."""
    _place(a, b, c.row_ptrs, c.col_idxs, c.values)


def transpose(exec, a, conjugate):
    """Row pointers, column indices (sorted in each row), values of A^T (A^H with ``conjugate``)
    and the source of each of its entries (the index of that entry among A's)."""
    t = _scipy(a, np.arange(a.nnz, dtype=np.int64)).T.tocsr()
    t.sort_indices()
    source = t.data.astype(np.int32)
    values = np.empty(a.nnz, a.dtype)
    transpose_values(exec, a, source, values, conjugate)
    return t.indptr.astype(np.int32), t.indices.astype(np.int32), values, source


def transpose_values(exec, a, source, values, conjugate):
    """values[p] = A's value at entry source[p] (conjugated for A^H)."""
    values[...] = a.values[source].conj() if conjugate else a.values[source]
