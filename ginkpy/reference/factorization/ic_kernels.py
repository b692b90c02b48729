"""Reference kernels of the IC(0) factorization (incomplete Cholesky), a sequential host algorithm.

IC(0) of a symmetric A is ILU(0) of the symmetric matrix built from A's lower triangle: for a
symmetric pattern ILU(0) gives U = D L1^T with L1 unit lower, so L = L1 D^(1/2) and A ~ L L^T.
The entries of A above the diagonal are not read.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.factorization.ilu_kernels import host_matrix, ilu0, to_csr_arrays


def ic0(m: sp.csr_matrix) -> sp.csr_matrix:
    """The IC(0) factor L (lower, float64, pattern of tril(m)); a pivot that is not positive
    raises a ValueError naming the row."""
    lower = sp.tril(m).tocsr()
    symmetric = (lower + sp.tril(m, -1).T).tocsr()
    symmetric.sort_indices()
    l_unit, u_factor = ilu0(symmetric, "IC(0)")
    d = u_factor.diagonal()
    bad = np.flatnonzero(~(d > 0))
    if bad.size:
        raise ValueError(f"IC(0) breaks down: the pivot of row {bad[0]} is {d[bad[0]]}, not positive; "
                         f"the matrix is not symmetric positive definite (or has no IC(0) factor): use Ilu")
    l_factor = (l_unit @ sp.diags(np.sqrt(d))).tocsr()
    l_factor.sort_indices()
    return l_factor


def factorize(exec, a):
    """L and L^T of IC(0) as CSR arrays (L's first): (row_ptrs, col_idxs, values) twice."""
    l_factor = ic0(host_matrix(exec, a))
    return to_csr_arrays(exec, l_factor, a.dtype) + to_csr_arrays(exec, l_factor.T.tocsr(), a.dtype)
