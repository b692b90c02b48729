"""Host kernel of the sparse LU factorization (factorization.lu, run through ``exec.host``):
the numeric factorization is SuperLU's (SciPy's splu, with threshold partial pivoting) on the
matrix permuted by ginkpy's fill-reducing ordering, its own column ordering off ("NATURAL")."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.factorization.sparse_lu import csr_arrays, gathers, superlu


def factorize(exec, a, perm, pivot_threshold):
    """L (unit lower) and U as CSR arrays (three each) and the row and column gathers R, C with
    A[R][:, C] = L U."""
    m = sp.csr_matrix((a.values, a.col_idxs, a.row_ptrs), shape=a.shape)[perm][:, perm]
    lu = superlu(m, perm, pivot_threshold, "Lu")
    rows, cols = gathers(perm, lu)
    return (*csr_arrays(lu.L), *csr_arrays(lu.U), rows.astype(np.int32), cols.astype(np.int32))
