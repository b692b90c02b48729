"""Host kernel of the sparse Cholesky factorization (factorization.cholesky, run through
``exec.host``): SuperLU's LU without pivoting (diagonal pivots) in SuperLU's fill-reducing
ordering or ginkpy's gives A = L D L^H (of the transpose, as sparse_lu.py says);
positive pivots D make A positive definite, and L D^1/2 is the Cholesky factor."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.factorization.sparse_lu import SuperluPlan, superlu, transposed_arrays, transposed_gathers


def factorize(exec, a, ordering):
    """The plan (SuperLU's factorization, as factorization.lu's, which factorization.lu.solve
    solves with), the Cholesky factor L and L^H as CSR arrays (three each) and the gather R with
    A[R][:, R] = L L^H; raises ValueError naming a column where A is not Hermitian positive definite."""
    m = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)
    asymmetry = abs(m - m.conj().T).max() if m.nnz else 0.0
    scale = abs(m).max() if m.nnz else 0.0
    if asymmetry > 1e-12 * scale:
        raise ValueError(f"Cholesky: the matrix is not {'Hermitian' if m.dtype.kind == 'c' else 'symmetric'} "
                         f"(max |A - A^H| = {asymmetry:.3g}); use gk.factorization.Lu")
    perm, lu = superlu(a, ordering, 0.0, "Cholesky")
    rows, cols = transposed_gathers(perm, lu)
    superlu_u = lu.U
    d = superlu_u.diagonal()
    bad = np.flatnonzero(~(d.real > 0) | (rows != cols))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"Cholesky: the matrix is not positive definite: the pivot of column {int(cols[k])} is "
                         f"{d[k]:.3g} (not > 0); use gk.factorization.Lu for indefinite or nonsymmetric matrices")
    root = np.sqrt(d.real)
    # SuperLU factorized A_p^T = L' D L'^H: L = U'^T D^-1/2 (its columns scaled), L^H = D^1/2 L'^T
    lower = transposed_arrays(superlu_u, 1 / root)
    upper = transposed_arrays(lu.L, root, by_row=True)
    return (SuperluPlan(lu, perm), *lower, *upper, rows.astype(np.int32))
