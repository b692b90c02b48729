"""Reference kernel of the exact IC(0) factorization (incomplete Cholesky), run on the host.

IC(0) of a symmetric (complex: Hermitian) A is ILU(0) of the symmetric (Hermitian) matrix built
from A's lower triangle: for a symmetric pattern ILU(0) gives U = D L1^H with L1 unit lower and
D real, so L = L1 D^(1/2) and A ~ L L^H (L L^T for real values). The entries of A above the
diagonal are not read (nor the imaginary parts of its diagonal). ``shift`` alpha factorizes
A + alpha diag(A) instead (Manteuffel's shifted incomplete Cholesky, which the caller retries
with growing alpha where a pivot is not positive).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ginkpy.core.factorization.factorization import pivot_floor
from ginkpy.reference.factorization.elimination import host_matrix, ilu0, to_csr_arrays


def factorize(exec, a, shift):
    """L and L^H of IC(0) of A + shift diag(A) as CSR arrays (L's first): (row_ptrs, col_idxs,
    values) twice, then the first row whose pivot is not positive (not above pivot_floor
    times the row's 1-norm), -1 if none (the arrays are then empty)."""
    m = host_matrix(exec, a)
    lower = sp.tril(m, -1)
    diagonal = m.diagonal().real * (1 + shift)
    hermitian = (lower + sp.diags(diagonal) + lower.conj().T).tocsr()
    hermitian.sort_indices()
    l_unit, u_factor, _ = ilu0(exec, hermitian, "IC(0)", shift_pivots=False)
    # the pivots of a Hermitian matrix are real (up to rounding in their imaginary parts)
    d = u_factor.diagonal().real
    floor = pivot_floor(d.dtype) * np.asarray(abs(hermitian).sum(axis=1)).ravel()
    bad = np.flatnonzero(~(d > floor))
    if bad.size:
        n = a.shape[0]
        empty = (exec.from_host(np.zeros(n + 1, np.int32)), exec.from_host(np.zeros(0, np.int32)),
                 exec.from_host(np.zeros(0, a.dtype)))
        return (*empty, *empty, int(bad[0]))
    # L = L1 D^(1/2): column j scaled by sqrt(d_j)
    l_unit.data *= np.sqrt(d)[l_unit.indices]
    lt = l_unit.conj().T.tocsr()
    lt.sort_indices()
    return (*to_csr_arrays(exec, l_unit, a.dtype), *to_csr_arrays(exec, lt, a.dtype), -1)
