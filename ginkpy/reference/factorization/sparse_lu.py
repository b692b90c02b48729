"""Host helpers of the direct factorizations (factorization.lu and factorization.cholesky
kernels): the numeric LU of SuperLU (SciPy's splu) on a matrix already permuted by ginkpy's
fill-reducing ordering, and the diagnosis of a singular matrix.

SuperLU factorizes the transpose: its input is CSC, and the CSR arrays of A_p = A[p][:, p] are
the CSC arrays of A_p^T, so Pr A_p^T Pc = L' U' needs no conversion of A; and its factors come
as CSC, whose arrays are the CSR arrays of L'^T and U'^T, so A_p[...] = U'^T L'^T hands ginkpy
its lower factor U'^T and its unit upper factor L'^T without a conversion either. The row
pivoting of A_p^T is column pivoting of A_p: threshold partial pivoting all the same.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as sla


def csr_arrays(m) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row pointers, sorted column indices (int32) and values of a sparse matrix."""
    m = sp.csr_matrix(m)
    m.sort_indices()
    return m.indptr.astype(np.int32), m.indices.astype(np.int32), m.data


def transposed_arrays(m, scale: np.ndarray | None = None, by_row: bool = False):
    """The CSR arrays (row pointers, sorted column indices as int32, values) of the transpose of
    the CSC matrix m (its own arrays), the values times ``scale`` at their row (``by_row``) or
    column of the transpose."""
    m.sort_indices()
    values = m.data
    if scale is not None:
        at = np.repeat(np.arange(m.shape[1]), np.diff(m.indptr)) if by_row else m.indices
        values = values * scale[at]
    return m.indptr.astype(np.int32, copy=False), m.indices.astype(np.int32, copy=False), values


def singular_column(m: sp.csr_matrix, perm: np.ndarray) -> str:
    """Why ``m`` (= A[perm][:, perm]) has no LU factorization, naming a column of A where the
    structure shows it."""
    pattern = sp.csr_matrix((np.abs(m.data) > 0, m.indices, m.indptr), shape=m.shape)
    pattern.eliminate_zeros()
    unmatched = np.flatnonzero(csgraph.maximum_bipartite_matching(pattern, perm_type="row") < 0)
    if unmatched.size:
        return (f"it is structurally singular: column {int(perm[unmatched[0]])} cannot get a nonzero pivot "
                f"from any row (an empty or dependent column)")
    return ("it is numerically singular (an exactly zero pivot appeared, though the structure allows a full "
            "set of pivots): its columns are linearly dependent")


def superlu(m: sp.csr_matrix, perm: np.ndarray, pivot_threshold: float, who: str):
    """SuperLU's factorization of m^T (m = A[perm][:, perm]) in its given column order:
    Pr m^T Pc = L' U'."""
    transposed = sp.csc_matrix((m.data, m.indices, m.indptr), shape=m.shape[::-1])  # m^T, no copy
    try:
        return sla.splu(transposed, permc_spec="NATURAL", diag_pivot_thresh=pivot_threshold,
                        options={"SymmetricMode": True})
    except RuntimeError as err:
        if "singular" not in str(err):
            raise
        raise ValueError(f"{who}: the matrix is singular: {singular_column(m, perm)}; a singular system has no "
                         f"unique solution (use a least-squares or iterative method, or fix the matrix)") from None


def gathers(perm: np.ndarray, lu) -> tuple[np.ndarray, np.ndarray]:
    """The row and column gathers R, C of A with A[R][:, C] = L U (perm: the ordering A was
    permuted with before SuperLU factorized it, Pr A[perm][:, perm] Pc = L U)."""
    return perm[np.argsort(lu.perm_r)], perm[np.argsort(lu.perm_c)]


def transposed_gathers(perm: np.ndarray, lu) -> tuple[np.ndarray, np.ndarray]:
    """The row and column gathers R, C of A with A[R][:, C] = U'^T L'^T (lu: SuperLU's
    factorization of A[perm][:, perm]^T = ... L' U'): the gathers of the transpose, swapped."""
    rows, cols = gathers(perm, lu)
    return cols, rows
