"""Reference kernels of Csr: sequential row-by-row loops expressed with numpy/scipy."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse import _sparsetools

from ginkpy.reference.components.reduction_kernels import dots


def _scipy(a):
    """The matrix as a scipy CSR sharing its arrays (no copy), made once and kept in a.cache
    while the arrays stay the same (making it costs more than a small SpMV)."""
    cached = a.cache.get("reference.scipy")
    if cached is not None and cached[0] is a.values and cached[1] is a.col_idxs and cached[2] is a.row_ptrs:
        return cached[3]
    m = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)
    a.cache["reference.scipy"] = (a.values, a.col_idxs, a.row_ptrs, m)
    return m


def spmv(exec, a, b, x):
    # x = A b
    _product(a, b.values, x.values)


def _product(a, b, out) -> None:
    """out = A b for host arrays: SciPy's own loop (csr_matvec, csr_matvecs) writing into out,
    without the dispatch and the new array of ``@`` (which costs as much as the product of a
    small matrix); ``@`` where the types differ."""
    if not (a.values.dtype == b.dtype == out.dtype and b.flags.c_contiguous and out.flags.c_contiguous):
        out[...] = _scipy(a) @ b
        return
    (n, m), k = a.shape, b.shape[1]
    out[...] = 0
    if k == 1:
        _sparsetools.csr_matvec(n, m, a.row_ptrs, a.col_idxs, a.values, b.reshape(-1), out.reshape(-1))
    else:
        _sparsetools.csr_matvecs(n, m, k, a.row_ptrs, a.col_idxs, a.values, b.reshape(-1), out.reshape(-1))


def advanced_spmv(exec, alpha, a, b, beta, x):
    x.values[...] = alpha.values[0] * (_scipy(a) @ b.values) + beta.values[0] * x.values


def spmv_dots(exec, a, b, x, u, w, partials):
    # x = A b;  partials = [u^H x, w^H x] per column (w^H x only when w is given)
    spmv(exec, a, b, x)
    dots(exec, x, u, w, partials)


def scale_columns(exec, a, diag, out):
    # out = the values of A D, D = diag(diag)
    out[...] = a.values * diag.values[a.col_idxs, 0]


def convert_to_dense(exec, a, out):
    out.values[...] = _scipy(a).toarray()


def extract_diagonal(exec, a, out):
    out.values[:, 0] = _scipy(a).diagonal()


def is_finite(exec, a):
    return bool(np.isfinite(a.values).all())


def transpose(exec, a):
    """Row pointers, column indices (sorted in each row) and values of A^T."""
    t = _scipy(a).T.tocsr()
    t.sort_indices()
    return t.indptr.astype(np.int32), t.indices.astype(np.int32), t.data.astype(a.dtype, copy=False)


def conj_transpose(exec, a):
    """Row pointers, column indices (sorted in each row) and values of A^H."""
    row_ptrs, col_idxs, values = transpose(exec, a)
    return row_ptrs, col_idxs, values.conj()


def permute(exec, a, rows, col_inverse):
    """Row pointers, column indices (sorted in each row) and values of the matrix whose row i is
    row rows[i] of A (all rows in order for None), with column c renumbered col_inverse[c]."""
    m = _scipy(a) if rows is None else _scipy(a)[rows]
    if col_inverse is not None:
        # new arrays: the sort must not reorder A's own (a row gather already copied them)
        m = sp.csr_matrix((m.data.copy(), col_inverse[m.indices], m.indptr.copy()), shape=m.shape)
        m.has_sorted_indices = False
        m.sort_indices()
    else:
        m = m.copy()
    return m.indptr.astype(np.int32), m.indices.astype(np.int32), m.data.astype(a.dtype, copy=False)


def scale_rows(exec, a, diag, out):
    # out = the values of D A, D = diag(diag)
    out[...] = a.values * np.repeat(diag.values[:, 0], np.diff(a.row_ptrs))


def spmv_strategy(exec, a) -> str:
    """How the SpMV of ``a`` runs on the reference executor."""
    return "SciPy's sequential CSR product (the reference executor)"
