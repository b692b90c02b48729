"""Host kernel of the sparse LU factorization (factorization.lu, run through ``exec.host``):
the numeric factorization is SuperLU's (SciPy's splu, with threshold partial pivoting) on the
matrix permuted by ginkpy's fill-reducing ordering, its own column ordering off ("NATURAL")."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.factorization.sparse_lu import superlu, transposed_arrays, transposed_gathers


def factorize(exec, a, perm, pivot_threshold):
    """L (lower) and U (unit upper) as CSR arrays (three each) and the row and column gathers
    R, C with A[R][:, C] = L U."""
    m = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)[perm][:, perm]
    lu = superlu(m, perm, pivot_threshold, "Lu")
    rows, cols = transposed_gathers(perm, lu)
    # L = U'^T, U = L'^T: the CSC arrays of SuperLU's factors of the transpose
    return (*transposed_arrays(lu.U), *transposed_arrays(lu.L), rows.astype(np.int32), cols.astype(np.int32))
