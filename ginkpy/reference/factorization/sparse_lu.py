"""Host helpers of the direct factorizations (factorization.lu and factorization.cholesky
kernels): the numeric LU of SuperLU (SciPy's splu) on a matrix already permuted by ginkpy's
fill-reducing ordering, the factors as sorted CSR arrays, and the diagnosis of a singular matrix.
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
    """SuperLU's factorization of m (= A[perm][:, perm]) in its given column order: Pr m Pc = L U."""
    try:
        return sla.splu(m.tocsc(), permc_spec="NATURAL", diag_pivot_thresh=pivot_threshold,
                        options={"SymmetricMode": True})
    except RuntimeError as err:
        if "singular" not in str(err):
            raise
        raise ValueError(f"{who}: the matrix is singular: {singular_column(m, perm)}; a singular system has no "
                         f"unique solution (use a least-squares or iterative method, or fix the matrix)") from None


def gathers(perm: np.ndarray, lu) -> tuple[np.ndarray, np.ndarray]:
    """The row and column gathers R, C of A with A[R][:, C] = L U (perm: ginkpy's ordering)."""
    return perm[np.argsort(lu.perm_r)], perm[np.argsort(lu.perm_c)]
