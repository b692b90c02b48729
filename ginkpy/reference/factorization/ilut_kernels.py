"""Host kernel of Ilut: SciPy's spilu (SuperLU's ILUTP), run through ``exec.host``."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ginkpy.reference.factorization.elimination import host_matrix
from ginkpy.reference.factorization.patterns import csr_arrays


def factorize(exec, a, drop_tol, fill_factor):
    """L (unit diagonal stored), U, P_r and P_c with P_r A P_c ~ L U, as CSR arrays
    (row_ptrs, col_idxs, values) four times."""
    n = a.shape[0]
    m = host_matrix(exec, a).tocsc()
    try:
        ilu = spla.spilu(m, drop_tol=drop_tol, fill_factor=fill_factor)
    except RuntimeError as err:  # SuperLU: "Factor is exactly singular", or out of its memory
        raise ValueError(f"Ilut: SuperLU's threshold factorization failed ({err}): a column had no pivot left "
                         f"after dropping (or the matrix is singular); another drop_tol or fill_factor may "
                         f"avoid it") from None
    ones = np.ones(n, a.dtype)
    # (P_r b)[perm_r[j]] = b[j];  (P_c y)[i] = y[perm_c[i]]
    row = sp.csr_matrix((ones, (ilu.perm_r, np.arange(n))), shape=(n, n))
    column = sp.csr_matrix((ones, (np.arange(n), ilu.perm_c)), shape=(n, n))
    return (*csr_arrays(ilu.L.tocsr(), a.dtype), *csr_arrays(ilu.U.tocsr(), a.dtype), *csr_arrays(row, a.dtype),
            *csr_arrays(column, a.dtype))
