"""Reference kernel of the exact IC(0) factorization (incomplete Cholesky), run on the host.

IC(0) of a symmetric (complex: Hermitian) A is ILU(0) of the symmetric (Hermitian) matrix built
from A's lower triangle: for a symmetric pattern ILU(0) gives U = D L1^H with L1 unit lower and
D real, so L = L1 D^(1/2) and A ~ L L^H (L L^T for real values). The entries of A above the
diagonal are not read (nor the imaginary parts of its diagonal).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.reference.factorization.elimination import host_matrix, ilu0, to_csr_arrays


def _ic0(exec, m: sp.csr_matrix) -> sp.csr_matrix:
    """The IC(0) factor L (lower, float64 or complex128, pattern of tril(m), real diagonal); a
    pivot that is not positive raises a ValueError naming the row."""
    lower = sp.tril(m, -1)
    hermitian = (lower + sp.diags(m.diagonal().real) + lower.conj().T).tocsr()
    hermitian.sort_indices()
    l_unit, u_factor = ilu0(exec, hermitian, "IC(0)")
    # the pivots of a Hermitian matrix are real (up to rounding in their imaginary parts)
    d = u_factor.diagonal().real
    bad = np.flatnonzero(~(d > 0))
    if bad.size:
        raise ValueError(f"IC(0) breaks down: the pivot of row {bad[0]} is {d[bad[0]]}, not positive; "
                         f"the matrix is not symmetric positive definite (or has no IC(0) factor): use Ilu")
    # L = L1 D^(1/2): column j scaled by sqrt(d_j)
    l_unit.data *= np.sqrt(d)[l_unit.indices]
    return l_unit


def factorize(exec, a):
    """L and L^H of IC(0) as CSR arrays (L's first): (row_ptrs, col_idxs, values) twice."""
    l_factor = _ic0(exec, host_matrix(exec, a))
    lt = l_factor.conj().T.tocsr()
    lt.sort_indices()
    return to_csr_arrays(exec, l_factor, a.dtype) + to_csr_arrays(exec, lt, a.dtype)
